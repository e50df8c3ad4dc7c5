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
  virtual void started(rt::Runtime& /*r*/, uint32_t /*process*/) {}
  virtual void thread_created(uint32_t /*tid*/, uint32_t /*parent*/, bool /*daemon*/, uint32_t /*process*/) {}
  // Before the step after `steps` choices; true ends the execution here. `choice`: the policy
  // picks it among `enabled` (the checked process's steps); false: another process's step, taken
  // without a choice (Recorder, several processes), `enabled` then empty.
  virtual bool before_pick(uint64_t /*steps*/, std::span<const engine::Step> /*enabled*/,
                           const engine::PointInfo& /*info*/, bool /*choice*/) {
    return false;
  }
  // The step just chosen, out of `enabled` steps (not called for steps taken without a choice).
  virtual void taken(const engine::Step& /*s*/, const engine::PointInfo& /*info*/, size_t /*enabled*/) {}
  // Fairness (execution.cpp's livelock rule), asked after before_pick: the index in `enabled` of
  // the one step this point must take (the policy is then offered that step alone, and the
  // schedule records no departure: the monitor makes the same decision on every replay), or
  // SIZE_MAX to let the policy pick among them all.
  virtual size_t forced(std::span<const engine::Step> /*enabled*/) { return SIZE_MAX; }
  // Strict time: whether the waits due first may end at this point although threads can step
  // (engine::Chooser::pass_time).
  virtual bool pass_time() { return false; }
};

// Every process's steps are choices (Recorder's `checked`).
inline constexpr uint32_t kAllProcesses = UINT32_MAX;

// Several processes. Only the steps of the checked process (`checked`; kAllProcesses: every
// process) are choices. Whenever a thread of another process is enabled, the Recorder takes it,
// the lowest such thread first, before any choice: the policy never sees it, the schedule does not
// count it (Recorded::steps counts choices, Recorded::forced the rest), and the policy hears only
// of the checked process's threads. So a search covers the checked process's interleavings
// against one fixed behaviour of the others, and a process alone explores as it did.
class Recorder final : public engine::Chooser {
 public:
  // `monitor` may be nullptr.
  Recorder(Policy& policy, Monitor* monitor, Recorded& out, uint32_t checked = 0)
      : policy_(policy), monitor_(monitor), out_(out), checked_(checked) {}

  void process_started(uint32_t process, rt::Runtime& r) override;
  bool timers_pending(uint32_t process) const override;
  void thread_created(uint32_t tid, uint32_t parent, bool daemon, uint32_t process) override;
  size_t choose(std::span<const engine::Step> enabled, uint32_t current, const engine::PointInfo& info) override;
  uint64_t step() const override { return out_.steps == 0 ? 0 : out_.steps - 1; }
  bool pass_time() override { return monitor_ != nullptr && monitor_->pass_time(); }

 private:
  std::vector<rt::Runtime*> runtimes_;  // by process, for timers_pending
  bool checked(uint32_t process) const { return checked_ == kAllProcesses || process == checked_; }

  Policy& policy_;
  Monitor* monitor_;
  Recorded& out_;
  uint32_t checked_;
  static constexpr uint32_t kNoThread = UINT32_MAX;
  uint32_t last_tid_ = kNoThread;       // the thread that took the last chosen step
  uint32_t first_current_ = kNoThread;  // the engine's `current` at the first point
  bool last_yield_ = false;             // the last chosen step was a yield
  std::vector<uint32_t> process_of_;    // by thread
};

}  // namespace gmp::model
