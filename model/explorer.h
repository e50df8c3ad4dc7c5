// Explorer: runs a fixed set of threads of ported code on fibers, on one OS thread, as a driver of
// the recording platform. At every platform operation (each shared-memory access, lock, note,
// sleep or yield) the running thread stops, and a Strategy picks which runnable thread performs
// the next operation. The sequence of picks is the schedule: replaying it reproduces the run
// exactly.
//
// Blocking: a thread that waits for a held runtime lock or an unwoken note is not runnable until
// the unlock or wake-up. Time: the explorer has no clock; nanotime counts operations, usleep and
// osyield are plain scheduling points, and a timed note sleep may time out at any point (it is a
// choice like any other). Signals: gettid is the thread's index; tgkill marks the signal pending on
// the target, whose handler (plat::set_signal_handler) runs on the target's context just before
// its next operation.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/strategy.h"
#include "sim/platform/driver.h"
#include "sim/platform/fiber.h"
#include "sim/platform/platform.h"

namespace gmp::model {

struct RunResult {
  enum class Outcome { Completed, Deadlock, StepLimit, Failed };
  Outcome outcome = Outcome::Completed;
  std::string message;            // why it did not complete
  uint64_t steps = 0;             // scheduling points passed
  uint64_t switches = 0;          // times the running thread changed
  std::vector<uint32_t> schedule;  // the thread picked at each point where more than one could run
};

const char* outcome_name(RunResult::Outcome o);

class Explorer final : public plat::Driver {
 public:
  explicit Explorer(Strategy& strategy, uint64_t max_steps = 10'000'000);
  ~Explorer() override;

  // Adds a thread that runs fn with getg() == gp. Threads start in the order added.
  void add_thread(std::string name, std::function<void()> fn, rt::g* gp = nullptr);

  // Runs all threads to completion (or deadlock, step limit, a throw). An exception other than a
  // Go throw (a failed test assertion, say) is rethrown here after the run is torn down.
  RunResult run();

  // Driver interface.
  void access(const plat::Access& a) override;
  void lock(plat::Mutex& l) override;
  void unlock(plat::Mutex& l) override;
  void notesleep(plat::Note& n) override;
  bool notetsleep(plat::Note& n, int64_t ns) override;
  void notewakeup(plat::Note& n) override;
  void usleep(uint32_t usec) override;
  void osyield() override;
  int64_t nanotime() override;
  uint64_t gettid() override;
  void tgkill(uint64_t tid, int sig) override;
  void charge(plat::Cost c) override;
  void switchto(plat::Context& to) override;
  int64_t compute(int64_t work) override;
  void block_for(int64_t ns) override;
  void crash(const char* msg) override;

  // The index of the running thread.
  uint32_t current() const { return cur_; }

 private:
  struct Thread;
  enum class Wait { None, Lock, Note };

  void point();                                  // a scheduling point for the running thread
  bool pick(uint32_t& next);                     // the strategy's choice of the next thread
  void block(Wait w, const void* on);            // park the running thread until woken
  void wake_all(Wait w, const void* on);
  void switch_to(uint32_t next);
  void deliver_signals();                        // run pending handlers on the current thread
  [[noreturn]] void abort_run(RunResult::Outcome o, std::string msg);
  static void thread_main(void* arg);

  Strategy& strategy_;
  uint64_t max_steps_;
  std::vector<std::unique_ptr<Thread>> threads_;
  plat::Fiber main_;
  uint32_t cur_ = 0;
  bool running_ = false;
  bool tearing_down_ = false;
  RunResult result_;
  std::vector<uint32_t> runnable_;  // scratch, reused at every point
};

}  // namespace gmp::model
