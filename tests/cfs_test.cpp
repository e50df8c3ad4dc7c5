// CPU bandwidth control (cgroup cpu.max, cpu.max.burst, cpuset.cpus) in the timed driver, with
// plain thread functions and round numbers: every expectation below is worked by hand from
// kernel/sched/fair.c's rules (docs/placement.md, "CPU bandwidth (cgroups)").
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/platform/platform.h"

using namespace gmp;
using namespace gmp::engine;

namespace {

constexpr int64_t kMs = 1'000'000;

// The engine tests' round costs (a 10-ns context switch, 1,000-ns time slices) and Linux's
// bandwidth constants: a 5 ms slice, 1 ms kept per core, a 5 ms slack timer, 2 ms of margin.
EngineConfig config(int cores, bool affine) {
  EngineConfig cfg;
  cfg.cores.assign(static_cast<size_t>(cores), Core{1.0});
  Costs& c = cfg.costs;
  c.op.fill(1);
  c.futex_wake_latency = 100;
  c.usleep_min_latency = 50;
  c.context_switch = 10;
  c.os_quantum = 1000;
  Costs::Kernel& k = c.kernel;
  k.cfs_bandwidth_slice = 5 * kMs;
  k.min_cfs_rq_runtime = 1 * kMs;
  k.cfs_bandwidth_slack_period = 5 * kMs;
  k.min_bandwidth_expiration = 2 * kMs;
  if (affine) {  // the engine tests' affine constants
    c.affine = true;
    k.tick = 5000;
    k.base_slice = 1000;
    k.slice_scaling_max_cpus = 8;
    k.imbalance_pct = 117;
    k.busy_factor = 16;
    k.balance_interval_per_cpu = 1000;
    k.cache_nice_tries = 1;
    k.pelt_halflife = 1'000'000'000;
  }
  return cfg;
}

// One group holding process 0 (every thread of these tests).
void limit(EngineConfig& cfg, int64_t quota, int64_t period = 100 * kMs, int64_t burst = 0,
           std::vector<int32_t> cpuset = {}) {
  CpuGroup g;
  g.quota = quota;
  g.period = period;
  g.burst = burst;
  g.cpuset = std::move(cpuset);
  cfg.groups = {g};
  cfg.processes = {EngineProcess{0, false}};
}

struct Fns {
  std::vector<std::function<void()>> fns;
  static void entry(void* arg) { (*static_cast<std::function<void()>*>(arg))(); }
  void spawn(Engine& e) {
    for (size_t i = 0; i < fns.size(); i++) e.newosproc("T" + std::to_string(i), &Fns::entry, &fns[i], nullptr);
  }
};

void work(Engine& e, int64_t ns) {
  for (int64_t left = ns; left > 0;) left = e.compute(left);
}

using Throttle = std::tuple<uint64_t, bool, int64_t>;  // tid, throttled, at

}  // namespace

// Quota 50 ms per 100 ms period, one core. The thread takes its core at 0 and runs from 10 (the
// context switch, not charged to the group); its core's queue draws 5-ms slices until the pool's
// 50 ms is gone at 50,000,010, where its compute is cut and it is throttled. The refill at 100 ms
// hands the queue 1 ns (distribute_cfs_runtime: what it owes plus 1) and unthrottles it; it runs
// again from 100,000,010 (a switch) and, 1 ns later, draws slices from the new 50 ms: 50 ms of work
// per period, 200 ms done after the fourth, at 300,000,010 + 50 ms. Three periods ended (100, 200,
// 300), each with the queue throttled at its end; each throttle lasted 100 ms - 50,000,010.
TEST_CASE("cfs bandwidth: a hog with quota 0.5 CPU runs 50 ms of every 100 ms", "[engine][cfs]") {
  for (bool affine : {false, true}) {
    INFO("affine " << affine);
    EngineConfig cfg = config(1, affine);
    limit(cfg, 50 * kMs);
    std::vector<Throttle> events;
    cfg.on_throttle = [&](uint64_t tid, bool on, int64_t at) { events.emplace_back(tid, on, at); };
    Engine e(cfg);
    int64_t done = 0;
    Fns f;
    f.fns.emplace_back([&] {
      work(e, 200 * kMs);
      done = e.now();
    });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    CHECK(done == 350 * kMs + 10);
    const std::vector<Throttle> want = {{0, true, 50 * kMs + 10},  {0, false, 100 * kMs}, {0, true, 150 * kMs + 10},
                                        {0, false, 200 * kMs},     {0, true, 250 * kMs + 10}, {0, false, 300 * kMs}};
    CHECK(events == want);
    const GroupStats& st = e.stats().groups.at(0);
    CHECK(st.nr_periods == 3);
    CHECK(st.nr_throttled == 3);
    CHECK(st.throttled_time == 3 * (50 * kMs - 10));
    CHECK(st.usage == 200 * kMs);
  }
}

// Quota 1 CPU (100 ms per 100 ms), two hogs on two cores. Each core's queue draws a 5-ms slice at
// 10 and every 5 ms after; the pool's twenty slices are gone after the round at 45,000,010, and at
// 50,000,010 both queues find it empty: both throttled. The refill unthrottles both at 100 ms;
// each needs 10 ms more: 1 ns handed out, then two slices, done at 110,000,010.
TEST_CASE("cfs bandwidth: two hogs with quota 1 CPU draw slices per core and are throttled together",
          "[engine][cfs]") {
  for (bool affine : {false, true}) {
    INFO("affine " << affine);
    EngineConfig cfg = config(2, affine);
    limit(cfg, 100 * kMs);
    std::vector<int64_t> on, off;
    cfg.on_throttle = [&](uint64_t, bool throttled, int64_t at) { (throttled ? on : off).push_back(at); };
    Engine e(cfg);
    std::vector<int64_t> done(2, 0);
    Fns f;
    for (size_t i = 0; i < 2; i++) {
      f.fns.emplace_back([&, i] {
        work(e, 60 * kMs);
        done[i] = e.now();
      });
    }
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    CHECK(on == std::vector<int64_t>{50 * kMs + 10, 50 * kMs + 10});
    CHECK(off == std::vector<int64_t>{100 * kMs, 100 * kMs});
    CHECK(done == std::vector<int64_t>{110 * kMs + 10, 110 * kMs + 10});
    const GroupStats& st = e.stats().groups.at(0);
    CHECK(st.nr_periods == 1);
    CHECK(st.nr_throttled == 1);
    CHECK(st.throttled_time == 2 * (50 * kMs - 10));  // summed over the two queues
    CHECK(st.usage == 120 * kMs);
  }
}

// The slice is per core: T1 takes a 5-ms slice on core 1 at 10, computes 2 ms and exits. Its
// queue gives back what is beyond min_cfs_rq_runtime (2 ms; return_cfs_rq_runtime) and keeps 1 ms
// that nobody else can use. T0 gets its own first slice and the 92 ms left in the pool: 97 ms,
// throttled at 97,000,010 (98 ms if the queue kept nothing, 95 ms if it gave nothing back), then
// 3 ms after the refill.
TEST_CASE("cfs bandwidth: a core keeps min_cfs_rq_runtime of its slice when its last thread leaves",
          "[engine][cfs]") {
  for (bool affine : {false, true}) {
    INFO("affine " << affine);
    EngineConfig cfg = config(2, affine);
    limit(cfg, 100 * kMs);
    std::vector<int64_t> on;
    cfg.on_throttle = [&](uint64_t, bool throttled, int64_t at) {
      if (throttled) on.push_back(at);
    };
    Engine e(cfg);
    int64_t done = 0;
    Fns f;
    f.fns.emplace_back([&] {
      work(e, 100 * kMs);
      done = e.now();
    });
    f.fns.emplace_back([&] { work(e, 2 * kMs); });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    CHECK(on == std::vector<int64_t>{97 * kMs + 10});
    CHECK(done == 103 * kMs + 10);
    const GroupStats& st = e.stats().groups.at(0);
    CHECK(st.nr_periods == 1);
    CHECK(st.nr_throttled == 1);
    CHECK(st.throttled_time == 3 * kMs - 10);
    CHECK(st.usage == 102 * kMs);
  }
}

// Quota 20 ms per 100 ms. The thread takes its core at 0 (its queue draws a slice, 15 ms left in
// the pool), sleeps 250 ms at once and gives back 4 ms (keeping 1 ms): pool 19 ms. The refills at
// 100 and 200 ms add 20 ms each, capped at quota + burst. With a 20-ms burst the pool holds 40 ms
// at the wake-up (250,000,020 after the switch): with the queue's 1 ms the thread runs 41 ms before
// its first throttle, then 20 ms a period: 100 ms done at 519,000,010. Without burst the pool is
// capped at 20 ms: 21 ms, then 20 ms a period, done a period later.
TEST_CASE("cfs bandwidth: burst carries unused quota over up to quota plus burst", "[engine][cfs]") {
  for (int64_t burst : {int64_t{0}, 20 * kMs}) {
    INFO("burst " << burst);
    EngineConfig cfg = config(1, false);
    limit(cfg, 20 * kMs, 100 * kMs, burst);
    std::vector<int64_t> on;
    cfg.on_throttle = [&](uint64_t, bool throttled, int64_t at) {
      if (throttled) on.push_back(at);
    };
    Engine e(cfg);
    int64_t done = 0;
    Fns f;
    f.fns.emplace_back([&] {
      e.block_for(250 * kMs);
      work(e, 100 * kMs);
      done = e.now();
    });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    REQUIRE(!on.empty());
    const GroupStats& st = e.stats().groups.at(0);
    if (burst == 0) {
      CHECK(on[0] == 271 * kMs + 20);
      CHECK(done == 619 * kMs + 10);
    } else {
      CHECK(on[0] == 291 * kMs + 20);
      CHECK(done == 519 * kMs + 10);
      // Periods with a runnable thread: those ending at 100 (it started there), 300, 400 and 500;
      // the one ending at 200 had it asleep. Throttled at the ends of the last three.
      CHECK(st.nr_periods == 4);
      CHECK(st.nr_throttled == 3);
      CHECK(st.throttled_time == (300 * kMs - (291 * kMs + 20)) + 2 * (100 * kMs - (20 * kMs + 10)));
    }
    CHECK(st.usage == 100 * kMs);
  }
}

// cpuset {1}: both threads of the group run on core 1 only, taking turns there, while core 0
// stays idle; neither finishes before the 20,000 ns of work the two need on one core.
TEST_CASE("cfs bandwidth: a cpuset keeps a group's threads off the other cores", "[engine][cfs]") {
  for (bool affine : {false, true}) {
    INFO("affine " << affine);
    EngineConfig cfg = config(2, affine);
    limit(cfg, -1, 100 * kMs, 0, {1});
    Engine e(cfg);
    std::vector<int> cores;
    std::vector<int64_t> done(2, 0);
    Fns f;
    for (size_t i = 0; i < 2; i++) {
      f.fns.emplace_back([&, i] {
        for (int64_t left = 10000; left > 0;) {
          cores.push_back(e.current_core());
          left = e.compute(left);
        }
        done[i] = e.now();
      });
    }
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    REQUIRE(!cores.empty());
    for (int c : cores) CHECK(c == 1);
    CHECK(std::max(done[0], done[1]) > 20000);
    CHECK(e.stats().groups.at(0).usage >= 20000);
    CHECK(e.stats().groups.at(0).nr_periods == 0);  // no quota: no periods counted
  }
}

// A group without a limit or cpuset: the same run as without any group, and its usage counted.
TEST_CASE("cfs bandwidth: a group without a limit changes nothing", "[engine][cfs]") {
  for (bool affine : {false, true}) {
    for (int cores : {1, 2}) {
      INFO("affine " << affine << " cores " << cores);
      auto run = [&](bool group) {
        EngineConfig cfg = config(cores, affine);
        if (group) limit(cfg, -1);
        Engine e(cfg);
        std::vector<int64_t> done(3, 0);
        Fns f;
        for (size_t i = 0; i < 3; i++) {
          f.fns.emplace_back([&, i] {
            work(e, 10000 + 3000 * static_cast<int64_t>(i));
            plat::usleep(5);
            work(e, 2000);
            done[i] = e.now();
          });
        }
        f.spawn(e);
        REQUIRE(e.run().stop == Engine::Stop::AllExited);
        return std::make_tuple(done, e.stats().os_preemptions, e.stats().events,
                               group ? e.stats().groups.at(0).usage : int64_t{0});
      };
      const auto plain = run(false);
      const auto grouped = run(true);
      CHECK(std::get<0>(plain) == std::get<0>(grouped));
      CHECK(std::get<1>(plain) == std::get<1>(grouped));
      CHECK(std::get<2>(plain) == std::get<2>(grouped));
      CHECK(std::get<3>(grouped) >= 10000 + 13000 + 16000 + 3 * 2000);
    }
  }
}

// A return after a period boundary lands in the refilled pool (__return_cfs_rq_runtime adds to the
// pool as it stands, which the period timer has already refilled). Quota 10 ms per 100 ms, one
// core, no burst. The thread blocks at once (its queue keeps 1 ms, the pool has 9 ms), wakes at
// 97 ms and computes 3.5 ms: its 1 ms, then a 5 ms slice from the pool (4 ms left). At 100 ms the
// pool is refilled to 10 ms; at 100.5 ms it blocks with 2.5 ms of its slice left and returns 1.5
// ms: the pool holds 11.5 ms. Woken at 110 ms it runs its queue's 1 ms and the pool's 11.5 ms and
// is throttled 12.5 ms later. Returning before catching up with the boundary (the pool at 4 ms +
// 1.5, then refilled to at most 10) would throttle it 1.5 ms earlier.
TEST_CASE("cfs bandwidth: runtime returned after a period boundary lands in the refilled pool", "[engine][cfs]") {
  for (bool affine : {false, true}) {
    INFO("affine " << affine);
    EngineConfig cfg = config(1, affine);
    limit(cfg, 10 * kMs);
    std::vector<Throttle> events;
    cfg.on_throttle = [&](uint64_t tid, bool on, int64_t at) { events.emplace_back(tid, on, at); };
    Engine e(cfg);
    int64_t woke = 0;
    Fns f;
    f.fns.emplace_back([&] {
      e.block_for(97 * kMs);
      work(e, 3 * kMs + kMs / 2);
      e.block_for(110 * kMs - e.now());
      woke = e.now();
      work(e, 20 * kMs);
    });
    f.spawn(e);
    REQUIRE(e.run().stop == Engine::Stop::AllExited);
    REQUIRE_FALSE(events.empty());
    const auto& [tid, on, at] = events.front();
    CHECK(on);
    // From its start after the wake (a context switch of 10 ns later, a few ns of wake-up cost).
    CHECK(at - woke >= 12 * kMs + kMs / 2);
    CHECK(at - woke <= 12 * kMs + kMs / 2 + 1000);
  }
}
