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
constexpr int64_t forcegcperiod = 2 * 60 * 1000000000LL;  // proc.go
}  // namespace

// sysmon (proc.go)
void Runtime::sysmon() {
  lock(&sched.lock);
  sched.nmsys++;
  checkdead();
  unlock(&sched.lock);

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
    if (delay > 10 * 1000) delay = 10 * 1000;
    plat::usleep(delay);

    // sysmon should not enter deep sleep if schedtrace is enabled so that it can print that
    // information at the right time.
    int64_t now = plat::nanotime();
    if (schedtracePeriod <= 0 && (sched.gcwaiting.Load() != 0 || sched.npidle.Load() == gomaxprocs)) {
      lock(&sched.lock);
      if (sched.gcwaiting.Load() != 0 || sched.npidle.Load() == gomaxprocs) {
        bool syscallWake = false;
        const int64_t next = timeSleepUntil();
        if (next > now) {
          sched.sysmonwait.Store(1);
          unlock(&sched.lock);
          // Make wake-up period small enough for the sampling to be correct.
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
    // Update now in case we blocked on sysmonnote or spent a long time blocked on schedlock or
    // sysmonlock above.
    now = plat::nanotime();
    // poll network if not polled for more than 10ms
    const int64_t lastpoll = sched.lastpoll.Load();
    if (netpollinited() && lastpoll != 0 && lastpoll + 10 * 1000 * 1000 < now) {
      sched.lastpoll.CompareAndSwap(lastpoll, now);
      auto [list, delta] = netpoll(0);  // non-blocking - returns list of goroutines
      if (!list.empty()) {
        incidlelocked(-1);
        injectglist(&list);
        incidlelocked(1);
        netpollAdjustWaiters(delta);
      }
    }
    // Mutant startm-late-mreserveid: before 8fdc79e18a sysmon also started an M here when a timer
    // was overdue, outside any incidlelocked bracket; on that path startm's late ID let checkdead
    // see no running M (golang/go#40368).
    if (mutant(Mutant::StartmLateMReserveID) && timeSleepUntil() < now) startm(nullptr, false, false);
    // retake P's blocked in syscalls and preempt long running G's
    if (retake(now) != 0) {
      idle = 0;
    } else {
      idle++;
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

    // Preempt G if it's running on the same schedtick for too long. This could be from a single
    // long-running goroutine or a sequence of goroutines run via runnext, which share a single
    // schedtick time slice.
    const uint32_t schedt = pp->schedtick.get();
    if (pd.schedtick != schedt) {
      pd.schedtick = schedt;
      pd.schedwhen = now;
    } else if (pd.schedwhen + forcePreemptNS <= now) {
      preemptone(pp);
      // If pp is in a syscall, preemptone doesn't work. The goroutine nor the thread can respond
      // to a preemption request because they're not in Go code, so we need to take the P ourselves.
      // (Mutant retake-no-sysretake: before 4166ff42c0 it did not, and a goroutine whose system
      // calls were each shorter than a sysmon tick kept its P.)
      sysretake = !mutant(Mutant::RetakeNoSysretake);
    }

    // Go drops allpLock here to take sched.lock; the port takes no allpLock (docs/fidelity.md, 20).
    incidlelocked(-1);
    syscallingThread thread;
    if (setBlockOnExitSyscall(pp, thread)) {
      // Retake P from syscall if it's there for more than 1 sysmon tick (at least 20us).
      const uint32_t syst = pp->syscalltick.get();
      if (!sysretake && pd.syscalltick != syst) {
        pd.syscalltick = syst;
        pd.syscallwhen = now;
        thread.resume();
      } else if (runqempty(pp) && othersSpinningOrIdle() && pd.syscallwhen + 10 * 1000 * 1000 > now) {
        // On the one hand we don't want to retake Ps if there is no other work to do, but on the
        // other hand we want to retake them eventually because they can prevent the sysmon
        // thread from deep sleep.
        thread.resume();
      } else {
        ev(Ev::ProcSteal, thread.gp, pp, thread.mp->id);
        thread.takeP();
        thread.resume();
        n++;
        // Handoff the P for some other thread to run it.
        handoffp(pp);
      }
    }
    incidlelocked(1);
  }
  return n;
}

}  // namespace gmp::rt
