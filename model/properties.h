// Properties of the scheduler's state that the checker tests at quiescent points (chooser.h's
// PointInfo::quiescent): no scheduler code is in flight, so Go's invariants must hold exactly.
// Each returns an empty string when the property holds, else what is wrong, in Go's terms.
#pragma once

#include <string>

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

}  // namespace gmp::model
