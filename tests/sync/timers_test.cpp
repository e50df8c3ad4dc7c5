// The per-P timer heap (time.go): a 4-ary min-heap by when, its atomic summaries (len, which is
// p.timersLen here, minWhenHeap, minWhenModified, wakeTime) and timers.check running due timers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/runtime/rand.h"
#include "sim/runtime/runtime.h"
#include "sim/runtime/time.h"
#include "tests/sync/fake_g.h"

using namespace gmp;
using namespace gmp::rt;
using gmp::synctest::FakeG;

namespace {

struct Fixture {
  Runtime rt{1};  // addHeap starts its poller (netpollGenericInit)
  p pp;
  std::vector<std::unique_ptr<timer>> ts;
  FakeG on{&pp};  // the heap's lock counts itself on the current M
  Fixture() {
    Runtime::setCurrent(&rt);
    timersInit(&pp);
  }
  ~Fixture() {
    timersFree(&pp);
    Runtime::setCurrent(nullptr);
  }

  timers& heap() { return *pp.timers_; }

  // Adds a timer due at when, as timer.maybeAdd does under the heap's lock.
  timer* add(int64_t when) {
    ts.push_back(std::make_unique<timer>());
    timer* t = ts.back().get();
    t->init(&Fixture::run, this);
    t->when = when;
    heap().lock();
    t->lock();
    t->state |= timerHeaped;
    heap().addHeap(t);
    t->unlock();
    heap().unlock();
    return t;
  }

  static void run(void* arg, uintptr_t, int64_t delay) {
    (void)arg;
    (void)delay;
  }
};

// Every element is no earlier than its parent in the 4-ary heap.
void checkHeap(const timers& h) {
  for (size_t i = 1; i < h.heap.size(); i++) {
    const size_t parent = (i - 1) / timerHeapN;
    REQUIRE(h.heap[parent].when <= h.heap[i].when);
    REQUIRE(h.heap[i].t->ts == &h);
  }
}

std::vector<int64_t> whens(uint32_t seed, size_t n) {
  std::vector<int64_t> v;
  uint32_t st = seed;
  for (size_t i = 0; i < n; i++) v.push_back(1 + cheaprandStep(st) % 10000);
  return v;
}

}  // namespace

TEST_CASE("timers: addHeap keeps a 4-ary heap, and deleteMin yields ascending when", "[timers]") {
  Fixture f;
  REQUIRE(f.heap().wakeTime() == 0);
  REQUIRE_FALSE(f.rt.netpollinited());
  const std::vector<int64_t> w = whens(42, 200);
  for (size_t i = 0; i < w.size(); i++) {
    f.add(w[i]);
    REQUIRE(f.rt.netpollinited());  // the first timer starts the poller
    checkHeap(f.heap());
    REQUIRE(f.pp.timersLen.peek() == i + 1);  // published at unlock
    REQUIRE(f.heap().wakeTime() == *std::min_element(w.begin(), w.begin() + static_cast<long>(i) + 1));
  }
  std::vector<int64_t> sorted = w;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> out;
  f.heap().lock();
  while (!f.heap().heap.empty()) {
    timer* t = f.heap().heap[0].t;
    out.push_back(f.heap().heap[0].when);
    f.heap().deleteMin();
    REQUIRE(t->ts == nullptr);
    checkHeap(f.heap());
    REQUIRE(f.heap().minWhenHeap.peek() == (f.heap().heap.empty() ? 0 : f.heap().heap[0].when));
  }
  f.heap().unlock();
  REQUIRE(out == sorted);
  REQUIRE(f.pp.timersLen.peek() == 0);
  REQUIRE(f.heap().wakeTime() == 0);
}

namespace {
std::vector<timer*> ranTimers;
void note(void* arg, uintptr_t, int64_t delay) {
  REQUIRE(delay >= 0);
  ranTimers.push_back(static_cast<timer*>(arg));
}
timer* addNoting(Fixture& f, int64_t when) {
  timer* t = f.add(when);
  t->init(&note, t);
  return t;
}
}  // namespace

TEST_CASE("timers: check runs the due timers in order and reports the next one", "[timers]") {
  Fixture f;
  FakeG fg(&f.pp);
  ranTimers.clear();
  timer* t30 = addNoting(f, 30);
  timer* t10 = addNoting(f, 10);
  timer* t50 = addNoting(f, 50);
  timer* t20 = addNoting(f, 20);
  timer* t40 = addNoting(f, 40);
  REQUIRE(timersWakeTime(&f.pp) == 10);

  // Not yet due: nothing runs, the next time is reported.
  TimersCheck c = timersCheck(&f.pp, 5);
  REQUIRE(c.now == 5);
  REQUIRE(c.pollUntil == 10);
  REQUIRE(!c.ran);
  REQUIRE(ranTimers.empty());

  c = timersCheck(&f.pp, 30);
  REQUIRE(c.now == 30);
  REQUIRE(c.ran);
  REQUIRE(c.pollUntil == 40);
  REQUIRE(ranTimers == std::vector<timer*>{t10, t20, t30});
  // One-shot timers leave the heap once run.
  for (timer* t : {t10, t20, t30}) {
    REQUIRE(t->ts == nullptr);
    REQUIRE(t->state == 0);
    REQUIRE(t->when == 0);
  }
  REQUIRE(f.pp.timersLen.peek() == 2);
  REQUIRE(timersWakeTime(&f.pp) == 40);

  c = timersCheck(&f.pp, 100);
  REQUIRE(ranTimers == std::vector<timer*>{t10, t20, t30, t40, t50});
  REQUIRE(c.pollUntil == 0);
  REQUIRE(f.pp.timersLen.peek() == 0);
  REQUIRE(timersWakeTime(&f.pp) == 0);
  c = timersCheck(&f.pp, 200);
  REQUIRE(!c.ran);
  REQUIRE(c.pollUntil == 0);
}

TEST_CASE("timers: a periodic timer stays in the heap at its next period", "[timers]") {
  Fixture f;
  FakeG fg(&f.pp);
  ranTimers.clear();
  timer* t = addNoting(f, 10);
  t->period = 25;
  // Due at 10, run at 40: the missed period at 35 is skipped (Go's catch-up rule), next is 60.
  TimersCheck c = timersCheck(&f.pp, 40);
  REQUIRE(ranTimers == std::vector<timer*>{t});
  REQUIRE(c.pollUntil == 60);
  REQUIRE(t->when == 60);
  REQUIRE(f.pp.timersLen.peek() == 1);
}

TEST_CASE("timers: modified and zombie timers are fixed up by adjust/cleanHead", "[timers]") {
  Fixture f;
  FakeG fg(&f.pp);
  ranTimers.clear();
  timer* t10 = addNoting(f, 10);
  timer* t20 = addNoting(f, 20);
  timer* t30 = addNoting(f, 30);
  timer* t90 = addNoting(f, 90);

  // timer.modify on a heaped timer, moved earlier: only marked, and minWhenModified lowered.
  t90->lock();
  t90->when = 5;
  t90->state |= timerModified;
  t90->astate.Store(t90->state);
  f.heap().updateMinWhenModified(5);
  t90->unlock();
  REQUIRE(timersWakeTime(&f.pp) == 5);

  // A stopped timer (timer.stop): a zombie, counted, still in the heap.
  t10->lock();
  t10->state |= timerModified | timerZombie;
  t10->when = 0;
  f.heap().zombies.Add(1);
  t10->unlock();

  // t20 moved later.
  t20->lock();
  t20->when = 35;
  t20->state |= timerModified;
  f.heap().updateMinWhenModified(35);
  t20->unlock();

  TimersCheck c = timersCheck(&f.pp, 30);
  REQUIRE(ranTimers == std::vector<timer*>{t90, t30});
  REQUIRE(c.pollUntil == 35);
  REQUIRE(t10->ts == nullptr);
  REQUIRE(t10->state == 0);
  REQUIRE(f.heap().zombies.peek() == 0);
  REQUIRE(f.heap().minWhenModified.peek() == 0);
  REQUIRE(f.pp.timersLen.peek() == 1);
  REQUIRE(f.heap().heap[0].t == t20);
  REQUIRE(f.heap().heap[0].when == 35);
  checkHeap(f.heap());
}

TEST_CASE("timers: timersInit ties the heap length to p.timersLen", "[timers]") {
  p pp;
  timersInit(&pp);
  REQUIRE(pp.timers_ != nullptr);
  REQUIRE(pp.timers_->len == &pp.timersLen);
  timersFree(&pp);
  REQUIRE(pp.timers_ == nullptr);
}
