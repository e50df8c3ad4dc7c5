// Properties of the scheduler's state that the checker tests at quiescent points (chooser.h's
// PointInfo::quiescent): no scheduler code is in flight, so Go's invariants must hold exactly.
// Each returns an empty string when the property holds, else what is wrong, in Go's terms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/chooser.h"
#include "sim/runtime/runtime.h"

namespace gmp::model {

// G conservation: every G is in exactly one place. A runnable G is in exactly one of the run
// queues (a P's ring, a P's runnext, the global queue); a running G is the curg of exactly one M;
// no G of another status is in a run queue.
std::string check_g_conservation(const rt::Runtime& r);

// Accounting, part of G conservation: the scheduler's counts agree with what they count:
// sched.nmspinning with the Ms that spin, sched.npidle with the idle list and the _Pidle Ps.
std::string check_accounting(const rt::Runtime& r);

// Work conservation: no G is runnable while a P is idle and no M spins to find it.
std::string check_work_conservation(const rt::Runtime& r);

// Timer conservation, part of work conservation: while a P is idle and no M spins, the earliest
// timer of any P is covered by an M asleep in the poller until no later than it is due.
std::string check_timer_conservation(const rt::Runtime& r);

// Lost wake-up: a G is runnable and every M is parked with no deadline; nothing will ever run it.
std::string check_lost_wakeup(const rt::Runtime& r, const engine::PointInfo& info);

// Every stop-the-world completes: none is pending (sched.gcwaiting, sched.stopwait > 0) while no
// M runs user code or sits in a system call. At a quiescent point every other M is then parked,
// and a parked M holds no P (only the stopper sleeps with one), so no M is left to stop the Ps
// the stop still waits for: the stopper's re-preemptions every 100us reach nobody.
std::string check_stw_completes(const rt::Runtime& r, const engine::PointInfo& info);
// Where each runnable G is, for messages ("G7 in P1's runnext").
std::string runnable_places(const rt::Runtime& r);

// Stranding: work conservation while Ms run, tested at every point, not only at quiescent ones.
//
// Work is stranded at a point when all of these hold:
//  - a P is on the idle list (sched.npidle > 0) and no stop-the-world is pending
//    (sched.gcwaiting: the idle Ps are about to be stopped, and spinning Ms give up on purpose);
//  - a G is runnable in the global queue, or in the ring or runnext of a _Prunning P whose M's
//    curg is _Grunning: it waits behind a goroutine that runs (in user code or in the runtime on
//    its behalf, such as the newproc or ready that queued it). A P whose M is in the scheduler
//    (curg nil) will take its own queue next; a P whose goroutine is in a system call is sysmon's
//    to hand off (retake), which the quiescent work-conservation test covers;
//  - no M covers it. An M covers while it is about to wake (m.nextp set: startm handed it a P and
//    woke or made it, and it has not yet taken the P) or spins (m.spinning). A spinning M stops
//    covering once it has shown that it cannot take the work: a spin that began while this G was
//    stranded and ended with the M holding no P (findRunnable gave its P back, finding nothing)
//    passed over a G that go1.27rc2's stealWork always takes (runqgrab takes n-n/2 >= 1 of a
//    non-empty ring, and runnext on the last of the four rounds), so the M could not take it;
//    from then on it covers nothing until this G is no longer stranded.
//
// The stranding of one G (the first found: Ps by id, ring before runnext, then the global queue)
// is followed until it runs or stops being stranded. Its length counts only the points where it is
// not covered: in steps of the M that holds the work (the G's P's M; for the global queue, any M
// that holds a P), which the steps of other threads, stalled or not, do not lengthen; under strict
// time in virtual nanoseconds. A length past the bound is a violation.
class StrandingMonitor {
 public:
  // steps: the bound under free time; ns: under strict time.
  StrandingMonitor(bool strict, uint64_t steps, int64_t ns) : strict_(strict), bound_steps_(steps), bound_ns_(ns) {}
  // At every point, before the pick: "" or the violation (what waited, where, for how long).
  std::string at(const rt::Runtime& r, uint64_t step, int64_t now);
  // After each step, the M whose thread took it (nullptr: none).
  void took(const rt::m* mp) {
    if (uncovered_ && mp != nullptr && (owner_ != nullptr ? mp == owner_ : mp->p != nullptr)) len_++;
  }
  bool active() const { return target_ != nullptr; }

 private:
  void reset();
  void grow(size_t m);  // room for M id m in the per-M vectors
  bool strict_;
  uint64_t bound_steps_;
  int64_t bound_ns_;
  const rt::g* target_ = nullptr;  // the stranded G followed
  const rt::m* owner_ = nullptr;   // the M of the P it waits on; nullptr: the global queue
  int32_t where_p_ = -1;           // that P's id; -1: the global queue
  bool runnext_ = false;           // in the P's runnext (else its ring)
  uint64_t since_step_ = 0;        // the step at which it was first seen stranded
  bool uncovered_ = false;         // at the last point, no M covered it
  uint64_t len_ = 0;               // steps of the owner while uncovered
  int64_t ns_ = 0, last_now_ = 0;  // virtual time uncovered; the clock at the last point
  bool spinners_failed_ = false;   // a spinning M lost its cover during this stranding
  // Per M id: spinning at the last point; its spin began during this stranding; it lost its cover.
  std::vector<uint8_t> spun_, began_, failed_;
};

// Starvation, under strict time: a G of the program that has been _Grunnable without a break for
// longer than the bound. The runtime's own goroutines (isSystemGoroutine: the GOMAXPROCS updater,
// the sweeper, which yield on purpose) are left out. A G queued behind several CPU-bound ones on
// one P waits one slice for each, as in Go: the bound is for a G behind one, and it is multiplied by
// the turns a G may have to wait, ceil((n - 1) / GOMAXPROCS) for the most program Gs n that wanted a
// P (runnable or running) while it waited.
// Tested at every point; the bound only when the clock has moved.
class StarvationMonitor {
 public:
  explicit StarvationMonitor(int64_t bound_ns) : bound_ns_(bound_ns) {}
  // At every point (Gs change status only through steps, so none is missed): "" or the violation.
  std::string at(const rt::Runtime& r, int64_t now);

 private:
  int64_t bound_ns_;
  std::vector<int64_t> since_;  // by index in allgs: when it became runnable; -1: not runnable
  std::vector<int64_t> turns_;  // by index in allgs: the most turns it may wait, while runnable
  int64_t checked_now_ = -1;
};

}  // namespace gmp::model
