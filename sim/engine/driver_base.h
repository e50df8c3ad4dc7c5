// What the engine's two drivers share: simulated OS threads on fibers, driven from one OS thread.
// The timed driver (timed_driver.h) orders the threads by virtual time, the choice driver
// (choice_driver.h) by a Chooser; everything else about a thread is here.
//
// Protocol. A thread is a record (Thread, engine_thread.h; each driver derives its own from it)
// made by add_thread: its id is its index in threads_, dense, in creation order and never reused,
// and the record lives as long as the driver. Its first stack is its g0's, on which it runs
// entry(arg) and then the driver's exit_thread; switchto moves it between stacks (gogo, mcall).
// While run() is in progress exactly one thread is current (cur()): the one whose stack is
// running, or the one that last ran when control is back on run()'s own stack (main_). Control
// passes between threads only through switch_thread, which makes the target current before it
// switches, and back to run() through to_main.
//
// The run loop asks the driver which thread runs next (next_to_run) and resumes it; when a thread
// finds nothing to run it returns to the loop, which asks again. The run ends at the first
// stop_run (exit, a Go throw, a limit; the result is the first stop's), or when next_to_run finds
// nothing: then the driver may say it ended the run itself (ended_by_driver: Stop::Stopped);
// otherwise the run ended because every thread exited, or in deadlock because the rest can never
// run again. An exception that escaped a thread's stack (fail) is rethrown by run(), on its
// caller's stack, once the run has stopped.
//
// Several processes (EngineConfig::processes non-empty): exit ends only the calling thread's
// process. The process is marked dead; its calling thread exits, and each of its other threads is
// dropped (exits) the next time it would run: when the run loop or another thread resumes it, or
// when it would start. A dead process's threads that never run again (blocked on its own locks
// and notes) stay blocked, and count neither as alive nor as deadlocked: the run ends in deadlock
// only when a thread of a live process is blocked forever and nothing can run. The run ends
// (Stop::Exit, with the last exit's code) once every process that is not a daemon has exited, or,
// when every process is a daemon, once all have.
//
// Signals: each thread has 63 signals, each pending from a due time. deliver_signals runs, on the
// current thread and in increasing signal order, the handlers of those due by its clock; never
// inside a handler. Which time a signal is due at, and when delivery is tried, is the driver's.
//
// Waiters: a thread blocked on a lock or a note is listed with what it waits on (add_waiter,
// drop_waiter), so that an unlock or a wake-up looks through the waiters instead of every thread.
// The list is in no useful order; a driver that picks among waiters orders them itself.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/engine_config.h"
#include "sim/platform/context.h"
#include "sim/platform/driver.h"

namespace gmp::rt {
struct g;
}  // namespace gmp::rt

namespace gmp::engine {

class DriverBase : public plat::Driver {
 public:
  // Stopped: the choice driver's chooser ended the run (kStopRun). Livelock (choice driver only):
  // no thread can move but one or more held in a spin-wait loop, which would spin forever since
  // nothing can change what they read.
  enum class Stop { AllExited, Exit, Deadlock, TimeLimit, EventLimit, Fatal, Stopped, Livelock };
  struct Result {
    Stop stop = Stop::AllExited;
    int exit_code = 0;
    std::string message;
    int64_t end_time = 0;
  };

  ~DriverBase() override;
  DriverBase(const DriverBase&) = delete;
  DriverBase& operator=(const DriverBase&) = delete;

  // A new simulated OS thread that will run entry(arg) with getg() == g0; returns its id. Which
  // time it starts at and when it first runs are the driver's. A daemon thread (sysmon) loops
  // forever. `process`: the simulated process the thread belongs to (see set_process_hook).
  virtual uint64_t newosproc(std::string name, plat::Fiber::Entry entry, void* arg, rt::g* g0, bool daemon,
                             uint32_t process) = 0;
  // Several processes on one machine: before a thread whose process is not the process of the
  // thread made current last becomes current (the first thread of a run always counts as such),
  // the driver calls hook(ctx, process), so that the host can make that process's state current.
  // nullptr: none. One process pays a comparison per switch.
  using ProcessHook = void (*)(void* ctx, uint32_t process);
  void set_process_hook(ProcessHook hook, void* ctx) {
    process_hook_ = hook;
    process_ctx_ = ctx;
  }
  // Runs the threads until the run stops (see the protocol above).
  Result run();
  // Go's exit from inside a thread: with one process, ends the run after the current operation;
  // with several, ends the calling thread's process (see above).
  [[noreturn]] void exit(int code);
  // Whether a process has exited (several processes; always false with one).
  bool process_dead(uint32_t process) const { return process < dead_.size() && dead_[process] != 0; }
  // The current thread exits (Go's mexit): it never runs again.
  [[noreturn]] virtual void exit_thread() = 0;
  // Charges ns of the calling thread's time as one event (nothing where costs play no part).
  virtual void spend(int64_t ns) = 0;
  // The virtual time now (ns since the start of the run): the current thread's clock, 0 outside a
  // run. Each driver keeps the current thread's clock at its time now (the choice driver sets a
  // chosen thread's clock to its own clock), so this is no virtual call: the host reads it at
  // every scheduler event.
  int64_t now() const;
  // The core the calling thread runs on; -1 outside a thread, or where the driver has no cores.
  virtual int current_core() const { return -1; }
  // The stack a thread started on (its g0's).
  plat::Context* thread_context(uint64_t tid) const;
  const EngineConfig& config() const { return cfg_; }
  const EngineStats& stats() const { return stats_; }

  // The platform operations that are the same under both drivers.
  uint64_t gettid() final;
  void switchto(plat::Context& to) final;
  void crash(const char* msg) final;
  [[noreturn]] void fail(std::exception_ptr e) final;

 protected:
  struct Thread;  // engine_thread.h
  enum class State { Ready, Running, Blocked, Exited };
  // What a Blocked thread waits for. Timer: the end of a delay (timed driver: any; choice driver:
  // a compute); Syscall, Sleep: the choice driver's system calls and usleeps.
  enum class Wait { None, Lock, Note, Timer, Syscall, Sleep };

  explicit DriverBase(EngineConfig cfg);

  // Takes a new thread record (a driver's own kind) and makes it thread threads_.size().
  Thread& add_thread(std::unique_ptr<Thread> t, std::string name, plat::Fiber::Entry entry, void* arg, rt::g* g0,
                     uint32_t process);
  // The thread the run loop resumes next (it becomes current); nullptr when none can run.
  virtual Thread* next_to_run() = 0;
  // Asked when next_to_run found nothing: whether the driver ended the run (Stop::Stopped).
  virtual bool ended_by_driver() const { return false; }
  // Called once when the run has stopped, with its end time (the driver's last accounts).
  virtual void run_ended(int64_t /*end*/) {}
  // The threads still alive, for a deadlock's message.
  virtual std::string blocked_threads() const;
  // Asked when nothing can run and a thread is alive: why (Deadlock, or the driver's own reason),
  // and the run's message.
  virtual Stop stuck() const { return Stop::Deadlock; }
  virtual std::string stuck_message() const { return "every thread is blocked forever: " + blocked_threads(); }

  void make_current(Thread& t);  // t is the current thread from now on
  void enter_process(uint32_t process);  // make_current's call of the process hook
  void switch_thread(Thread& to);  // the current thread stops and `to` runs
  void to_main();                // the current thread stops and control goes back to run()
  // Called on a thread's own stack each time it resumes: a thread of a dead process exits.
  void drop_if_dead();
  // Whether t belongs to a process that has exited.
  bool dead(const Thread& t) const;
  [[noreturn]] void stop_run(Stop s, int code, std::string msg);
  void deliver_signals();        // runs the current thread's due handlers
  // Throws (a Go throw) unless tid names a thread and sig a signal.
  void require_signal(uint64_t tid, int sig) const;
  void add_waiter(Thread& t, const void* on);
  void drop_waiter(Thread& t);   // t no longer waits on a lock or note (if it did)
  Thread& cur() { return *curp_; }

  struct Waiter {
    const void* on;
    uint32_t tid;
  };

  EngineConfig cfg_;
  EngineStats stats_;
  std::vector<std::unique_ptr<Thread>> threads_;
  std::vector<Waiter> waiters_;  // Thread::waiter_idx: each waiter's index
  plat::Fiber main_;             // run()'s own stack
  uint32_t cur_ = 0;
  Thread* curp_ = nullptr;       // threads_[cur_]
  // cur_'s bit in a 64-bit set of threads by id % 64 (as in an access's holders word), kept here
  // so that an access reads it rather than computes it.
  uint64_t cur_bit_ = 1;
  uint64_t event_limit_ = UINT64_MAX;  // cfg_ limits, with 0 (none) as the maximum
  int64_t time_limit_ = INT64_MAX;
  bool running_ = false;
  bool stopping_ = false;
  Result result_;
  std::exception_ptr failure_;  // what fail() stopped the run with, for run() to rethrow

 private:
  static void thread_main(void* arg);

  std::vector<uint8_t> dead_;  // by process id (several processes): it has exited
  bool any_dead_ = false;

  ProcessHook process_hook_ = nullptr;
  void* process_ctx_ = nullptr;
  uint32_t cur_process_ = UINT32_MAX;  // the process of the thread made current last; none yet
};

}  // namespace gmp::engine
