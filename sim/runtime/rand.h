// cheaprand and cheaprandn (rand.go): the scheduler's per-M non-cryptographic generator.
// State lives in the current M, as in Go; the M is found through getg().
#pragma once

#include <cstdint>

namespace gmp::rt {

uint32_t cheaprand();
uint32_t cheaprandn(uint32_t n);
uint64_t cheaprandu64();

// The generator steps themselves, on explicit state: what cheaprand/cheaprandu64 do to m's fields.
uint32_t cheaprandStep(uint32_t& state);
uint64_t cheaprandu64Step(uint64_t& state);

}  // namespace gmp::rt
