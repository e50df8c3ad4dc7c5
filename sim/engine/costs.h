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
  // The OS's placement of ready threads (timed_driver.h): false, spread; true, affine.
  bool affine = false;
  int64_t os_wake_in_place = 0;        // affine: a shorter sleep wakes on its busy previous core
  int64_t os_balance_delay = 0;        // affine: how long a queued thread waits for an idle core
  int64_t os_idle_exit_latency = 0;    // affine: a thread placed on an idle core starts this much later
  int64_t os_wake_ipi = 0;             // affine: the waker's cost of waking a thread onto an idle core
  // A compute's memory share takes this fraction longer per other busy core on the machine
  // (profile.proto, Machine.memory_slowdown); 0: no slowdown.
  double memory_slowdown = 0;
};

}  // namespace gmp::engine
