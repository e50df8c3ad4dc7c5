// SplitMix64 (Steele, Lea, Flood 2014): the seeded generator behind every random choice the
// project makes (the engine's tie-breaks and jitters, the Ms' cheaprand seeds, the checker's
// policies), so that one seed fixes a run.
#pragma once

#include <cstdint>

namespace gmp {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), by Lemire's multiply-shift (bias below 2^-32 for the n used here).
  uint32_t below(uint32_t n) {
    return static_cast<uint32_t>((static_cast<uint64_t>(static_cast<uint32_t>(next() >> 32)) * n) >> 32);
  }

 private:
  uint64_t s_;
};

}  // namespace gmp
