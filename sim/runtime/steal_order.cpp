#include "sim/runtime/steal_order.h"

namespace gmp::rt {

// randomOrder.reset (proc.go)
void randomOrder::reset(uint32_t n) {
  count = n;
  coprimes.clear();
  for (uint32_t i = 1; i <= n; i++) {
    if (gcd(i, n) == 1) coprimes.push_back(i);
  }
}

// randomOrder.start (proc.go)
randomEnum randomOrder::start(uint32_t i) const {
  return randomEnum{0, count, i % count,
                    coprimes[i / count % static_cast<uint32_t>(coprimes.size())]};
}

// gcd (proc.go)
uint32_t gcd(uint32_t a, uint32_t b) {
  while (b != 0) {
    const uint32_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

}  // namespace gmp::rt
