// Program start and M creation (proc.go, asm_amd64.s's rt0_go): schedinit, procresize at start,
// runtime.main, mstart, newm/allocm, mexit.
#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/runtime/runtime.h"
#include "sim/runtime/time.h"

namespace gmp::rt {

namespace {
thread_local Runtime* tls_runtime = nullptr;

void mstart_entry(void* arg) {
  (void)arg;
  Runtime::current()->mstart0();
}
}  // namespace

Runtime* Runtime::current() { return tls_runtime; }
void Runtime::setCurrent(Runtime* r) { tls_runtime = r; }

// acquirem (runtime1.go)
m* Runtime::acquirem() {
  g* gp = plat::getg();
  gp->m->locks++;
  return gp->m;
}

// releasem (runtime1.go)
void Runtime::releasem(m* mp) {
  g* gp = plat::getg();
  mp->locks--;
  if (mp->locks == 0 && gp->preempt()) {
    // The last lock is gone: re-arm a pending preemption, which newstack may have disarmed
    // while the locks were held.
    gp->stackguard0.set(stackPreempt);
  }
}

// mReserveID (proc.go)
int64_t Runtime::mReserveID() {
  assertLockHeld(sched.lock);
  if (sched.mnext + 1 < sched.mnext) plat::throw_("runtime: thread ID overflow");
  const int64_t id = sched.mnext;
  sched.mnext++;
  if (mcount() > sched.maxmcount) plat::fatal("thread exhaustion");  // checkmcount
  return id;
}

// mcommoninit (proc.go)
void Runtime::mcommoninit(m* mp, int64_t id) {
  lock(&sched.lock);
  mp->id = id >= 0 ? id : mReserveID();
  // mrandinit: cheaprand state from the run seed (see docs/fidelity.md).
  mp->cheaprand = static_cast<uint32_t>(seed_.next());
  mp->cheaprand64 = seed_.next();
  // Push mp onto allm. Some of Go's readers of allm (NumCgoCall, for one) walk it without
  // sched.lock, so the new head goes out by atomic store (atomicstorep, an XCHG on amd64: a
  // sequentially consistent store, not merely a release).
  mp->alllink = allm.get();
  allm.Store(mp);
  unlock(&sched.lock);
}

// allocm (proc.go). The new M is a heap object, allocated on a P: the caller's, or pp borrowed
// for the allocation when the caller has none (sysmon, an M handing its P off), with preemption
// off so that nobody takes pp meanwhile. Not in Go: in a program that has not allocated, the M is
// not allocated on the heap and pp is not borrowed (the port leaves the runtime's other
// allocations out, and such a program's runs stay what they were; docs/fidelity.md).
m* Runtime::allocm(p* pp, void (Runtime::*fn)(), int64_t id) {
  acquirem();
  g* gp = plat::getg();
  const bool onHeap = gcstats.allocBytes != 0;  // a plain read of the run's totals
  if (onHeap && gp->m->p == nullptr && pp != nullptr) acquirep(pp);  // the borrow
  mstore_.push_back(std::make_unique<m>());
  m* mp = mstore_.back().get();
  // new(mPadded): reachable from allm for good.
  if (onHeap && gp->m->p != nullptr) mallocgc(mPaddedSize, 1, true);
  mp->mstartfn = fn;
  mcommoninit(mp, id);
  mp->g0 = gstore_.make();  // its stack is the new thread's own (newosproc)
  mp->g0->m = mp;
  if (onHeap && pp != nullptr && pp == gp->m->p) releasep();
  releasem(gp->m);
  return mp;
}

// newm (proc.go): creates a new M that starts with fn (if any) and then pp.
void Runtime::newm(void (Runtime::*fn)(), p* pp, int64_t id) {
  acquirem();
  m* mp = allocm(pp, fn, id);
  mp->nextp = pp;
  ev(Ev::MCreate, nullptr, pp, mp->id);
  newm1(mp);
  releasem(plat::getg()->m);
}

// newm1 (proc.go)
void Runtime::newm1(m* mp) { host->newosproc(mp, &mstart_entry, mp); }

// mstart0 (proc.go): the entry of every new M, on its g0.
void Runtime::mstart0() {
  mstart1();
  g0loop();  // never returns: see proc_stack.cpp
}

// mstart1 (proc.go)
void Runtime::mstart1() {
  g* gp = plat::getg();
  if (gp != gp->m->g0) plat::throw_("bad runtime·mstart");
  gp->m->procid = plat::gettid();  // minit
  if (auto fn = gp->m->mstartfn; fn != nullptr) (this->*fn)();
  if (gp->m != m0) {
    acquirep(gp->m->nextp);
    gp->m->nextp = nullptr;
  }
  schedule();
}

// mexit (proc.go): tears down and exits the current thread.
void Runtime::mexit() {
  m* mp = plat::getg()->m;
  if (mp == m0) {
    // m0 never exits: it hands off its P and parks for good.
    handoffp(releasep());
    lock(&sched.lock);
    sched.nmfreed++;
    checkdead();
    unlock(&sched.lock);
    mPark();
    plat::throw_("locked m0 woke up");
  }
  lock(&sched.lock);
  // Go walks allm through a pointer to each link, allm itself first: plain reads and a plain
  // store under sched.lock.
  bool found = false;
  if (m* head = allm.get(); head == mp) {
    allm.set(mp->alllink);
    found = true;
  } else {
    for (m* prev = head; prev != nullptr && prev->alllink != nullptr; prev = prev->alllink) {
      if (prev->alllink == mp) {
        prev->alllink = mp->alllink;
        found = true;
        break;
      }
    }
  }
  if (!found) plat::throw_("m not found in allm");
  unlock(&sched.lock);
  // Release the P for others.
  handoffp(releasep());
  lock(&sched.lock);
  sched.nmfreed++;
  checkdead();
  unlock(&sched.lock);
  host->exitThread();
}

// procresize (proc.go): at program start, and again at each restart of the world with the same
// count (GOMAXPROCS never changes here, so the growing and shrinking of allp is left out). Returns
// the Ps that have local work, each with the M to run it in p.m (nil: start a new one), linked by
// p.link; the others go idle. sched.lock is held.
p* Runtime::procresize(int32_t nprocs) {
  assertLockHeld(sched.lock);
  const int32_t old = procresizeOld_;
  if (old < 0 || nprocs <= 0 || nprocs != static_cast<int32_t>(allp.size())) plat::throw_("procresize: invalid arg");
  const int64_t now = plat::nanotime();
  for (int32_t i = old; i < nprocs; i++) pinit(allp[static_cast<size_t>(i)]);
  g* gp = plat::getg();
  if (gp->m->p != nullptr && gp->m->p->id < nprocs) {
    gp->m->p->status.set(_Prunning);  // keep the current P
  } else {
    p* pp = allp[0];
    pp->m.set(nullptr);
    pp->status.set(_Pidle);
    acquirep(pp);
  }
  p* runnablePs = nullptr;
  p* runnablePsNeedM = nullptr;
  p* idlePs = nullptr;
  for (int32_t i = nprocs - 1; i >= 0; i--) {
    p* pp = allp[static_cast<size_t>(i)];
    if (gp->m->p == pp) continue;
    pp->status.set(_Pidle);
    // At start every P is new and its queue empty: the port reads no queue then (Go would find
    // them empty), so that the start makes the operations it made before stop-the-world existed.
    if (old == 0 || runqempty(pp)) {
      pp->link = idlePs;
      idlePs = pp;
      continue;
    }
    // A P with work: the M it last ran on, if that one is idle, else any (below).
    m* mp = nullptr;
    if (m* oldm = pp->oldm; oldm != nullptr) mp = mgetSpecific(oldm);
    if (mp == nullptr) {
      pp->link = runnablePsNeedM;
      runnablePsNeedM = pp;
      continue;
    }
    pp->m.set(mp);
    pp->link = runnablePs;
    runnablePs = pp;
  }
  while (runnablePsNeedM != nullptr) {
    p* pp = runnablePsNeedM;
    runnablePsNeedM = pp->link;
    m* mp = mget();
    pp->m.set(mp);
    pp->link = runnablePs;
    runnablePs = pp;
  }
  // During marking, idle Ps get the waiting mark workers (and an M each, if one is idle) so that
  // the restart starts them at once; gcBlackenEnabled is Go's plain read, stable while stopped.
  if (gcBlackenEnabled.peek() != 0) {
    while (idlePs != nullptr) {
      p* pp = idlePs;
      if (!gcController.assignWaitingGCWorker(pp, now).first) break;  // no more workers needed
      idlePs = pp->link;
      m* mp = mget();
      pp->m.set(mp);
      pp->link = runnablePs;
      runnablePs = pp;
    }
  }
  while (idlePs != nullptr) {
    p* pp = idlePs;
    idlePs = pp->link;
    pidleput(pp, now);
  }
  stealOrder.reset(static_cast<uint32_t>(nprocs));
  procresizeOld_ = nprocs;  // Go's atomic store of gomaxprocs (the same value here)
  if (old != nprocs) {
    // The CPU limiter's capacity follows the P count. Its operations are not offered to the
    // driver (docs/fidelity.md, "The garbage collector"): at start no other thread exists.
    plat::DriverScope quiet(nullptr);
    gcCPULimiter.resetCapacity(now, nprocs);
  }
  return runnablePs;
}

// p.init (proc.go), the part that touches shared state: a P may get timers as soon as it runs, and
// P 0 starts running without pidleget, which would otherwise set and clear these bits. The rest of
// the P's set-up is done when the Runtime is built.
void Runtime::pinit(p* pp) {
  timerpMask.set(pp->id);
  idlepMask.clear(pp->id);
}

// schedinit (proc.go), the scheduler's part, run on m0.
void Runtime::schedinit() {
  g* gp = plat::getg();
  sched.maxmcount = 10000;
  mcommoninit(gp->m, -1);
  lock(&sched.lock);
  // Go's runtime.main reads the clock again for runtimeInitTime; this read stands for it, so that
  // programs keep their clock reads (docs/fidelity.md, "The garbage collector").
  runtimeInitTime = plat::nanotime();
  sched.lastpoll.Store(runtimeInitTime);
  if (procresize(gomaxprocs) != nullptr) plat::throw_("unknown runnable goroutine during bootstrap");
  unlock(&sched.lock);
}

namespace {
void rt0_entry(void* arg) { static_cast<Runtime*>(arg)->rt0_go(0, nullptr); }
}  // namespace

void Runtime::boot(uint64_t seed) {
  seed_ = SplitMix64(seed);
  // Go's schedinit calls gcinit on m0. Here it runs before m0's thread starts (docs/fidelity.md,
  // "The garbage collector"): its stores come before any M exists, so no thread can tell, and as
  // m0's operations they would add steps to every program's schedule.
  gcinit();
  host->newosproc(m0, &rt0_entry, this);
}

// rt0_go (asm_amd64.s): the body of m0's thread: schedinit, the main goroutine, mstart.
void Runtime::rt0_go(uintptr_t mainpc, void* maintask) {
  (void)mainpc;
  m0->procid = plat::gettid();
  schedinit();
  g* maing = newproc(0, maintask);  // startpc 0: runtime.main
  (void)maing;
  mstart0();
}

// runtime.main (proc.go), the scheduler's part: start sysmon, run the runtime's init with the main
// goroutine locked to m0 (proc_init.cpp), then main.main, then exit.
void Runtime::runtime_main() {
  mainStarted = true;
  if (haveSysmon) newm(&Runtime::sysmon, nullptr, -1);
  // The main goroutine stays on the main OS thread during initialization.
  lockOSThread();
  runtimeInit();
  gcenable();
  defaultGOMAXPROCSUpdateEnable();  // after gcenable, still locked to m0, as in Go
  unlockOSThread();
  host->runGoroutine(plat::getg());
  host->exit(0);
}

}  // namespace gmp::rt
