// The local and global run queues: ports of Go's own queue tests (export_test.go) and tests of
// the rules the port must keep.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/platform/throw.h"
#include "sim/runtime/runtime.h"

using namespace gmp;
using namespace gmp::rt;

namespace {

std::vector<g*> ring(Runtime& r, p* pp) {
  std::vector<g*> out;
  (void)r;
  for (uint32_t h = pp->runqhead.peek(); h != pp->runqtail.peek(); h++) out.push_back(pp->runq[h % kRunqSize].peek());
  return out;
}

// Runs the rest of a scope on m0's g0: runtime locks count themselves on the current M (lock2's
// m.locks), so code that takes one needs getg() on an M, as it always has in Go.
struct OnG0 {
  g* saved;
  explicit OnG0(Runtime& r) : saved(plat::getg()) { plat::setg(r.g0); }
  ~OnG0() { plat::setg(saved); }
  OnG0(const OnG0&) = delete;
  OnG0& operator=(const OnG0&) = delete;
};

std::vector<g*> global(Runtime& r) {
  std::vector<g*> out;
  for (g* gp = r.sched.runq.head(); gp != nullptr; gp = gp->schedlink) out.push_back(gp);
  return out;
}

}  // namespace

// RunSchedLocalQueueTest (export_test.go): i puts then i gets return the same G each time, and
// the queue is empty before and after.
TEST_CASE("RunSchedLocalQueueTest", "[runq][go]") {
  Runtime r(1);
  p* pp = r.allp[0];
  std::vector<g> gs(kRunqSize);
  for (uint32_t i = 0; i < kRunqSize; i++) {
    REQUIRE(r.runqget(pp).first == nullptr);
    for (uint32_t j = 0; j < i; j++) r.runqput(pp, &gs[i], false);
    for (uint32_t j = 0; j < i; j++) {
      INFO("iter " << i << "/" << j);
      REQUIRE(r.runqget(pp).first == &gs[i]);
    }
    REQUIRE(r.runqget(pp).first == nullptr);
  }
}

// RunSchedLocalQueueStealTest (export_test.go), with the exact count: runqgrab takes half the
// queue rounded up, so one steal of i Gs yields ceil(i/2); and every G ends up taken exactly once.
TEST_CASE("RunSchedLocalQueueStealTest", "[runq][go]") {
  Runtime r(2);
  p* p1 = r.allp[0];
  p* p2 = r.allp[1];
  std::vector<g> gs(kRunqSize);
  for (uint32_t i = 0; i < kRunqSize; i++) {
    std::vector<int> sig(kRunqSize, 0);
    auto mark = [&](g* gp) { sig[static_cast<size_t>(gp - gs.data())]++; };
    for (uint32_t j = 0; j < i; j++) r.runqput(p1, &gs[j], false);
    uint32_t s = 0;
    if (g* gp = r.runqsteal(p2, p1, true); gp != nullptr) {
      s++;
      mark(gp);
    }
    for (g* gp = r.runqget(p2).first; gp != nullptr; gp = r.runqget(p2).first) {
      s++;
      mark(gp);
    }
    for (g* gp = r.runqget(p1).first; gp != nullptr; gp = r.runqget(p1).first) mark(gp);
    for (uint32_t j = 0; j < i; j++) {
      INFO("element " << j << " at iter " << i);
      REQUIRE(sig[j] == 1);
    }
    INFO("iter " << i);
    REQUIRE(s == (i + 1) / 2);
  }
}

// runqsteal takes the oldest half, in order, and leaves the newest half to the victim.
TEST_CASE("runqsteal takes the oldest half in order", "[runq]") {
  Runtime r(2);
  p* victim = r.allp[0];
  p* thief = r.allp[1];
  std::vector<g> gs(9);
  for (auto& gp : gs) r.runqput(victim, &gp, false);
  g* first = r.runqsteal(thief, victim, false);
  // Five are taken: the thief runs the last one it copied, and queues the other four.
  const std::vector<g*> want_thief{&gs[0], &gs[1], &gs[2], &gs[3]};
  const std::vector<g*> want_victim{&gs[5], &gs[6], &gs[7], &gs[8]};
  CHECK(first == &gs[4]);
  CHECK(ring(r, thief) == want_thief);
  CHECK(ring(r, victim) == want_victim);
}

// runqputslow: a put to a full ring moves the older half of the ring, then the new G, to the
// global queue in that order; the newer half stays local.
TEST_CASE("runqputslow moves half the ring plus the new G to the global queue", "[runq]") {
  Runtime r(1);
  OnG0 on(r);  // runqputslow takes sched.lock
  p* pp = r.allp[0];
  std::vector<g> gs(kRunqSize + 1);
  for (uint32_t i = 0; i < kRunqSize; i++) r.runqput(pp, &gs[i], false);
  REQUIRE(global(r).empty());
  r.runqput(pp, &gs[kRunqSize], false);

  std::vector<g*> want_global, want_local;
  for (uint32_t i = 0; i < kRunqSize / 2; i++) want_global.push_back(&gs[i]);
  want_global.push_back(&gs[kRunqSize]);
  for (uint32_t i = kRunqSize / 2; i < kRunqSize; i++) want_local.push_back(&gs[i]);
  CHECK(global(r) == want_global);
  CHECK(r.sched.runq.size == static_cast<int32_t>(want_global.size()));
  CHECK(ring(r, pp) == want_local);
}

// A full ring with a runnext put: the G kicked out of runnext is the one that overflows.
TEST_CASE("runqput with next overflows the kicked runnext G", "[runq]") {
  Runtime r(1);
  OnG0 on(r);
  p* pp = r.allp[0];
  std::vector<g> gs(kRunqSize + 2);
  r.runqput(pp, &gs[0], true);  // runnext = gs[0]
  for (uint32_t i = 1; i <= kRunqSize; i++) r.runqput(pp, &gs[i], false);
  r.runqput(pp, &gs[kRunqSize + 1], true);  // kicks gs[0] into the full ring
  CHECK(pp->runnext.peek() == &gs[kRunqSize + 1]);
  const auto gl = global(r);
  REQUIRE(gl.size() == kRunqSize / 2 + 1);
  CHECK(gl.front() == &gs[1]);
  CHECK(gl.back() == &gs[0]);
}

// runnext: each runnext put displaces the previous runnext G to the tail of the ring; runqget
// returns runnext first (inheriting the time slice), then the ring in FIFO order.
TEST_CASE("runnext displaces its G to the ring tail", "[runq]") {
  Runtime r(1);
  p* pp = r.allp[0];
  g x, a, b, c;
  r.runqput(pp, &x, false);
  r.runqput(pp, &a, true);
  r.runqput(pp, &b, true);  // a -> ring tail
  r.runqput(pp, &c, true);  // b -> ring tail
  const std::vector<std::pair<g*, bool>> want{{&c, true}, {&x, false}, {&a, false}, {&b, false}};
  for (const auto& w : want) CHECK(r.runqget(pp) == w);
  CHECK(r.runqget(pp).first == nullptr);
  CHECK(r.runqempty(pp));
}

// A thief takes runnext only when asked to and only when the ring is empty.
TEST_CASE("runqsteal takes runnext only on request and from an empty ring", "[runq]") {
  Runtime r(2);
  p* victim = r.allp[0];
  p* thief = r.allp[1];
  g a, b;
  r.runqput(victim, &a, true);
  CHECK(r.runqsteal(thief, victim, false) == nullptr);
  CHECK(r.runqsteal(thief, victim, true) == &a);
  CHECK(r.runqempty(victim));
  r.runqput(victim, &a, true);
  r.runqput(victim, &b, false);
  CHECK(r.runqsteal(thief, victim, true) == &b);  // the ring first
  CHECK(victim->runnext.peek() == &a);
}

TEST_CASE("runqdrain takes runnext then the ring", "[runq]") {
  Runtime r(1);
  p* pp = r.allp[0];
  std::vector<g> gs(5);
  for (size_t i = 1; i < gs.size(); i++) r.runqput(pp, &gs[i], false);
  r.runqput(pp, &gs[0], true);
  gQueue q = r.runqdrain(pp);
  CHECK(q.size == 5);
  for (auto& gp : gs) CHECK(q.pop() == &gp);
  CHECK(r.runqempty(pp));
}

TEST_CASE("runqputbatch fills the ring and leaves the rest in the batch", "[runq]") {
  Runtime r(1);
  p* pp = r.allp[0];
  std::vector<g> gs(kRunqSize + 10);
  for (uint32_t i = 0; i < 10; i++) r.runqput(pp, &gs[i], false);
  gQueue q;
  for (size_t i = 10; i < gs.size(); i++) q.pushBack(&gs[i]);
  r.runqputbatch(pp, &q);
  CHECK(ring(r, pp).size() == kRunqSize);
  CHECK(q.size == 10);
  CHECK(q.head() == &gs[kRunqSize]);
}

// globrunqgetbatch: a P takes at most n Gs, at most what there is, and at most its fair share
// size/gomaxprocs + 1; the first is returned to run, the rest in queue order.
TEST_CASE("globrunqgetbatch batch size", "[globrunq]") {
  struct Case {
    int32_t procs, size, n, want;
  };
  // want = min(n, size, size/procs + 1), worked by hand for each row.
  const Case cases[] = {
      {1, 10, 128, 10},  // fair share 11 > size: all of them
      {4, 10, 128, 3},   // fair share 10/4 + 1 = 3
      {4, 10, 2, 2},     // n is the limit
      {8, 3, 128, 1},    // 3/8 + 1 = 1
      {2, 100, 128, 51}, // 100/2 + 1
      {2, 300, 128, 128},
      {3, 1, 128, 1},
  };
  for (const Case& c : cases) {
    Runtime r(c.procs);
    std::vector<g> gs(static_cast<size_t>(c.size));
    plat::lock(r.sched.lock);
    for (auto& gp : gs) r.globrunqput(&gp);
    auto [gp, q] = r.globrunqgetbatch(c.n);
    plat::unlock(r.sched.lock);
    INFO("procs " << c.procs << " size " << c.size << " n " << c.n);
    CHECK(gp == &gs[0]);
    CHECK(q.size == c.want - 1);
    CHECK(r.sched.runq.size == c.size - c.want);
    for (int32_t i = 1; i < c.want; i++) CHECK(q.pop() == &gs[static_cast<size_t>(i)]);
    CHECK(r.sched.runq.head() == (c.want < c.size ? &gs[static_cast<size_t>(c.want)] : nullptr));
  }
}

TEST_CASE("global queue put puthead and get keep order", "[globrunq]") {
  Runtime r(1);
  g a, b, c;
  plat::lock(r.sched.lock);
  CHECK(r.globrunqget() == nullptr);
  r.globrunqput(&a);
  r.globrunqput(&b);
  r.globrunqputhead(&c);
  CHECK(r.globrunqget() == &c);
  CHECK(r.globrunqget() == &a);
  CHECK(r.globrunqget() == &b);
  CHECK(r.globrunqget() == nullptr);
  plat::unlock(r.sched.lock);
}

TEST_CASE("global queue functions throw without sched.lock", "[globrunq]") {
  Runtime r(1);
  g a;
  CHECK_THROWS_AS(r.globrunqput(&a), plat::GoFatal);
}

TEST_CASE("pidleput and pidleget keep the idle list its count and masks", "[idle]") {
  Runtime r(3);
  plat::lock(r.sched.lock);
  for (p* pp : r.allp) r.pidleput(pp, 1);
  CHECK(r.sched.npidle.peek() == 3);
  CHECK(r.idlepMask.read(0));
  CHECK(r.idlepMask.read(2));
  // LIFO: the last P put is the first taken.
  auto [p1, now] = r.pidleget(5);
  CHECK(p1 == r.allp[2]);
  CHECK(now == 5);
  CHECK_FALSE(r.idlepMask.read(2));
  CHECK(r.timerpMask.read(2));
  CHECK(r.sched.npidle.peek() == 2);
  // A P with work cannot go idle.
  g a;
  r.runqput(p1, &a, false);
  CHECK_THROWS_WITH(r.pidleput(p1, 1), "fatal error: pidleput: P has non-empty run queue");
  plat::unlock(r.sched.lock);
}

TEST_CASE("procresize at start: p.init lets P 0 hold timers though it never leaves the idle list", "[idle]") {
  Runtime r(3);
  g* saved = plat::getg();
  plat::setg(r.g0);  // schedinit runs it on m0's g0
  plat::lock(r.sched.lock);
  r.procresize(3);
  plat::unlock(r.sched.lock);
  plat::setg(saved);
  CHECK(r.m0->p == r.allp[0]);
  CHECK(r.timerpMask.read(0));  // set by p.init: P 0 never went through pidleget
  CHECK_FALSE(r.idlepMask.read(0));
  for (uint32_t i : {1u, 2u}) {
    CHECK(r.idlepMask.read(i));
    CHECK_FALSE(r.timerpMask.read(i));  // pidleput cleared it: no timers
  }
}

TEST_CASE("pidlegetSpinning sets needspinning when no P is idle", "[idle]") {
  Runtime r(1);
  plat::lock(r.sched.lock);
  auto [pp, now] = r.pidlegetSpinning(7);
  CHECK(pp == nullptr);
  CHECK(r.sched.needspinning.peek() == 1);
  plat::unlock(r.sched.lock);
}

TEST_CASE("mput and mget keep a LIFO idle M list", "[idle]") {
  Runtime r(1);
  m m1, m2, m3;
  r.sched.mnext = 4;  // three idle Ms and one running: checkdead stays quiet
  plat::lock(r.sched.lock);
  r.mput(&m1);
  r.mput(&m2);
  r.mput(&m3);
  CHECK(r.sched.nmidle == 3);
  CHECK(r.mgetSpecific(&m2) == &m2);
  CHECK(r.mget() == &m3);
  CHECK(r.mget() == &m1);
  CHECK(r.mget() == nullptr);
  CHECK(r.sched.nmidle == 0);
  plat::unlock(r.sched.lock);
}

TEST_CASE("checkdead throws on inconsistent M counts", "[idle]") {
  Runtime r(1);
  m m1;
  r.sched.mnext = 0;  // no M was ever created, yet one goes idle
  OnG0 on(r);
  lock(&r.sched.lock);
  CHECK_THROWS_WITH(r.mput(&m1), "fatal error: checkdead: inconsistent counts");
  // checkdead unlocked sched.lock before it threw.
  CHECK_FALSE(plat::lock_held(r.sched.lock));
  CHECK(r.m0->locks == 0);
}
