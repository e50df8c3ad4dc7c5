// A state's fingerprint: a 64-bit hash of what the scheduler and the program are doing, for
// counting distinct states and building the state graph (livelock). It covers every P (status, M,
// run queue, runnext), the global queue, the idle and spinning counts, every M (P, curg,
// spinning), every G (status, and for user goroutines where the program is: function, pc, loop
// counters, variables), and the step each enabled thread takes next (its kind, operation and line
// in the port). It leaves out the clock, so that a loop that only waits repeats its state. Objects
// are named by Go ids, never by address, so equal states hash equal in every execution. Channels'
// contents are not hashed: a value in flight shows once a goroutine has received it.
//
// Symmetry. A user goroutine is named, wherever the state refers to it (a run queue, runnext, an
// M's curg), not by its goid but by what it is: its status, function, go statement, pc, loop
// counters and variables. The goroutines themselves are hashed as a multiset (sorted). So two
// states that differ only by a permutation of goroutines that agree on all of that (three `go
// worker()` at the same point of worker, one on P0 and one in P1's queue, or the other way round)
// hash equal: the distinct-state count and the livelock detector see them as one. This is sound
// because nothing the scheduler or the program does depends on which of two such goroutines is
// which: the scenario cannot read a goid, and the port and the assertions use goids only as names
// (messages, traces). The runtime's
// own goroutines (bgsweep, the mark workers, ...) keep their goids: each has a role of its own.
// Ms and Ps are not permuted: each M carries its own cheaprand state (the order it steals in) and
// Ps are scanned in allp order (retake, the spinning M's last check), so two Ms or two Ps in equal
// states are not interchangeable step for step (docs/checker.md, "Speed").
#pragma once

#include <cstdint>
#include <span>

#include "sim/engine/chooser.h"
#include "sim/runtime/runtime.h"

namespace gmp::model {

// symmetric = false: goroutines named by goid (the fingerprint before symmetry, for comparison).
uint64_t fingerprint(const rt::Runtime& r, std::span<const engine::Step> enabled, bool symmetric = true);

}  // namespace gmp::model
