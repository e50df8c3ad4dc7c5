// System calls (proc.go), Go 1.26+ style: a goroutine entering a syscall keeps its P (status
// _Gsyscall on the G, the P stays _Prunning). sysmon's retake may take the P from it (freezing the
// goroutine with the _Gscan bit while it does, see syscall_thread.h); on exit the M keeps its P if
// it still has it, else tries to get one back (its old P, or an idle P), else queues the goroutine
// globally and parks.
#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/runtime/mutants.h"
#include "sim/runtime/runtime.h"
#include "sim/runtime/syscall_thread.h"

namespace gmp::rt {

// castogscanstatus (proc.go), for the syscall state (the only one frozen here).
static bool castogscanstatus(g* gp, uint32_t oldval, uint32_t newval) {
  if (oldval == _Gsyscall && newval == (oldval | _Gscan)) return gp->atomicstatus.CompareAndSwap(oldval, newval);
  plat::throw_("bad oldval passed to castogscanstatus");
}

// casfrom_Gscanstatus (proc.go)
static void casfrom_Gscanstatus(g* gp, uint32_t oldval, uint32_t newval) {
  bool success = false;
  if ((oldval & _Gscan) != 0 && newval == (oldval & ~_Gscan)) success = gp->atomicstatus.CompareAndSwap(oldval, newval);
  if (!success) plat::throw_("casfrom_Gscanstatus: gp->status is not in scan state");
}

bool setBlockOnExitSyscall(p* pp, syscallingThread& out) {
  if (pp->status.get() != _Prunning) return false;
  m* mp = pp->m.get();
  if (mp == nullptr) return false;
  g* gp = mp->curg.get();
  if (gp == nullptr) return false;
  const uint32_t status = readgstatus(gp) & ~_Gscan;
  if (status != _Gsyscall) return false;
  if (!castogscanstatus(gp, status, status | _Gscan)) return false;
  if (gp->m != mp || gp->m->p != pp) {
    casfrom_Gscanstatus(gp, status | _Gscan, status);
    return false;
  }
  out = syscallingThread{gp, mp, pp, status};
  return true;
}

// syscallingThread.gcstopP (proc.go): the caller is stopping the world and holds sched.lock.
void syscallingThread::gcstopP() {
  Runtime& r = *Runtime::current();
  assertLockHeld(r.sched.lock);
  releaseP(_Pgcstop);
  pp->gcStopTime = plat::nanotime();
  r.sched.stopwait--;
}

// syscallingThread.takeP (proc.go)
void syscallingThread::takeP() { releaseP(_Pidle); }

// syscallingThread.releaseP (proc.go): unwires the P from the frozen thread into state.
void syscallingThread::releaseP(uint32_t state) {
  if (state != _Pidle && state != _Pgcstop) plat::throw_("attempted to release P into a bad state");
  pp->m.set(nullptr);
  mp->p = nullptr;
  pp->status.Store(state);
  Runtime::current()->addGSyscallNoP(mp);
  pp->syscalltick.set(pp->syscalltick.get() + 1);
}

// addGSyscallNoP / decGSyscallNoP (proc.go): a goroutine in a system call lost its P / left the
// call without one. No M here is an extra M back in C (isExtraInC), so both always count.
void Runtime::addGSyscallNoP(m* /*mp*/) { sched.nGsyscallNoP.Add(1); }
void Runtime::decGSyscallNoP(m* /*mp*/) { sched.nGsyscallNoP.Add(-1); }

// syscallingThread.resume (proc.go)
void syscallingThread::resume() { casfrom_Gscanstatus(gp, status | _Gscan, status); }

// entersyscall / reentersyscall (proc.go): the goroutine is about to enter a system call; its M
// keeps the P, and sysmon may take it.
void Runtime::entersyscall() {
  g* gp = plat::getg();
  // m.locks++: gp must not be preempted (nor, in Go, seen by the GC) while its status already
  // says _Gsyscall but its saved context is not yet consistent.
  gp->m->locks++;
  // Poison stackguard0: nothing from here to the system call may check, let alone grow, the
  // stack; a function that did would trip into newstack.
  gp->stackguard0.set(stackPreempt);
  gp->m->syscalltick = gp->m->p->syscalltick.get();
  p* pp = gp->m->p;
  // A safe-point function due on this P runs before the P can be taken in the call. The read is
  // Go's plain read, made without offering it to the driver (docs/fidelity.md 13).
  if (pp->runSafePointFn.peek() != 0) runSafePointFn();
  gp->m->oldp = pp;
  gp->syscallsp = 1;
  ev(Ev::GoSyscall, gp, pp, 0);
  // A stop-the-world under way gets this P now (sched.gcwaiting: Go's atomic load, not offered
  // to the driver either, see docs/fidelity.md 13).
  if (sched.gcwaiting.peek() != 0) entersyscallHandleGCWait();
  if (!gp->atomicstatus.CompareAndSwap(_Grunning, _Gsyscall)) casgstatus(gp, _Grunning, _Gsyscall);
  if (sched.sysmonwait.Load() != 0) {
    // entersyscallWakeSysmon
    lock(&sched.lock);
    if (sched.sysmonwait.Load() != 0) {
      sched.sysmonwait.Store(0);
      plat::notewakeup(sched.sysmonnote);
    }
    unlock(&sched.lock);
  }
  gp->m->locks--;
}

// exitsyscall (proc.go): the goroutine returned from the system call.
void Runtime::exitsyscall() {
  g* gp = plat::getg();
  gp->m->locks++;  // no preemption while the status changes back, as in entersyscall
  gp->waitsince = 0;
  if (!gp->atomicstatus.CompareAndSwap(_Gsyscall, _Grunning)) casgstatus(gp, _Gsyscall, _Grunning);
  p* oldp = gp->m->oldp;
  gp->m->oldp = nullptr;
  p* pp = gp->m->p;
  int64_t how = 0;
  if (pp == nullptr) {
    if (p* pp2 = exitsyscallTryGetP(oldp); pp2 != nullptr) {
      wirep(pp2);  // acquirepNoTrace
      how = 1;
    }
    pp = gp->m->p;
  }
  if (pp != nullptr) {
    ev(Ev::GoSysExit, gp, pp, how);
    pp->syscalltick.set(pp->syscalltick.get() + 1);
    gp->syscallsp = 0;
    gp->m->locks--;
    gp->stackguard0.set(gp->preempt() ? stackPreempt : stackGuardNormal);
    return;
  }
  gp->m->locks--;
  // No P to be had here: on g0, exitsyscallNoP runs gp on an idle P if one is left, or puts it
  // on the global queue and parks the M.
  mcall(&Runtime::exitsyscallNoP);
  // gp runs again, on an M that holds a P.
  gp->syscallsp = 0;
  gp->m->p->syscalltick.set(gp->m->p->syscalltick.get() + 1);
}

// exitsyscallTryGetP (proc.go): the old P if it can be taken back, else an idle P, else nil.
p* Runtime::exitsyscallTryGetP(p* oldp) {
  if (oldp != nullptr) {
    syscallingThread thread;
    if (setBlockOnExitSyscall(oldp, thread)) {
      thread.takeP();
      decGSyscallNoP(plat::getg()->m);  // we got a P for ourselves
      thread.resume();
      return oldp;
    }
  }
  if (sched.pidle.loadRacy() != nullptr) {
    lock(&sched.lock);
    p* pp = pidleget(0).first;
    // Mutant exitsyscall-no-sysmon-wake: before 658d19a53f sysmon stayed in its deep sleep.
    if (pp != nullptr && !mutant(Mutant::ExitsyscallNoSysmonWake) && sched.sysmonwait.Load() != 0) {
      sched.sysmonwait.Store(0);
      plat::notewakeup(sched.sysmonnote);
    }
    unlock(&sched.lock);
    if (pp != nullptr) {
      decGSyscallNoP(plat::getg()->m);  // we got a P for ourselves
      return pp;
    }
  }
  return nullptr;
}

// exitsyscallNoP (proc.go): on g0, after a syscall that lost its P: run gp if an idle P is
// available, else queue it globally and park.
void Runtime::exitsyscallNoP(g* gp) {
  ev(Ev::GoSysExit, gp, nullptr, 2);
  casgstatus(gp, _Grunning, _Grunnable);
  decGSyscallNoP(plat::getg()->m);
  dropg();
  lock(&sched.lock);
  p* pp = pidleget(0).first;
  bool locked = false;
  if (pp == nullptr) {
    globrunqput(gp);
    // Once sched.lock is released gp belongs to whichever M takes it from the global queue, which
    // may run it into LockOSThread at once: whether gp is locked to this M is read now, while the
    // lock still keeps gp here.
    if (!mutant(Mutant::ExitsyscallLockedmRace)) locked = gp->lockedm.get() != nullptr;
  } else if (!mutant(Mutant::ExitsyscallNoSysmonWake) && sched.sysmonwait.Load() != 0) {
    sched.sysmonwait.Store(0);
    plat::notewakeup(sched.sysmonnote);
  }
  unlock(&sched.lock);
  // Mutant exitsyscall-lockedm-race: before e0d029f758 gp.lockedm was read here, after gp was
  // published on the global queue, where another M may already run it and lock it to itself.
  if (mutant(Mutant::ExitsyscallLockedmRace) && pp == nullptr) locked = gp->lockedm.get() != nullptr;
  if (pp != nullptr) {
    acquirep(pp);
    execute(gp, false);
    return;
  }
  if (locked) {
    // gp runs only on this M: park until the M that schedules it hands it back with a P.
    stoplockedm();
    execute(gp, false);
    return;
  }
  stopm();
  schedule();
}

}  // namespace gmp::rt
