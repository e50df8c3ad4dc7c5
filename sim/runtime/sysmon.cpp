// sysmon and retake (proc.go): a thread without a P that wakes every 20us, backing off to 10ms
// while it finds nothing to do, and takes Ps back from goroutines that have run for more than
// forcePreemptNS (by preempting them) or sit in system calls (by handing their P to another M).
#include <algorithm>

#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/runtime/mutants.h"
#include "sim/runtime/runtime.h"
#include "sim/runtime/syscall_thread.h"
#include "sim/runtime/time.h"

namespace gmp::rt {

namespace {
}  // namespace

// sysmon (proc.go)
void Runtime::sysmon() {
  lock(&sched.lock);
  sched.nmsys++;
  checkdead();
  unlock(&sched.lock);

  int64_t lastgomaxprocs = 0;
  int64_t lasttrace = 0;
  int idle = 0;  // rounds in a row in which sysmon woke nobody
  uint32_t delay = 0;
  for (;;) {
    // 20us between rounds while there is work; after 50 idle rounds (about 1ms) the pause doubles
    // each round, to at most 10ms.
    if (idle == 0) {
      delay = 20;
    } else if (idle > 50) {
      delay *= 2;
    }
    if (delay > sysmonMaxDelayUS) delay = sysmonMaxDelayUS;
    plat::usleep(delay);

    // Deep sleep (until the next timer, or an early wake on sysmonnote) only while every P is
    // idle, and never with schedtrace on: the trace lines must come at their period.
    int64_t now = plat::nanotime();
    if (schedtracePeriod <= 0 && (sched.gcwaiting.Load() != 0 || sched.npidle.Load() == gomaxprocs)) {
      lock(&sched.lock);
      if (sched.gcwaiting.Load() != 0 || sched.npidle.Load() == gomaxprocs) {
        bool syscallWake = false;
        const int64_t next = timeSleepUntil();
        if (next > now) {
          sched.sysmonwait.Store(1);
          unlock(&sched.lock);
          // At most forcegcperiod/2, Go's bound on how stale sysmon's periodic checks may get.
          int64_t sleep = forcegcperiod / 2;
          if (next - now < sleep) sleep = next - now;
          syscallWake = plat::notetsleep(sched.sysmonnote, sleep);
          lock(&sched.lock);
          sched.sysmonwait.Store(0);
          plat::noteclear(sched.sysmonnote);
        }
        if (syscallWake) {
          idle = 0;
          delay = 20;
        }
      }
      unlock(&sched.lock);
    }

    lock(&sched.sysmonlock);
    // Read the clock again: the sleep on sysmonnote, or the wait for sched.lock or sysmonlock,
    // may have been long.
    now = plat::nanotime();
    // A network nobody has polled for 10ms is polled here, without blocking, and what is ready
    // is injected.
    const int64_t lastpoll = sched.lastpoll.Load();
    if (netpollinited() && lastpoll != 0 && lastpoll + 10 * 1000 * 1000 < now) {
      sched.lastpoll.CompareAndSwap(lastpoll, now);
      auto [list, delta] = netpoll(0);  // delay 0: never blocks
      if (!list.empty()) {
        incidlelocked(-1);
        injectglist(&list);
        incidlelocked(1);
        netpollAdjustWaiters(delta);
      }
    }
    // At most once a second: is the default GOMAXPROCS still the current one? Not in Go: while
    // GOMAXPROCS came from the variable (and SetDefaultGOMAXPROCS has not been called), the port
    // skips the check instead of taking computeMaxProcsLock and sched.lock to find
    // customGOMAXPROCS set, so that runs with a given GOMAXPROCS keep their operations
    // (docs/fidelity.md, 20).
    if (maxprocsSettings.updatemaxprocs != 0 && !sysmonSkipsMaxProcs_.load(std::memory_order_relaxed) &&
        lastgomaxprocs + 1'000'000'000 <= now) {
      sysmonUpdateGOMAXPROCS();
      lastgomaxprocs = now;
    }
    // Mutant startm-late-mreserveid: before 8fdc79e18a sysmon also started an M here when a timer
    // was overdue, outside any incidlelocked bracket; on that path startm's late ID let checkdead
    // see no running M (golang/go#40368).
    if (mutant(Mutant::StartmLateMReserveID) && timeSleepUntil() < now) startm(nullptr, false, false);
    // retake: preempt goroutines past their time slice, take Ps from long system calls. A round
    // that retook a P is not idle.
    if (retake(now) != 0) {
      idle = 0;
    } else {
      idle++;
    }
    // A cycle forced by time: wake forcegchelper if no cycle ran for forcegcperiod.
    if (const gcTrigger t{gcTriggerKind::gcTriggerTime, now, 0}; t.test(*this) && forcegc.idle.Load() != 0) {
      lock(&forcegc.lock);
      forcegc.idle.Store(0);
      gList list;
      list.push(forcegc.gp);
      injectglist(&list);
      unlock(&forcegc.lock);
    }
    if (schedtracePeriod > 0 && lasttrace + schedtracePeriod <= now) {
      lasttrace = now;
      schedtraceLines.push_back(schedtrace());
    }
    unlock(&sched.sysmonlock);
  }
}


// retake (proc.go)
uint32_t Runtime::retake(int64_t now) {
  uint32_t n = 0;
  // nmspinning+npidle > 0, loading nmspinning first as Go does (C++ leaves + unordered).
  auto othersSpinningOrIdle = [this] {
    const int32_t nmspinning = sched.nmspinning.Load();
    return nmspinning + sched.npidle.Load() > 0;
  };
  for (size_t i = 0; i < allp.size(); i++) {
    p* pp = allp[i];
    if (pp == nullptr || pp->status.Load() != _Prunning) continue;
    sysmontick& pd = pp->sysmontick_;
    bool sysretake = false;

    // A P whose schedtick has not moved for forcePreemptNS has run one time slice too long:
    // one goroutine, or a chain of goroutines handed over through runnext, which inherit the
    // slice (execute with inheritTime). It is asked to stop.
    const uint32_t schedt = pp->schedtick.get();
    if (pd.schedtick != schedt) {
      pd.schedtick = schedt;
      pd.schedwhen = now;
    } else if (pd.schedwhen + forcePreemptNS <= now) {
      preemptone(pp);
      // A P in a system call cannot honor that request: neither its goroutine nor its M runs Go
      // code that would check it. So sysmon takes the P itself (sysretake), below.
      // (Mutant retake-no-sysretake: before 4166ff42c0 it did not, and a goroutine whose system
      // calls were each shorter than a sysmon tick kept its P.)
      sysretake = !mutant(Mutant::RetakeNoSysretake);
    }

    // Go drops allpLock here to take sched.lock; the port takes no allpLock (docs/fidelity.md, 20).
    incidlelocked(-1);
    syscallingThread thread;
    if (setBlockOnExitSyscall(pp, thread)) {
      // A system call seen for the first time (syscalltick moved) is only noted: the P is taken
      // on a later round, so a call keeps it for at least one sysmon tick (20us or more).
      const uint32_t syst = pp->syscalltick.get();
      if (!sysretake && pd.syscalltick != syst) {
        pd.syscalltick = syst;
        pd.syscallwhen = now;
        thread.resume();
      } else if (runqempty(pp) && othersSpinningOrIdle() && pd.syscallwhen + 10 * 1000 * 1000 > now) {
        // The P stays with its system call while nothing calls for it (its local queue is empty
        // and some M spins or some P is idle to take new work), but for 10ms at most: a P held
        // in a system call would otherwise also keep sysmon out of its deep sleep for good.
        thread.resume();
      } else {
        ev(Ev::ProcSteal, thread.gp, pp, thread.mp->id);
        thread.takeP();
        thread.resume();
        n++;
        // handoffp gives the P to another M, or to the idle list.
        handoffp(pp);
      }
    }
    incidlelocked(1);
  }
  return n;
}

}  // namespace gmp::rt
