// What one execution under the checker's control records, and the Policy that chooses its steps.
// Every runner (a scenario under the checker, execution.h; plain threads, thread_run.h) drives the
// engine's choice mode through a Recorder (recorder.h), which asks a Policy at every step and
// writes down what it chose.
#pragma once

#include <cstdint>
#include <span>

#include "model/schedule.h"
#include "sim/engine/chooser.h"
#include "sim/platform/splitmix64.h"

namespace gmp::model {

// What the Recorder writes down for any execution, whatever runs in it.
struct Recorded {
  Schedule schedule;         // the departures from the default order, and the number of steps
  uint64_t steps = 0;        // steps taken by choice (the checked process's)
  uint64_t forced = 0;       // steps of other processes, taken without a choice (recorder.h)
  uint64_t switches = 0;     // steps taken by another thread than the step before
  uint32_t preemptions = 0;  // switches away from a thread that could have gone on
  uint32_t threads = 0;      // threads created
  bool pruned = false;       // the policy abandoned the execution (engine::kStopRun)
  // The branching seen along the way: the product of the enabled counts (for estimates; capped).
  double tree_product = 1;
};

// Chooses the step at each point of an execution. A policy may serve many executions of one
// search: the search calls begin before each, the runner calls finish after each, so a strategy
// that keeps state across executions (DPOR's tree, PCT's change points, a sampler's seed) needs
// nothing else from the search.
class Policy {
 public:
  virtual ~Policy() = default;
  // Prepares execution number `index` (numbered from 0 within the policy's part of the search);
  // false when there is none left to run (the part is complete). A policy used for one execution
  // need not be begun.
  virtual bool begin(uint64_t /*index*/) { return true; }
  virtual void thread_created(uint32_t /*tid*/, uint32_t /*parent*/, bool /*daemon*/) {}
  // Index into `enabled` of the step to take, or engine::kStopRun to abandon the execution (it
  // adds nothing the search needs: a sleep-set block, a bound passed). `step`: steps taken so far.
  virtual size_t pick(uint64_t step, std::span<const engine::Step> enabled, uint32_t current) = 0;
  // The execution has ended; `run` is what it recorded. (A strict replay throws ScheduleError here
  // when the run ended at another step than its schedule.)
  virtual void finish(const Recorded& /*run*/) {}
};

// The seed of execution `index` of a search seeded with `seed`: each numbered execution of a
// sampling search draws from its own stream, whichever thread or process runs it.
inline uint64_t execution_seed(uint64_t seed, uint64_t index) {
  SplitMix64 r(seed ^ (index * 0x9e3779b97f4a7c15ULL));
  return r.next();
}

}  // namespace gmp::model
