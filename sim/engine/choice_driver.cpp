#include "sim/engine/choice_driver.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/engine_thread.h"
#include "sim/platform/platform.h"

namespace gmp::engine {

using engine_detail::clamp_step;
using engine_detail::kNever;

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

// How many distinct cells one spin-wait iteration may read before it is no longer held (a loop
// that reads this much is no simple poll; the bound keeps a mark left behind cheap).
constexpr size_t kMaxSpinReads = 32;
// How many times in a row a held spin-wait may be released and find the same values again, with
// no other goroutine taking a step in between, before the run counts as a livelock: only the
// scheduler moves (sysmon preempting the poller, the poller's M running it again), and each round
// leaves what the loop reads as it was.
constexpr uint32_t kMaxFruitlessSpins = 64;

// A source file's name without its folders, for messages.
std::string base_name(const char* path) {
  const std::string p = path;
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// A cell's value now, for a spin-wait's reads (4 or 8 bytes; a note's or a lock's key is 4).
uint64_t cell_value(const void* p, uint8_t size) {
  return size == 8 ? *static_cast<const uint64_t*>(p) : *static_cast<const uint32_t*>(p);
}

// A thread's state under a chooser, beside what both drivers keep.
struct ChoiceDriver::ChoiceThread final : DriverBase::Thread {
  Step step;                   // the step it takes when chosen (while Running and stopped)
  int64_t deadline = kNever;   // when its timed wait may end (Blocked); kNever: not timed
  bool daemon = false;
  uint32_t rounds = 0;         // timed waits ended by choice (daemons)
  plat::Site wait_site;        // where it blocked
  // A spin-wait loop (plat::SpinLoop). Iterating: the thread is inside an iteration, whose reads
  // are noted; Held: an iteration found nothing new, so the thread's step (the next iteration's
  // first) is not offered until another thread writes a cell in spin_reads.
  enum class Spin : uint8_t { None, Iterating, Held };
  Spin spin = Spin::None;
  bool spin_user = false;      // the loop is a goroutine's own code
  bool spin_changed = false;   // the iteration wrote, or a cell it read was written meanwhile
  bool spin_locked = false;    // it read a cell also written under a lock, without steps
  bool step_locked = false;    // the recorded step is such a read (an Access with no holders word)
  const rt::g* spin_g = nullptr;  // the goroutine (or g0) whose loop it is
  plat::Site spin_site;        // the loop
  std::vector<const void*> spin_reads;  // the cells the iteration read
  std::vector<uint8_t> spin_sizes;      // their sizes
  // Rounds that came to nothing: held again, reading the same values as at its last hold, while no
  // other goroutine took a step (spin_others). kMaxFruitlessSpins of them end the run.
  uint64_t spin_sig = 0;       // the values read at the last hold
  bool spin_held_before = false;
  bool spin_others = false;
  uint32_t spin_fruitless = 0;
};

inline ChoiceDriver::ChoiceThread& ChoiceDriver::cur() { return *static_cast<ChoiceThread*>(curp_); }

inline ChoiceDriver::ChoiceThread& ChoiceDriver::thread(size_t id) {
  return static_cast<ChoiceThread&>(*threads_[id]);
}

ChoiceDriver::ChoiceDriver(EngineConfig cfg) : DriverBase(std::move(cfg)), chooser_(cfg_.chooser) {
  if (chooser_ == nullptr) throw std::invalid_argument("engine: the choice driver needs a chooser");
  collapses_spins = true;
}

ChoiceDriver::~ChoiceDriver() = default;

uint64_t ChoiceDriver::newosproc(std::string name, plat::Fiber::Entry entry, void* arg, rt::g* g0, bool daemon,
                                 uint32_t process) {
  auto& t = static_cast<ChoiceThread&>(add_thread(std::make_unique<ChoiceThread>(), std::move(name), entry, arg, g0, process));
  t.daemon = daemon;
  t.state = State::Running;
  t.t = now_;
  t.step = Step{};
  t.step.tid = t.id;
  t.step.process = process;
  processes_ = std::max(processes_, process + 1);
  chooser_->thread_created(t.id, running_ ? cur_ : UINT32_MAX, daemon, process);
  return t.id;
}

void ChoiceDriver::spend(int64_t /*ns*/) {}

DriverBase::Thread* ChoiceDriver::next_to_run() { return choose(); }

void ChoiceDriver::choice_point(Step s, bool locked) {
  ChoiceThread& self = cur();
  // Signals sent to this thread are handled before its next step, on its current stack.
  if (self.pending != 0 && !self.in_handler) deliver_signals();
  ChoiceThread& me = cur();
  s.tid = me.id;
  s.process = me.process;
  s.g = plat::getg();
  me.step = s;
  me.step_locked = locked;
  switch_away();
}

void ChoiceDriver::switch_away() {
  // Every step taken counts toward the step limit, whichever way it was chosen: here, after a
  // block, after an exit, or from the run loop (choose() counts them).
  if (stats_.events >= event_limit_) {
    stop_run(Stop::EventLimit, 2, "stopped after " + std::to_string(cfg_.event_limit) + " steps (--max-steps)");
  }
  ChoiceThread* n = choose();
  if (n == nullptr && chooser_stopped_) stop_run(Stop::Stopped, 0, "");
  if (n == nullptr) stop_run(stuck(), 2, stuck_message());
  if (n != curp_) switch_thread(*n);
}

ChoiceDriver::ChoiceThread* ChoiceDriver::choose() {
  if (chooser_stopped_ || spun_out_) return nullptr;
  steps_.clear();
  auto timeout = [](const ChoiceThread& t) {
    Step s;
    s.tid = t.id;
    s.process = t.process;
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
    const auto& t = static_cast<const ChoiceThread&>(*tp);
    if (dead(t)) continue;  // an exited process's threads take no more steps
    if (t.state == State::Running) {
      if (t.spin == ChoiceThread::Spin::Held) {  // spins on until another thread writes
        if (t.spin_fruitless < kMaxFruitlessSpins) continue;
        spun_out_ = true;  // and the writes come to nothing: a livelock (stuck())
        return nullptr;
      }
      steps_.push_back(t.step);
      running = true;
    } else if (!cfg_.strict_time && t.state == State::Blocked && t.deadline != kNever &&
               !(t.daemon && t.rounds >= cfg_.daemon_rounds)) {
      steps_.push_back(timeout(t));
    }
  }
  bool others = false;  // a thread other than a daemon can move
  for (const Step& st : steps_) others |= !thread(st.tid).daemon;
  if (others) idle_daemon_rounds_ = 0;
  if (cfg_.strict_time && (!running || chooser_->pass_time())) {
    // Strict time: time passes only when every thread waits, up to the earliest deadline; the waits
    // due then end in any order. (Or when the chooser asks for it, pass_time: they are then
    // offered beside the steps of the threads that can step.)
    // A computation with a signal pending (a preemption request) ends now, as in timing mode.
    auto deadline = [&](const ChoiceThread& t) { return t.computing && t.pending != 0 ? now_ : t.deadline; };
    int64_t due = kNever;
    bool user_due = false;  // a thread other than a daemon waits with a deadline
    for (const auto& tp : threads_) {
      const auto& t = static_cast<const ChoiceThread&>(*tp);
      if (t.state != State::Blocked || t.deadline == kNever || dead(t)) continue;
      due = std::min(due, deadline(t));
      user_due |= !t.daemon;
    }
    for (const auto& tp : threads_) {
      const auto& t = static_cast<const ChoiceThread&>(*tp);
      if (t.state == State::Blocked && t.deadline != kNever && !dead(t) && deadline(t) <= std::max(due, now_))
        steps_.push_back(timeout(t));
    }
    if (user_due) idle_daemon_rounds_ = 0;
    if (!running && (steps_.empty() || (!user_due && ++idle_daemon_rounds_ > kMaxIdleDaemonRounds))) return nullptr;
  } else if (steps_.empty()) {
    // Only daemons past their rounds can move: time passes for them alone.
    for (const auto& tp : threads_) {
      const auto& t = static_cast<const ChoiceThread&>(*tp);
      if (t.state == State::Blocked && t.deadline != kNever && !dead(t)) steps_.push_back(timeout(t));
    }
    if (steps_.empty() || ++idle_daemon_rounds_ > kMaxIdleDaemonRounds) return nullptr;
  }
  PointInfo info;
  info.quiescent = true;
  info.now = now_;
  if (processes_ > 1) {  // each process's own counts too
    per_process_.assign(processes_, info);
    info.per_process = per_process_.data();
    info.processes = processes_;
    // A process none of whose threads lives (it exited) has no quiescent points: what its
    // runtime holds is where the exit left it, not a state of the scheduler at rest.
    for (PointInfo& pi : per_process_) pi.quiescent = false;
    for (const auto& tp : threads_) {
      if (tp->state != State::Exited && !dead(*tp)) per_process_[tp->process].quiescent = true;
    }
  }
  for (const auto& tp : threads_) {
    const auto& t = static_cast<const ChoiceThread&>(*tp);
    if (t.state == State::Exited || dead(t)) continue;
    // A goroutine held in its busy-poll is running user code, as it is between its polls.
    const bool user = (t.state == State::Blocked && (t.computing || t.wait == Wait::Syscall)) ||
                      (t.spin == ChoiceThread::Spin::Held && t.spin_user);
    const bool parked = t.state == State::Blocked && (t.wait == Wait::Note || (t.daemon && t.wait == Wait::Sleep));
    for (PointInfo* pi : {&info, processes_ > 1 ? &per_process_[t.process] : nullptr}) {
      if (pi == nullptr) continue;
      pi->user_running += user ? 1 : 0;
      if (!user && !parked) pi->quiescent = false;
      if (parked && !t.daemon && t.deadline != kNever) pi->timed_parked++;
    }
  }
  const size_t i = chooser_->choose(steps_, cur_, info);
  if (i == kStopRun) {
    chooser_stopped_ = true;
    return nullptr;
  }
  if (i >= steps_.size()) throw std::logic_error("engine: the chooser picked a step that is not enabled");
  ChoiceThread& n = thread(steps_[i].tid);
  stats_.events++;
  if (spinning_ != 0) spin_step(n, steps_[i]);
  take(n);
  return &n;
}

void ChoiceDriver::spin_step(ChoiceThread& x, const Step& s) {
  bool writes = s.kind == StepKind::Lock || s.kind == StepKind::Unlock || s.kind == StepKind::Signal ||
                (s.kind == StepKind::Access && s.write);
  // A CAS that will fail only reads: no other thread runs between this choice and the CAS.
  if (s.kind == StepKind::Access && (s.op == plat::Op::Cas || s.op == plat::Op::CasRelease) && s.obj != nullptr) {
    const uint64_t v = s.size == 4 ? *static_cast<const uint32_t*>(s.obj) : *static_cast<const uint64_t*>(s.obj);
    if (v != s.expected) writes = false;
  }
  // The clock (Clock, a Timeout's move) is left out: a spin loop's decisions do not read it.
  const void* cell = s.kind == StepKind::Clock ? nullptr : s.obj;
  if (x.spin == ChoiceThread::Spin::Iterating) {
    if (writes) {
      x.spin_changed = true;
    } else if (cell != nullptr && !x.spin_changed) {
      if (std::find(x.spin_reads.begin(), x.spin_reads.end(), cell) == x.spin_reads.end()) {
        if (x.spin_reads.size() >= kMaxSpinReads) x.spin_changed = true;
        x.spin_reads.push_back(cell);
        x.spin_sizes.push_back(s.kind == StepKind::Access ? s.size : sizeof(uint32_t));
      }
      x.spin_locked |= s.kind == StepKind::Access && x.step_locked;
    }
  }
  // A step of a goroutine (not a g0) other than a spin-wait's own: the program moves.
  if (s.g != nullptr && s.g != x.g0ctx->g) {
    for (const auto& tp : threads_) {
      auto& t = static_cast<ChoiceThread&>(*tp);
      if (t.spin != ChoiceThread::Spin::None && s.g != t.spin_g) t.spin_others = true;
    }
  }
  if (!writes) return;
  for (const auto& tp : threads_) {
    auto& t = static_cast<ChoiceThread&>(*tp);
    if (&t == &x || t.spin == ChoiceThread::Spin::None) continue;
    const bool hit = (s.kind == StepKind::Signal && s.target == t.id) || (s.kind == StepKind::Unlock && t.spin_locked) ||
                     (cell != nullptr && std::find(t.spin_reads.begin(), t.spin_reads.end(), cell) != t.spin_reads.end());
    if (!hit) continue;
    if (t.spin == ChoiceThread::Spin::Held) {
      // Released: its step is the first of a new iteration, which reads afresh.
      t.spin = ChoiceThread::Spin::Iterating;
      t.spin_changed = false;
      t.spin_locked = false;
      t.spin_reads.clear();
      t.spin_sizes.clear();
    } else {
      t.spin_changed = true;
    }
  }
}

void ChoiceDriver::spin_begin(bool user, const plat::Site& site) {
  ChoiceThread& t = cur();
  if (t.spin == ChoiceThread::Spin::Held) return;  // the next iteration waits to be released
  if (t.spin == ChoiceThread::Spin::None) spinning_++;
  if (t.spin_g != plat::getg() || t.spin_site.line() != site.line() || t.spin_site.file_name() != site.file_name()) {
    t.spin_held_before = false;  // another loop: its rounds count afresh
    t.spin_fruitless = 0;
  }
  t.spin = ChoiceThread::Spin::Iterating;
  t.spin_user = user;
  t.spin_site = site;
  t.spin_g = plat::getg();
  t.spin_changed = false;
  t.spin_locked = false;
  t.spin_reads.clear();
  t.spin_sizes.clear();
}

void ChoiceDriver::spin_again() {
  ChoiceThread& t = cur();
  if (t.spin != ChoiceThread::Spin::Iterating) return;
  // The same goroutine's loop, and nothing it read has changed: the next iteration would read the
  // same values and write nothing, as would every one after it until a cell it read is written.
  if (t.spin_changed || t.spin_g != plat::getg()) return;
  t.spin = ChoiceThread::Spin::Held;
  uint64_t sig = 0xcbf29ce484222325ULL;
  for (size_t k = 0; k < t.spin_reads.size(); k++) {
    sig = (sig ^ reinterpret_cast<uintptr_t>(t.spin_reads[k])) * 0x100000001b3ULL;
    sig = (sig ^ cell_value(t.spin_reads[k], t.spin_sizes[k])) * 0x100000001b3ULL;
  }
  // A round with a timer armed is never fruitless: the time that passes while it spins may run
  // the timer, which the scheduler does on the spinner's way back (a poll for a channel that a
  // sleeper fills after 3 s, at 1 P, was reported as spinning forever).
  const bool fruitless =
      t.spin_held_before && sig == t.spin_sig && !t.spin_others && !chooser_->timers_pending(t.process);
  t.spin_fruitless = fruitless ? t.spin_fruitless + 1 : 0;
  t.spin_sig = sig;
  t.spin_held_before = true;
  t.spin_others = false;
}

void ChoiceDriver::spin_end() {
  ChoiceThread& t = cur();
  if (t.spin == ChoiceThread::Spin::None) return;
  spinning_--;
  t.spin = ChoiceThread::Spin::None;
  t.spin_reads.clear();
  t.spin_sizes.clear();
  t.spin_held_before = false;
  t.spin_fruitless = 0;
}

void ChoiceDriver::take(ChoiceThread& n) {
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

// A timed wait's deadline is computed from the clock, and nanotime reads it: the read is a step of
// its own (a Clock step), so that it is ordered against the ends of other waits, which move the
// clock.
int64_t ChoiceDriver::wait_start() {
  Step s;
  s.kind = StepKind::Clock;
  s.clock = true;
  s.site = plat::current_site();
  choice_point(s);
  return now_;
}

void ChoiceDriver::block(Wait w, const void* on, int64_t deadline) {
  ChoiceThread& self = cur();
  if (w == Wait::Sleep || w == Wait::Syscall || w == Wait::Timer) self.wait_site = plat::current_site();
  self.state = State::Blocked;
  self.wait = w;
  self.wait_on = on;
  self.deadline = deadline;
  if (on != nullptr) add_waiter(self, on);
  switch_away();
}

void ChoiceDriver::enable(ChoiceThread& t, Step s) {
  drop_waiter(t);
  t.state = State::Running;
  t.wait = Wait::None;
  t.wait_on = nullptr;
  t.deadline = kNever;
  s.tid = t.id;
  s.process = t.process;
  s.g = t.ctx->g;
  t.step = s;
  t.step_locked = false;
}

void ChoiceDriver::access(const plat::Access& a) {
  Step s;
  s.kind = StepKind::Access;
  s.op = a.op;
  s.write = !plat::is_load(a.op);
  s.size = a.size;
  s.obj = a.addr;
  s.value = a.value;
  s.expected = a.expected;
  s.site = a.site;
  // A load of a cell that has no holders word (LockGuarded's racy read): its writes are made under
  // a lock and are no steps of their own.
  choice_point(s, a.holders == nullptr && plat::is_load(a.op));
}

void ChoiceDriver::lock(plat::Mutex& l) {
  const Step s = key_step(StepKind::Lock, l.key, true, plat::current_site());
  choice_point(s);
  while (l.key.load(std::memory_order_relaxed) != 0) {
    cur().wait_site = s.site;
    block(Wait::Lock, &l, kNever);  // resumes as another attempt, after an unlock
  }
  l.key.store(1, std::memory_order_relaxed);
}

void ChoiceDriver::unlock(plat::Mutex& l) {
  choice_point(key_step(StepKind::Unlock, l.key, true, plat::current_site()));
  l.key.store(0, std::memory_order_relaxed);
  // Every waiter tries again; the chooser decides who gets there first.
  for (uint32_t tid : waiting_on(&l, Wait::Lock)) {
    ChoiceThread& t = thread(tid);
    enable(t, key_step(StepKind::Lock, l.key, true, t.wait_site));
  }
}

void ChoiceDriver::notesleep(plat::Note& n) {
  const Step s = key_step(StepKind::NoteSleep, n.key, false, plat::current_site());
  choice_point(s);
  while (n.key.load(std::memory_order_acquire) == 0) {
    cur().wait_site = s.site;
    block(Wait::Note, &n, kNever);
  }
}

bool ChoiceDriver::notetsleep(plat::Note& n, int64_t ns) {
  if (ns < 0) {
    notesleep(n);
    return true;
  }
  Step s = key_step(StepKind::NoteSleep, n.key, false, plat::current_site());
  s.clock = true;  // the deadline below is read from the clock at this step
  choice_point(s);
  if (n.key.load(std::memory_order_acquire) != 0) return true;
  cur().wait_site = s.site;
  block(Wait::Note, &n, now_ + clamp_step(ns));
  return n.key.load(std::memory_order_acquire) != 0;
}

// The key's store was a step of its own (plat::notewakeup offers it first); this is the futex
// wake that follows, which enables the sleepers.
void ChoiceDriver::notewakeup(plat::Note& n) {
  for (uint32_t tid : waiting_on(&n, Wait::Note)) {
    ChoiceThread& t = thread(tid);
    enable(t, key_step(StepKind::NoteSleep, n.key, false, t.wait_site));
  }
}

// The threads waiting on `on` for `w`, in thread order (waiters_ is in no useful order).
std::vector<uint32_t> ChoiceDriver::waiting_on(const void* on, Wait w) const {
  std::vector<uint32_t> out;
  for (const Waiter& x : waiters_) {
    if (x.on == on && threads_[x.tid]->wait == w) out.push_back(x.tid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int64_t ChoiceDriver::compute(int64_t work, double /*memory_share*/) {
  if (work <= 0) return 0;
  const int64_t start = wait_start();
  ChoiceThread& self = cur();
  self.computing = true;
  self.compute_end = start + clamp_step(work);
  block(Wait::Timer, nullptr, self.compute_end);
  ChoiceThread& me = cur();
  me.computing = false;
  const int64_t left = me.compute_end - me.t;
  if (me.pending != 0) deliver_signals();
  return std::max<int64_t>(0, left);
}

void ChoiceDriver::tgkill(uint64_t tid, int sig) {
  require_signal(tid, sig);
  Step s;
  s.kind = StepKind::Signal;
  s.target = static_cast<uint32_t>(tid);
  s.site = plat::current_site();
  choice_point(s);
  ChoiceThread& target = thread(tid);
  if (target.state == State::Exited) return;
  target.sig_at[static_cast<size_t>(sig)] = now_;
  target.pending |= uint64_t{1} << sig;
}

void ChoiceDriver::exit_thread() {
  ChoiceThread& t = cur();
  t.state = State::Exited;
  if (ChoiceThread* n = choose()) {
    switch_thread(*n);
  } else {
    to_main();
  }
  __builtin_unreachable();  // an exited thread is never resumed
}

void ChoiceDriver::block_for(int64_t ns) { block(Wait::Syscall, nullptr, wait_start() + clamp_step(ns)); }

void ChoiceDriver::kernel_work(int64_t ns) { block(Wait::Syscall, nullptr, wait_start() + clamp_step(ns)); }

void ChoiceDriver::timer_sleep(int64_t ns) { block(Wait::Syscall, nullptr, wait_start() + clamp_step(ns)); }

void ChoiceDriver::usleep(uint32_t usec) { block(Wait::Sleep, nullptr, wait_start() + int64_t{usec} * 1000); }

void ChoiceDriver::osyield() {
  Step s;
  s.kind = StepKind::Yield;
  s.site = plat::current_site();
  choice_point(s);
}

// The clock read is a step: its order against the ends of timed waits, which move the clock,
// decides what it reads. It counts from kNanotimeEpoch, as the timed driver's does.
int64_t ChoiceDriver::nanotime() { return kNanotimeEpoch + wait_start(); }

// A procyield (the PAUSE of a spin-wait) is a Yield step: the default order then lets the other
// threads run, as other cores would while this one spins. Other costs are no steps.
void ChoiceDriver::charge(plat::Cost c) {
  if (c == plat::Cost::ProcYield) {
    Step s;
    s.kind = StepKind::Yield;
    s.site = plat::current_site();
    choice_point(s);
  }
}

std::string ChoiceDriver::blocked_threads() const {
  std::string out;
  for (const auto& tp : threads_) {
    const auto& t = static_cast<const ChoiceThread&>(*tp);
    if (t.state == State::Exited || dead(t)) continue;
    if (!out.empty()) out += ", ";
    out += t.name;
    if (t.state == State::Blocked) {
      out += t.wait == Wait::Lock ? " (lock" : t.wait == Wait::Note ? " (note" : " (timed wait";
      if (t.wait_site.line() != 0)
        out += std::string(" at ") + t.wait_site.file_name() + ":" + std::to_string(t.wait_site.line());
      out += ")";
    } else if (t.spin == ChoiceThread::Spin::Held) {
      out += std::string(t.spin_user ? " (busy-poll" : " (spin-wait") + " at " + base_name(t.spin_site.file_name()) + ":" +
             std::to_string(t.spin_site.line()) + ", polling state that no other thread changes)";
    }
  }
  return out;
}

DriverBase::Stop ChoiceDriver::stuck() const {
  if (spun_out_) return Stop::Livelock;
  for (const auto& tp : threads_) {
    const auto& t = static_cast<const ChoiceThread&>(*tp);
    if (t.state == State::Running && t.spin == ChoiceThread::Spin::Held && !dead(t)) return Stop::Livelock;
  }
  return Stop::Deadlock;
}

std::string ChoiceDriver::stuck_message() const {
  if (stuck() == Stop::Deadlock) return "every thread is blocked forever: " + blocked_threads();
  if (spun_out_) {
    for (const auto& tp : threads_) {
      const auto& t = static_cast<const ChoiceThread&>(*tp);
      if (t.spin != ChoiceThread::Spin::Held || t.spin_fruitless < kMaxFruitlessSpins) continue;
      return t.name + std::string(t.spin_user ? " busy-polls" : " spin-waits") + " at " + base_name(t.spin_site.file_name()) +
             ":" + std::to_string(t.spin_site.line()) + " and would spin there forever: " +
             std::to_string(kMaxFruitlessSpins) +
             " times in a row its poll found the same values again, and no other goroutine took a step in between "
             "(only the scheduler ran, preempting it and running it again)";
    }
  }
  return "every thread is blocked forever but spin-waits that nothing can end, so the program would spin there "
         "forever: " +
         blocked_threads();
}

}  // namespace gmp::engine
