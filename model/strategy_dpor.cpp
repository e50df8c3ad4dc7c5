// The exhaustive strategies over policies.h's Dpor: dpor (source sets and sleep sets), bounded (the
// same under a preemption bound) and plain (every enabled thread at every step). Before the search
// each can estimate the size of the tree from random executions (Knuth's estimator).
#include <cstdio>

#include "model/policies.h"
#include "model/portfolio.h"
#include "model/search.h"
#include "model/strategies.h"

namespace gmp::model {

namespace {

class DporSearch final : public Strategy {
 public:
  // bound: the preemption bound, -1 for none; reduce: false for plain enumeration.
  DporSearch(int bound, bool reduce, int64_t estimate_runs, uint64_t seed)
      : bound_(bound), reduce_(reduce), estimate_runs_(static_cast<uint32_t>(estimate_runs)), seed_(seed) {}

  std::string heading() const override {
    return bound_ >= 0 ? " (at most " + std::to_string(bound_) + " preemptions)" : "";
  }

  // The estimate: random executions of DPOR's own tree (whatever the bound or reduction), each
  // counting plain enumeration's tree (the product of the enabled counts) and DPOR's (the product
  // of the backtrack sets its races yield).
  void prepare(const CheckSetup& setup, CheckReport&) override {
    if (estimate_runs_ == 0) return;
    Dpor d(-1);
    d.set_random(seed_);
    double plain = 0, dpor = 0;
    for (uint32_t r = 0; r < estimate_runs_; r++) {
      d.begin(r);
      const Execution ex = execute(setup, d, ExecOptions{});
      plain += ex.tree_product;
      dpor += d.tree_estimate();
    }
    estimate_plain_ = plain / estimate_runs_;
    estimate_dpor_ = dpor / estimate_runs_;
  }

  std::unique_ptr<Policy> policy(const std::vector<uint32_t>& prefix) const override {
    auto d = std::make_unique<Dpor>(bound_, reduce_);
    d->set_prefix(prefix);
    return d;
  }

  std::string summary(const CheckReport&) const override {
    if (estimate_runs_ == 0) return "";
    return "estimate (before the search, " + std::to_string(estimate_runs_) +
           " random executions, Knuth's estimator): " + fmt_estimate(estimate_plain_) +
           " executions by plain enumeration, " + fmt_estimate(estimate_dpor_) + " by DPOR\n";
  }

 private:
  int bound_;
  bool reduce_;
  uint32_t estimate_runs_;
  uint64_t seed_;
  double estimate_plain_ = 0, estimate_dpor_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_dpor(const StrategyParams& p, uint64_t seed) {
  return std::make_unique<DporSearch>(-1, true, p.at("estimate"), seed);
}

std::unique_ptr<Strategy> make_bounded(const StrategyParams& p, uint64_t seed) {
  return std::make_unique<DporSearch>(static_cast<int>(p.at("preemptions")), true, p.at("estimate"), seed);
}

std::unique_ptr<Strategy> make_plain(const StrategyParams& p, uint64_t seed) {
  return std::make_unique<DporSearch>(static_cast<int>(p.at("preemptions")), false, p.at("estimate"), seed);
}

}  // namespace gmp::model
