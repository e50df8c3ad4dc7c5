// The random strategy: sampling with policies.h's RandomPolicy.
#include "model/policies.h"
#include "model/strategies.h"

namespace gmp::model {

namespace {

class RandomSearch final : public Strategy {
 public:
  explicit RandomSearch(uint64_t seed) : seed_(seed) {}
  std::unique_ptr<Policy> policy(const std::vector<uint32_t>&) const override {
    return std::make_unique<RandomPolicy>(seed_);
  }

 private:
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Strategy> make_random(const StrategyParams&, uint64_t seed) {
  return std::make_unique<RandomSearch>(seed);
}

}  // namespace gmp::model
