// QueueCheck: Ps putting, getting and stealing Gs concurrently through the ported run-queue code,
// each P on its own M, as plain threads under the checker (thread_run.h): a Policy picks every
// step, and the schedule replays exactly. Checks that every G put is taken exactly once, whoever
// takes it and however the operations interleave.
//
// The first `producers` Ps (default: half, rounded up) each put their share of the Gs one at a time
// (every third into runnext, every tenth straight onto the global queue as a G readied without a
// P would go), and after every few puts runs one G from its own queue. Every P
// looks for work the way findRunnable does when its own queue is empty: the global queue every
// 61st tick, the local queue, the global queue, then up to four passes over the other Ps in
// stealOrder (from a cheaprand start), taking runnext only on the last pass. A producer's ring
// overflows to the global queue when it is full. Ps stop when every G has been taken; whatever a
// bug might leave queued is then drained and counted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/thread_run.h"

namespace gmp::model {

struct QueueCheckConfig {
  int32_t procs = 4;
  int32_t gs = 1200;       // in all; a producer's share above 256 makes its ring overflow
  int32_t producers = 0;   // Ps that put Gs; 0 means half of procs, rounded up
  int32_t run_every = 4;   // a producer runs one G after this many puts
  uint64_t seed = 1;
  uint64_t max_steps = 10'000'000;  // the step limit of one run (run_queue_check only)
};

struct QueueCheckPStats {
  uint64_t puts = 0, runnext_puts = 0, local_gets = 0, inherit_gets = 0;
  uint64_t steals = 0, stolen = 0, runnext_steals = 0;
  uint64_t global_puts = 0, global_gets = 0, overflows = 0;
};

struct QueueCheckResult {
  ThreadRun run;
  std::vector<QueueCheckPStats> per_p;
  uint64_t drained = 0;          // Gs still queued when every P had finished
  uint64_t total_gs = 0;
  std::vector<uint32_t> taken;  // how many times each G was taken
  std::vector<std::string> errors;  // every G not taken exactly once, and any other violation
  bool ok() const { return errors.empty() && run.outcome == ThreadRun::Outcome::Completed; }
};

// Runs the check under the checker: one thread per P, the policy picks every step.
QueueCheckResult run_queue_check(const QueueCheckConfig& cfg, Policy& policy);

// Runs the same check on the real platform: one OS thread per P, real atomics and futexes, and
// the hardware picks the interleaving. For stress runs under ThreadSanitizer; run.steps and
// run.schedule stay empty.
QueueCheckResult run_queue_check_threads(const QueueCheckConfig& cfg);

}  // namespace gmp::model
