// The Recorder: the engine's chooser (sim/engine/chooser.h) for every execution the checker runs.
// At each point it lets a Monitor look at the state first (the properties of a scenario's run, its
// fingerprints), asks the Policy which enabled step to take, and writes down the choice: the
// departures from the default order (schedule.h), the steps, switches and preemptions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/policy.h"
#include "sim/engine/chooser.h"

namespace gmp::model {

// What a runner adds to the Recorder: tests of the state before each pick, and a record of each
// step taken. The default does nothing (plain threads, thread_run.h).
class Monitor {
 public:
  virtual ~Monitor() = default;
  virtual void started(rt::Runtime& /*r*/) {}
  virtual void thread_created(uint32_t /*tid*/, uint32_t /*parent*/, bool /*daemon*/) {}
  // Before the policy picks the step after `steps` steps; true ends the execution here.
  virtual bool before_pick(uint64_t /*steps*/, std::span<const engine::Step> /*enabled*/,
                           const engine::PointInfo& /*info*/) {
    return false;
  }
  // The step just chosen, out of `enabled` steps.
  virtual void taken(const engine::Step& /*s*/, const engine::PointInfo& /*info*/, size_t /*enabled*/) {}
};

class Recorder final : public engine::Chooser {
 public:
  // `monitor` may be nullptr.
  Recorder(Policy& policy, Monitor* monitor, Recorded& out) : policy_(policy), monitor_(monitor), out_(out) {}

  void started(rt::Runtime& r) override;
  void thread_created(uint32_t tid, uint32_t parent, bool daemon) override;
  size_t choose(std::span<const engine::Step> enabled, uint32_t current, const engine::PointInfo& info) override;
  uint64_t step() const override { return out_.steps == 0 ? 0 : out_.steps - 1; }

 private:
  Policy& policy_;
  Monitor* monitor_;
  Recorded& out_;
  uint32_t last_tid_ = UINT32_MAX;  // the thread that took the last step
  bool last_yield_ = false;         // the last step was a yield
};

}  // namespace gmp::model
