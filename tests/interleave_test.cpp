// Plain threads under the checker (model/thread_run.h, the engine's choice mode): every
// shared-memory access is a point where another thread may run; locks exclude and notes wake;
// schedules replay exactly, and a schedule that does not fit is refused; and the ported run queues
// keep every G exactly once, under thousands of random schedules and under every interleaving a
// bounded DPOR search reaches.
#include <catch2/catch.hpp>

#include <csignal>
#include <set>

#include "model/policies.h"
#include "model/queue_check.h"
#include "model/thread_run.h"
#include "sim/platform/atomic.h"
#include "sim/platform/platform.h"
#include "sim/platform/throw.h"

using namespace gmp;
using namespace gmp::model;

namespace {
constexpr uint64_t kMaxSteps = 1'000'000;
}  // namespace

// A racy increment (plain load, then plain store) loses updates under some interleaving, and a
// random search finds one: proof that the threads really interleave at each access.
TEST_CASE("plain threads interleave at plain accesses: a random search finds a lost update", "[interleave]") {
  bool lost = false;
  for (uint64_t seed = 1; seed <= 200 && !lost; seed++) {
    Atomic<uint32_t> counter;
    ThreadProgram prog;
    for (int t = 0; t < 2; t++) {
      prog.add_thread("T" + std::to_string(t), [&counter] {
        for (int i = 0; i < 3; i++) counter.set(counter.get() + 1);
      });
    }
    RandomPolicy policy(seed);
    const ThreadRun r = prog.run(policy, kMaxSteps);
    REQUIRE(r.outcome == ThreadRun::Outcome::Completed);
    if (counter.peek() < 6) lost = true;
  }
  CHECK(lost);
}

TEST_CASE("the same increments with Add never lose an update", "[interleave]") {
  for (uint64_t seed = 1; seed <= 200; seed++) {
    Atomic<uint32_t> counter;
    ThreadProgram prog;
    for (int t = 0; t < 2; t++) {
      prog.add_thread("T" + std::to_string(t), [&counter] {
        for (int i = 0; i < 3; i++) counter.Add(1);
      });
    }
    RandomPolicy policy(seed);
    REQUIRE(prog.run(policy, kMaxSteps).outcome == ThreadRun::Outcome::Completed);
    REQUIRE(counter.peek() == 6);
  }
}

// The same racy increments under exhaustive DPOR: every outcome is reached, the lost update among
// them, and the search ends.
TEST_CASE("DPOR over plain threads reaches the lost update and completes", "[interleave][dpor]") {
  std::set<uint32_t> finals;
  Dpor dpor;
  uint64_t executions = 0;
  for (uint64_t n = 0; dpor.begin(n); n++) {
    Atomic<uint32_t> counter;
    ThreadProgram prog;
    for (int t = 0; t < 2; t++) {
      prog.add_thread("T" + std::to_string(t), [&counter] {
        for (int i = 0; i < 2; i++) counter.set(counter.get() + 1);
      });
    }
    const ThreadRun r = prog.run(dpor, kMaxSteps);
    executions++;
    if (r.outcome == ThreadRun::Outcome::Completed) finals.insert(counter.peek());
    REQUIRE(executions < 10'000);
  }
  CHECK(finals == std::set<uint32_t>{2, 3, 4});
}

TEST_CASE("a runtime lock excludes and a note wakes its sleeper", "[interleave]") {
  for (uint64_t seed = 1; seed <= 100; seed++) {
    plat::Mutex mu;
    plat::Note done;
    Atomic<uint32_t> inside, counter;
    bool overlap = false;
    ThreadProgram prog;
    for (int t = 0; t < 3; t++) {
      prog.add_thread("W" + std::to_string(t), [&] {
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
    prog.add_thread("sleeper", [&] {
      plat::notesleep(done);
      seen = counter.get();
    });
    RandomPolicy policy(seed);
    REQUIRE(prog.run(policy, kMaxSteps).outcome == ThreadRun::Outcome::Completed);
    REQUIRE_FALSE(overlap);
    REQUIRE(seen == 3);
  }
}

TEST_CASE("a thread sleeping on a note nobody wakes is a deadlock", "[interleave]") {
  plat::Note never;
  ThreadProgram prog;
  prog.add_thread("sleeper", [&] { plat::notesleep(never); });
  RandomPolicy policy(1);
  const ThreadRun r = prog.run(policy, kMaxSteps);
  CHECK(r.outcome == ThreadRun::Outcome::Deadlock);
  CHECK(r.message.find("sleeper") != std::string::npos);
}

TEST_CASE("a Go throw in a thread ends the run as failed with Go's message", "[interleave]") {
  ThreadProgram prog;
  prog.add_thread("thrower", [] { plat::throw_("runqsteal: runq overflow"); });
  prog.add_thread("other", [] {
    Atomic<uint32_t> x;
    for (int i = 0; i < 10; i++) x.Add(1);
  });
  RandomPolicy policy(1);
  const ThreadRun r = prog.run(policy, kMaxSteps);
  CHECK(r.outcome == ThreadRun::Outcome::Failed);
  CHECK(r.message.find("fatal error: runqsteal: runq overflow") != std::string::npos);
}

TEST_CASE("a thread that never ends stops at the step limit", "[interleave]") {
  ThreadProgram prog;
  prog.add_thread("spinner", [] {
    Atomic<uint32_t> x;
    while (x.Load() == 0) {
    }
  });
  RandomPolicy policy(1);
  const ThreadRun r = prog.run(policy, 500);
  CHECK(r.outcome == ThreadRun::Outcome::StepLimit);
  CHECK(r.message == "no end within 500 steps");
}

TEST_CASE("a recorded schedule replays to the same run", "[interleave][runq]") {
  QueueCheckConfig cfg;
  cfg.gs = 300;
  cfg.seed = 7;
  RandomPolicy random(cfg.seed);
  const QueueCheckResult a = run_queue_check(cfg, random);
  REQUIRE(a.ok());
  REQUIRE(a.run.schedule.picks.size() > 100);
  ReplayPolicy replay(a.run.schedule, /*strict=*/true);
  const QueueCheckResult b = run_queue_check(cfg, replay);
  REQUIRE(b.ok());
  CHECK(b.run.schedule.str() == a.run.schedule.str());
  CHECK(b.run.steps == a.run.steps);
  CHECK(b.run.switches == a.run.switches);
  for (size_t i = 0; i < a.per_p.size(); i++) {
    CHECK(b.per_p[i].steals == a.per_p[i].steals);
    CHECK(b.per_p[i].stolen == a.per_p[i].stolen);
    CHECK(b.per_p[i].local_gets == a.per_p[i].local_gets);
  }
}

// A strict replay refuses a schedule that picks a thread that cannot run at its step, whether the
// pick is the run's first (made on the engine's own stack) or a later one (made on a thread's),
// and one whose run ends at another step; the run is torn down and the next one works.
TEST_CASE("a schedule that does not fit the run is refused with ScheduleError", "[interleave][runq]") {
  QueueCheckConfig cfg;
  cfg.procs = 3;
  cfg.gs = 12;
  ReplayPolicy first(Schedule::parse("0:7/100"), true);
  CHECK_THROWS_WITH(run_queue_check(cfg, first),
                    Catch::Contains("diverges at step 0: it picks thread 7, which cannot run there (threads that can: "
                                    "0, 1, 2)"));
  RandomPolicy random(5);
  const QueueCheckResult a = run_queue_check(cfg, random);
  REQUIRE(a.ok());
  REQUIRE(a.run.schedule.picks.size() > 20);
  Schedule later = a.run.schedule;
  later.picks.resize(20);
  later.picks.emplace_back(later.picks.back().first + 1, 9);
  ReplayPolicy bad(later, true);
  CHECK_THROWS_WITH(run_queue_check(cfg, bad), Catch::Contains("it picks thread 9"));
  Schedule longer = a.run.schedule;
  longer.steps += 5;
  ReplayPolicy too_long(longer, true);
  CHECK_THROWS_WITH(run_queue_check(cfg, too_long), Catch::Contains("the run ended at step"));
  // The machinery is usable again afterwards.
  ReplayPolicy again(a.run.schedule, true);
  CHECK(run_queue_check(cfg, again).ok());
}

// The acceptance test: 4 Ps put, get and steal concurrently over thousands of seeded random
// schedules, and every G is taken exactly once. Also checks that the schedules really differ and
// that steals (of ring and of runnext) and global-queue traffic happen.
TEST_CASE("4 Ps put get and steal under thousands of random schedules", "[interleave][runq]") {
  QueueCheckConfig cfg;
  cfg.procs = 4;
  cfg.producers = 1;  // one P feeds three thieves, and its ring sometimes overflows
  cfg.gs = 600;
  cfg.run_every = 8;
  uint64_t steals = 0, runnext_steals = 0, global = 0;
  std::set<std::string> schedules;
  constexpr uint64_t kSchedules = 2000;
  for (uint64_t seed = 1; seed <= kSchedules; seed++) {
    cfg.seed = seed;
    RandomPolicy policy(seed);
    const QueueCheckResult r = run_queue_check(cfg, policy);
    INFO("seed " << seed << ": " << (r.errors.empty() ? "" : r.errors.front()));
    REQUIRE(r.ok());
    schedules.insert(r.run.schedule.str());
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

// Choice mode delivers a signal at the target's first step after it was sent (docs/checker.md).
TEST_CASE("tgkill runs the handler on the target thread at its next step", "[interleave][signal]") {
  plat::set_signal_handler(SIGURG, &record_handler);
  for (uint64_t seed = 1; seed <= 50; seed++) {
    handled_on = ~uint64_t{0};
    Atomic<uint64_t> target_tid{~uint64_t{0}};
    Atomic<uint32_t> stop;
    uint64_t seen_after_stop = 0;
    ThreadProgram prog;
    prog.add_thread("target", [&] {
      target_tid.Store(plat::gettid());
      while (stop.Load() == 0) {
      }
      stop.Load();  // a step after the one that saw stop: the signal was sent before that one
      seen_after_stop = handled_on;
    });
    prog.add_thread("sender", [&] {
      uint64_t tid;
      while ((tid = target_tid.Load()) == ~uint64_t{0}) {
      }
      plat::tgkill(tid, SIGURG);
      stop.Store(1);
    });
    RandomPolicy policy(seed);
    REQUIRE(prog.run(policy, kMaxSteps).outcome == ThreadRun::Outcome::Completed);
    REQUIRE(seen_after_stop == 0);  // the target is thread 0
  }
  plat::set_signal_handler(SIGURG, nullptr);
}

// The run queues under every interleaving up to a bound, not a sample: bounded DPOR over 2 Ps, one
// feeding its ring, runnext and the global queue, the other stealing, runs to completion, and in
// every execution each G is taken exactly once.
TEST_CASE("2 Ps put get and steal under every interleaving of 2 preemptions", "[interleave][runq][dpor]") {
  QueueCheckConfig cfg;
  cfg.procs = 2;
  cfg.gs = 10;
  cfg.producers = 1;
  cfg.run_every = 2;
  cfg.max_steps = 20'000;
  Dpor dpor(/*preemption_bound=*/2);
  uint64_t executions = 0, completed = 0, steals = 0, runnext_steals = 0, global = 0;
  for (; dpor.begin(executions); executions++) {
    REQUIRE(executions < 100'000);
    const QueueCheckResult r = run_queue_check(cfg, dpor);
    if (r.run.outcome == ThreadRun::Outcome::Stopped) continue;  // a sleep-set block: nothing new below
    INFO("execution " << executions << ": " << (r.errors.empty() ? "" : r.errors.front()));
    REQUIRE(r.ok());
    completed++;
    for (const auto& s : r.per_p) {
      steals += s.steals;
      runnext_steals += s.runnext_steals;
      global += s.global_gets;
    }
  }
  CHECK(completed > 1000);
  CHECK(steals > 0);
  CHECK(runnext_steals > 0);
  CHECK(global > 0);
}
