// What an engine is made from (EngineConfig) and what a run of it counts (EngineStats). The
// config also picks the driver: a chooser makes the choice driver (choice_driver.h), no chooser
// the timed driver (timed_driver.h); engine.h makes the one it names.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/engine/chooser.h"
#include "sim/engine/costs.h"

namespace gmp::engine {

// What nanotime reads when a run starts (virtual ns).
inline constexpr int64_t kNanotimeEpoch = 1'000'000'000;

struct Core {
  double speed = 1.0;  // relative to the reference core of the cost profile
  int32_t cluster = 0; // the cores sharing a cache have one id (Costs::cacheline_by_distance)
  // The speed curve: (*busy_speed)[k] multiplies speed while k + 1 cores of the cluster are busy;
  // counts past the end take the last entry. Null or empty: 1.0 at every count. The cores of one
  // group share one curve (a 4096-core group's curve is 4096 entries, not one copy per core).
  std::shared_ptr<const std::vector<double>> busy_speed = nullptr;
};

// A cgroup's CPU controller (cgroup v2 cpu.max, cpu.max.burst, cpuset.cpus; v1 cpu.cfs_quota_us and
// cpu.cfs_period_us): CFS bandwidth control as kernel/sched/fair.c does it (docs/placement.md).
// Each period the group may run `quota` ns of CPU time on all its cores together; the runtime is
// handed to each core's queue in slices (Costs::kernel's bandwidth slice) and a core whose slice is
// spent with the pool empty throttles the group's threads there until the period's refill. Periods
// are aligned to the run's start. Timing mode only: the choice driver ignores quotas and cpusets.
struct CpuGroup {
  int64_t quota = -1;           // ns per period; -1: no limit ("max")
  int64_t period = 100'000'000; // ns, 1 ms to 1 s
  int64_t burst = 0;            // ns of unused quota that may carry over (cpu.max.burst)
  std::vector<int32_t> cpuset;  // the cores its threads may run on, ascending; empty: all
  // A vertical autoscaler: from `at` (virtual ns from the run's start) the quota is `quota`
  // (-1: no limit), in time order. Engine::cpu_max reads it from `at`; the timed driver enforces it
  // from the first period boundary at or after `at` (docs/placement.md, "CPU bandwidth (cgroups)").
  struct Change {
    int64_t at = 0;
    int64_t quota = -1;
  };
  std::vector<Change> changes;
};

// A simulated process as the engine sees it: the cgroup its threads run in, and whether the run
// waits for it to exit.
struct EngineProcess {
  int32_t group = -1;   // EngineConfig::groups index; -1: the root group (no limit, every core)
  bool daemon = false;  // the run ends once every process that is not a daemon has exited
};

struct EngineConfig {
  std::vector<Core> cores;
  Costs costs;
  uint64_t seed = 1;
  int64_t time_limit = 0;     // virtual ns; 0: none
  uint64_t event_limit = 0;   // platform operations; 0: none
  // Stress mode: each operation costs up to this many ns more, drawn from the seed, so that
  // different seeds explore different interleavings of the same program. 0: off.
  int64_t jitter = 0;
  // Called every 2^22 events with the virtual time and the event count, for progress displays.
  // It must not touch the simulation: it only observes.
  std::function<void(int64_t now, uint64_t events)> progress;
  // Choice mode (see chooser.h): the chooser orders every step instead of the clocks; the
  // machine's cores, OS time slices, jitter and costs play no part. nullptr: timing mode.
  Chooser* chooser = nullptr;
  // Choice mode: how many timed waits of each daemon thread may end by choice per run.
  uint32_t daemon_rounds = 2;
  // Choice mode, strict time (chooser.h): timed waits end in the order of their deadlines, daemons'
  // rounds are not counted, and time_limit bounds the run instead.
  bool strict_time = false;
  // Several processes (process ids 0 .. processes.size() - 1) and their cgroups. Empty processes:
  // one process, id 0, in the root group, and a call of exit ends the run (as before).
  std::vector<CpuGroup> groups;
  std::vector<EngineProcess> processes;
  // Called when a thread is throttled (its group's runtime is spent on its core) and when it may
  // run again (the refill), with the thread's id and the virtual time. Timing mode only; it must
  // not touch the simulation, only record (the trace's THROTTLE events).
  std::function<void(uint64_t tid, bool throttled, int64_t at)> on_throttle;
};

// A group's cpu.stat: periods that had runnable threads, those in which it was throttled, the
// total time its threads spent throttled (summed over its cores' queues, as the kernel sums
// throttled_time over its cfs_rqs), and its CPU time.
struct GroupStats {
  uint64_t nr_periods = 0;
  uint64_t nr_throttled = 0;
  int64_t throttled_time = 0;  // ns
  int64_t usage = 0;           // ns of CPU its threads ran
};

struct EngineStats {
  uint64_t events = 0;            // platform operations handled (choice mode: steps)
  // The rest are the timed driver's; they stay 0 in choice mode.
  uint64_t os_preemptions = 0;    // time-slice expiries that moved a thread off its core
  uint64_t line_transfers = 0;    // accesses that paid a cache-line transfer
  // Placement of ready threads (affine placement counts all; spread, only placed_on_other).
  uint64_t placed_on_prev = 0;    // on its free previous core
  uint64_t woken_delayed = 0;     // woken while still queued on its core (delayed dequeue), kept there
  uint64_t queued_busy = 0;       // any other wake-up that found no idle core and queued on a busy one
  uint64_t wake_preemptions = 0;  // wake-ups whose thread preempted the one running there
  uint64_t placed_on_other = 0;   // on a free core other than its previous one (spread: any free core)
  uint64_t balance_pulls = 0;     // a queued thread pulled by an idle core at a tick
  uint64_t newidle_pulls = 0;     // a queued thread pulled by a core going idle
  // Both placements (docs/placement.md, "Metrics"). wakeups: blocked threads (sleeping off their
  // core) that became ready; wake_on_prev: those whose next run started on the core they last ran
  // on; migrations: runs that started on another core than the thread's last (first runs
  // excluded); idle_wait_ns: virtual time during which a thread was ready but not running while a
  // core was idle, and idle_wait_since the start of such a stretch still open (-1: none).
  // wakeups_ran: those that reached their next run before the end (on_prev's denominator).
  uint64_t wakeups = 0, wakeups_ran = 0, wake_on_prev = 0, migrations = 0;
  int64_t idle_wait_ns = 0, idle_wait_since = -1;
  uint64_t replans = 0;           // computes in flight re-planned as a core's speed changed
  std::vector<GroupStats> groups; // per EngineConfig::groups
};

}  // namespace gmp::engine
