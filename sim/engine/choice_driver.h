// The choice driver: the engine's choice mode (chooser.h), the seam between the engine and the
// model checker (model/). Every step of every thread is ordered by a Chooser instead of by virtual
// time. The threads, stacks, signals and exits are DriverBase's; what is its own is when a thread
// runs, how it blocks, and what the clock reads.
//
// Protocol. A thread about to take a step records it (ChoiceThread::step) and calls choice_point,
// which asks the chooser for the next thread among the enabled ones and switches to it; the step
// is taken when the thread is chosen and resumes. Enabled: every Running thread (stopped at its
// step), and every Blocked thread with a deadline (its step: the wait's end, a Timeout), subject
// to daemon rounds and strict time (chooser.h). A thread blocked on a lock or a note with no
// deadline is enabled again only by the unlock or the wake-up, which sets its next step (another
// attempt at the lock, a check of the note). With no thread enabled the run is deadlocked. The
// driver guarantees: the enabled steps are offered in thread order and the chooser's answers are
// its only input besides the program, so the same answers give the same run; the clock moves only
// when a timed wait ends, never backwards, and the running thread's clock is always the clock;
// costs, cores and the seed play no part. It is final, so calls inside it are direct; it sets no
// fast_access, since a step needs every access's address and site.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/chooser.h"
#include "sim/engine/driver_base.h"

namespace gmp::engine {

class ChoiceDriver final : public DriverBase {
 public:
  // cfg.chooser must be set (without one, engine.h makes the timed driver).
  explicit ChoiceDriver(EngineConfig cfg);
  ~ChoiceDriver() override;

  // Enabled at once, its first step a Start; the chooser hears of it (Chooser::thread_created).
  uint64_t newosproc(std::string name, plat::Fiber::Entry entry, void* arg, rt::g* g0, bool daemon,
                     uint32_t process) override;
  [[noreturn]] void exit_thread() override;
  void spend(int64_t ns) override;  // nothing: costs are no part of choice mode

  // Each of these is a step, or a timed wait whose end is one (chooser.h).
  int64_t compute(int64_t work, double memory_share) override;  // memory_share: no costs here
  void block_for(int64_t ns) override;
  void kernel_work(int64_t ns) override;
  void timer_sleep(int64_t ns) override;
  void access(const plat::Access& a) override;
  void lock(plat::Mutex& l) override;
  void unlock(plat::Mutex& l) override;
  void notesleep(plat::Note& n) override;
  bool notetsleep(plat::Note& n, int64_t ns) override;
  void notewakeup(plat::Note& n) override;
  void usleep(uint32_t usec) override;
  void osyield() override;
  int64_t nanotime() override;
  void tgkill(uint64_t tid, int sig) override;
  void charge(plat::Cost c) override;
  // Spin-wait loops (plat::SpinLoop): an iteration that wrote nothing, and whose reads nobody
  // wrote meanwhile, holds its thread at its next step until another thread writes a cell it read
  // (or, for a cell also written under a lock without steps, releases any lock), or signals it.
  void spin_begin(bool user, const plat::Site& site) override;
  void spin_again() override;
  void spin_end() override;

 private:
  struct ChoiceThread;  // choice_driver.cpp

  Thread* next_to_run() override;
  bool ended_by_driver() const override { return chooser_stopped_; }
  std::string blocked_threads() const override;  // with what each blocked thread waits on
  Stop stuck() const override;                    // Livelock when a spin-wait is held
  std::string stuck_message() const override;

  ChoiceThread& cur();               // the current thread, as this driver's record
  ChoiceThread& thread(size_t id);   // threads_[id], as this driver's record
  // The current thread's next step; returns once it is chosen. locked: the step reads a cell that
  // is also written under a lock without steps (see spin_step).
  void choice_point(Step s, bool locked = false);
  ChoiceThread* choose();            // asks the chooser; nullptr when no thread is enabled
  void take(ChoiceThread& t);        // t was chosen: end its timed wait, set its clock
  int64_t wait_start();              // the step that reads the clock (a deadline, nanotime)
  void block(Wait w, const void* on, int64_t deadline);
  void enable(ChoiceThread& t, Step s);  // a waiter becomes enabled, its next step s
  std::vector<uint32_t> waiting_on(const void* on, Wait w) const;
  void switch_away();                // the current thread stopped: run the chosen one
  // Step s of thread x is being taken: x's spin-wait iteration notes what it read or wrote, and the
  // other spin-waits see a write to what they read (a held one is released).
  void spin_step(ChoiceThread& x, const Step& s);

  Chooser* chooser_;                 // cfg_.chooser
  // The clock: the latest end of a timed wait. Every thread's clock is at most this, and take()
  // sets the chosen thread's to it, so the running thread's clock is this clock (DriverBase::now).
  int64_t now_ = 0;
  std::vector<Step> steps_;          // scratch: the enabled steps at a point
  uint32_t processes_ = 1;           // 1 + the highest process id of a thread
  std::vector<PointInfo> per_process_;  // scratch: PointInfo::per_process at a point
  uint32_t idle_daemon_rounds_ = 0;  // daemon waits ended with nothing else enabled
  uint32_t spinning_ = 0;            // threads inside a spin-wait loop (spin_begin, not yet ended)
  bool spun_out_ = false;            // a held spin-wait came to nothing too often (stuck(): Livelock)
  bool chooser_stopped_ = false;     // the chooser returned kStopRun
};

}  // namespace gmp::engine
