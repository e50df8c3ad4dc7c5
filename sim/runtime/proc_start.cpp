// Program start and M creation (proc.go, asm_amd64.s's rt0_go): schedinit, procresize (at start
// and at every restart of the world) with p.init and p.destroy,
// runtime.main, mstart, newm/allocm, mexit.
#include <atomic>
#include <optional>

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

// procresize (proc.go): sets the P count to nprocs, at program start and at every restart of the
// world (the same count, or newprocs). New Ps are made or brought back from allp's spare
// capacity; Ps past the new count are destroyed. Returns the Ps that have local work, each with
// the M to run it in p.m (nil: start a new one), linked by p.link; the others go idle.
// sched.lock is held and the world is stopped.
p* Runtime::procresize(int32_t nprocs) {
  assertLockHeld(sched.lock);
  const int32_t old = procresizeOld_;
  if (old < 0 || nprocs <= 0) plat::throw_("procresize: invalid arg");
  // trace.Gomaxprocs, made only when the count changes (at start: when it is not the count the
  // Runtime was built with, which the trace's header gives).
  if (nprocs != gomaxprocs) ev(Ev::ProcsChange, nullptr, nullptr, nprocs);

  // P-time statistics.
  const int64_t now = plat::nanotime();
  if (sched.procresizetime != 0) sched.totaltime += static_cast<int64_t>(old) * (now - sched.procresizetime);
  sched.procresizetime = now;

  // Growing allp: Go takes allpLock here against retake, which walks allp without a P; the port
  // takes none (retake and timeSleepUntil index allp afresh at each step; docs/fidelity.md, 20).
  // The Ps that allp held past its length before come back (pstore_ keeps every P made).
  if (nprocs > static_cast<int32_t>(allp.size())) {
    while (static_cast<int32_t>(allp.size()) < nprocs) {
      const size_t i = allp.size();
      allp.push_back(i < pstore_.size() ? pstore_[i].get() : nullptr);
    }
    idlepMask.resize(nprocs);
    timerpMask.resize(nprocs);
  }

  // The new Ps (Go publishes each with atomicstorep; the world is stopped and allp's readers
  // without a P index it afresh).
  for (int32_t i = old; i < nprocs; i++) {
    p* pp = allp[static_cast<size_t>(i)];
    if (pp == nullptr) pp = newP(i);
    pinit(pp);
    allp[static_cast<size_t>(i)] = pp;
  }

  g* gp = plat::getg();
  if (gp->m->p != nullptr && gp->m->p->id < nprocs) {
    gp->m->p->status.set(_Prunning);  // keep the current P
  } else {
    // The current P goes away (or there is none yet, at start): move to P 0 before the destroy
    // below, which runs on a P. The tracer sees the goroutine leave its P and start on P 0.
    p* cur = gp->m->p;
    if (cur != nullptr) {
      ev(Ev::GoSched, gp, cur, 0);
      ev(Ev::ProcStop, nullptr, cur, 0);
      cur->m.set(nullptr);
    }
    gp->m->p = nullptr;
    p* pp = allp[0];
    pp->m.set(nullptr);
    pp->status.set(_Pidle);
    acquirep(pp);
    if (cur != nullptr) ev(Ev::GoStart, gp, pp, 0);
  }

  // What the Ps past the new count hold goes to the others; the P structs stay (an M in a system
  // call may still point at one).
  for (int32_t i = nprocs; i < old; i++) pdestroy(allp[static_cast<size_t>(i)]);

  // Trimming allp (Go's allpLock again).
  if (static_cast<int32_t>(allp.size()) != nprocs) {
    allp.resize(static_cast<size_t>(nprocs));
    idlepMask.resize(nprocs);
    timerpMask.resize(nprocs);
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
  // Go's atomic store of gomaxprocs (its readers read it plainly). Made only when the value
  // changes: a store of the value already there changes nothing another thread could see, and
  // every restart of the world with the same count keeps the operations it made before.
  if (gomaxprocs != nprocs) {
    plat::offer_access(plat::Op::Store, sizeof(int32_t), &gomaxprocs, static_cast<uint64_t>(nprocs), 0, nullptr);
    std::atomic_ref<int32_t>(gomaxprocs).store(nprocs, std::memory_order_seq_cst);
  }
  procresizeOld_ = nprocs;
  if (old != nprocs) {
    // The CPU limiter's capacity follows the P count. At start no other thread exists, and its
    // operations are not offered to the driver then (docs/fidelity.md, "The garbage collector").
    std::optional<plat::DriverScope> quiet;
    if (old == 0) quiet.emplace(nullptr);
    gcCPULimiter.resetCapacity(now, nprocs);
  }
  return runnablePs;
}

// p.init (proc.go), the part that touches shared state: a P may get timers as soon as it runs, and
// P 0 starts running without pidleget, which would otherwise set and clear these bits. The P's
// id and timer heap are newP's. Go's init also stores _Pgcstop; here only a P brought back from
// _Pdead gets that store: a new P's first status store is procresize's own a few lines later
// (_Pidle or _Prunning), so the start keeps the operations it made before.
void Runtime::pinit(p* pp) {
  if (pp->status.peek() == _Pdead) pp->status.set(_Pgcstop);
  timerpMask.set(pp->id);
  idlepMask.clear(pp->id);
}

// p.destroy (proc.go): pp's goroutines, timers and caches go to the rest of the runtime, and pp
// becomes _Pdead. sched.lock is held and the world is stopped.
void Runtime::pdestroy(p* pp) {
  assertLockHeld(sched.lock);
  // The local run queue, from its tail, then runnext, each to the head of the global queue: they
  // come out in the order the P would have run them, runnext first.
  for (;;) {
    const uint32_t h = pp->runqhead.get();
    const uint32_t t = pp->runqtail.get();
    if (h == t) break;
    pp->runqtail.set(t - 1);
    globrunqputhead(pp->runq[(t - 1) % kRunqSize].get());
  }
  if (g* next = pp->runnext.get(); next != nullptr) {
    globrunqputhead(next);
    pp->runnext.set(nullptr);
  }
  // Its timers join the current P's heap (timers.take).
  timersTake(plat::getg()->m->p, pp);
  // No write-barrier buffer or span queue to flush: a P is never destroyed while marking.
  if (const uint32_t phase = gcphase.get(); phase != _GCoff) plat::throw_("P destroyed while GC is running");
  pp->sudogcache.clear();               // the sudogs stay in the runtime's registry (Go's GC frees them)
  pp->mcache_.releaseAll(*this, true);  // freemcache
  gfpurge(pp);
  pp->gcAssistTime = 0;
  sched.goroutinesCreated.Add(pp->goroutinesCreated);
  pp->goroutinesCreated = 0;
  pp->status.set(_Pdead);
}

// gfpurge (proc.go): pp's free goroutines go to the global free list. Every free goroutine here
// keeps its stack (stacks are never freed), so they all go on sched.gFree.stack.
void Runtime::gfpurge(p* pp) {
  gQueue stackQ;
  gQueue noStackQ;
  while (!pp->gFree.empty()) stackQ.push(pp->gFree.pop());
  lock(&sched.gFree.lock);
  sched.gFree.noStack.pushAll(noStackQ);
  sched.gFree.stack.pushAll(stackQ);
  unlock(&sched.gFree.lock);
}

// schedinit (proc.go), the scheduler's part, run on m0. GOMAXPROCS is the variable's value when
// it was given (maxprocsSettings.explicit_: the count the Runtime was built with), else Go's
// default from the CPUs the process may use and its cgroup's limit.
void Runtime::schedinit() {
  g* gp = plat::getg();
  sched.maxmcount = 10000;
  mcommoninit(gp->m, -1);
  numCPUStartup = getCPUCount();  // osinit's, which Go runs before schedinit
  defaultGOMAXPROCSInit();
  lock(&sched.lock);
  // Go's runtime.main reads the clock again for runtimeInitTime; this read stands for it, so that
  // programs keep their clock reads (docs/fidelity.md, "The garbage collector").
  runtimeInitTime = plat::nanotime();
  sched.lastpoll.Store(runtimeInitTime);
  int32_t procs = 0;
  if (maxprocsSettings.explicit_) {
    procs = constructedProcs_;
    sched.customGOMAXPROCS = true;
    sysmonSkipsMaxProcs_.store(true, std::memory_order_relaxed);
  } else {
    procs = defaultGOMAXPROCS(numCPUStartup);
  }
  if (procresize(procs) != nullptr) plat::throw_("unknown runnable goroutine during bootstrap");
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
