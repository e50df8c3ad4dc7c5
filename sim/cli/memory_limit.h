// The simulator's memory is bounded by the machine's: a program too large to simulate fails an
// allocation, which gmpsim reports as "out of memory", rather than being killed by the kernel's
// out-of-memory killer with no message (Linux overcommits, so malloc itself seldom fails).
#pragma once

#include <cstdint>

namespace gmp::cli {

// Sets the soft address-space limit (RLIMIT_AS) to the machine's RAM plus swap (or its cgroup's
// memory limit, if lower) plus headroom for reserved address space, unless a limit is already set
// (ulimit -v) or this is a sanitizer build (their shadow memory reserves terabytes).
void limit_memory_to_machine();

// The address-space limit in force, in bytes; 0 when there is none.
uint64_t memory_limit();

}  // namespace gmp::cli
