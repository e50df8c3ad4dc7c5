// The recording platform under the Explorer: every shared-memory access is a point where another
// thread may run; schedules replay exactly; and the ported queues keep every G exactly once under
// thousands of random schedules.
#include <catch2/catch.hpp>

#include <csignal>
#include <set>

#include "model/explorer.h"
#include "model/queue_check.h"
#include "sim/platform/atomic.h"
#include "sim/platform/throw.h"

using namespace gmp;
using namespace gmp::model;

// A racy increment (plain load, then plain store) loses updates under some interleaving, and the
// explorer finds one: proof that it really interleaves at each access.
TEST_CASE("explorer interleaves at plain accesses and finds a lost update", "[explorer]") {
  bool lost = false;
  for (uint64_t seed = 1; seed <= 200 && !lost; seed++) {
    Atomic<uint32_t> counter;
    RandomStrategy strat(seed);
    Explorer ex(strat);
    for (int t = 0; t < 2; t++) {
      ex.add_thread("T" + std::to_string(t), [&counter] {
        for (int i = 0; i < 3; i++) counter.set(counter.get() + 1);
      });
    }
    const RunResult r = ex.run();
    REQUIRE(r.outcome == RunResult::Outcome::Completed);
    if (counter.peek() < 6) lost = true;
  }
  CHECK(lost);
}

TEST_CASE("the same increments with Add never lose an update", "[explorer]") {
  for (uint64_t seed = 1; seed <= 200; seed++) {
    Atomic<uint32_t> counter;
    RandomStrategy strat(seed);
    Explorer ex(strat);
    for (int t = 0; t < 2; t++) {
      ex.add_thread("T" + std::to_string(t), [&counter] {
        for (int i = 0; i < 3; i++) counter.Add(1);
      });
    }
    REQUIRE(ex.run().outcome == RunResult::Outcome::Completed);
    REQUIRE(counter.peek() == 6);
  }
}

TEST_CASE("a runtime lock excludes and a note wakes its sleeper", "[explorer]") {
  for (uint64_t seed = 1; seed <= 100; seed++) {
    plat::Mutex mu;
    plat::Note done;
    Atomic<uint32_t> inside, counter;
    bool overlap = false;
    RandomStrategy strat(seed);
    Explorer ex(strat);
    for (int t = 0; t < 3; t++) {
      ex.add_thread("W" + std::to_string(t), [&] {
        plat::lock(mu);
        if (inside.Add(1) != 1) overlap = true;
        counter.set(counter.get() + 1);
        inside.Add(static_cast<uint32_t>(-1));
        const bool last = counter.get() == 3;
        plat::unlock(mu);
        if (last) plat::notewakeup(done);
      });
    }
    uint32_t seen = 0;
    ex.add_thread("sleeper", [&] {
      plat::notesleep(done);
      seen = counter.get();
    });
    REQUIRE(ex.run().outcome == RunResult::Outcome::Completed);
    REQUIRE_FALSE(overlap);
    REQUIRE(seen == 3);
  }
}

TEST_CASE("a thread sleeping on a note nobody wakes is a deadlock", "[explorer]") {
  plat::Note never;
  RandomStrategy strat(1);
  Explorer ex(strat);
  ex.add_thread("sleeper", [&] { plat::notesleep(never); });
  const RunResult r = ex.run();
  CHECK(r.outcome == RunResult::Outcome::Deadlock);
}

TEST_CASE("a Go throw in a thread ends the run as failed with Go's message", "[explorer]") {
  RandomStrategy strat(1);
  Explorer ex(strat);
  ex.add_thread("thrower", [] { plat::throw_("runqsteal: runq overflow"); });
  ex.add_thread("other", [] {
    Atomic<uint32_t> x;
    for (int i = 0; i < 10; i++) x.Add(1);
  });
  const RunResult r = ex.run();
  CHECK(r.outcome == RunResult::Outcome::Failed);
  CHECK(r.message.find("fatal error: runqsteal: runq overflow") != std::string::npos);
}

TEST_CASE("a recorded schedule replays to the same run", "[explorer]") {
  QueueCheckConfig cfg;
  cfg.gs = 300;
  cfg.seed = 7;
  RandomStrategy strat(cfg.seed);
  const QueueCheckResult a = run_queue_check(cfg, strat);
  REQUIRE(a.ok());
  ReplayStrategy replay(a.run.schedule);
  const QueueCheckResult b = run_queue_check(cfg, replay);
  REQUIRE(b.ok());
  CHECK(b.run.schedule == a.run.schedule);
  CHECK(b.run.steps == a.run.steps);
  for (size_t i = 0; i < a.per_p.size(); i++) {
    CHECK(b.per_p[i].steals == a.per_p[i].steals);
    CHECK(b.per_p[i].stolen == a.per_p[i].stolen);
    CHECK(b.per_p[i].local_gets == a.per_p[i].local_gets);
  }
}

TEST_CASE("schedule text round-trips and bad text names its offset", "[explorer]") {
  const std::vector<uint32_t> s{0, 3, 1, 12};
  CHECK(parse_schedule(format_schedule(s)) == s);
  CHECK_THROWS_WITH(parse_schedule("0.1x"), Catch::Contains("offset 3"));
  CHECK_THROWS_WITH(parse_schedule("0..1"), Catch::Contains("offset 2"));
  CHECK_THROWS_AS(parse_schedule("0.1."), ScheduleError);
  CHECK_THROWS_WITH(parse_schedule("0.1."), Catch::Contains("found the end at byte offset 4"));
  CHECK_THROWS_WITH(parse_schedule(std::string("0\x01", 2)), Catch::Contains("byte \\x01, expected a digit"));
  CHECK_THROWS_WITH(parse_schedule("1.4294967296"), Catch::Contains("too large at byte offset 2"));
  CHECK(parse_schedule("0.2.1", 3) == std::vector<uint32_t>{0, 2, 1});
  CHECK_THROWS_WITH(parse_schedule("0.2.13", 3), Catch::Contains("thread index 13 out of range (threads are 0 to 2) at byte offset 4"));
  std::string longest;
  for (size_t i = 0; i < kMaxScheduleSteps; i++) longest += "0.";
  longest.pop_back();
  CHECK(parse_schedule(longest).size() == kMaxScheduleSteps);
  CHECK_THROWS_WITH(parse_schedule(longest + ".1"), Catch::Contains("more than 10000000 steps at byte offset " +
                                                                    std::to_string(longest.size() + 1)));
}

// A replayed schedule that picks a thread that cannot run there throws ScheduleError out of the
// run, whether the pick is the run's first (made on the explorer's own fiber) or a later one (made
// on a thread's), and the run is torn down.
TEST_CASE("a schedule that cannot be followed throws ScheduleError", "[explorer]") {
  QueueCheckConfig cfg;
  cfg.procs = 3;
  cfg.gs = 12;
  ReplayStrategy first({7});
  CHECK_THROWS_WITH(run_queue_check(cfg, first), Catch::Contains("schedule step 0 picks thread 7, which cannot run there (runnable: 0, 1, 2)"));
  RandomStrategy rnd(5);
  const QueueCheckResult a = run_queue_check(cfg, rnd);
  REQUIRE(a.ok());
  REQUIRE(a.run.schedule.size() > 20);
  std::vector<uint32_t> s(a.run.schedule.begin(), a.run.schedule.begin() + 20);
  s.push_back(9);
  ReplayStrategy later(s);
  CHECK_THROWS_AS(run_queue_check(cfg, later), ScheduleError);
  // The explorer is usable again afterwards.
  ReplayStrategy again(a.run.schedule);
  CHECK(run_queue_check(cfg, again).ok());
}

// The acceptance test: 4 Ps put, get and steal concurrently over thousands of seeded
// schedules, and every G is taken exactly once. Also checks that the schedules really differ
// and that steals (of ring and of runnext) and global-queue traffic happen.
TEST_CASE("4 Ps put get and steal under thousands of random schedules", "[explorer][runq]") {
  QueueCheckConfig cfg;
  cfg.procs = 4;
  cfg.producers = 1;  // one P feeds three thieves, and its ring sometimes overflows
  cfg.gs = 600;
  cfg.run_every = 8;
  uint64_t steals = 0, runnext_steals = 0, global = 0;
  std::set<uint64_t> schedules;  // FNV-1a hashes of the schedules
  constexpr uint64_t kSchedules = 2000;
  for (uint64_t seed = 1; seed <= kSchedules; seed++) {
    cfg.seed = seed;
    RandomStrategy strat(seed);
    const QueueCheckResult r = run_queue_check(cfg, strat);
    INFO("seed " << seed << ": " << (r.errors.empty() ? "" : r.errors.front()));
    REQUIRE(r.ok());
    uint64_t h = 1469598103934665603ull;
    for (uint32_t t : r.run.schedule) h = (h ^ t) * 1099511628211ull;
    schedules.insert(h);
    for (const auto& s : r.per_p) {
      steals += s.steals;
      runnext_steals += s.runnext_steals;
      global += s.global_gets;
    }
  }
  CHECK(schedules.size() == kSchedules);
  CHECK(steals > 0);
  CHECK(runnext_steals > 0);
  CHECK(global > 0);
}

namespace {
uint64_t handled_on = ~uint64_t{0};
void record_handler(int) { handled_on = plat::gettid(); }
}  // namespace

TEST_CASE("tgkill runs the handler on the target thread before its next operation", "[explorer][signal]") {
  plat::set_signal_handler(SIGURG, &record_handler);
  for (uint64_t seed = 1; seed <= 50; seed++) {
    handled_on = ~uint64_t{0};
    Atomic<uint64_t> target_tid{~uint64_t{0}};
    Atomic<uint32_t> stop;
    uint64_t seen_after_stop = 0;
    RandomStrategy strat(seed);
    Explorer ex(strat);
    ex.add_thread("target", [&] {
      target_tid.Store(plat::gettid());
      while (stop.Load() == 0) {
      }
      seen_after_stop = handled_on;
    });
    ex.add_thread("sender", [&] {
      uint64_t tid;
      while ((tid = target_tid.Load()) == ~uint64_t{0}) {
      }
      plat::tgkill(tid, SIGURG);
      stop.Store(1);
    });
    REQUIRE(ex.run().outcome == RunResult::Outcome::Completed);
    // The target's loop performs an operation after the signal was sent, so the handler ran, on
    // the target (thread 0), by the time the target saw stop.
    REQUIRE(seen_after_stop == 0);
  }
  plat::set_signal_handler(SIGURG, nullptr);
}
