// The engine's choice mode (see chooser.h): every step of every thread is ordered by the Chooser
// instead of by virtual time. The threads, stacks, signals and exits are the timing mode's; what
// differs is when a thread runs, how it blocks, and what the clock reads.
//
// Protocol. A thread about to take a step records it (Thread::step) and calls check_point, which
// asks the chooser for the next thread among the enabled ones and switches to it; the step is taken
// when the thread is chosen and resumes. Enabled: every Running thread (stopped at its step), and
// every Blocked thread with a deadline (its step: the wait's end, a Timeout). A thread blocked on a
// lock or a note with no deadline is enabled again only by the unlock or the wake-up, which sets
// its next step (another attempt at the lock, a check of the note). With no thread enabled the run
// is deadlocked.
#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/engine/engine_thread.h"
#include "sim/platform/throw.h"

namespace gmp::engine {

namespace {
// How many daemon waits in a row may end with no other thread enabled before the run counts as
// deadlocked: sysmon alone, every other thread blocked for good. Sysmon's own work in that state
// (retake, checkdead) takes one or two rounds; 64 is far beyond any it can do.
constexpr uint32_t kMaxIdleDaemonRounds = 64;

// A step on a lock's or a note's key word.
Step key_step(StepKind kind, const std::atomic<uint32_t>& key, bool write, plat::Site site) {
  Step s;
  s.kind = kind;
  s.obj = &key;
  s.write = write;
  s.size = sizeof(uint32_t);
  s.site = site;
  return s;
}
}  // namespace

const char* step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::Start:
      return "start";
    case StepKind::Access:
      return "access";
    case StepKind::Lock:
      return "lock";
    case StepKind::Unlock:
      return "unlock";
    case StepKind::NoteSleep:
      return "notesleep";
    case StepKind::Timeout:
      return "timeout";
    case StepKind::Clock:
      return "nanotime";
    case StepKind::Signal:
      return "tgkill";
    case StepKind::Yield:
      return "osyield";
  }
  return "?";
}

void Engine::check_point(Step s) {
  Thread& self = cur();
  // Signals sent to this thread are handled before its next step, on its current stack.
  if (self.pending != 0 && !self.in_handler) deliver_signals();
  Thread& me = cur();
  s.tid = me.id;
  s.g = plat::getg();
  me.step = s;
  if (++stats_.events > event_limit_) {
    stop_run(Stop::EventLimit, 2, "stopped after " + std::to_string(cfg_.event_limit) + " steps (--max-steps)");
  }
  check_switch_away();
}

void Engine::check_switch_away() {
  Thread* n = check_choose();
  if (n == nullptr && chooser_stopped_) stop_run(Stop::Stopped, 0, "");
  if (n == nullptr) stop_run(Stop::Deadlock, 2, "every thread is blocked forever: " + blocked_threads());
  if (n != curp_) switch_thread(*n);
}

Engine::Thread* Engine::check_choose() {
  if (chooser_stopped_) return nullptr;
  steps_.clear();
  auto timeout = [](const Thread& t) {
    Step s;
    s.tid = t.id;
    s.kind = StepKind::Timeout;
    s.obj = t.wait_on != nullptr && t.wait == Wait::Note ? &static_cast<const plat::Note*>(t.wait_on)->key : nullptr;
    s.clock = true;
    s.deadline = t.deadline;
    s.user = t.computing || t.wait == Wait::Syscall;
    s.g = t.ctx->g;
    s.site = t.wait_site;
    return s;
  };
  bool running = false;  // a thread is stopped at a step
  for (const auto& tp : threads_) {
    const Thread& t = *tp;
    if (t.state == State::Running) {
      steps_.push_back(t.step);
      running = true;
    } else if (!cfg_.strict_time && t.state == State::Blocked && t.deadline != kNever &&
               !(t.daemon && t.rounds >= cfg_.daemon_rounds)) {
      steps_.push_back(timeout(t));
    }
  }
  bool others = false;  // a thread other than a daemon can move
  for (const Step& st : steps_) others |= !threads_[st.tid]->daemon;
  if (others) idle_daemon_rounds_ = 0;
  if (cfg_.strict_time && !running) {
    // Strict time: time passes only when every thread waits, up to the earliest deadline; the waits
    // due then end in any order.
    // A computation with a signal pending (a preemption request) ends now, as in timing mode.
    auto deadline = [&](const Thread& t) { return t.computing && t.pending != 0 ? now_ : t.deadline; };
    int64_t due = kNever;
    bool user_due = false;  // a thread other than a daemon waits with a deadline
    for (const auto& tp : threads_) {
      if (tp->state != State::Blocked || tp->deadline == kNever) continue;
      due = std::min(due, deadline(*tp));
      user_due |= !tp->daemon;
    }
    for (const auto& tp : threads_) {
      if (tp->state == State::Blocked && tp->deadline != kNever && deadline(*tp) <= std::max(due, now_))
        steps_.push_back(timeout(*tp));
    }
    if (user_due) idle_daemon_rounds_ = 0;
    if (steps_.empty() || (!user_due && ++idle_daemon_rounds_ > kMaxIdleDaemonRounds)) return nullptr;
  } else if (steps_.empty()) {
    // Only daemons past their rounds can move: time passes for them alone.
    for (const auto& tp : threads_) {
      if (tp->state == State::Blocked && tp->deadline != kNever) steps_.push_back(timeout(*tp));
    }
    if (steps_.empty() || ++idle_daemon_rounds_ > kMaxIdleDaemonRounds) return nullptr;
  }
  PointInfo info;
  info.quiescent = true;
  info.now = now_;
  for (const auto& tp : threads_) {
    const Thread& t = *tp;
    if (t.state == State::Exited) continue;
    const bool user = t.state == State::Blocked && (t.computing || t.wait == Wait::Syscall);
    info.user_running += user ? 1 : 0;
    const bool parked = t.state == State::Blocked && (t.wait == Wait::Note || (t.daemon && t.wait == Wait::Sleep));
    if (!user && !parked) info.quiescent = false;
    if (parked && !t.daemon && t.deadline != kNever) info.timed_parked++;
  }
  const size_t i = chooser_->choose(steps_, cur_, info);
  if (i == kStopRun) {
    chooser_stopped_ = true;
    return nullptr;
  }
  if (i >= steps_.size()) throw std::logic_error("engine: the chooser picked a step that is not enabled");
  Thread& n = *threads_[steps_[i].tid];
  check_take(n);
  return &n;
}

void Engine::check_take(Thread& n) {
  if (n.state == State::Blocked) {  // its timed wait ends
    drop_waiter(n);
    n.state = State::Running;
    n.wait = Wait::None;
    n.wait_on = nullptr;
    // A pending signal cuts a compute short now; otherwise the wait lasts at least its length.
    n.t = n.computing && n.pending != 0 ? now_ : std::max(n.deadline, now_);
    n.deadline = kNever;
    if (n.daemon) n.rounds++;
    now_ = n.t;
    if (now_ > time_limit_) {
      stop_run(Stop::TimeLimit, 2, "stopped at virtual time " + std::to_string(time_limit_) + " ns (--max-time)");
    }
  } else {
    n.t = std::max(n.t, now_);
  }
}

// A timed wait's deadline is computed from the clock: reading it is a step of its own (a Clock
// step), so that it is ordered against the ends of other waits, which move the clock.
int64_t Engine::check_wait_start() {
  Step s;
  s.kind = StepKind::Clock;
  s.clock = true;
  s.site = plat::current_site();
  check_point(s);
  return now_;
}

void Engine::check_block(Wait w, const void* on, int64_t deadline) {
  Thread& self = cur();
  if (w == Wait::Sleep || w == Wait::Syscall || w == Wait::Timer) self.wait_site = plat::current_site();
  self.state = State::Blocked;
  self.wait = w;
  self.wait_on = on;
  self.deadline = deadline;
  if (on != nullptr) {
    self.waiter_idx = static_cast<uint32_t>(waiters_.size());
    waiters_.push_back(Waiter{on, self.id});
  }
  check_switch_away();
}

void Engine::check_wake(Thread& t, Step s) {
  drop_waiter(t);
  t.state = State::Running;
  t.wait = Wait::None;
  t.wait_on = nullptr;
  t.deadline = kNever;
  s.tid = t.id;
  s.g = t.ctx->g;
  t.step = s;
}

void Engine::check_access(const plat::Access& a) {
  Step s;
  s.kind = StepKind::Access;
  s.op = a.op;
  s.write = !plat::is_load(a.op);
  s.size = a.size;
  s.obj = a.addr;
  s.value = a.value;
  s.expected = a.expected;
  s.site = a.site;
  check_point(s);
}

void Engine::check_lock(plat::Mutex& l) {
  const Step s = key_step(StepKind::Lock, l.key, true, plat::current_site());
  check_point(s);
  while (l.key.load(std::memory_order_relaxed) != 0) {
    cur().wait_site = s.site;
    check_block(Wait::Lock, &l, kNever);  // resumes as another attempt, after an unlock
  }
  l.key.store(1, std::memory_order_relaxed);
}

void Engine::check_unlock(plat::Mutex& l) {
  check_point(key_step(StepKind::Unlock, l.key, true, plat::current_site()));
  l.key.store(0, std::memory_order_relaxed);
  // Every waiter tries again; the chooser decides who gets there first.
  for (uint32_t tid : waiting_on(&l, Wait::Lock)) {
    Thread& t = *threads_[tid];
    check_wake(t, key_step(StepKind::Lock, l.key, true, t.wait_site));
  }
}

void Engine::check_notesleep(plat::Note& n) {
  const Step s = key_step(StepKind::NoteSleep, n.key, false, plat::current_site());
  check_point(s);
  while (n.key.load(std::memory_order_acquire) == 0) {
    cur().wait_site = s.site;
    check_block(Wait::Note, &n, kNever);
  }
}

bool Engine::check_notetsleep(plat::Note& n, int64_t ns) {
  if (ns < 0) {
    check_notesleep(n);
    return true;
  }
  Step s = key_step(StepKind::NoteSleep, n.key, false, plat::current_site());
  s.clock = true;  // the deadline below is read from the clock at this step
  check_point(s);
  if (n.key.load(std::memory_order_acquire) != 0) return true;
  cur().wait_site = s.site;
  check_block(Wait::Note, &n, now_ + clamp_step(ns));
  return n.key.load(std::memory_order_acquire) != 0;
}

// The key's store was a step of its own (plat::notewakeup offers it first); this is the futex
// wake that follows, which enables the sleepers.
void Engine::check_notewakeup(plat::Note& n) {
  for (uint32_t tid : waiting_on(&n, Wait::Note)) {
    Thread& t = *threads_[tid];
    check_wake(t, key_step(StepKind::NoteSleep, n.key, false, t.wait_site));
  }
}

// The threads waiting on `on` for `w`, in thread order (waiters_ is in no useful order).
std::vector<uint32_t> Engine::waiting_on(const void* on, Wait w) const {
  std::vector<uint32_t> out;
  for (const Waiter& x : waiters_) {
    if (x.on == on && threads_[x.tid]->wait == w) out.push_back(x.tid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int64_t Engine::check_compute(int64_t work) {
  if (work <= 0) return 0;
  const int64_t start = check_wait_start();
  Thread& self = cur();
  self.computing = true;
  self.compute_start = start;
  self.compute_end = start + clamp_step(work);
  check_block(Wait::Timer, nullptr, self.compute_end);
  Thread& me = cur();
  me.computing = false;
  const int64_t left = me.compute_end - me.t;
  if (me.pending != 0) deliver_signals();
  return std::max<int64_t>(0, left);
}

void Engine::check_tgkill(uint64_t tid, int sig) {
  if (tid >= threads_.size() || sig <= 0 || sig >= kSignals) plat::throw_("tgkill: no such thread or signal");
  Step s;
  s.kind = StepKind::Signal;
  s.target = static_cast<uint32_t>(tid);
  s.site = plat::current_site();
  check_point(s);
  Thread& target = *threads_[tid];
  if (target.state == State::Exited) return;
  target.sig_at[static_cast<size_t>(sig)] = now_;
  target.pending |= uint64_t{1} << sig;
}

void Engine::check_exit_thread() {
  Thread& t = cur();
  t.state = State::Exited;
  if (Thread* n = check_choose()) {
    switch_thread(*n);
  } else {
    plat::Fiber::switch_to(t.ctx->fiber, main_);
  }
  __builtin_unreachable();  // an exited thread is never resumed
}

std::string Engine::blocked_threads() const {
  std::string out;
  for (const auto& tp : threads_) {
    const Thread& t = *tp;
    if (t.state == State::Exited) continue;
    if (!out.empty()) out += ", ";
    out += t.name;
    if (t.state == State::Blocked) {
      out += t.wait == Wait::Lock ? " (lock" : t.wait == Wait::Note ? " (note" : " (timed wait";
      if (t.wait_site.line() != 0)
        out += std::string(" at ") + t.wait_site.file_name() + ":" + std::to_string(t.wait_site.line());
      out += ")";
    }
  }
  return out;
}

}  // namespace gmp::engine
