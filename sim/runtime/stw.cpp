// Stop-the-world and forEachP (proc.go).
//
// Stopping the world: the stopper, holding worldsema, sets sched.gcwaiting and counts in
// sched.stopwait the Ps still to stop. It stops its own P, takes at once every P whose goroutine
// sits in a system call (frozen with the _Gscan bit, as retake does) and every idle P, asks the
// running ones to preempt, and sleeps on sched.stopnote, waking every 100us to ask again, until
// the last running P's M sees gcwaiting at a safe point (findRunnable -> gcstopm, handoffp,
// entersyscall) and wakes it. Starting the world runs procresize with the P count newprocs asks
// for (runtime.GOMAXPROCS and the GOMAXPROCS updater set it while the world is stopped) or the
// same count, which destroys or makes Ps as needed, gives each P with queued work an M
// (preferably the one it last ran on), puts the rest on the idle list, and wakes one spinning M
// for whatever is left.
//
// forEachP is the lighter barrier: every P runs a function at its next safe point, the idle and
// syscalling ones have it run for them, and the caller waits on sched.safePointNote.
//
// The port has no systemstack: what Go runs there runs here on the calling goroutine's stack, so
// getg() is the goroutine itself where Go's code reads getg().m.curg.
#include <algorithm>

#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/runtime/runtime.h"
#include "sim/runtime/sema.h"
#include "sim/runtime/syscall_thread.h"

namespace gmp::rt {

// stopTheWorld (proc.go)
Runtime::worldStop Runtime::stopTheWorld(stwReason reason) {
  semacquire(worldsema.get());
  g* gp = plat::getg();
  gp->m->preemptoff = stwReasonString(reason);
  return stopTheWorldWithSema(reason);  // systemstack
}

// startTheWorld (proc.go): restarts the world, then hands worldsema straight to the next waiter;
// acquirem keeps semrelease1 from yielding this goroutine's time slice to it.
void Runtime::startTheWorld(worldStop w) {
  startTheWorldWithSema(0, w);  // systemstack
  m* mp = acquirem();
  mp->preemptoff = "";
  semrelease1(worldsema.get(), true, 0);
  releasem(mp);
}

// stopTheWorldGC (proc.go): as stopTheWorld, after waiting for any GC cycle to finish.
Runtime::worldStop Runtime::stopTheWorldGC(stwReason reason) {
  semacquire(gcsema.get());
  return stopTheWorld(reason);
}

// startTheWorldGC (proc.go)
void Runtime::startTheWorldGC(worldStop w) {
  startTheWorld(w);
  semrelease(gcsema.get());
}

// stopTheWorldWithSema (proc.go). The caller holds worldsema and has preemption off.
Runtime::worldStop Runtime::stopTheWorldWithSema(stwReason reason) {
  g* gp = plat::getg();
  // casGToWaitingForSuspendG: while it waits for the Ps, the stopper counts as waiting, so that
  // nobody waits on it in turn.
  gp->waitreason = waitReason::waitReasonStoppingTheWorld;
  casgstatus(gp, _Grunning, _Gwaiting);
  ev(Ev::STWStart, gp, gp->m->p, static_cast<int64_t>(reason));
  if (gp->m->locks > 0) plat::throw_("stopTheWorld: holding locks");

  lock(&sched.lock);
  const int64_t start = plat::nanotime();  // after the lock: its wait is not part of the pause
  sched.stopwait = gomaxprocs;
  sched.gcwaiting.Store(1);
  preemptall();
  // This M's own P stops first (its _Pgcstop is only for the record).
  p* own = gp->m->p;
  own->status.set(_Pgcstop);
  own->gcStopTime = start;
  sched.stopwait--;
  // Ps whose goroutines are in system calls are taken now; the goroutines find no P on return.
  for (p* pp : allp) {
    syscallingThread thread;
    if (setBlockOnExitSyscall(pp, thread)) {
      ev(Ev::ProcSteal, thread.gp, pp, thread.mp->id);
      thread.gcstopP();
      thread.resume();
    }
  }
  // Idle Ps are stopped where they lie.
  const int64_t now = plat::nanotime();
  for (;;) {
    p* pp = pidleget(now).first;
    if (pp == nullptr) break;
    pp->status.set(_Pgcstop);
    pp->gcStopTime = plat::nanotime();
    sched.stopwait--;
  }
  const bool wait = sched.stopwait > 0;
  unlock(&sched.lock);

  // The running Ps stop on their own at their next safe point. A preemption request can be lost
  // (the goroutine it named has already gone), so it is sent again every 100us.
  if (wait) {
    for (;;) {
      if (plat::notetsleep(sched.stopnote, 100 * 1000)) {
        plat::noteclear(sched.stopnote);
        break;
      }
      preemptall();
    }
  }

  const int64_t finish = plat::nanotime();
  // Every P must now be stopped; sum the time each spent stopped before the last one did.
  int64_t stoppingCPUTime = 0;
  const char* bad = nullptr;
  if (sched.stopwait != 0) {
    bad = "stopTheWorld: not stopped (stopwait != 0)";
  } else {
    for (p* pp : allp) {
      if (pp->status.get() != _Pgcstop) bad = "stopTheWorld: not stopped (status != _Pgcstop)";
      if (pp->gcStopTime == 0 && bad == nullptr) bad = "stopTheWorld: broken CPU time accounting";
      stoppingCPUTime += finish - pp->gcStopTime;
      pp->gcStopTime = 0;
    }
  }
  if (bad != nullptr) plat::throw_(bad);

  casgstatus(gp, _Gwaiting, _Grunning);
  return worldStop{reason, start, finish, stoppingCPUTime};
}

// startTheWorldWithSema (proc.go): returns now, the restart's time.
int64_t Runtime::startTheWorldWithSema(int64_t now, worldStop w) {
  m* mp = acquirem();  // this goroutine may hold a P in a local below: no preemption
  if (netpollinited()) {
    auto [list, delta] = netpoll(0);  // non-blocking
    injectglist(&list);
    netpollAdjustWaiters(delta);
  }
  lock(&sched.lock);
  int32_t procs = gomaxprocs;
  if (newprocs != 0) {
    procs = newprocs;
    newprocs = 0;
  }
  p* p1 = procresize(procs);
  sched.gcwaiting.Store(0);
  if (sched.sysmonwait.Load() != 0) {
    sched.sysmonwait.Store(0);
    plat::notewakeup(sched.sysmonnote);
  }
  unlock(&sched.lock);

  // Each P with work gets the M procresize reserved for it, or a new one.
  while (p1 != nullptr) {
    p* pp = p1;
    p1 = p1->link;
    if (m* mp2 = pp->m.get(); mp2 != nullptr) {
      pp->m.set(nullptr);
      if (mp2->nextp != nullptr) plat::throw_("startTheWorld: inconsistent mp->nextp");
      mp2->nextp = pp;
      plat::notewakeup(mp2->park);
    } else {
      newm(nullptr, pp, -1);  // this M starts no other below
    }
  }

  // The pause ends here, before the clean-up.
  if (now == 0) now = plat::nanotime();
  const int64_t totalTime = now - w.startedStopping;
  gcstats.stwCount++;
  gcstats.stwTotal += totalTime;
  gcstats.stwMax = std::max(gcstats.stwMax, totalTime);
  ev(Ev::STWDone, plat::getg(), mp->p, static_cast<int64_t>(w.reason));

  // Work may be left over in the queues beyond what the Ps started above will take: one more
  // spinning M goes looking (and, through resetspinning, brings more if there is more).
  wakep();
  releasem(mp);
  return now;
}

// ReadMemStats (mstats.go): the statistics are read with the world stopped. Here there is
// nothing to read (readmemstats_m has no counterpart), so only the stop and the restart remain.
void Runtime::ReadMemStats() {
  const worldStop stw = stopTheWorld(stwReason::stwReadMemStats);
  startTheWorld(stw);
}

// preemptall (proc.go): asks every running P's goroutine to stop; best effort. True if a
// request went out to at least one.
bool Runtime::preemptall() {
  bool res = false;
  for (p* pp : allp) {
    if (pp->status.get() != _Prunning) continue;
    if (preemptone(pp)) res = true;
  }
  return res;
}

// gcstopm (proc.go): the current M gives up its P to the stop-the-world and parks until the
// world restarts.
void Runtime::gcstopm() {
  g* gp = plat::getg();
  if (sched.gcwaiting.Load() == 0) plat::throw_("gcstopm: not waiting for gc");
  if (gp->m->spinning) {
    gp->m->spinning = false;
    ev(Ev::SpinStop, nullptr, gp->m->p, gp->m->id);
    // startTheWorld wakes whatever Ms the work needs, so the count simply drops.
    if (sched.nmspinning.Add(-1) < 0) plat::throw_("gcstopm: negative nmspinning");
  }
  p* pp = releasep();
  lock(&sched.lock);
  pp->status.set(_Pgcstop);
  pp->gcStopTime = plat::nanotime();
  sched.stopwait--;
  if (sched.stopwait == 0) plat::notewakeup(sched.stopnote);
  unlock(&sched.lock);
  stopm();
}

// entersyscallHandleGCWait (proc.go): a goroutine entering a system call while the world stops
// gives its P up to the stop rather than keep it for the length of the call.
void Runtime::entersyscallHandleGCWait() {
  g* gp = plat::getg();
  lock(&sched.lock);
  if (sched.stopwait > 0) {
    p* pp = gp->m->p;
    pp->m.set(nullptr);
    gp->m->p = nullptr;
    pp->status.Store(_Pgcstop);
    ev(Ev::ProcStop, gp, pp, 0);
    addGSyscallNoP(gp->m);  // the P was given up, not taken
    pp->gcStopTime = plat::nanotime();
    pp->syscalltick.set(pp->syscalltick.get() + 1);
    sched.stopwait--;
    if (sched.stopwait == 0) plat::notewakeup(sched.stopnote);
  }
  unlock(&sched.lock);
}

// forEachP (proc.go): fn(p) for every P at a safe point of that P. The caller holds worldsema.
void Runtime::forEachP(waitReason reason, const std::function<void(p*)>& fn) {
  // systemstack; casGToWaitingForSuspendG, as in stopTheWorldWithSema.
  g* gp = plat::getg();
  gp->waitreason = reason;
  casgstatus(gp, _Grunning, _Gwaiting);
  forEachPInternal(fn);
  casgstatus(gp, _Gwaiting, _Grunning);
}

// forEachPInternal (proc.go)
void Runtime::forEachPInternal(const std::function<void(p*)>& fn) {
  m* mp = acquirem();
  p* pp = plat::getg()->m->p;

  lock(&sched.lock);
  if (sched.safePointWait != 0) plat::throw_("forEachP: sched.safePointWait != 0");
  sched.safePointWait = gomaxprocs - 1;
  sched.safePointFn = fn;
  // Every other P is asked to run fn.
  for (p* p2 : allp) {
    if (p2 != pp) p2->runSafePointFn.Store(1);
  }
  preemptall();
  // From here on a P going idle or into a system call sees its flag and runs fn itself. The idle
  // Ps, fixed while sched.lock is held, have it run for them now.
  for (p* p2 = sched.pidle.load(); p2 != nullptr; p2 = p2->link) {
    if (p2->runSafePointFn.CompareAndSwap(1, 0)) {
      fn(p2);
      sched.safePointWait--;
    }
  }
  const bool wait = sched.safePointWait > 0;
  unlock(&sched.lock);

  fn(pp);  // this P's turn

  // A P held by a goroutine in a system call is taken from it and handed off, and runs fn on the
  // way (handoffp).
  for (p* p2 : allp) {
    if (p2->runSafePointFn.Load() != 1) continue;  // done already
    syscallingThread thread;
    if (setBlockOnExitSyscall(p2, thread)) {
      ev(Ev::ProcSteal, thread.gp, p2, thread.mp->id);
      thread.takeP();
      thread.resume();
      handoffp(p2);
    }
  }

  // The rest run fn at their next safe point; the requests are repeated every 100us.
  if (wait) {
    for (;;) {
      if (plat::notetsleep(sched.safePointNote, 100 * 1000)) {
        plat::noteclear(sched.safePointNote);
        break;
      }
      preemptall();
    }
  }
  if (sched.safePointWait != 0) plat::throw_("forEachP: not done");
  for (p* p2 : allp) {
    if (p2->runSafePointFn.get() != 0) plat::throw_("forEachP: P did not run fn");
  }

  lock(&sched.lock);
  sched.safePointFn = nullptr;
  unlock(&sched.lock);
  releasem(mp);
}

// runSafePointFn (proc.go): runs sched.safePointFn for the current P if it is still due; the CAS
// settles the race with forEachP running it on this P's behalf.
void Runtime::runSafePointFn() {
  p* pp = plat::getg()->m->p;
  if (!pp->runSafePointFn.CompareAndSwap(1, 0)) return;
  sched.safePointFn(pp);
  lock(&sched.lock);
  sched.safePointWait--;
  if (sched.safePointWait == 0) plat::notewakeup(sched.safePointNote);
  unlock(&sched.lock);
}

}  // namespace gmp::rt

namespace gmp::rt {

// GOMAXPROCS (debug.go): returns the current value and, for n >= 1, sets it under stop-the-world
// (procresize at the restart). Any n >= 1 turns the automatic updates off, even the current value.
int32_t Runtime::GOMAXPROCS(int32_t n) {
  lock(&sched.lock);
  const int32_t ret = gomaxprocs;
  if (n <= 0) {
    unlock(&sched.lock);
    return ret;
  }
  // Set before the stop, so that sysmon, which may be computing the default, gives up.
  sched.customGOMAXPROCS = true;
  unlock(&sched.lock);
  // A computation of the default under way ends before this goes on.
  lock(&computeMaxProcsLock);
  unlock(&computeMaxProcsLock);
  if (n == ret) return ret;  // updates off, nothing to resize
  const worldStop stw = stopTheWorldGC(stwReason::stwGOMAXPROCS);
  newprocs = n;  // for startTheWorldWithSema's procresize
  startTheWorldGC(stw);
  return ret;
}

// SetDefaultGOMAXPROCS (debug.go): back to the default value and the automatic updates.
void Runtime::SetDefaultGOMAXPROCS() {
  const int32_t procs = defaultGOMAXPROCS(0);
  lock(&sched.lock);
  const int32_t curr = gomaxprocs;
  const bool custom = sched.customGOMAXPROCS;
  unlock(&sched.lock);
  if (!custom && procs == curr) return;
  const worldStop stw = stopTheWorldGC(stwReason::stwGOMAXPROCS);
  newprocs = procs;
  lock(&sched.lock);
  sched.customGOMAXPROCS = false;
  unlock(&sched.lock);
  sysmonSkipsMaxProcs_.store(false, std::memory_order_relaxed);  // Not in Go: sysmon's check resumes (sysmon.cpp)
  startTheWorldGC(stw);
}

}  // namespace gmp::rt
