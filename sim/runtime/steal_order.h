// randomOrder and randomEnum (proc.go): enumerate all Ps in a pseudo-random order without
// repetition. If X is coprime with count, (i + k*X) % count for k = 0..count-1 visits every
// position exactly once; start(i) picks the position and the coprime increment from i.
#pragma once

#include <cstdint>
#include <vector>

namespace gmp::rt {

struct randomEnum {
  uint32_t i = 0;
  uint32_t count = 0;
  uint32_t pos = 0;
  uint32_t inc = 0;

  bool done() const { return i == count; }
  void next() {
    i++;
    pos = (pos + inc) % count;
  }
  uint32_t position() const { return pos; }
};

struct randomOrder {
  uint32_t count = 0;
  std::vector<uint32_t> coprimes;

  void reset(uint32_t count);
  randomEnum start(uint32_t i) const;
};

uint32_t gcd(uint32_t a, uint32_t b);

}  // namespace gmp::rt
