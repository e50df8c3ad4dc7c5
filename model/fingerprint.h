// A state's fingerprint: a 64-bit hash of what the scheduler and the program are doing, for
// counting distinct states and building the state graph (livelock). It covers every P (status, M,
// run queue, runnext), the global queue, the idle and spinning counts, every M (P, curg,
// spinning), every G (status, and for user goroutines where the program is: function, pc, loop
// counters, variables), and the step each enabled thread takes next (its kind, operation and line
// in the port). It leaves out the clock, so that a loop that only waits repeats its state. Objects
// are named by Go ids, never by address, so equal states hash equal in every execution. Channels'
// contents are not hashed: a value in flight shows once a goroutine has received it.
#pragma once

#include <cstdint>
#include <span>

#include "sim/engine/chooser.h"
#include "sim/runtime/runtime.h"

namespace gmp::model {

uint64_t fingerprint(const rt::Runtime& r, std::span<const engine::Step> enabled);

}  // namespace gmp::model
