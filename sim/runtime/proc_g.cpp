// Goroutine state changes (proc.go): creation, blocking, readying, yielding, preemption, exit.
//
// A goroutine's status moves between _Grunnable (on a run queue), _Grunning (an M runs it),
// _Gwaiting (parked in the runtime, e.g. on a channel), _Gsyscall and _Gdead, always by CAS on
// atomicstatus. A goroutine leaves _Grunning only on its own M: gopark, Gosched and preemption all
// mcall to g0 first, so that the goroutine's stack is no longer in use when another M may pick it
// up. The _Gscan bit is held briefly by another thread (sysmon's retake) to freeze a syscalling
// goroutine's state; casgstatus waits for it to clear.
#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/runtime/mutants.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

namespace {
void goroutine_entry(void* arg);
}

// casgstatus (proc.go): moves gp from oldval to newval, waiting while another thread holds the
// _Gscan bit. Returns newval.
uint32_t Runtime::casgstatus(g* gp, uint32_t oldval, uint32_t newval) {
  if ((oldval & _Gscan) != 0 || (newval & _Gscan) != 0 || oldval == newval) {
    plat::throw_("casgstatus: bad incoming values");
  }
  constexpr int64_t yieldDelay = 5 * 1000;
  int64_t nextYield = 0;
  // A spin-wait (plat::SpinLoop): while the status keeps its _Gscan bit, each round reads the same
  // status and writes nothing; what the clock decides (pause or yield) changes nothing shared.
  // The first try is not marked: the loop's marks cost nothing where the CAS succeeds.
  plat::SpinLoop spin(false);
  for (int i = 0; !gp->atomicstatus.CompareAndSwap(oldval, newval); i++) {
    if (oldval == _Gwaiting && gp->atomicstatus.Load() == _Grunnable) {
      plat::throw_("casgstatus: waiting for Gwaiting but is Grunnable");
    }
    if (i == 0) nextYield = plat::nanotime() + yieldDelay;
    if (plat::nanotime() < nextYield) {
      for (int x = 0; x < 10 && gp->atomicstatus.Load() != oldval; x++) plat::charge(plat::Cost::ProcYield);
    } else {
      plat::osyield();
      nextYield = plat::nanotime() + yieldDelay / 2;
    }
    spin.again();
    spin.begin();
  }
  return newval;
}

// dropg (proc.go): disassociates the M from its current goroutine.
void Runtime::dropg() {
  g* gp = plat::getg();
  gp->m->curg.get()->m = nullptr;
  gp->m->curg.set(nullptr);
}

namespace {
// parkunlock_c (proc.go)
bool parkunlock_c(g*, void* lock) {
  unlock(static_cast<plat::Mutex*>(lock));
  return true;
}
}  // namespace

// gopark (proc.go): the running goroutine blocks. On g0 (park_m) it becomes _Gwaiting with
// reason, then unlockf(gp, lock) runs; if that returns false the goroutine is made runnable again
// at once, otherwise the M goes on to schedule.
void Runtime::gopark(bool (*unlockf)(g*, void*), void* lock, waitReason reason, int traceskip) {
  (void)traceskip;
  m* mp = acquirem();
  g* gp = mp->curg.get();
  const uint32_t status = readgstatus(gp);
  if (status != _Grunning && status != (_Gscan | _Grunning)) plat::throw_("gopark: bad g status");
  mp->waitlock = lock;
  mp->waitunlockf = unlockf;
  gp->waitreason = reason;
  releasem(mp);
  mcall(&Runtime::park_m);
}

// goparkunlock (proc.go)
void Runtime::goparkunlock(plat::Mutex* lock, waitReason reason, int traceskip) {
  gopark(&parkunlock_c, lock, reason, traceskip);
}

// park_m (proc.go): gopark's continuation on g0.
void Runtime::park_m(g* gp) {
  m* mp = plat::getg()->m;
  ev(Ev::GoPark, gp, mp->p, static_cast<int64_t>(gp->waitreason));
  casgstatus(gp, _Grunning, _Gwaiting);
  dropg();
  if (auto fn = mp->waitunlockf; fn != nullptr) {
    const bool ok = fn(gp, mp->waitlock);
    mp->waitunlockf = nullptr;
    mp->waitlock = nullptr;
    if (!ok) {
      casgstatus(gp, _Gwaiting, _Grunnable);
      execute(gp, true);  // schedule it back
      return;
    }
  }
  schedule();
}

// goready (proc.go)
void Runtime::goready(g* gp, int traceskip) { ready(gp, traceskip, true); }

// ready (proc.go): marks gp runnable and puts it in the current P's runnext (next) or run queue.
void Runtime::ready(g* gp, int traceskip, bool next) {
  (void)traceskip;
  const uint32_t status = readgstatus(gp);
  m* mp = acquirem();  // the P is held in a local variable
  if ((status & ~_Gscan) != _Gwaiting) plat::throw_("bad g->status in ready");
  casgstatus(gp, _Gwaiting, _Grunnable);
  ev(Ev::GoUnpark, gp, mp->p, next ? 1 : 0);
  runqput(mp->p, gp, next);
  wakep();
  releasem(mp);
}

// Gosched (proc.go)
void Runtime::Gosched() { mcall(&Runtime::gosched_m); }

// gosched_m (proc.go)
void Runtime::gosched_m(g* gp) { goschedImpl(gp, false); }

// goschedImpl (proc.go): puts gp on the global queue and schedules.
void Runtime::goschedImpl(g* gp, bool preempted) {
  p* pp = gp->m->p;
  const uint32_t status = readgstatus(gp);
  if ((status & ~_Gscan) != _Grunning) plat::throw_("bad g status");
  ev(preempted ? Ev::GoPreempt : Ev::GoSched, gp, pp, gp->asyncSafePoint ? 1 : 0);
  casgstatus(gp, _Grunning, _Grunnable);
  dropg();
  if (preempted && sched.gcwaiting.peek() != 0) {
    // Preempted to stop the world: gp waits in runnext, to run first once the world restarts.
    // (Go's atomic load of gcwaiting; not offered to the driver, see docs/fidelity.md 13.)
    runqput(pp, gp, true);
  } else {
    lock(&sched.lock);
    globrunqput(gp);
    unlock(&sched.lock);
  }
  // Mutant gosched-no-wakep: before ad943066f6 there was no wakep here, on the theory that the
  // schedule below runs gp anyway; but a spinning M that is giving up may have looked at the
  // global queue already, and this P may run something else first.
  if (mainStarted && !mutant(Mutant::GoschedNoWakep)) wakep();
  schedule();
}

// goyield (proc.go): like Gosched, but puts the goroutine on the local run queue's tail and
// does not emit a trace event. (Go's checkTimeouts is a no-op off wasm.)
void Runtime::goyield() { mcall(&Runtime::goyield_m); }

// goyield_m (proc.go)
void Runtime::goyield_m(g* gp) {
  p* pp = gp->m->p;
  casgstatus(gp, _Grunning, _Grunnable);
  dropg();
  runqput(pp, gp, false);
  schedule();
}

// gopreempt_m (proc.go)
void Runtime::gopreempt_m(g* gp) { goschedImpl(gp, true); }

// preemptPark (proc.go): parks gp in _Gpreempted for a suspendG. Nothing here suspends
// goroutines (no GC), so preemptStop is never set; kept for the shape of asyncPreempt2.
void Runtime::preemptPark(g* gp) {
  const uint32_t status = readgstatus(gp);
  if ((status & ~_Gscan) != _Grunning) plat::throw_("bad g status");
  if (!gp->atomicstatus.CompareAndSwap(_Grunning, _Gscan | _Gpreempted)) plat::throw_("preemptPark: bad status");
  dropg();
  if (!gp->atomicstatus.CompareAndSwap(_Gscan | _Gpreempted, _Gpreempted)) plat::throw_("preemptPark: bad status");
  schedule();
}

// newproc (proc.go): creates a goroutine running fn and puts it in the current P's runnext.
g* Runtime::newproc(uintptr_t fn, void* task) {
  g* gp = plat::getg();
  g* newg = newproc1(fn, task, gp, false, waitReason::waitReasonZero);
  p* pp = plat::getg()->m->p;
  runqput(pp, newg, true);
  if (mainStarted) wakep();
  return newg;
}

// newproc1 (proc.go): allocates (or reuses) a G in state _Grunnable (or _Gwaiting if parked).
g* Runtime::newproc1(uintptr_t fn, void* task, g* callergp, bool parked, waitReason reason) {
  m* mp = acquirem();  // M and P are held in local variables
  p* pp = mp->p;
  g* newg = gfget(pp);
  if (newg == nullptr) {
    newg = malg();
    casgstatus(newg, _Gidle, _Gdead);
    allgadd(newg);  // published as _Gdead, so a reader of allgs skips it until it is set up
  }
  if (newg->stack == nullptr) plat::throw_("newproc1: newg missing stack");
  if (readgstatus(newg) != _Gdead) plat::throw_("newproc1: new g is not Gdead");
  plat::charge(plat::Cost::NewProc);
  newg->stack->reset(&goroutine_entry, newg);
  newg->parentGoid = callergp->goid;
  newg->startpc = fn;
  newg->task = task;
  newg->runningCleanups.Store(0);
  // Go gives user goroutines the creator's synctest bubble and profiling labels (not modelled).
  if (isSystemGoroutine(newg)) sched.ngsys.Add(1);
  // Whether to sample this goroutine's scheduling latency. The statistics are left out
  // (docs/fidelity.md, 22), but the draw advances m.cheaprand as in Go, so later draws (steal
  // order, select, sema tickets) stay Go's.
  newg->trackingSeq = static_cast<uint8_t>(cheaprand());
  newg->tracking = newg->trackingSeq % gTrackingPeriod == 0;
  gcController.addScannableStack(pp, startingStackSize);

  uint32_t status = _Grunnable;
  if (parked) {
    status = _Gwaiting;
    newg->waitreason = reason;
  }
  if (pp->goidcache == pp->goidcacheend) {
    pp->goidcache = sched.goidgen.Add(_GoidCacheBatch);
    pp->goidcache -= _GoidCacheBatch - 1;
    pp->goidcacheend = pp->goidcache + _GoidCacheBatch;
  }
  newg->goid = static_cast<int64_t>(pp->goidcache);
  casgstatus(newg, _Gdead, status);
  pp->goidcache++;
  ev(Ev::GoCreate, newg, pp, callergp->goid);
  pp->goroutinesCreated++;
  releasem(mp);
  return newg;
}

// allgadd (proc.go): adds gp to allgs under allglock, and publishes the slice's address (when
// append moved it) and length for readers that take no lock. Go's append grows the slice by its
// own rule, std::vector by doubling: the moves, and so the allgptr stores, come at other lengths.
void Runtime::allgadd(g* gp) {
  if (readgstatus(gp) == _Gidle) plat::throw_("allgadd: bad status Gidle");
  lock(&allglock);
  allgs.push_back(gp);
  if (allgs.data() != allgptr.get()) allgptr.Store(allgs.data());  // atomicstorep
  allglen.Store(allgs.size());  // atomic.Storeuintptr
  unlock(&allglock);
}

// gfget (proc.go): a dead G from pp's free list, refilled from the global one.
g* Runtime::gfget(p* pp) {
  for (;;) {  // retry
    if (pp->gFree.empty() && (!sched.gFree.stack.emptyRacy() || !sched.gFree.noStack.emptyRacy())) {
      lock(&sched.gFree.lock);
      while (pp->gFree.size < 32) {
        g* gp = sched.gFree.stack.pop();
        if (gp == nullptr) {
          gp = sched.gFree.noStack.pop();
          if (gp == nullptr) break;
        }
        pp->gFree.push(gp);
      }
      unlock(&sched.gFree.lock);
      continue;
    }
    return pp->gFree.pop();  // stacks are never freed here, so every free G keeps its stack
  }
}

// gfput (proc.go): puts a dead G on pp's free list, moving half to the global list when long.
void Runtime::gfput(p* pp, g* gp) {
  if (readgstatus(gp) != _Gdead) plat::throw_("gfput: bad status (not Gdead)");
  pp->gFree.push(gp);
  if (pp->gFree.size >= 64) {
    gQueue stackQ;
    while (pp->gFree.size >= 32) stackQ.push(pp->gFree.pop());
    lock(&sched.gFree.lock);
    sched.gFree.stack.pushAll(stackQ);
    unlock(&sched.gFree.lock);
  }
}

// goexit1 (proc.go): finishes the current goroutine.
void Runtime::goexit1() {
  g* gp = plat::getg();
  ev(Ev::GoEnd, gp, gp->m->p, 0);
  mcall(&Runtime::goexit0);
  plat::throw_("goexit1: a dead goroutine was resumed");
}

// goexit0 (proc.go)
void Runtime::goexit0(g* gp) {
  m* mp = plat::getg()->m;
  const bool locked = gdestroy(gp);
  // A goroutine that exits locked to its thread takes the thread with it (Go jumps to g0's
  // saved context, returning from mstart into mexit).
  if (locked && mp->lockedExt != 0) {
    mp->lockedExt = 0;
    mexit();
  }
  schedule();
}

// gdestroy (proc.go). Returns whether gp was locked to its thread, for goexit0: Go jumps from
// here to g0's saved context instead (see goexit0).
bool Runtime::gdestroy(g* gp) {
  m* mp = plat::getg()->m;
  p* pp = mp->p;
  casgstatus(gp, _Grunning, _Gdead);
  gcController.addScannableStack(pp, -startingStackSize);
  if (isSystemGoroutine(gp)) sched.ngsys.Add(-1);
  gp->m = nullptr;
  const bool locked = gp->lockedm.get() != nullptr;
  gp->lockedm.set(nullptr);
  mp->lockedg = nullptr;
  gp->preemptStop = false;
  gp->waitreason = waitReason::waitReasonZero;
  gp->param = nullptr;
  // Go also sets gp.timer to nil, so a reused G allocates a fresh sleep timer and the GC frees the
  // old one. With no GC that would keep every dropped timer until the run ends; the fired timer
  // is out of every heap and unlocked, so reusing it makes the same operations
  // (docs/fidelity.md, 15).
  gp->task = nullptr;
  // A goroutine that dies with assist credit to spare leaves it to the others while marking
  // (gcBlackenEnabled: Go's plain read, stable but for stops).
  if (gcBlackenEnabled.peek() != 0 && gp->gcAssistBytes > 0) {
    const double assistWorkPerByte = gcController.assistWorkPerByte.Load();
    const auto scanCredit = static_cast<int64_t>(assistWorkPerByte * static_cast<double>(gp->gcAssistBytes));
    gcController.bgScanCredit.Add(scanCredit);
    gp->gcAssistBytes = 0;
  }
  dropg();
  if (locked && mp->lockedInt != 0) plat::throw_("exited a goroutine internally locked to the OS thread");
  gfput(pp, gp);
  return locked;
}

// dolockOSThread (proc.go): wires the goroutine and its M together.
void Runtime::dolockOSThread() {
  g* gp = plat::getg();
  gp->m->lockedg = gp;
  gp->lockedm.set(gp->m);
}

// dounlockOSThread (proc.go): unwires them once neither count holds the lock.
void Runtime::dounlockOSThread() {
  g* gp = plat::getg();
  if (gp->m->lockedInt != 0 || gp->m->lockedExt != 0) return;
  gp->m->lockedg = nullptr;
  gp->lockedm.set(nullptr);
}

// LockOSThread (proc.go), without the template thread (newm from a locked thread is direct here).
void Runtime::LockOSThread() {
  plat::getg()->m->lockedExt++;
  dolockOSThread();
}

// UnlockOSThread (proc.go)
void Runtime::UnlockOSThread() {
  g* gp = plat::getg();
  if (gp->m->lockedExt == 0) return;
  gp->m->lockedExt--;
  dounlockOSThread();
}

// lockOSThread (proc.go): the runtime's own, counted apart from the program's LockOSThread.
void Runtime::lockOSThread() {
  plat::getg()->m->lockedInt++;
  dolockOSThread();
}

// unlockOSThread (proc.go)
void Runtime::unlockOSThread() {
  g* gp = plat::getg();
  if (gp->m->lockedInt == 0) plat::throw_("runtime: internal error: misuse of lockOSThread/unlockOSThread");
  gp->m->lockedInt--;
  dounlockOSThread();
}

// malg (proc.go): a new G with its own stack. A pooled stack's slot is chosen by the G's place in
// allocation order, which the run determines.
g* Runtime::malg() {
  g* newg = gstore_.make();
  const uint64_t key = ctxstore_.size();
  newg->stack = stackpool_ != nullptr ? ctxstore_.make(&goroutine_entry, newg, newg, *stackpool_, key)
                                      : ctxstore_.make(&goroutine_entry, newg, newg);
  return newg;
}

namespace {
// The bottom frame of every goroutine's stack (Go's goexit frame below the function): runs the
// goroutine's code, then goexit1. The main goroutine runs runtime.main instead.
void goroutine_entry(void* arg) {
  auto* gp = static_cast<g*>(arg);
  Runtime& r = *Runtime::current();
  if (gp->startpc == 0) {
    r.runtime_main();
  } else if (gp->startpc >= kRuntimeFuncBase) {
    r.runSystemGoroutine(gp);
  } else {
    r.host->runGoroutine(gp);
  }
  r.goexit1();
}
}  // namespace

}  // namespace gmp::rt
