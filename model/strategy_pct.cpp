// The pct strategy: sampling with policies.h's PctPolicy at a bug depth. PCT draws its change
// points among the steps of an execution, so the search first measures one (a random execution).
#include <algorithm>
#include <cstdio>

#include "model/policies.h"
#include "model/search.h"
#include "model/strategies.h"

namespace gmp::model {

namespace {

class PctSearch final : public Strategy {
 public:
  PctSearch(uint32_t depth, uint64_t seed) : depth_(depth), seed_(seed) {}

  std::string heading() const override { return " (depth " + std::to_string(depth_) + ")"; }

  void prepare(const CheckSetup& setup, CheckReport& rep) override {
    CheckSetup s = setup;
    s.properties = 0;
    RandomPolicy probe(seed_);
    const Execution ex = execute(s, probe, ExecOptions{});
    rep.max_steps_seen = ex.steps;
    bound_ = PctPolicy::bound(depth_, std::max<uint32_t>(ex.threads, 1), ex.steps);
    steps_ = std::max<uint64_t>(ex.steps, 1);
  }

  std::unique_ptr<Policy> policy(const std::vector<uint32_t>&) const override {
    return std::make_unique<PctPolicy>(seed_, depth_, steps_);
  }

  std::string summary(const CheckReport& rep) const override {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "PCT: each execution finds a given bug of depth %u with probability at least %.3g (1/(n k^(d-1)), "
                  "n=%u threads, k=%llu steps)\n",
                  depth_, bound_, rep.max_threads, static_cast<unsigned long long>(rep.max_steps_seen));
    return buf;
  }

 private:
  uint32_t depth_;
  uint64_t seed_;
  uint64_t steps_ = 1;
  double bound_ = 0;  // the probability that one execution finds a given bug of depth_
};

}  // namespace

std::unique_ptr<Strategy> make_pct(const StrategyParams& p, uint64_t seed) {
  return std::make_unique<PctSearch>(static_cast<uint32_t>(p.at("depth")), seed);
}

}  // namespace gmp::model
