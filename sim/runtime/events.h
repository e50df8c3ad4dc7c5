// The scheduler events the port reports to its Host (for traces and counters). Reporting is not a
// shared-memory operation and never changes a schedule.
#pragma once

#include <cstdint>

namespace gmp::rt {

enum class Ev : int {
  GoCreate,        // newproc1: gp created; arg = parent goid
  GoStart,         // execute: gp starts running on the current M and P
  GoEnd,           // goexit1
  GoPark,          // park_m: gp blocks; arg = waitReason
  GoUnpark,        // ready: gp becomes runnable; arg = 1 if put in runnext
  GoSched,         // goschedImpl, voluntary
  GoPreempt,       // goschedImpl after a preemption; arg = 1 if asynchronous
  GoSyscall,       // entersyscall
  GoSysExit,       // exitsyscall; arg = 0 kept its P, 1 got another P, 2 no P (runnable)
  PutRunnext,      // runqput with next
  PutLocal,        // runqput to the ring
  PutGlobal,       // to the global queue; gp = the first G put; arg = how many
  GetGlobal,       // from the global queue; gp = the G to run; arg = how many
  Steal,           // runqsteal succeeded; pp = victim; arg = how many
  ProcStart,       // acquirep
  ProcStop,        // releasep
  ProcSteal,       // retake took a P from a syscalling M; pp = that P
  Wakep,           // wakep found an idle P for a spinning M
  StartM,          // startm: arg = the M woken, or -1 when a new M is created
  StopM,           // stopm: the M parks
  HandoffP,        // handoffp
  SpinStart,       // an M starts spinning
  SpinStop,        // an M stops spinning
  PreemptRequest,  // preemptone: arg = target M id
  PreemptSignal,   // preemptM sent a signal; arg = target M id
  SigPreempt,      // a preemption signal handled; arg = 1 if at an async safe point
  MCreate,         // newm; arg = new M id
  // Counted, not traced (see Host::event): frequent outcomes that set a run beside the real
  // runtime's counts (sim/bench/realcounts).
  WakepSpinning,   // wakep returned at once: an M already spins
  WakepNoP,        // wakep found no idle P
  RunnextBackoff,  // runqgrab's usleep(3) before taking a running P's runnext
  RunnextCasFail,  // runqgrab lost the race for that runnext
  // The garbage collector (mgc.go and friends). Listed in --events only when they happened, so the
  // outputs of programs that never allocate stay as they were.
  GCStart,          // gcStart: a cycle begins (sweep termination done); arg = cycle number
  GCDone,           // gcMarkTermination: the cycle's mark phase is over; arg = cycle number
  STWStart,         // stopTheWorldWithSema begins; arg = stwReason
  STWDone,          // startTheWorldWithSema ends the pause; arg = stwReason
  GCMarkAssistStart,  // gcAssistAlloc: gp starts assisting (or parks on the assist queue)
  GCMarkAssistDone,   // gp's assist ends
  GCSweepStart,     // a span-sweeping stretch begins (bgsweep or proportional sweep)
  GCSweepDone,      // it ends; arg = bytes swept
  HeapAlloc,        // heapLive changed; arg = bytes (sampled where Go's tracer emits HeapAlloc)
  HeapGoal,         // the heap goal changed; arg = bytes
  // Not the collector's, but also listed only when they happened.
  ProcsChange,      // procresize changed GOMAXPROCS; arg = the new value
  Count_,
};

const char* evName(Ev e);

// Whether an event kind is listed only when non-zero: the garbage collector's, and ProcsChange.
inline bool isGCEvent(Ev e) { return static_cast<int>(e) >= static_cast<int>(Ev::GCStart); }

}  // namespace gmp::rt
