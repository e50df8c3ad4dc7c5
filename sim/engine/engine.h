// The engine: simulated OS threads (one per M, plus sysmon) run on fibers of one OS thread, under
// one of two drivers of the recording platform, chosen once, when the engine is made, from its
// EngineConfig:
//   - no chooser: the timed driver (timed_driver.h), which orders the threads by virtual time on
//     simulated cores, charging each platform operation its cost (gmpsim run, sweep, calibrate);
//   - a chooser: the choice driver (choice_driver.h), which lets a Chooser order every step
//     (chooser.h; gmpsim check).
// What both share, the threads, their stacks, signals, exits and the run loop, is DriverBase
// (driver_base.h).
//
// Protocol. An Engine owns its driver for its whole life and never changes it. It is the handle
// the host (sim/simulation) and the tests hold: it creates threads, runs them, and reads the clock
// and the counts. The platform operations of the threads (atomics, locks, notes, clocks, compute)
// reach the driver through plat::current_driver(), which run() installs, not through this handle;
// compute and block_for are offered here too, for code that holds the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "sim/engine/driver_base.h"
#include "sim/engine/engine_config.h"
#include "sim/platform/context.h"

namespace gmp::engine {

class Engine final {
 public:
  using Stop = DriverBase::Stop;
  using Result = DriverBase::Result;

  // Makes the driver cfg names (see above). Throws std::invalid_argument on a machine with no core.
  explicit Engine(EngineConfig cfg);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Creates a simulated OS thread that will run entry(arg) on a new stack with getg() == g0,
  // ready at the caller's current time (or 0 before run()). Returns its thread id.
  // A daemon thread (sysmon) loops forever; in choice mode its waits are bounded (chooser.h).
  // `process`: the simulated process the thread belongs to (see set_process_hook).
  uint64_t newosproc(std::string name, plat::Fiber::Entry entry, void* arg, rt::g* g0, bool daemon = false,
                     uint32_t process = 0) {
    return driver_->newosproc(std::move(name), entry, arg, g0, daemon, process);
  }
  // See DriverBase::set_process_hook.
  using ProcessHook = DriverBase::ProcessHook;
  void set_process_hook(ProcessHook hook, void* ctx) { driver_->set_process_hook(hook, ctx); }
  // Runs until every thread has exited, or exit() is called, or no thread can ever run again, or
  // a limit or a Go throw stops the run. An exception that escaped a thread's stack (fail()) is
  // rethrown here, on the caller's stack, once the run has stopped.
  Result run() { return driver_->run(); }
  // Go's exit from inside a thread of the current process: with one process (or when it was the
  // last process the run waits for) the simulation ends after the current operation; otherwise
  // only that process's threads stop for good (DriverBase::exit).
  [[noreturn]] void exit(int code) { driver_->exit(code); }
  // The current thread's exit (Go's mexit): it never runs again.
  [[noreturn]] void exit_thread() {
    driver_->exit_thread();
    __builtin_unreachable();  // a call through the vtable loses the attribute
  }
  // CPU work on the calling thread (plat::Driver::compute).
  int64_t compute(int64_t work, double memory_share = 0) { return driver_->compute(work, memory_share); }
  // The calling thread blocks in the kernel for ns (plat::Driver::block_for).
  void block_for(int64_t ns) { driver_->block_for(ns); }
  // Charges ns of the calling thread's time as one event (nothing in choice mode).
  void spend(int64_t ns) { driver_->spend(ns); }
  // The stack a thread started on (its g0's).
  plat::Context* thread_context(uint64_t tid) const { return driver_->thread_context(tid); }

  int64_t now() const { return driver_->now(); }
  // The core the calling thread runs on (timing mode), -1 outside a thread and in choice mode.
  int current_core() const { return driver_->current_core(); }
  const EngineConfig& config() const { return driver_->config(); }
  // What a process's cgroup files say now (its group's quota and period, after the changes due by
  // now): {quota ns, period ns}, quota -1 for "max" or no group.
  std::pair<int64_t, int64_t> cpu_max(uint32_t process) const;
  // How many cores a process's threads may run on (sched_getaffinity: its cpuset, or every core).
  int32_t affinity_count(uint32_t process) const;
  const EngineStats& stats() const { return driver_->stats(); }

 private:
  std::unique_ptr<DriverBase> driver_;
};

}  // namespace gmp::engine
