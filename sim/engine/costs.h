// What the engine charges, in virtual nanoseconds. Filled from a cost profile (sim/cost); the
// engine and the port hold no cost literals of their own.
#pragma once

#include <array>
#include <cstdint>

#include "sim/platform/driver.h"

namespace gmp::engine {

struct Costs {
  // Shared-memory operations, by plat::Op.
  std::array<int64_t, static_cast<size_t>(plat::Op::Count_)> op{};
  // Extra cost of an access to a cache line last written by another thread: across clusters
  // (Core::cluster), and everywhere unless cacheline_by_distance is set.
  int64_t cacheline_transfer = 0;
  // The same between two cores of one cluster (cacheline_by_distance only).
  int64_t cacheline_transfer_cluster = 0;
  // Transfers cost by distance (timed_driver.h, "Coherence"): nothing from a thread that last ran on
  // the same core, cacheline_transfer_cluster inside a cluster, cacheline_transfer across.
  // false: every transfer costs cacheline_transfer (a machine without clusters).
  bool cacheline_by_distance = false;
  // Code paths the port names with plat::charge, by plat::Cost.
  std::array<int64_t, static_cast<size_t>(plat::Cost::Count_)> path{};
  int64_t lock_uncontended = 0;
  int64_t lock_contended_handoff = 0;  // from unlock until the waiter holds the lock
  int64_t futex_wake = 0;              // notewakeup, paid by the waker
  int64_t futex_wake_latency = 0;      // from notewakeup until the sleeper runs
  int64_t futex_sleep = 0;             // notesleep entry, paid by the sleeper
  int64_t osyield = 0;
  int64_t usleep_min_latency = 0;      // the shortest real usleep (timer slack)
  int64_t wakeup_jitter = 0;           // futex wake-ups and usleeps end up to this much later
  int64_t nanotime = 0;
  int64_t thread_create = 0;           // newosproc
  int64_t context_switch = 0;          // the OS putting another thread on a core
  int64_t os_quantum = 0;              // time slice when threads outnumber cores
  int64_t signal_send = 0;             // tgkill, paid by the sender
  int64_t signal_delivery_latency = 0; // from tgkill until the handler runs
  // The OS's placement of ready threads (timed_driver.h): false, spread; true, affine (Linux's
  // fair scheduler, docs/placement.md, with the constants of `kernel`).
  bool affine = false;
  int64_t os_idle_exit_latency = 0;    // affine: a thread placed on an idle core starts this much later
  int64_t os_wake_ipi = 0;             // affine: the waker's cost of waking a thread onto an idle core
  // Linux's fair-scheduler constants (profile.proto LinuxScheduler), for affine placement; all 0
  // until a profile fills them (the driver keeps the tick and the slice at least 1 ns).
  struct Kernel {
    int64_t tick = 0;                    // 1/HZ
    int64_t base_slice = 0;                // before the CPU-count scaling
    int32_t slice_scaling_max_cpus = 0;
    int64_t migration_cost = 0;            // task_hot's window
    int32_t imbalance_pct = 0;
    int32_t busy_factor = 0;
    int64_t balance_interval_per_cpu = 0;
    int32_t cache_nice_tries = 0;
    int64_t pelt_halflife = 0;
    int64_t newidle_balance_cost = 0;
    bool delay_dequeue = false;
    // CFS bandwidth control (profile.proto CfsBandwidth), for any placement; the driver keeps the
    // slice at least 1 ns. A group's queue on a core takes runtime from the group's pool a slice at
    // a time, keeps min_cfs_rq_runtime when its last thread leaves, and the slack timer hands
    // runtime given back to throttled queues slack_period later, unless the refill is nearer than
    // min_bandwidth_expiration.
    int64_t cfs_bandwidth_slice = 0;
    int64_t min_cfs_rq_runtime = 0;
    int64_t cfs_bandwidth_slack_period = 0;
    int64_t min_bandwidth_expiration = 0;
  } kernel;
  // A compute's memory share takes this fraction longer per other busy core on the machine
  // (profile.proto, Machine.memory_slowdown); 0: no slowdown.
  double memory_slowdown = 0;
};

}  // namespace gmp::engine
