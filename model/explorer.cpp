#include "model/explorer.h"

#include <bit>
#include <stdexcept>

#include "sim/platform/throw.h"

namespace gmp::model {

const char* outcome_name(RunResult::Outcome o) {
  switch (o) {
    case RunResult::Outcome::Completed: return "completed";
    case RunResult::Outcome::Deadlock: return "deadlock";
    case RunResult::Outcome::StepLimit: return "step limit";
    case RunResult::Outcome::Failed: return "failed";
  }
  return "?";
}

namespace {
// Unwinds a thread's fiber when the run is aborted; never escapes thread_main.
struct AbortRun {};
}  // namespace

struct Explorer::Thread {
  Explorer* ex = nullptr;
  uint32_t index = 0;
  std::string name;
  std::function<void()> fn;
  rt::g* gp = nullptr;
  std::unique_ptr<plat::Fiber> fiber;
  bool done = false;
  Wait wait = Wait::None;
  const void* wait_on = nullptr;
  uint64_t pending_signals = 0;  // bit n: signal n sent, handler not yet run
};

Explorer::Explorer(Strategy& strategy, uint64_t max_steps)
    : strategy_(strategy), max_steps_(max_steps) {}

Explorer::~Explorer() = default;

void Explorer::add_thread(std::string name, std::function<void()> fn, rt::g* gp) {
  if (running_) throw std::logic_error("Explorer::add_thread during run");
  auto t = std::make_unique<Thread>();
  t->ex = this;
  t->index = static_cast<uint32_t>(threads_.size());
  t->name = std::move(name);
  t->fn = std::move(fn);
  t->gp = gp;
  threads_.push_back(std::move(t));
}

void Explorer::thread_main(void* arg) {
  auto* t = static_cast<Thread*>(arg);
  try {
    if (!t->ex->tearing_down_) t->fn();
  } catch (const AbortRun&) {
    // The run was torn down; just finish.
  } catch (const plat::GoFatal& e) {
    Explorer* ex = t->ex;
    if (ex->result_.outcome == RunResult::Outcome::Completed) {
      ex->result_.outcome = RunResult::Outcome::Failed;
      ex->result_.message = "thread " + t->name + ": " + e.what();
    }
  }
  // Any other exception is kept by the fiber and rethrown by run().
  t->done = true;
}

RunResult Explorer::run() {
  result_ = RunResult{};
  running_ = true;
  plat::DriverScope scope(this);
  for (auto& t : threads_) {
    t->fiber = std::make_unique<plat::Fiber>(&Explorer::thread_main, t.get(), &main_);
  }
  std::exception_ptr foreign;
  // The main fiber drives: it resumes the thread the strategy picked until all are done. Threads
  // switch among themselves directly; control returns here only when a thread finishes.
  for (;;) {
    bool any_left = false;
    for (auto& t : threads_) any_left = any_left || !t->done;
    if (!any_left) break;
    uint32_t next;
    bool picked = false;
    try {
      picked = pick(next);
    } catch (...) {
      // The strategy threw here, on the main fiber (a replayed schedule that cannot be followed):
      // tear the run down like a thread's throw, then rethrow.
      foreign = std::current_exception();
      break;
    }
    if (!picked) {
      result_.outcome = RunResult::Outcome::Deadlock;
      std::string who;
      for (auto& t : threads_) {
        if (!t->done) who += (who.empty() ? "" : ", ") + t->name + (t->wait == Wait::Lock ? " (lock)" : " (note)");
      }
      result_.message = "all threads blocked: " + who;
      break;
    }
    if (next != cur_) result_.switches++;
    cur_ = next;
    Thread& t = *threads_[next];
    plat::setg(t.gp);
    plat::Fiber::switch_to(main_, *t.fiber);
    // A thread finished (normally, by a throw, or by a foreign exception).
    for (auto& th : threads_) {
      if (th->fiber && th->fiber->finished() && th->fiber->error() && !foreign) foreign = th->fiber->error();
    }
    if (foreign || result_.outcome != RunResult::Outcome::Completed) break;
  }
  // Tear down: unwind every unfinished thread so its stack objects are destroyed.
  tearing_down_ = foreign || result_.outcome != RunResult::Outcome::Completed;
  if (tearing_down_) {
    for (auto& t : threads_) {
      // A thread whose function threw a foreign exception has finished without setting done:
      // its fiber is gone and must not be resumed.
      if (t->done || !t->fiber || t->fiber->finished()) continue;
      // A thread never started has nothing to unwind.
      t->wait = Wait::None;
      cur_ = t->index;
      plat::setg(t->gp);
      plat::Fiber::switch_to(main_, *t->fiber);
    }
  }
  plat::setg(nullptr);
  running_ = false;
  tearing_down_ = false;
  threads_.clear();
  if (foreign) std::rethrow_exception(foreign);
  return result_;
}

void Explorer::abort_run(RunResult::Outcome o, std::string msg) {
  if (result_.outcome == RunResult::Outcome::Completed) {
    result_.outcome = o;
    result_.message = std::move(msg);
  }
  throw AbortRun{};
}

void Explorer::switch_to(uint32_t next) {
  if (next == cur_) return;
  result_.switches++;
  Thread& from = *threads_[cur_];
  Thread& to = *threads_[next];
  cur_ = next;
  plat::setg(to.gp);
  plat::Fiber::switch_to(*from.fiber, *to.fiber);
  // Resumed. If the run is being torn down, unwind this thread.
  if (tearing_down_) throw AbortRun{};
}

void Explorer::point() {
  if (tearing_down_) throw AbortRun{};
  if (++result_.steps > max_steps_) {
    abort_run(RunResult::Outcome::StepLimit,
              "no completion within " + std::to_string(max_steps_) + " scheduling points");
  }
  uint32_t next;
  if (!pick(next)) abort_run(RunResult::Outcome::Deadlock, "all threads blocked");
  switch_to(next);
  deliver_signals();
}

// Chooses the thread to run next among the runnable ones, recording the choice when there was one
// to make; false if no thread can run.
bool Explorer::pick(uint32_t& next) {
  runnable_.clear();
  for (auto& t : threads_) {
    if (!t->done && t->wait == Wait::None) runnable_.push_back(t->index);
  }
  if (runnable_.empty()) return false;
  next = runnable_.front();
  if (runnable_.size() > 1) {
    next = strategy_.choose(runnable_, cur_);
    result_.schedule.push_back(next);
  }
  return true;
}

void Explorer::block(Wait w, const void* on) {
  Thread& self = *threads_[cur_];
  self.wait = w;
  self.wait_on = on;
  point();  // picks among the others; self is not runnable until woken
}

void Explorer::wake_all(Wait w, const void* on) {
  for (auto& t : threads_) {
    if (t->wait == w && t->wait_on == on) {
      t->wait = Wait::None;
      t->wait_on = nullptr;
    }
  }
}

void Explorer::access(const plat::Access&) { point(); }

void Explorer::lock(plat::Mutex& l) {
  point();
  while (l.key.load(std::memory_order_relaxed) != 0) block(Wait::Lock, &l);
  l.key.store(1, std::memory_order_relaxed);
}

void Explorer::unlock(plat::Mutex& l) {
  l.key.store(0, std::memory_order_relaxed);
  wake_all(Wait::Lock, &l);
  point();
}

void Explorer::notesleep(plat::Note& n) {
  point();
  while (n.key.load(std::memory_order_relaxed) == 0) block(Wait::Note, &n);
}

bool Explorer::notetsleep(plat::Note& n, int64_t ns) {
  if (ns < 0) {
    notesleep(n);
    return true;
  }
  point();  // the timeout may fire at any point: here, after one more step
  return n.key.load(std::memory_order_relaxed) != 0;
}

void Explorer::notewakeup(plat::Note& n) {
  wake_all(Wait::Note, &n);
  point();
}

void Explorer::usleep(uint32_t) { point(); }
void Explorer::osyield() { point(); }
int64_t Explorer::nanotime() { return static_cast<int64_t>(result_.steps); }

uint64_t Explorer::gettid() { return cur_; }

// A signal runs its handler on the target thread before that thread's next operation.
void Explorer::tgkill(uint64_t tid, int sig) {
  if (tid >= threads_.size() || threads_[tid]->done) plat::throw_("tgkill: no such thread");
  threads_[tid]->pending_signals |= uint64_t{1} << sig;
  point();
}

void Explorer::deliver_signals() {
  Thread& self = *threads_[cur_];
  while (self.pending_signals != 0) {
    const int sig = std::countr_zero(self.pending_signals);
    self.pending_signals &= self.pending_signals - 1;
    if (plat::SignalHandler h = plat::signal_handler(sig)) h(sig);
  }
}

void Explorer::charge(plat::Cost) {}

// Time-free: a computation or a system call is one scheduling point.
int64_t Explorer::compute(int64_t) {
  point();
  return 0;
}

void Explorer::block_for(int64_t) { point(); }

void Explorer::crash(const char* msg) { abort_run(RunResult::Outcome::Failed, msg); }

void Explorer::switchto(plat::Context&) {
  plat::throw_("switchto: the explorer runs threads, not goroutine stacks");
}

}  // namespace gmp::model
