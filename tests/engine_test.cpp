// The virtual-time engine on its own: threads of plain code (no scheduler), checking time, cores,
// blocking, signals, limits and determinism.
#include <catch2/catch.hpp>

#include <csignal>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/cost/profile.h"
#include "sim/simulation/costs_from_profile.h"
#include "sim/engine/choice_driver.h"
#include "sim/engine/engine.h"
#include "sim/engine/timed_driver.h"
#include "sim/simulation/simulation.h"
#include "sim/platform/atomic.h"
#include "sim/platform/platform.h"

using namespace gmp;
using namespace gmp::engine;

namespace {

// Costs with round numbers, so expectations can be worked by hand.
Costs test_costs() {
  Costs c;
  c.op.fill(1);
  c.futex_wake_latency = 100;
  c.usleep_min_latency = 50;
  c.context_switch = 10;
  c.os_quantum = 1000;
  c.signal_delivery_latency = 20;
  return c;
}

EngineConfig config(int cores, uint64_t seed = 1) {
  EngineConfig cfg;
  cfg.cores.assign(static_cast<size_t>(cores), Core{1.0});
  cfg.costs = test_costs();
  cfg.seed = seed;
  return cfg;
}

// Runs each function on its own simulated thread.
struct Fns {
  std::vector<std::function<void()>> fns;
  static void entry(void* arg) { (*static_cast<std::function<void()>*>(arg))(); }
  void spawn(Engine& e) {
    for (size_t i = 0; i < fns.size(); i++) e.newosproc("T" + std::to_string(i), &Fns::entry, &fns[i], nullptr);
  }
};

}  // namespace

TEST_CASE("computes share one core by time slicing and run in parallel on two", "[engine]") {
  for (int cores : {1, 2}) {
    Engine e(config(cores));
    std::vector<int64_t> done(2, 0);
    Fns f;
    for (int i = 0; i < 2; i++) {
      f.fns.emplace_back([&e, &done, i] {
        int64_t left = 10000;
        while (left > 0) left = e.compute(left);
        done[static_cast<size_t>(i)] = e.now();
      });
    }
    f.spawn(e);
    const Engine::Result r = e.run();
    REQUIRE(r.stop == Engine::Stop::AllExited);
    INFO("cores " << cores);
    if (cores == 2) {
      // Each thread: one context switch onto its core, then 10,000 ns of work.
      CHECK(done[0] == 10010);
      CHECK(done[1] == 10010);
      CHECK(e.stats().os_preemptions == 0);
    } else {
      // 20,000 ns of work on one core, plus a context switch per slice: both finish late, and
      // the slices interleave (neither finishes before the other has run at all).
      CHECK(std::max(done[0], done[1]) >= 20000);
      CHECK(std::min(done[0], done[1]) > 10010);
      CHECK(e.stats().os_preemptions >= 10);
    }
  }
}

TEST_CASE("compute is scaled by the core's speed", "[engine]") {
  EngineConfig cfg = config(1);
  cfg.cores[0].speed = 0.5;
  Engine e(cfg);
  int64_t end = 0;
  Fns f;
  f.fns.emplace_back([&] {
    CHECK(e.compute(1000) == 0);
    end = e.now();
  });
  f.spawn(e);
  e.run();
  CHECK(end == 10 + 2000);
}

namespace {

// One thread sleeps on a note; the other computes 500 ns and wakes it. The times: when the waker
// called notewakeup, when it came back from it, and when the sleeper ran again.
struct NoteWake {
  int64_t waked_at = 0, waker_after = 0, woke = 0;
};
NoteWake note_wake(const EngineConfig& cfg) {
  Engine e(cfg);
  plat::Note n;
  NoteWake w;
  Fns f;
  f.fns.emplace_back([&] {
    plat::notesleep(n);
    w.woke = e.now();
  });
  f.fns.emplace_back([&] {
    e.compute(500);
    w.waked_at = e.now();
    plat::notewakeup(n);
    w.waker_after = e.now();
  });
  f.spawn(e);
  REQUIRE(e.run().stop == Engine::Stop::AllExited);
  return w;
}

}  // namespace

TEST_CASE("a note sleeper wakes one futex latency after notewakeup", "[engine]") {
  const NoteWake w = note_wake(config(2));
  // The key's exchange (an Xchg, 1) is a step of its own before the wake-up; woken futex latency
  // after it, then a context switch onto a core.
  CHECK(w.woke == w.waked_at + 1 + 100 + 10);
}

TEST_CASE("usleep blocks for at least the timer slack and frees the core", "[engine]") {
  Engine e(config(1));
  int64_t slept_until = 0, other_ran_at = 0;
  Fns f;
  f.fns.emplace_back([&] {
    const int64_t t0 = e.now();
    plat::usleep(0);  // shorter than the slack: lasts usleep_min_latency
    slept_until = e.now() - t0;
  });
  f.fns.emplace_back([&] { other_ran_at = plat::nanotime() - kNanotimeEpoch; });
  f.spawn(e);
  REQUIRE(e.run().stop == Engine::Stop::AllExited);
  CHECK(slept_until >= 50);
  CHECK(other_ran_at < 50);  // ran on the core while the sleeper slept
}

namespace {
int handled_sig = 0;
uint64_t handled_tid = 99;
void handler(int sig) {
  handled_sig = sig;
  handled_tid = plat::gettid();
}
}  // namespace

TEST_CASE("a signal cuts a long compute short and runs the handler on the target", "[engine][signal]") {
  plat::set_signal_handler(SIGURG, &handler);
  handled_sig = 0;
  Engine e(config(2));
  int64_t left = 0, sent_at = 0;
  Fns f;
  f.fns.emplace_back([&] { left = e.compute(1000000); });
  f.fns.emplace_back([&] {
    e.compute(300);
    sent_at = e.now();
    plat::tgkill(0, SIGURG);
  });
  f.spawn(e);
  REQUIRE(e.run().stop == Engine::Stop::AllExited);
  plat::set_signal_handler(SIGURG, nullptr);
  CHECK(handled_sig == SIGURG);
  CHECK(handled_tid == 0);
  // The compute started at 10 and was cut at sent_at + delivery latency.
  CHECK(left == 1000000 - (sent_at + 20 - 10));
}

TEST_CASE("threads blocked forever end the run as a deadlock", "[engine]") {
  Engine e(config(1));
  plat::Note never;
  Fns f;
  f.fns.emplace_back([&] { plat::notesleep(never); });
  f.spawn(e);
  const Engine::Result r = e.run();
  CHECK(r.stop == Engine::Stop::Deadlock);
  CHECK(r.message.find("T0") != std::string::npos);
}

TEST_CASE("a runaway thread stops at the time limit", "[engine]") {
  EngineConfig cfg = config(1);
  cfg.time_limit = 1000000;
  Engine e(cfg);
  Fns f;
  f.fns.emplace_back([&] {
    for (;;) e.compute(1000);
  });
  f.spawn(e);
  const Engine::Result r = e.run();
  CHECK(r.stop == Engine::Stop::TimeLimit);
  CHECK(r.message.find("1000000") != std::string::npos);
}

// A compute or blocking call of INT64_MAX ns overflowed the thread's clock (undefined behaviour;
// in a release build it took no time). A step is held to the end of virtual time, 2^61 ns, where
// a run with no time limit stops.
TEST_CASE("huge computes and system calls stop at the end of virtual time", "[engine][limits]") {
  for (int kind = 0; kind < 3; kind++) {
    INFO(kind);
    EngineConfig cfg = config(1);
    cfg.cores[0].speed = 1e-3;
    Engine e(cfg);
    Fns f;
    f.fns.emplace_back([&] {
      e.compute(1000);
      if (kind == 0) e.compute(INT64_MAX);
      if (kind == 1) e.block_for(INT64_MAX);
      if (kind == 2) e.compute(int64_t{1} << 60);  // 2^70 ns at this core's speed
      e.compute(1000);
    });
    f.spawn(e);
    const Engine::Result r = e.run();
    CHECK(r.stop == Engine::Stop::TimeLimit);
    CHECK(r.message.find("(the end of virtual time)") != std::string::npos);
    CHECK(r.end_time > int64_t{1} << 61);
    CHECK(r.end_time < int64_t{1} << 62);
  }
}

TEST_CASE("a Go throw on a thread ends the run with Go's message", "[engine]") {
  Engine e(config(1));
  Fns f;
  f.fns.emplace_back([] { plat::throw_("schedule: holding locks"); });
  f.spawn(e);
  const Engine::Result r = e.run();
  CHECK(r.stop == Engine::Stop::Fatal);
  CHECK(r.message == "fatal error: schedule: holding locks");
}

// A C++ exception cannot unwind past the bottom of a thread's stack (no frame of the caller is
// below it there): the engine stops the run and rethrows it from run(), on the caller's stack.
TEST_CASE("an exception escaping a thread's stack is rethrown by run", "[engine]") {
  Engine e(config(2));
  Fns f;
  int after = 0;
  f.fns.emplace_back([] {
    plat::compute(100);
    throw std::runtime_error("trace writer: disk full");
  });
  f.fns.emplace_back([&after] {
    plat::compute(1000);
    after++;  // never reached: the run stopped at 100 ns
  });
  f.spawn(e);
  CHECK_THROWS_WITH(e.run(), "trace writer: disk full");
  CHECK(after == 0);
}

// Four threads contending on a lock and a counter: the order of acquisitions depends on the seed's
// tie-breaks, and the same seed gives the same order.
TEST_CASE("the same seed gives the same interleaving", "[engine][determinism]") {
  auto order = [](uint64_t seed) {
    Engine e(config(2, seed));
    plat::Mutex mu;
    std::string log;
    Fns f;
    for (int i = 0; i < 4; i++) {
      f.fns.emplace_back([&, i] {
        for (int k = 0; k < 5; k++) {
          plat::lock(mu);
          log += static_cast<char>('a' + i);
          plat::unlock(mu);
          e.compute(7);
        }
      });
    }
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    return log;
  };
  const std::string a = order(1);
  CHECK(a.size() == 20);
  CHECK(order(1) == a);
  bool differs = false;
  for (uint64_t s = 2; s < 20 && !differs; s++) differs = order(s) != a;
  CHECK(differs);
}

// OS wake-ups land late by a seeded amount in [0, wakeup_jitter): without it, fixed costs make a
// run periodic and races that follow a sleep (runqgrab's usleep(3)) resolve the same way each time.
TEST_CASE("wake-ups are late by a seeded jitter within wakeup_jitter", "[engine][determinism]") {
  auto lengths = [](uint64_t seed) {
    EngineConfig cfg = config(2, seed);
    cfg.costs.wakeup_jitter = 40;
    Engine e(cfg);
    std::vector<int64_t> out;
    plat::Note n;
    int64_t waked_at = 0;
    Fns f;
    f.fns.emplace_back([&] {
      for (int i = 0; i < 50; i++) {
        const int64_t t0 = e.now();
        plat::usleep(0);
        out.push_back(e.now() - t0);
      }
      plat::notesleep(n);
      out.push_back(e.now() - waked_at);
    });
    f.fns.emplace_back([&] {
      e.compute(100000);
      waked_at = e.now();
      plat::notewakeup(n);
    });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    return out;
  };
  const std::vector<int64_t> a = lengths(1);
  REQUIRE(a.size() == 51);
  int64_t lo = INT64_MAX, hi = 0;
  for (size_t i = 0; i < 50; i++) {
    lo = std::min(lo, a[i]);
    hi = std::max(hi, a[i]);
  }
  // usleep(0) lasts the slack (50) plus the jitter, never more; over 50 sleeps the jitter shows.
  CHECK(lo >= 50);
  CHECK(hi < 50 + 40 + 10);  // slack + jitter + at most one context switch back onto a core
  CHECK(hi - lo >= 20);
  // A futex wake-up: latency (100) plus jitter, plus the context switch onto a core.
  CHECK(a[50] >= 100 + 10);
  CHECK(a[50] < 100 + 40 + 10);
  CHECK(lengths(1) == a);
  CHECK(lengths(2) != a);
}

// A runtime lock's word is a cache line like any cell: taking or releasing a lock another thread
// used last moves the line first.
TEST_CASE("a lock last used by another thread costs a cache-line transfer", "[engine]") {
  EngineConfig cfg = config(2);
  cfg.costs.lock_uncontended = 5;
  cfg.costs.cacheline_transfer = 30;
  Engine e(cfg);
  plat::Mutex mu;
  int64_t a_again = 0, b_lock = 0, a_return = 0;
  Fns f;
  f.fns.emplace_back([&] {
    plat::lock(mu);
    plat::unlock(mu);
    int64_t t0 = e.now();
    plat::lock(mu);  // the line is still here
    a_again = e.now() - t0;
    plat::unlock(mu);
    e.compute(1000);
    t0 = e.now();
    plat::lock(mu);  // B used it since
    a_return = e.now() - t0;
    plat::unlock(mu);
  });
  f.fns.emplace_back([&] {
    e.compute(500);
    const int64_t t0 = e.now();
    plat::lock(mu);
    b_lock = e.now() - t0;
    plat::unlock(mu);
  });
  f.spawn(e);
  REQUIRE(e.run().stop == Engine::Stop::AllExited);
  CHECK(a_again == 5);
  CHECK(b_lock == 5 + 30);
  CHECK(a_return == 5 + 30);
}

// Transfers by distance on 4 cores in 2 clusters of 2 (cacheline_transfer 100 across clusters, 30
// inside one). T0..T3 take cores 0..3 and T4 waits until T0 exits, then runs on core 0. Each takes
// the lock once, in turn: T0 first (no holder), T4 after T0 on the same core (free), T1 after T4
// from core 0 to core 1 (same cluster), T2 from core 1 to core 2 (across), T3 from core 2 to 3.
// Without distance every one of these pays 100, same core or not.
TEST_CASE("a cache-line transfer costs by distance: same core, same cluster, across clusters", "[engine][coherence]") {
  auto costs = [](bool by_distance) {
    EngineConfig cfg = config(4);
    for (size_t c = 0; c < 4; c++) cfg.cores[c].cluster = static_cast<int32_t>(c / 2);
    cfg.costs.lock_uncontended = 5;
    cfg.costs.cacheline_transfer = 100;
    cfg.costs.cacheline_transfer_cluster = 30;
    cfg.costs.cacheline_by_distance = by_distance;
    Engine e(cfg);
    plat::Mutex mu;
    std::vector<int64_t> cost(5, -1);
    std::vector<int> core(5, -1);
    auto take = [&](size_t i) {
      core[i] = e.current_core();
      const int64_t t0 = e.now();
      plat::lock(mu);
      cost[i] = e.now() - t0;
      plat::unlock(mu);
    };
    Fns f;
    f.fns.emplace_back([&] { take(0); });  // then exits, handing core 0 to T4
    for (size_t i = 1; i <= 3; i++) {
      f.fns.emplace_back([&, i] {
        int64_t left = static_cast<int64_t>(i) * 1000;
        while (left > 0) left = e.compute(left);  // cut at a time-slice end while T4 waits
        take(i);
      });
    }
    f.fns.emplace_back([&] { take(4); });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    CHECK(core == std::vector<int>{0, 1, 2, 3, 0});
    return std::vector<int64_t>{cost[0], cost[4], cost[1], cost[2], cost[3]};  // in the order taken
  };
  CHECK(costs(true) == std::vector<int64_t>{5, 5 + 0, 5 + 30, 5 + 100, 5 + 30});
  CHECK(costs(false) == std::vector<int64_t>{5, 5 + 100, 5 + 100, 5 + 100, 5 + 100});
}

// The profile's clusters numbered over the machine: M1 Pro's 4 + 4 performance cores and 2
// efficiency cores; cores asked for beyond the profile's continue the last group's clusters.
TEST_CASE("machine_cores numbers the profile's clusters", "[engine][coherence]") {
  const cost::Profile m1 = *cost::builtin_profile("m1pro");
  std::vector<int32_t> ids;
  for (const Core& c : machine_cores(m1, 13)) ids.push_back(c.cluster);
  CHECK(ids == std::vector<int32_t>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4});
  const engine::Costs costs = costs_from_profile(m1);
  CHECK(costs.cacheline_by_distance);
  CHECK(costs.cacheline_transfer_cluster == 40);
  ids.clear();
  for (const Core& c : machine_cores(cost::default_profile(), 20)) ids.push_back(c.cluster);
  CHECK(ids == std::vector<int32_t>(20, 0));
  CHECK_FALSE(costs_from_profile(cost::default_profile()).cacheline_by_distance);
}

// Go 1.27's lock2 (lock_spinbit.go): a waiter spins for 4 procyields of 30 and one osyield, taking
// the lock by hand-off if it is released meanwhile; after that it sleeps in the kernel and the
// unlock pays a futex wake-up, the sleeper running futex_wake_latency later.
// Round costs for the runtime-lock tests: a spin budget of 4 * 30 * 1 + 10 = 130, a hand-off of 5
// and futex_sleep 7 (futex_wake_latency 100 and context_switch 10 come from test_costs).
static EngineConfig lock_config(int cores) {
  EngineConfig cfg = config(cores);
  cfg.costs.path[static_cast<size_t>(plat::Cost::ProcYield)] = 1;
  cfg.costs.osyield = 10;
  cfg.costs.lock_contended_handoff = 5;
  cfg.costs.futex_sleep = 7;
  return cfg;
}

TEST_CASE("a runtime-lock waiter spins, then sleeps until a futex wake-up", "[engine]") {
  auto wait_for = [](int64_t hold) {
    EngineConfig cfg = lock_config(2);
    cfg.costs.futex_wake = 50;
    Engine e(cfg);
    plat::Mutex mu;
    int64_t unlocked_at = 0, unlock_cost = 0, got_at = 0;
    Fns f;
    f.fns.emplace_back([&] {
      plat::lock(mu);
      e.compute(hold);
      unlocked_at = e.now();
      plat::unlock(mu);
      unlock_cost = e.now() - unlocked_at;
    });
    f.fns.emplace_back([&] {
      e.compute(10);
      plat::lock(mu);
      got_at = e.now();
      plat::unlock(mu);
    });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    return std::array<int64_t, 2>{got_at - unlocked_at, unlock_cost};
  };
  // Released within the spin: the release is the plain store (1) at a step of its own, and the
  // spinner takes the lock 5 after it.
  const auto quick = wait_for(50);
  CHECK(quick[0] == 1 + 5);
  CHECK(quick[1] == 1);
  // Held past the spin: the waiter sleeps; the unlock pays futex_wake (50), the sleeper wakes
  // futex_wake_latency (100) later, is switched onto a core (10) and pays futex_sleep (7).
  const auto slow = wait_for(1000);
  CHECK(slow[1] == 1 + 50);
  CHECK(slow[0] == 1 + 100 + 10 + 7);
}

// One waiter at a time spins (lock_spinbit.go's mutexSpinning); the others sleep at once. A lock
// that prefers low latency (sched.lock) lets every waiter spin.
TEST_CASE("only one waiter spins on a runtime lock, unless it prefers low latency", "[engine]") {
  auto third_waits = [](bool prefer_low_latency) {
    Engine e(lock_config(3));
    plat::Mutex mu;
    mu.prefer_low_latency = prefer_low_latency;
    int64_t b_unlocked = 0, c_got = 0;
    Fns f;
    f.fns.emplace_back([&] {
      plat::lock(mu);
      e.compute(50);
      plat::unlock(mu);
    });
    f.fns.emplace_back([&] {
      e.compute(10);
      plat::lock(mu);  // spins, and gets it when the first unlocks
      e.compute(20);
      b_unlocked = e.now();
      plat::unlock(mu);
    });
    f.fns.emplace_back([&] {
      e.compute(20);
      plat::lock(mu);
      c_got = e.now();
      plat::unlock(mu);
    });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    return c_got - b_unlocked;
  };
  // The release's store (1) comes first; then, asleep: futex wake-up, switch onto a core; still
  // spinning: the hand-off.
  CHECK(third_waits(false) == 1 + 100 + 10 + 7);
  CHECK(third_waits(true) == 1 + 5);
}

namespace {

// Affine (Linux) placement with round numbers: a 5,000-ns tick, a 1,000-ns base slice (2,000 on
// two cores), no delayed dequeue unless a test turns it on, cache-hot never (migration cost 0).
EngineConfig affine_config(int cores) {
  EngineConfig cfg = config(cores);
  cfg.costs.affine = true;
  Costs::Kernel& k = cfg.costs.kernel;
  k.tick = 5000;
  k.base_slice = 1000;
  k.slice_scaling_max_cpus = 8;
  k.migration_cost = 0;
  k.imbalance_pct = 117;
  k.busy_factor = 16;
  k.balance_interval_per_cpu = 1000;
  k.cache_nice_tries = 1;
  k.pelt_halflife = 1'000'000'000;  // utilisation stays near 0 over a short run
  k.newidle_balance_cost = 0;
  k.delay_dequeue = false;
  return cfg;
}

// T0 computes on core 0, creates T2 (queued there) and sleeps 1 us; T2 computes meanwhile; T1
// computes on core 1 until shortly before T0 wakes, then exits (or sleeps 1 ms: t1_sleeps). At
// the wake-up T0's previous core is busy and core 1 idle: select_idle_sibling's scan finds core 1
// when the LLC is lightly used, and SIS_UTIL cuts the scan when it is busy (a short PELT
// half-life makes 20 us of work count; T1 must sleep, not exit, for its share to stay on core 1).
struct SisRun {
  int after = -1;
  EngineStats st;
};
SisRun sis_run(int64_t halflife, bool t1_sleeps = false) {
  EngineConfig cfg = affine_config(2);
  cfg.costs.kernel.pelt_halflife = halflife;
  cfg.costs.kernel.migration_cost = 1'000'000'000;  // hot: no balancer moves T0 either
  cfg.costs.kernel.cache_nice_tries = 16;
  SisRun r;
  Engine e(cfg);
  Fns f;
  std::function<void()> t2 = [&] {
    for (int64_t left = 50000; left > 0;) left = e.compute(left);
  };
  f.fns.emplace_back([&] {
    for (int64_t left = 20000; left > 0;) left = e.compute(left);
    e.newosproc("T2", &Fns::entry, &t2, nullptr);  // queued on core 0, runs while T0 sleeps
    plat::usleep(1);
    r.after = e.current_core();
  });
  f.fns.emplace_back([&] {
    e.compute(20800);
    if (t1_sleeps) plat::usleep(1000);  // its utilisation stays on core 1 while it sleeps
  });
  f.spawn(e);
  REQUIRE(e.run().stop == Engine::Stop::AllExited);
  r.st = e.stats();
  return r;
}

}  // namespace

TEST_CASE("affine placement: the idle search finds an idle core unless SIS_UTIL cuts it on a busy LLC",
          "[engine][placement]") {
  const SisRun idle_llc = sis_run(1'000'000'000);
  CHECK(idle_llc.after == 1);
  CHECK(idle_llc.st.placed_on_other == 3);  // T0's and T1's first placements, then T0's wake-up
  const SisRun busy_llc = sis_run(1000, /*t1_sleeps=*/true);
  CHECK(busy_llc.after == 0);  // queued on its busy previous core, run there after T2's slice
  CHECK(busy_llc.st.placed_on_other == 2);
  // The metrics: T0's wake-up is the only one of the first run (T1 and T2 start, they do not
  // wake); the second adds T1's, on its idle previous core. T0 ran on its previous core only when
  // the scan was cut, and only then did it wait while core 1 idled.
  CHECK(idle_llc.st.wakeups == 1);
  CHECK(busy_llc.st.wakeups == 2);
  CHECK(idle_llc.st.wake_on_prev == 0);
  CHECK(busy_llc.st.wake_on_prev == 2);
  CHECK(idle_llc.st.migrations == 1);
  CHECK(busy_llc.st.migrations == 0);
  CHECK(idle_llc.st.idle_wait_ns == 0);
  CHECK(busy_llc.st.idle_wait_ns > 0);
}

// PELT as the kernel keeps it, with a half-life so long that nothing decays: each new thread
// starts with half its core's spare capacity (post_init_entity_util_avg: T0 and T1 0.5 each on
// their empty cores, T2 0.25 behind T0), and a sleeper's share stays on its core's cfs_rq. With T1
// asleep on core 1 at T0's wake-up the LLC's mean is (0.75 + 0.5) / 2, above SIS_UTIL's cut on two
// cores (about 0.6): T0 queues on its busy core. With T1 gone its share leaves too and the scan
// finds core 1 (the first test above).
TEST_CASE("affine placement: a new thread's initial utilisation and a sleeper's stay on their core",
          "[engine][placement]") {
  const SisRun gone = sis_run(1'000'000'000);
  CHECK(gone.after == 1);
  const SisRun asleep = sis_run(1'000'000'000, /*t1_sleeps=*/true);
  CHECK(asleep.after == 0);
}

// SIS_UTIL's depth is the one the last balance computed. T0's first wake-up finds both cores busy
// (T2 on core 0, T1 on core 1) and utilisation near 1 (1-us half-life): the depth computed then
// is 0. T1 then sleeps for long and T0 sleeps `second_sleep` us while T2 keeps core 0, nobody
// queued, so nothing balances. At T0's second wake-up core 0 is busy and core 1 idle with its
// utilisation decayed: a depth recomputed now would let the scan find core 1. Within a busy
// core's balance interval (x busy_factor: 80 us here) the old depth holds and T0 queues on core
// 0; later, the busy core's periodic balance has refreshed it and T0 goes to core 1.
int stale_scan_run(uint32_t second_sleep) {
  EngineConfig cfg = affine_config(2);
  cfg.costs.kernel.pelt_halflife = 1000;
  cfg.costs.kernel.migration_cost = 1'000'000'000;  // hot: no balancer moves anyone
  cfg.costs.kernel.cache_nice_tries = 16;
  Engine e(cfg);
  Fns f;
  int after = -1;
  std::function<void()> t2 = [&] {
    for (int64_t left = 400000; left > 0;) left = e.compute(left);
  };
  f.fns.emplace_back([&] {
    for (int64_t left = 20000; left > 0;) left = e.compute(left);
    e.newosproc("T2", &Fns::entry, &t2, nullptr);  // core 1 is busy: T2 queues on core 0
    plat::usleep(1);
    REQUIRE(e.current_core() == 0);  // the first wake-up: cut on a busy LLC
    plat::usleep(second_sleep);
    after = e.current_core();
  });
  f.fns.emplace_back([&] {
    for (int64_t left = 30000; left > 0;) left = e.compute(left);
    plat::usleep(2000);
  });
  f.spawn(e);
  REQUIRE(e.run().stop == Engine::Stop::AllExited);
  return after;
}

TEST_CASE("affine placement: SIS_UTIL's scan depth is the last periodic balance's, not the wake-up's",
          "[engine][placement]") {
  CHECK(stale_scan_run(20) == 0);
  CHECK(stale_scan_run(150) == 1);
}

// UTIL_EST on three cores (10-us half-life). T1 runs 40 us on core 1 (utilisation 0.94), sleeps
// 30 us (its util_avg decays to about 0.12, its estimate stays 0.94) and runs again there. T3
// keeps core 0 busy while T0 sleeps; T2 has left core 2 idle. When T0 wakes, just after T1, the
// LLC's mean is about (1 + 0.94) / 3 with the estimate and (1 + 0.2) / 3 without: the scan depth
// is 1 (it looks at core 1 only, busy: T0 queues on core 0) against 2 (it finds core 2).
int util_est_run() {
  EngineConfig cfg = affine_config(3);
  cfg.costs.kernel.pelt_halflife = 10000;
  cfg.costs.kernel.migration_cost = 1'000'000'000;
  cfg.costs.kernel.cache_nice_tries = 16;
  Engine e(cfg);
  Fns f;
  int after = -1;
  f.fns.emplace_back([&] {
    plat::usleep(72);
    after = e.current_core();
  });
  f.fns.emplace_back([&] {
    for (int64_t left = 40000; left > 0;) left = e.compute(left);
    plat::usleep(30);
    REQUIRE(e.current_core() == 1);
    for (int64_t left = 100000; left > 0;) left = e.compute(left);
  });
  f.fns.emplace_back([&] { e.compute(10000); });
  f.fns.emplace_back([&] {
    for (int64_t left = 200000; left > 0;) left = e.compute(left);
  });
  f.spawn(e);
  REQUIRE(e.run().stop == Engine::Stop::AllExited);
  return after;
}

TEST_CASE("affine placement: UTIL_EST counts a woken thread's estimate on its core", "[engine][placement]") {
  CHECK(util_est_run() == 0);
}

// T0 runs on core 0 with T2 queued behind it, then sleeps 1 us; T1 keeps core 1 busy. T0 has run
// more than its share, so with DELAY_DEQUEUE it stays on core 0's queue, delayed, and its wake-up
// puts it back there without a placement; without, it is dequeued and placed as any sleeper.
TEST_CASE("affine placement: a delayed-dequeued sleeper woken soon wakes in place", "[engine][placement]") {
  for (const bool delay : {true, false}) {
    EngineConfig cfg = affine_config(2);
    cfg.costs.kernel.delay_dequeue = delay;
    Engine e(cfg);
    int after = -1;
    Fns f;
    f.fns.emplace_back([&] {
      e.compute(3000);
      plat::usleep(1);
      after = e.current_core();
    });
    f.fns.emplace_back([&] {
      for (int64_t left = 100000; left > 0;) left = e.compute(left);
    });
    f.fns.emplace_back([&] {
      for (int64_t left = 30000; left > 0;) left = e.compute(left);
    });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    INFO("delay_dequeue " << delay);
    CHECK(after == 0);
    CHECK(e.stats().woken_delayed == (delay ? 1u : 0u));
  }
}

// T0 and T2 share core 0 (2,000-ns slices, a 2,000-ns tick: without HRTICK a slice ends at a
// tick), so T2 has run recently when T1 exits on core 1 and core 1 goes idle: newidle balancing
// pulls T2 if it is cache cold (migration cost 0), not if it is hot (a migration cost longer than
// the run; newidle balancing counts no failures). Tick balancing would move the hot thread after
// cache_nice_tries failures; that many are not reached here.
TEST_CASE("affine placement: a core going idle pulls a cache-cold queued thread, not a hot one",
          "[engine][placement]") {
  for (const int64_t migration_cost : {int64_t{0}, int64_t{1'000'000'000}}) {
    EngineConfig cfg = affine_config(2);
    cfg.costs.kernel.migration_cost = migration_cost;
    cfg.costs.kernel.tick = 2000;
    cfg.costs.kernel.cache_nice_tries = 1000;
    Engine e(cfg);
    int t2_core_before = -1, t2_core_after = -1;
    Fns f;
    f.fns.emplace_back([&] {
      for (int64_t left = 200000; left > 0;) left = e.compute(left);
    });
    f.fns.emplace_back([&] { e.compute(9000); });
    f.fns.emplace_back([&] {
      t2_core_before = e.current_core();
      for (int64_t left = 20000; left > 0;) left = e.compute(left);
      t2_core_after = e.current_core();
    });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    INFO("migration_cost " << migration_cost);
    const bool cold = migration_cost == 0;
    CHECK(t2_core_before == 0);
    CHECK(e.stats().newidle_pulls == (cold ? 1u : 0u));
    CHECK(e.stats().balance_pulls == 0);
    CHECK(t2_core_after == (cold ? 1 : 0));
  }
}

// Busy balancing on a machine with no idle core: five long computes on three cores. The two that
// find every core taken queue; periodic balancing moves one to a core whose only thread started
// its compute while nobody waited there. The mover must not wait out that compute (100 us of
// work): as the kernel's attach_task ends in wakeup_preempt, the running compute is cut at its
// slice's end, and every thread has started long before the first compute could end.
TEST_CASE("affine placement: a thread moved by busy balancing does not wait out the compute it finds",
          "[engine][placement]") {
  EngineConfig cfg = affine_config(3);
  Engine e(cfg);
  std::vector<int64_t> started(5, -1);
  Fns f;
  for (size_t i = 0; i < 5; i++) {
    f.fns.emplace_back([&e, &started, i] {
      started[i] = e.now();
      for (int64_t left = 100000; left > 0;) left = e.compute(left);
    });
  }
  f.spawn(e);
  REQUIRE(e.run().stop == Engine::Stop::AllExited);
  INFO("balance pulls " << e.stats().balance_pulls);
  CHECK(e.stats().balance_pulls >= 1);
  for (size_t i = 0; i < 5; i++) {
    INFO("T" << i << " started at " << started[i]);
    CHECK(started[i] < 50000);
  }
}

// The metrics on one core: a thread that sleeps twice wakes twice, on its previous core both times,
// and never migrates; nothing waits while a core idles.
TEST_CASE("placement metrics: wake-ups, previous core, migrations", "[engine][placement]") {
  for (const bool affine : {true, false}) {
    Engine e(affine ? affine_config(1) : config(1));
    Fns f;
    f.fns.emplace_back([&] {
      plat::usleep(1);
      plat::usleep(1);
    });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    INFO("affine " << affine);
    CHECK(e.stats().wakeups == 2);
    CHECK(e.stats().wake_on_prev == 2);
    CHECK(e.stats().migrations == 0);
    CHECK(e.stats().idle_wait_ns == 0);
  }
}

TEST_CASE("affine placement: a wake-up onto an idle core costs the waker os_wake_ipi and the wakee idle exit",
          "[engine][placement]") {
  for (const bool affine : {true, false}) {
    for (const int64_t extra : {0, 30}) {
      EngineConfig cfg = affine ? affine_config(2) : config(2);
      cfg.costs.os_wake_ipi = extra;
      cfg.costs.os_idle_exit_latency = 2 * extra;
      const NoteWake w = note_wake(cfg);
      INFO("affine " << affine << ", extra " << extra);
      const int64_t paid = affine ? extra : 0;  // spread counts both inside the futex costs
      CHECK(w.waker_after == w.waked_at + 1 + paid);          // the key's exchange, then the interrupt
      CHECK(w.woke == w.waked_at + 1 + 100 + 2 * paid + 10);  // futex latency, idle exit, switch
    }
  }
}

// A fast core that frees up takes over the slow core's computation; the slow core then serves its
// own queue at once instead of sitting idle until the balancer looks. T1 computes on the slow core
// 1, where T2, the thread it creates, queues (core 0 is busy at that moment); T0 leaves the fast
// core 0 for a long sleep. With newidle balancing, core 0 going idle first pulls T2 (it never ran,
// so it is not cache hot): T2 starts on core 0, and T1 moves there once T2 has exited. With
// newidle balancing off (its cost above the core's average idle period, as sched_balance_newidle
// checks), core 0 takes over T1's computation instead and core 1 starts T2 at once.
TEST_CASE("affine placement: a core left by a thread moving to a faster one serves its own queue",
          "[engine][placement]") {
  for (const bool newidle : {true, false}) {
    EngineConfig cfg = affine_config(2);
    cfg.cores[0].speed = 2.0;
    cfg.costs.os_quantum = 1'000'000'000;
    cfg.costs.kernel.tick = 1'000'000;
    if (!newidle) cfg.costs.kernel.newidle_balance_cost = 1'000'000'000;
    Engine e(cfg);
    int64_t t2_start = -1;
    int t2_core = -1, t1_core = -1;
    std::function<void()> t2 = [&] {
      t2_start = e.now();
      t2_core = e.current_core();
    };
    Fns f;
    f.fns.emplace_back([&] {
      e.compute(1000);  // 500 ns on the fast core
      plat::usleep(1000);
    });
    f.fns.emplace_back([&] {
      e.newosproc("T2", &Fns::entry, &t2, nullptr);
      for (int64_t left = 100000; left > 0;) left = e.compute(left);
      t1_core = e.current_core();
    });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    INFO("newidle " << newidle);
    CHECK(t1_core == 0);  // it finished on the fast core
    CHECK(t2_core == (newidle ? 0 : 1));
    CHECK(e.stats().newidle_pulls == (newidle ? 1u : 0u));
    CHECK(t2_start > 0);
    CHECK(t2_start < 10000);  // not the balancer's 1 ms
  }
}

namespace {
// A chooser that takes the last enabled step at every point and counts the points.
struct LastStep final : Chooser {
  uint64_t points = 0;
  size_t choose(std::span<const Step> enabled, uint32_t /*current*/, const PointInfo& /*info*/) override {
    points++;
    return enabled.size() - 1;
  }
};
}  // namespace

TEST_CASE("the config picks the driver: a chooser orders every step, without one the clocks do",
          "[engine][drivers]") {
  for (const bool with_chooser : {false, true}) {
    INFO("chooser " << with_chooser);
    LastStep chooser;
    EngineConfig cfg = config(1);
    if (with_chooser) cfg.chooser = &chooser;
    Engine e(cfg);
    Atomic<uint32_t> cell;
    int64_t after = -1;
    int core = -2;
    Fns f;
    f.fns.emplace_back([&] {
      cell.Store(1);
      e.compute(1000);
      after = e.now();
      core = e.current_core();
    });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    if (with_chooser) {
      // Chosen: the start, the store, the clock read that starts the compute, the compute's end.
      // Costs and cores play no part: the clock is the compute's deadline.
      CHECK(chooser.points == 4);
      CHECK(after == 1000);
      CHECK(core == -1);
    } else {
      CHECK(after == 10 + 1 + 1000);  // the context switch onto the core, the store, the compute
      CHECK(core == 0);
    }
  }
}

TEST_CASE("each driver refuses the other's config", "[engine][drivers]") {
  LastStep chooser;
  EngineConfig cfg = config(1);
  CHECK_THROWS_AS(ChoiceDriver(cfg), std::invalid_argument);
  cfg.chooser = &chooser;
  CHECK_THROWS_AS(TimedDriver(cfg), std::invalid_argument);
}

namespace {

// Threads that each compute `work[i]` (with memory share `share`) as soon as they start, and the
// time each finished; under both placements.
std::vector<int64_t> computes(const EngineConfig& cfg, const std::vector<int64_t>& work, double share = 0) {
  Engine e(cfg);
  std::vector<int64_t> done(work.size(), 0);
  Fns f;
  for (size_t i = 0; i < work.size(); i++) {
    f.fns.emplace_back([&e, &done, &work, share, i] {
      for (int64_t left = work[i]; left > 0;) left = e.compute(left, share);
      done[i] = e.now();
    });
  }
  f.spawn(e);
  REQUIRE(e.run().stop == Engine::Stop::AllExited);
  return done;
}

EngineConfig curve_config(bool affine, std::vector<double> curve) {
  EngineConfig cfg = affine ? affine_config(4) : config(4);
  const auto shared = std::make_shared<const std::vector<double>>(curve);
  for (Core& c : cfg.cores) c.busy_speed = shared;
  return cfg;
}

}  // namespace

TEST_CASE("a speed curve slows computes by its factor at the cluster's busy count", "[engine][speed]") {
  for (const bool affine : {false, true}) {
    INFO((affine ? "affine" : "spread"));
    // Four threads take the four cores at 0 and start at 10 (a context switch) with all four busy.
    CHECK(computes(curve_config(affine, {1.0, 0.9, 0.8, 0.5}), {10000, 10000, 10000, 10000}) ==
          std::vector<int64_t>(4, 10 + 20000));
    // A group without a curve is unchanged.
    CHECK(computes(curve_config(affine, {}), {10000, 10000, 10000, 10000}) == std::vector<int64_t>(4, 10 + 10000));
    // Counts past the curve's end take its last factor; one busy core takes the first.
    CHECK(computes(curve_config(affine, {1.0, 0.5}), {10000, 10000, 10000}) == std::vector<int64_t>(3, 10 + 20000));
    CHECK(computes(curve_config(affine, {0.5}), {10000}) == std::vector<int64_t>{10 + 20000});
  }
}

TEST_CASE("a compute in flight is re-planned exactly when its cluster's busy count changes", "[engine][speed]") {
  for (const bool affine : {false, true}) {
    INFO((affine ? "affine" : "spread"));
    // Both start at 10 at half speed (2 busy). The short one is done at 10 + 4000 and its thread
    // exits, freeing its core: the long one has done 2000 of its 10000 and does the other 8000 at
    // full speed, to 4010 + 8000. Fixed at its start it would end at 20010.
    EngineConfig cfg = curve_config(affine, {1.0, 0.5});
    CHECK(computes(cfg, {10000, 2000}) == std::vector<int64_t>{12010, 4010});
    // Cores of another cluster do not count.
    cfg.cores[1].cluster = 1;
    CHECK(computes(cfg, {10000, 2000}) == std::vector<int64_t>{10010, 2010});
  }
}

TEST_CASE("memory-bound computes slow down with the other busy cores only", "[engine][speed]") {
  for (const bool affine : {false, true}) {
    INFO((affine ? "affine" : "spread"));
    EngineConfig cfg = curve_config(affine, {});
    cfg.costs.memory_slowdown = 0.5;
    // Alone, a compute that is all memory traffic runs at full speed.
    CHECK(computes(cfg, {10000}, 1.0) == std::vector<int64_t>{10010});
    // With two other busy cores its time is 1 + 1 x 0.5 x 2 = 2 times as long.
    CHECK(computes(cfg, {10000, 10000, 10000}, 1.0) == std::vector<int64_t>(3, 20010));
    // Half memory: 1 + 0.5 x 0.5 x 2 = 1.5.
    CHECK(computes(cfg, {10000, 10000, 10000}, 0.5) == std::vector<int64_t>(3, 15010));
    // No memory share: unchanged by the others.
    CHECK(computes(cfg, {10000, 10000, 10000}, 0.0) == std::vector<int64_t>(3, 10010));
  }
}
