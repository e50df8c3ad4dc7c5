// The GC pacer, CPU limiter, sweep pacing and mallocgc's batches (sim/runtime/mgcpacer.cpp,
// mgcsweep.cpp, malloc.cpp). Expected values are worked by hand from the formulas Go documents in
// mgcpacer.go and mgclimit.go (each test says how), not taken from a run.
#include <catch2/catch.hpp>

#include <limits>

#include "sim/runtime/runtime.h"

using namespace gmp;
using namespace gmp::rt;

namespace {

constexpr uint64_t MiB = 1 << 20;
constexpr int64_t noLimit = std::numeric_limits<int64_t>::max();

struct OnG0 {
  g* saved;
  explicit OnG0(Runtime& r) : saved(plat::getg()) {
    plat::setg(r.g0);
    r.m0->p = r.allp[0];
  }
  ~OnG0() { plat::setg(saved); }
  OnG0(const OnG0&) = delete;
  OnG0& operator=(const OnG0&) = delete;
};

// The pacer after a cycle that marked `marked` bytes with the given stacks and globals.
void afterCycle(Runtime& r, int32_t gogc, int64_t limit, uint64_t marked, uint64_t stacks = 0, uint64_t globals = 0) {
  r.gcController.init(gogc, limit);
  r.gcController.heapScanWork.Store(0);
  r.gcController.stackScanWork.Store(static_cast<int64_t>(stacks));
  r.gcController.globalsScan.Store(globals);
  r.gcController.resetLive(marked);
  r.gcController.commit(true);
}

}  // namespace

TEST_CASE("pacer: the GOGC heap goal is marked + (marked + stacks + globals) x GOGC/100, at least 4 MiB x GOGC/100") {
  Runtime r(4);
  afterCycle(r, 100, noLimit, 10 * MiB);
  CHECK(r.gcController.heapGoal() == 20 * MiB);
  afterCycle(r, 100, noLimit, 10 * MiB, 64 << 10, 128 << 10);
  CHECK(r.gcController.heapGoal() == 20 * MiB + (192 << 10));
  afterCycle(r, 50, noLimit, 10 * MiB);
  CHECK(r.gcController.heapGoal() == 15 * MiB);
  afterCycle(r, 200, noLimit, 10 * MiB);
  CHECK(r.gcController.heapGoal() == 30 * MiB);
  // A small heap: the minimum, 4 MiB at GOGC=100, scaled by GOGC.
  afterCycle(r, 100, noLimit, 1 * MiB);
  CHECK(r.gcController.heapGoal() == 4 * MiB);
  afterCycle(r, 200, noLimit, 1 * MiB);
  CHECK(r.gcController.heapGoal() == 8 * MiB);
  // GOGC=off and no limit: the memory-limit goal of maxInt64 less 3%.
  afterCycle(r, -1, noLimit, 10 * MiB);
  CHECK(r.gcController.heapGoal() == uint64_t{noLimit} - uint64_t{noLimit} / 100 * 3);
}

TEST_CASE("pacer: the memory-limit goal is the limit less 3% headroom (at least 1 MiB), never below the marked heap") {
  Runtime r(4);
  afterCycle(r, -1, static_cast<int64_t>(100 * MiB), 10 * MiB);
  // 100 MiB / 100 x 3 = 3 MiB of headroom (no non-heap memory is mapped here).
  CHECK(r.gcController.heapGoal() == 97 * MiB);
  afterCycle(r, -1, static_cast<int64_t>(10 * MiB), 2 * MiB);
  CHECK(r.gcController.heapGoal() == 9 * MiB);  // 3% is 314571 bytes, under the 1 MiB floor
  afterCycle(r, -1, static_cast<int64_t>(10 * MiB), 50 * MiB);
  CHECK(r.gcController.heapGoal() == 50 * MiB);  // the limit is below the live heap: the marked heap
  // With GOGC=100 the smaller goal wins.
  afterCycle(r, 100, static_cast<int64_t>(100 * MiB), 10 * MiB);
  CHECK(r.gcController.heapGoal() == 20 * MiB);
  afterCycle(r, 100, static_cast<int64_t>(16 * MiB), 10 * MiB);
  CHECK(r.gcController.heapGoal() == 16 * MiB - 1 * MiB);
}

TEST_CASE("pacer: the trigger lies between 45/64 and 61/64 of the way from the marked heap to the goal") {
  Runtime r(4);
  afterCycle(r, 100, noLimit, 10 * MiB);
  // No runway yet (cons/mark 0): the trigger would be the goal, capped at 61/64 of the way.
  const auto [trig, goal] = r.gcController.trigger();
  CHECK(goal == 20 * MiB);
  CHECK(trig == 10 * MiB + (10 * MiB / 64) * 61);
  // A runway longer than the goal: the floor, 45/64 of the way.
  r.gcController.runway.Store(100 * MiB);
  CHECK(r.gcController.trigger().first == 10 * MiB + (10 * MiB / 64) * 45);
  // A big heap: goal - 4 MiB may exceed 61/64.
  afterCycle(r, 10, noLimit, 1000 * MiB);
  const auto [t2, g2] = r.gcController.trigger();
  CHECK(g2 == 1100 * MiB);
  CHECK(t2 == 1100 * MiB - 4 * MiB);
}

TEST_CASE("pacer: startCycle's dedicated workers are round(GOMAXPROCS/4), fractional when that is off by over 30%") {
  struct Row {
    int procs;
    int64_t dedicated;
    double fractional;
  };
  // 0.25 x procs rounded; if dedicated/(0.25 x procs) - 1 is beyond +-0.3, round down and give
  // the rest, divided by procs, to fractional workers.
  const Row rows[] = {{1, 0, 0.25}, {2, 0, 0.25}, {3, 0, 0.25}, {4, 1, 0}, {6, 1, 0.5 / 6}, {8, 2, 0}};
  for (const Row& row : rows) {
    Runtime r(row.procs);
    r.gcController.init(100, noLimit);
    r.gcController.startCycle(1000, row.procs, gcTrigger{gcTriggerKind::gcTriggerHeap, 0, 0});
    INFO("GOMAXPROCS " << row.procs);
    CHECK(r.gcController.dedicatedMarkWorkersNeeded.peek() == row.dedicated);
    CHECK(r.gcController.fractionalUtilizationGoal == Approx(row.fractional));
    // Idle workers: every P that is not a dedicated worker may run one.
    CHECK(static_cast<int64_t>(r.gcController.idleMarkWorkers.peek() >> 32) == row.procs - row.dedicated);
  }
  // A cycle forced by time keeps idle workers to one when there are no dedicated ones.
  Runtime r(2);
  r.gcController.init(100, noLimit);
  r.gcController.startCycle(1000, 2, gcTrigger{gcTriggerKind::gcTriggerTime, 0, 0});
  CHECK((r.gcController.idleMarkWorkers.peek() >> 32) == 1);
}

TEST_CASE("limiter: turns on when GC takes more than half the CPU over the bucket, off again below") {
  Runtime r(4);
  gcCPULimiterState& l = r.gcCPULimiter;
  l.test = true;
  l.resetCapacity(0, 4);  // 4 Ps: a bucket of 4 s
  l.startGCTransition(true, 0);
  l.finishGCTransition(0);
  // Each second: 4 s of CPU, 1 s of it the workers' 25%, plus assists. 1.1 s of assists: GC
  // 2.1 s against mutator 1.9 s, +0.2 s a second: not full after 10 s.
  int64_t now = 0;
  for (int i = 0; i < 10; i++) {
    l.addAssistTime(1'100'000'000);
    now += 1'000'000'000;
    l.update(now);
  }
  CHECK_FALSE(l.limiting());
  // 2 s of assists: GC 3 s against 1 s, +2 s a second: full (limiting) within 2 more seconds.
  for (int i = 0; i < 2; i++) {
    l.addAssistTime(2'000'000'000);
    now += 1'000'000'000;
    l.update(now);
  }
  CHECK(l.limiting());
  // Below half: it drains and turns off.
  l.addAssistTime(0);
  now += 1'000'000'000;
  l.update(now);
  CHECK_FALSE(l.limiting());
}

TEST_CASE("sweep: the proportional line sweeps the pages in use before heapLive reaches the trigger") {
  Runtime r(1);
  r.gcController.heapLive.Store(10 * MiB);
  r.mheap_.pagesInUse.Store(1000);
  r.mheap_.pagesToSweep.Store(1000);
  r.sweep.active.reset();  // a sweep under way
  r.gcPaceSweeper(20 * MiB);
  // heap distance 20 - 10 - 1 (slack) = 9 MiB for 1000 pages.
  CHECK(r.mheap_.sweepPagesPerByte == Approx(1000.0 / (9.0 * MiB)));
  r.deductSweepCredit(pageSize, 0);
  CHECK(r.mheap_.pagesSwept.peek() == 0);  // 8 KiB of allocation owes less than a page
  r.gcController.heapLive.Store(10 * MiB + 9 * MiB / 2);
  r.deductSweepCredit(pageSize, 0);
  // Half the distance (plus the span): half the pages.
  const auto want = static_cast<uint64_t>(1000.0 / (9.0 * MiB) * (9.0 * MiB / 2 + pageSize));
  CHECK(r.mheap_.pagesSwept.peek() == want);
  // At the trigger less the slack every page is swept and the sweep is done.
  r.gcController.heapLive.Store(19 * MiB);
  r.deductSweepCredit(pageSize, 0);
  CHECK(r.mheap_.pagesSwept.peek() == 1000);
  CHECK_FALSE(r.isSweepDone());  // drained only once a sweeper finds nothing left
  CHECK(r.sweepone() == ~uintptr_t{0});
  CHECK(r.isSweepDone());
}

TEST_CASE("mallocgc: a batch of N objects equals N single calls in heapLive, pages and sweep credit") {
  for (const uint64_t size : {uint64_t{16}, uint64_t{1000}, uint64_t{12000}, uint64_t{32768}, uint64_t{40000}}) {
    Runtime a(1), b(1);
    for (Runtime* r : {&a, &b}) {
      r->gcController.init(100, noLimit);
      r->mheap_.pagesInUse.Store(500);
      r->mheap_.pagesToSweep.Store(500);
      r->sweep.active.reset();
      r->gcPaceSweeper(8 * MiB);
      r->memstats.enablegc = true;  // the trigger is tested; these batches stay under it (3.8 MiB)
    }
    const uint64_t n = size > maxSmallSize ? 50 : 3001;
    {
      OnG0 on(a);
      a.mallocgc(size, n, true);
    }
    {
      OnG0 on(b);
      for (uint64_t i = 0; i < n; i++) b.mallocgc(size, 1, true);
    }
    INFO("size " << size);
    CHECK(a.gcController.heapLive.peek() == b.gcController.heapLive.peek());
    CHECK(a.mheap_.pagesInUse.peek() == b.mheap_.pagesInUse.peek());
    CHECK(a.mheap_.pagesSwept.peek() == b.mheap_.pagesSwept.peek());
    CHECK(a.liveHeap == b.liveHeap);
    CHECK(a.gcController.heapLive.peek() > 0);
    // Whole spans: 8 KiB pages for small objects up to a page, a span of whole pages otherwise.
    // A small object over a page takes a span of the pages it needs (a replay's 32 KiB objects once
    // divided by zero here).
    const uint64_t spanBytes = (size + pageSize - 1) / pageSize * pageSize;
    const uint64_t perSpan = size > maxSmallSize ? 1 : spanBytes / size;
    const uint64_t spans = (n + perSpan - 1) / perSpan;
    CHECK(a.gcController.heapLive.peek() == spans * spanBytes);
  }
}

TEST_CASE("gcTrigger: heap, time and cycle tests") {
  Runtime r(1);
  afterCycle(r, 100, noLimit, 10 * MiB);
  r.memstats.enablegc = true;
  const gcTrigger heap{gcTriggerKind::gcTriggerHeap, 0, 0};
  CHECK_FALSE(heap.test(r));
  r.gcController.heapLive.Store(20 * MiB);
  CHECK(heap.test(r));
  r.gcphase.Store(_GCmark);
  CHECK_FALSE(heap.test(r));  // a cycle is running
  r.gcphase.Store(_GCoff);
  r.memstats.last_gc_nanotime.Store(1);
  CHECK_FALSE((gcTrigger{gcTriggerKind::gcTriggerTime, forcegcperiod, 0}.test(r)));
  CHECK((gcTrigger{gcTriggerKind::gcTriggerTime, forcegcperiod + 2, 0}.test(r)));
  r.work.cycles.Store(3);
  CHECK((gcTrigger{gcTriggerKind::gcTriggerCycle, 0, 4}.test(r)));
  CHECK_FALSE((gcTrigger{gcTriggerKind::gcTriggerCycle, 0, 3}.test(r)));
}
