// Single ported functions against Go's order of operations: what each does to the M, and the
// shared-memory operations it makes, as a driver that records them sees them.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/platform/driver.h"
#include "sim/platform/platform.h"
#include "sim/platform/throw.h"
#include "sim/runtime/runtime.h"
#include "sim/runtime/time.h"

using namespace gmp;
using namespace gmp::rt;

namespace {

// A driver that records the accesses it is offered and lets everything else through at once.
class Recorder final : public plat::Driver {
 public:
  std::vector<plat::Access> seen;
  void access(const plat::Access& a) override { seen.push_back(a); }
  void lock(plat::Mutex& l) override { l.key.store(1); }
  void unlock(plat::Mutex& l) override {
    l.key.store(0);
    unlocked_at = static_cast<long>(seen.size());
  }
  long unlocked_at = -1;  // how many accesses came before the last unlock
  void notesleep(plat::Note&) override {}
  bool notetsleep(plat::Note&, int64_t) override { return true; }
  void notewakeup(plat::Note&) override {}
  void usleep(uint32_t) override {}
  void osyield() override {}
  int64_t nanotime() override { return 1000; }
  uint64_t gettid() override { return 7; }
  void tgkill(uint64_t, int) override {}
  void charge(plat::Cost) override {}
  int64_t compute(int64_t, double) override { return 0; }
  void block_for(int64_t) override {}
  void switchto(plat::Context&) override {}
  void crash(const char*) override {}

  // The cells accessed, in order.
  std::vector<const void*> addrs() const {
    std::vector<const void*> out;
    for (const plat::Access& a : seen) out.push_back(a.addr);
    return out;
  }
  // The position of the first access to addr (with op, if given) at or after from; -1 if none.
  long find(const void* addr, long from = 0) const {
    for (long i = from; i < static_cast<long>(seen.size()); i++) {
      if (seen[static_cast<size_t>(i)].addr == addr) return i;
    }
    return -1;
  }
};

// A Runtime with m0 running P 0 on the calling OS thread: getg() is m0's g0, as for code that runs
// in the scheduler.
struct OnM0 {
  Runtime r{1};
  p* pp = r.allp[0];
  g* saved = plat::getg();
  OnM0() {
    Runtime::setCurrent(&r);
    plat::setg(r.g0);
    r.m0->p = pp;
    pp->m.set(r.m0);
    pp->status.set(_Prunning);
  }
  ~OnM0() {
    plat::setg(saved);
    Runtime::setCurrent(nullptr);
  }
  OnM0(const OnM0&) = delete;
  OnM0& operator=(const OnM0&) = delete;
};

// Checks that the accesses to cells come in this order (other accesses may come in between).
void checkOrder(const Recorder& rec, const std::vector<std::pair<const char*, const void*>>& cells) {
  long at = 0;
  for (const auto& [name, addr] : cells) {
    INFO("cell " << name);
    const long i = rec.find(addr, at);
    REQUIRE(i >= 0);
    at = i + 1;
  }
}

}  // namespace

TEST_CASE("a runtime lock counts mutexMLocksDelta on the M while it is held", "[proc][lock]") {
  OnM0 w;
  m* mp = w.r.m0;
  plat::Mutex a, b;
  lock(&a);
  CHECK(plat::lock_held(a));
  CHECK(mp->locks == mutexMLocksDelta);
  lock(&b);
  CHECK(mp->locks == 2 * mutexMLocksDelta);
  w.r.acquirem();  // acquirem/releasem count 1 each, on the same field
  CHECK(mp->locks == 2 * mutexMLocksDelta + 1);
  w.r.releasem(mp);
  unlock(&b);
  CHECK(mp->locks == mutexMLocksDelta);
  unlock(&a);
  CHECK_FALSE(plat::lock_held(a));
  CHECK(mp->locks == 0);
}

TEST_CASE("unlock reads the mutex profile rate before it releases, then the goroutine's preempt flag", "[proc][lock]") {
  OnM0 w;
  plat::Mutex mu;
  Recorder rec;
  plat::DriverScope scope(&rec);
  lock(&mu);
  CHECK(rec.seen.empty());  // lock2's own operations are the platform's
  unlock(&mu);
  CHECK(rec.addrs() == std::vector<const void*>{&w.r.mutexprofilerate, &w.r.g0->preempt_});
  CHECK(rec.unlocked_at == 1);
}

TEST_CASE("lock and unlock throw on a bad lock count, as lock2 and unlock2 do", "[proc][lock]") {
  OnM0 w;
  plat::Mutex mu;
  SECTION("an unlock that the M never counted") {
    plat::lock(mu);  // taken behind the M's back
    CHECK_THROWS_WITH(unlock(&mu), "fatal error: runtime·unlock: lock count");
    CHECK_FALSE(plat::lock_held(mu));  // unlock2 releases first, then checks
  }
  SECTION("a lock with the count already negative") {
    w.r.m0->locks = -1;
    CHECK_THROWS_WITH(lock(&mu), "fatal error: runtime·lock: lock count");
    CHECK_FALSE(plat::lock_held(mu));
  }
}

TEST_CASE("the last unlock puts back a preemption request that newstack set aside", "[proc][lock]") {
  OnM0 w;
  g* gp = w.r.g0;
  plat::Mutex mu;
  gp->setPreempt(true);
  lock(&mu);
  gp->stackguard0.set(stackGuardNormal);  // newstack found the M could not be preempted
  m* mp = w.r.acquirem();
  unlock(&mu);
  CHECK(gp->stackguard0.peek() == stackGuardNormal);  // acquirem still holds the M
  w.r.releasem(mp);
  CHECK(gp->stackguard0.peek() == stackPreempt);
  gp->stackguard0.set(stackGuardNormal);
  lock(&mu);
  unlock(&mu);
  CHECK(gp->stackguard0.peek() == stackPreempt);
  gp->setPreempt(false);
  gp->stackguard0.set(stackGuardNormal);
  lock(&mu);
  unlock(&mu);
  CHECK(gp->stackguard0.peek() == stackGuardNormal);
}

TEST_CASE("canPreemptM reads m.locks, the P's status, m.curg and its status, in Go's order", "[proc][preempt]") {
  OnM0 w;
  m* mp = w.r.m0;
  g user;
  user.atomicstatus.set(_Grunning);
  user.m = mp;
  mp->curg.set(&user);
  Recorder rec;
  plat::DriverScope scope(&rec);
  CHECK(w.r.canPreemptM(mp));
  CHECK(rec.addrs() == std::vector<const void*>{&w.pp->status, &mp->curg, &user.atomicstatus});

  plat::Mutex mu;
  lock(&mu);
  rec.seen.clear();
  CHECK_FALSE(w.r.canPreemptM(mp));  // a runtime lock keeps the M
  CHECK(rec.seen.empty());           // decided by m.locks alone
  unlock(&mu);
  CHECK(w.r.canPreemptM(mp));
}

TEST_CASE("a preemption signal on g0 goes through wantAsyncPreempt as in Go", "[proc][preempt]") {
  OnM0 w;
  m* mp = w.r.m0;
  g* g0 = w.r.g0;
  w.pp->preempt.set(1);  // a request for this P is pending
  mp->signalPending.set(1);
  Recorder rec;
  plat::DriverScope scope(&rec);
  w.r.doSigPreempt(g0);
  // g0.preempt, then the P's flag, then g0's status (never _Grunning): no injection. Then the
  // acknowledgement.
  CHECK(rec.addrs() ==
        std::vector<const void*>{&g0->preempt_, &w.pp->preempt, &g0->atomicstatus, &mp->preemptGen, &mp->signalPending});
  CHECK_FALSE(g0->asyncPreemptInjected);
  CHECK(mp->preemptGen.peek() == 1);
  CHECK(mp->signalPending.peek() == 0);
}

TEST_CASE("findRunnable reads the GC, tracer, finalizer and cleanup state before the local queue", "[proc][schedule]") {
  OnM0 w;
  g gp;
  gp.atomicstatus.set(_Grunnable);
  w.r.runqput(w.pp, &gp, false);
  w.pp->schedtick.set(1);  // not a 61st tick: the global queue is not looked at first
  Recorder rec;
  plat::DriverScope scope(&rec);
  const Runtime::Found f = w.r.findRunnable();
  CHECK(f.gp == &gp);
  checkOrder(rec, {{"sched.gcwaiting", &w.r.sched.gcwaiting},
                   {"p.runSafePointFn", &w.pp->runSafePointFn},
                   {"p.timers (minWhenHeap)", &w.pp->timers_->minWhenHeap},
                   {"trace.shutdown", &w.r.trace.shutdown},
                   {"fingStatus", &w.r.fingStatus},
                   {"gcCleanups.workUnits", &w.r.gcCleanups.workUnits},
                   {"p.runnext", &w.pp->runnext}});
}

TEST_CASE("checkdead reads panicking, walks allgs under allglock and reads each heap's length", "[proc][checkdead]") {
  OnM0 w;
  g waiting;
  waiting.startpc = 1;  // a user goroutine
  waiting.atomicstatus.set(_Gwaiting);
  w.r.allgs.push_back(&waiting);
  timer t;
  w.pp->timers_->heap.push_back(timerWhen{&t, 5000});  // a sleeper's timer
  w.r.sched.mnext = 0;  // no M running
  lock(&w.r.sched.lock);
  Recorder rec;
  {
    plat::DriverScope scope(&rec);
    w.r.checkdead();  // the timer will wake someone: not dead
  }
  CHECK(w.r.m0->locks == mutexMLocksDelta);  // allglock taken and released
  CHECK_FALSE(plat::lock_held(w.r.allglock));
  checkOrder(rec, {{"panicking", &w.r.panicking},
                   {"g.atomicstatus", &waiting.atomicstatus},
                   {"len(p.timers.heap)", &w.pp->timers_->heap}});
  const long at = rec.find(&w.pp->timers_->heap);
  CHECK(rec.seen[static_cast<size_t>(at)].op == plat::Op::PlainLoad);
  w.pp->timers_->heap.clear();
  CHECK_THROWS_WITH(w.r.checkdead(), "fatal error: all goroutines are asleep - deadlock!");
  CHECK_FALSE(plat::lock_held(w.r.sched.lock));
}

TEST_CASE("newproc1 and gdestroy make Go's operations on a goroutine's way in and out", "[proc][newproc]") {
  OnM0 w;
  Recorder rec;
  plat::DriverScope scope(&rec);
  std::vector<g*> gs;
  for (int i = 0; i < 4; i++) gs.push_back(w.r.newproc1(1, nullptr, w.r.g0, false, waitReason::waitReasonZero));
  // The first G: made, published on allgs as _Gdead, set up, given a goid, made runnable.
  const long first = rec.find(&gs[0]->atomicstatus);  // _Gidle -> _Gdead
  checkOrder(rec, {{"g.atomicstatus", &gs[0]->atomicstatus},
                   {"allgptr", &w.r.allgptr},
                   {"allglen", &w.r.allglen},
                   {"g.runningCleanups", &gs[0]->runningCleanups},
                   {"sched.goidgen", &w.r.sched.goidgen}});
  CHECK(rec.find(&gs[0]->atomicstatus, rec.find(&w.r.sched.goidgen)) > first);  // _Gdead -> _Grunnable
  CHECK(w.r.allglen.peek() == 4);
  CHECK(w.r.allgptr.peek() == w.r.allgs.data());
  CHECK(w.pp->goroutinesCreated == 4);
  for (int i = 0; i < 4; i++) {
    CHECK(gs[static_cast<size_t>(i)]->goid == i + 1);
    CHECK(readgstatus(gs[static_cast<size_t>(i)]) == _Grunnable);
    CHECK(gs[static_cast<size_t>(i)]->tracking == (gs[static_cast<size_t>(i)]->trackingSeq % gTrackingPeriod == 0));
  }
  // Four 2 KiB stacks reach maxStackScanSlack: the fourth G's accounting goes to the global count,
  // before its goid and status.
  CHECK(w.r.gcController.maxStackScan.peek() == 4 * 2048);
  CHECK(w.pp->maxStackScanDelta == 0);
  const long add = rec.find(&w.r.gcController.maxStackScan);
  CHECK(add > rec.find(&gs[3]->runningCleanups));
  CHECK(rec.find(&gs[3]->atomicstatus, add) > add);
  CHECK(w.r.sched.ngsys.peek() == 0);

  // gdestroy takes the accounting back: the fourth brings the P's delta back to the slack.
  for (g* gp : gs) {
    gp->atomicstatus.set(_Grunning);
    gp->m = w.r.m0;
    w.r.m0->curg.set(gp);
    rec.seen.clear();
    w.r.gdestroy(gp);
    CHECK(readgstatus(gp) == _Gdead);
    CHECK(gp->m == nullptr);
    CHECK(w.r.m0->curg.peek() == nullptr);
  }
  // The last gdestroy: status first, then the global count, then dropg's store to m.curg.
  checkOrder(rec, {{"g.atomicstatus", &gs[3]->atomicstatus},
                   {"gcController.maxStackScan", &w.r.gcController.maxStackScan},
                   {"m.curg", &w.r.m0->curg}});
  CHECK(w.r.gcController.maxStackScan.peek() == 0);
  CHECK(w.pp->maxStackScanDelta == 0);
  CHECK(w.pp->gFree.size == 4);

  // A runtime goroutine counts in sched.ngsys.
  w.r.newproc1(funcForcegchelper, nullptr, w.r.g0, true, waitReason::waitReasonForceGCIdle);
  CHECK(w.r.sched.ngsys.peek() == 1);
}

TEST_CASE("mcommoninit publishes the new M on allm with a store", "[proc][m]") {
  OnM0 w;
  m* before = w.r.allm.peek();
  m mp;
  Recorder rec;
  plat::DriverScope scope(&rec);
  w.r.mcommoninit(&mp, -1);
  CHECK(w.r.allm.peek() == &mp);
  CHECK(mp.alllink == before);
  const long at = rec.find(&w.r.allm);
  REQUIRE(at >= 0);
  const long store = rec.find(&w.r.allm, at + 1);  // the read of the old head, then the store
  REQUIRE(store > at);
  CHECK(rec.seen[static_cast<size_t>(store)].op == plat::Op::Store);
  CHECK(rec.seen[static_cast<size_t>(store)].value == reinterpret_cast<uintptr_t>(&mp));
}
