#include "sim/runtime/rand.h"

#include "sim/platform/platform.h"
#include "sim/runtime/runtime2.h"

namespace gmp::rt {

// cheaprand (rand.go), the 64-bit-platform branch: 32-bit wyrand.
uint32_t cheaprandStep(uint32_t& state) {
  state += 0x53c5ca59u;
  const uint64_t prod = static_cast<uint64_t>(state) * static_cast<uint64_t>(state ^ 0x74743c1bu);
  const uint32_t hi = static_cast<uint32_t>(prod >> 32);
  const uint32_t lo = static_cast<uint32_t>(prod);
  return hi ^ lo;
}

// cheaprandu64 (rand.go), the branch for platforms with a 64-bit multiply: 64-bit wyrand.
uint64_t cheaprandu64Step(uint64_t& state) {
  state += 0xa0761d6478bd642full;
  const unsigned __int128 prod =
      static_cast<unsigned __int128>(state) * static_cast<unsigned __int128>(state ^ 0xe7037ed1a0b428dbull);
  return static_cast<uint64_t>(prod >> 64) ^ static_cast<uint64_t>(prod);
}

// cheaprand (rand.go)
uint32_t cheaprand() { return cheaprandStep(plat::getg()->m->cheaprand); }

// cheaprandu64 (rand.go)
uint64_t cheaprandu64() { return cheaprandu64Step(plat::getg()->m->cheaprand64); }

// cheaprandn (rand.go): Lemire's multiply-shift reduction.
uint32_t cheaprandn(uint32_t n) {
  return static_cast<uint32_t>((static_cast<uint64_t>(cheaprand()) * static_cast<uint64_t>(n)) >> 32);
}

}  // namespace gmp::rt
