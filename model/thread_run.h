// Plain threads under the checker: functions run as threads of the engine's choice mode (no
// scheduler, no scenario), every step chosen by a Policy through the Recorder, so that a test of
// ported code (the run-queue check, queue_check.h) has the same steps, schedules and replay as
// gmpsim check. Each thread runs with getg() == the g given for it (an M's g0, say).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/policy.h"

namespace gmp::rt {
struct g;
}  // namespace gmp::rt

namespace gmp::model {

struct ThreadRun : Recorded {
  // Stopped: the policy abandoned the run (engine::kStopRun).
  enum class Outcome { Completed, Deadlock, StepLimit, Failed, Stopped };
  Outcome outcome = Outcome::Completed;
  std::string message;  // why it did not complete
};

const char* outcome_name(ThreadRun::Outcome o);

class ThreadProgram {
 public:
  // Adds a thread that runs fn with getg() == gp, as a thread of simulated process `process`.
  // Threads are numbered in the order added.
  void add_thread(std::string name, std::function<void()> fn, rt::g* gp = nullptr, uint32_t process = 0);

  // Runs every thread to its end, or to a deadlock, the step limit or a Go throw, under `policy`
  // (ending with policy.finish). An exception other than a Go throw (a replayed schedule that does
  // not fit, a failed test assertion) is rethrown here once the run has stopped. May be called
  // again: each run starts the threads afresh. `checked`: the process whose steps are choices
  // (recorder.h; kAllProcesses: every thread's).
  ThreadRun run(Policy& policy, uint64_t max_steps, uint32_t checked = 0) const;

 private:
  struct Thread {
    std::string name;
    std::function<void()> fn;
    rt::g* gp = nullptr;
    uint32_t process = 0;
  };
  std::vector<std::unique_ptr<Thread>> threads_;
};

}  // namespace gmp::model
