#include "sim/engine/timed_driver.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "sim/engine/engine_thread.h"
#include "sim/platform/platform.h"
#include "sim/platform/throw.h"

namespace gmp::engine {

using engine_detail::clamp_step;
using engine_detail::kEndOfTime;
using engine_detail::kNever;

namespace {
constexpr uint64_t kProgressMask = (uint64_t{1} << 22) - 1;  // a progress report every 2^22 events
}  // namespace

// One PELT signal of a thread: an average of whether something (running, runnable) held, which
// decays toward 1 while it holds and toward 0 while it does not, with the kernel's half-life. It
// is stored as of `at` and worked out forward when read.
struct Pelt {
  double value;
  int64_t at;
  bool on;
  double now(int64_t t, int64_t halflife) const {
    const double d = t <= at ? 1.0 : std::exp2(-static_cast<double>(t - at) / static_cast<double>(std::max<int64_t>(halflife, 1)));
    return value * d + (on ? 1 - d : 0);
  }
  void set(bool to, int64_t t, int64_t halflife) {
    value = now(t, halflife);
    at = std::max(at, t);
    on = to;
  }
};

// A thread's state under virtual time, beside what both drivers keep.
struct TimedDriver::TimedThread final : DriverBase::Thread {
  uint64_t tie = 0;           // tie-break of its newest queue entry
  uint64_t wait_seq = 0;      // order of arrival among waiters

  int core = -1;
  int last_core = -1;         // the core it last ran on (affine placement's previous core)
  int queued_on = -1;         // the core whose run queue holds it (spread: 0), -1 if none
  int64_t slice_end = 0;
  int64_t compute_start = 0;
  // The compute's current stretch at one speed (re-planned when its core's speed changes): its
  // speed, from when, and when its work would be done at that speed.
  double rate = 1.0;
  int64_t rate_from = 0;
  int64_t planned_end = 0;
  double memory_share = 0;  // of the compute in progress

  bool lock_sleeping = false;  // waiting for a runtime lock asleep in the kernel, not spinning
  bool woken = false;          // became ready from a sleep and has not run since (the metrics)

  // Linux placement (affine; docs/placement.md). Virtual runtime, virtual deadline and lag in ns
  // (equal weights: virtual time is run time); delayed: blocked but still on queued_on's queue.
  int64_t vrt = 0, deadline = 0, vlag = 0;
  int64_t run_start = 0;       // when it last started running (vrt is as of then)
  int64_t exec_end = -1;       // when it last stopped running (task_hot), -1 never ran
  bool delayed = false;
  int recent_core = -1;        // p->recent_used_cpu
  Pelt load{1, 0, true};       // runnable average (PELT's load_avg, equal weights): on while runnable
  // Utilisation (PELT's util_avg: on while running) and UTIL_EST's estimate (its value at the
  // last sleeps, kept as a falling-slowly average); see core_util.
  Pelt util{0, 0, false};
  double util_est = 0;

  // CPU bandwidth (timed_driver.h): its process's group (-1: the root group), the start of the
  // stretch not yet charged to the group, when its core's runtime for the group runs out (or the
  // group's next quota change: kNever when neither), and the core whose throttled queue holds it.
  int32_t grp = -1;
  int64_t bw_from = 0;
  int64_t bw_until = kNever;
  bool throttled = false;
  int throttled_on = -1;
};

// A group's queue on one core: its cfs_rq's bandwidth fields.
struct TimedDriver::BwQueue {
  int64_t remaining = 0;          // runtime_remaining
  bool throttled = false;
  int64_t throttled_at = 0;       // throttled_clock
  std::vector<uint32_t> parked;   // its threads waiting for the unthrottle, in arrival order
};

// A group's cfs_bandwidth: the pool, the period timer, the slack timer and the queues.
struct TimedDriver::BwGroup {
  const CpuGroup* cfg = nullptr;
  size_t index = 0;
  int64_t quota = -1;             // in effect now; -1: no limit
  int64_t pool = 0;               // cfs_b->runtime
  int64_t next_refill = 0;        // the next period boundary
  size_t next_change = 0;         // cfg->changes not applied yet
  int64_t slack_at = -1;          // the slack timer, -1 when not armed
  bool active = false;            // had a runnable thread in the current period
  std::vector<BwQueue> q;         // per core
  std::vector<int> throttled;     // the cores whose queues are throttled, in throttle order
  std::vector<char> allowed;      // per core: in the cpuset
};

inline TimedDriver::TimedThread& TimedDriver::cur() { return *static_cast<TimedThread*>(curp_); }

inline TimedDriver::TimedThread& TimedDriver::thread(size_t id) { return static_cast<TimedThread&>(*threads_[id]); }

TimedDriver::TimedDriver(EngineConfig cfg) : DriverBase(std::move(cfg)), rng_(cfg_.seed) {
  if (cfg_.chooser != nullptr) throw std::invalid_argument("engine: the timed driver takes no chooser");
  core_thread_.assign(cfg_.cores.size(), -1);
  free_cores_ = static_cast<uint32_t>(cfg_.cores.size());
  runq_.resize(cfg_.costs.affine ? cfg_.cores.size() : 1);
  if (cfg_.costs.affine) {
    const Costs::Kernel& k = cfg_.costs.kernel;
    // A queued thread's balance timer re-arms every tick: a zero tick would never let time move.
    tick_ = std::max<int64_t>(k.tick, 1);
    // SCHED_TUNABLESCALING_LOG: the base slice times 1 + ilog2 of the (capped) CPU count.
    const auto n = static_cast<uint64_t>(std::clamp<int64_t>(static_cast<int64_t>(cfg_.cores.size()), 1,
                                                             std::max<int32_t>(k.slice_scaling_max_cpus, 1)));
    slice_ = std::max<int64_t>(k.base_slice * (1 + std::bit_width(n) - 1), 1);
    cs_.resize(cfg_.cores.size());
    for (CoreState& c : cs_) c.avg_idle = 2 * k.migration_cost;
  }
  for (const Core& c : cfg_.cores) slowest_speed_ = std::min(slowest_speed_, c.speed);
  speed_varies_ = cfg_.costs.memory_slowdown > 0;
  int32_t clusters = 0;
  for (const Core& c : cfg_.cores) {
    if (c.busy_speed && !c.busy_speed->empty()) speed_varies_ = true;
    clusters = std::max(clusters, c.cluster + 1);
  }
  cluster_busy_.assign(static_cast<size_t>(clusters), 0);
  // With both transfer costs 0 distance changes nothing: keep line_cost's early return.
  line_distance_ = cfg_.costs.cacheline_by_distance &&
                   (cfg_.costs.cacheline_transfer != 0 || cfg_.costs.cacheline_transfer_cluster != 0);
  lines_ = cfg_.costs.cacheline_transfer != 0 || line_distance_;
  set_horizon(horizon_);  // due_ from the time limit DriverBase set
  set_next_limits();
  if (cfg_.jitter != 0) rare_ |= kRareJitter;
  fast_access = &TimedDriver::fast_access_of;
  // CPU bandwidth: a group per EngineConfig::groups, its pool full at time 0 (tg_set_cfs_bandwidth
  // refills it from 0) with the changes due at 0 applied.
  stats_.groups.assign(cfg_.groups.size(), GroupStats{});
  for (size_t i = 0; i < cfg_.groups.size(); i++) {
    const CpuGroup& c = cfg_.groups[i];
    if (c.period <= 0) throw std::invalid_argument("engine: a group's period must be > 0");
    BwGroup g;
    g.cfg = &c;
    g.index = i;
    g.quota = c.quota;
    while (g.next_change < c.changes.size() && c.changes[g.next_change].at <= 0) g.quota = c.changes[g.next_change++].quota;
    g.pool = std::max<int64_t>(g.quota, 0);
    g.next_refill = c.period;
    g.q.resize(cfg_.cores.size());
    g.allowed.assign(cfg_.cores.size(), c.cpuset.empty() ? 1 : 0);
    for (int32_t core : c.cpuset) {
      if (core < 0 || static_cast<size_t>(core) >= cfg_.cores.size()) {
        throw std::invalid_argument("engine: a group's cpuset names core " + std::to_string(core) + ", not on the machine");
      }
      g.allowed[static_cast<size_t>(core)] = 1;
    }
    bool limits = c.quota >= 0;
    for (const CpuGroup::Change& ch : c.changes) limits |= ch.quota >= 0;
    if (limits) rare_ |= kRareBw;
    constrained_ |= limits || !c.cpuset.empty();
    bw_.push_back(std::move(g));
  }
  for (const EngineProcess& p : cfg_.processes) {
    if (p.group >= static_cast<int32_t>(cfg_.groups.size())) throw std::invalid_argument("engine: a process names a missing group");
  }
}

TimedDriver::~TimedDriver() = default;

uint64_t TimedDriver::newosproc(std::string name, plat::Fiber::Entry entry, void* arg, rt::g* g0, bool /*daemon*/,
                                 uint32_t process) {
  const int64_t at = running_ ? cur().t : 0;
  auto& t = static_cast<TimedThread&>(add_thread(std::make_unique<TimedThread>(), std::move(name), entry, arg, g0, process));
  qpos_.push_back(-1);
  if (process < cfg_.processes.size()) t.grp = std::max<int32_t>(cfg_.processes[process].group, -1);
  // The creator pays thread_create (through spend, by whoever calls this); the thread is ready now.
  make_ready(t, at);
  return t.id;
}

void TimedDriver::exit_thread() {
  TimedThread& t = cur();
  t.state = State::Exited;
  unqueue(t);
  release_core(t, t.t);
  reschedule();
  __builtin_unreachable();  // an exited thread is never resumed
}

void TimedDriver::block_for(int64_t ns) { block(Wait::Timer, nullptr, cur().t + clamp_step(ns)); }

void TimedDriver::kernel_work(int64_t ns) {
  block(Wait::Timer, nullptr, cur().t + clamp_step(ns), /*keep_core=*/true);
}

void TimedDriver::timer_sleep(int64_t ns) {
  block(Wait::Timer, nullptr, cur().t + clamp_step(ns) + cfg_.costs.usleep_min_latency + os_jitter());
}

int TimedDriver::current_core() const {
  return running_ && cur_ < threads_.size() ? static_cast<const TimedThread&>(*threads_[cur_]).core : -1;
}

DriverBase::Thread* TimedDriver::next_to_run() { return next_running(); }

void TimedDriver::push(TimedThread& t) { enqueue(t, t.t); }

// Every queue entry comes through here, which keeps horizon_ a lower bound of the queue's top.
void TimedDriver::enqueue(TimedThread& t, int64_t at) {
  t.tie = rng_.next();
  const QItem it{at, t.tie, t.id};
  set_horizon(std::min(horizon_, at));
  const int32_t pos = qpos_[t.id];
  if (pos < 0) {
    heap_.push_back(it);
    q_sift_up(heap_.size() - 1, it);
  } else if (pos > 0 && earlier(it, heap_[static_cast<size_t>(pos - 1) / 2])) {
    q_sift_up(static_cast<size_t>(pos), it);
  } else {
    q_sift_down(static_cast<size_t>(pos), it);
  }
}

// After a pop: the thread that runs next would otherwise find horizon_ at the popped entry's time
// and look at the queue on its first operation for nothing.
void TimedDriver::exact_horizon() { set_horizon(heap_.empty() ? INT64_MAX : heap_.front().time); }

void TimedDriver::unqueue(TimedThread& t) {
  if (qpos_[t.id] >= 0) q_remove_at(static_cast<size_t>(qpos_[t.id]));
}

// Moves `it` up from hole i to its place.
void TimedDriver::q_sift_up(size_t i, QItem it) {
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!earlier(it, heap_[parent])) break;
    q_place(i, heap_[parent]);
    i = parent;
  }
  q_place(i, it);
}

// Moves `it` down from hole i to its place. Inlined: from 2 Ps on, yield_if_late runs it at nearly
// every thread switch, and a call passes the 24-byte item through memory.
[[gnu::always_inline]] inline void TimedDriver::q_sift_down(size_t i, QItem it) {
  QItem* const h = heap_.data();
  int32_t* const pos = qpos_.data();
  const size_t n = heap_.size();
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && earlier(h[c + 1], h[c])) c++;
    if (!earlier(h[c], it)) break;
    h[i] = h[c];
    pos[h[i].tid] = static_cast<int32_t>(i);
    i = c;
  }
  h[i] = it;
  pos[it.tid] = static_cast<int32_t>(i);
}

void TimedDriver::q_remove_at(size_t i) {
  qpos_[heap_[i].tid] = -1;
  const QItem last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  if (i > 0 && earlier(last, heap_[(i - 1) / 2])) {
    q_sift_up(i, last);
  } else {
    q_sift_down(i, last);
  }
}

TimedDriver::QItem TimedDriver::q_pop() {
  const QItem top = heap_.front();
  q_remove_at(0);
  return top;
}

// The current thread has been queued or blocked: run whoever is earliest. Timers that come due
// first are fired on the way. With nothing queued, control goes back to run().
void TimedDriver::reschedule() {
  if (TimedThread* n = next_running()) {
    switch_thread(*n);
  } else {
    to_main();
  }
}

// Pops the earliest running thread, firing the timers of blocked threads that come due first
// (which may make them running); nullptr when nothing is queued.
TimedDriver::TimedThread* TimedDriver::next_running() {
  while (!heap_.empty()) {
    const QItem it = q_pop();
    TimedThread& n = thread(it.tid);
    if (n.state == State::Running) {
      exact_horizon();
      return &n;
    }
    if (n.state == State::Blocked) {
      wake(n, it.time);  // its timeout
    } else if (n.state == State::Ready) {
      ready_timer(n, it.time);
    }
  }
  return nullptr;
}

// yield_if_late's body, inlined into advance_due: from 2 Ps on most accesses past the horizon
// come through there, and the call cost the Gosched pair at 4 Ps 2% of its instructions (303.1M
// against 297.2M, callgrind, 10k calls).
[[gnu::always_inline]] inline void TimedDriver::yield_if_late_inline() {
  TimedThread& self = cur();
  if (heap_.empty()) {
    set_horizon(INT64_MAX);
    return;
  }
  const QItem top = heap_.front();
  set_horizon(top.time);
  if (top.time > self.t || (top.time == self.t && top.tie > self.tie)) return;
  if (qpos_[self.id] >= 0) {  // not expected: a running thread has no entry of its own
    push(self);
    reschedule();
    return;
  }
  // push(self) then next_running's first pop, as one heap operation. Self's new entry draws a
  // new tie: at an equal time it may now come first, and then the pop returns self itself.
  self.tie = rng_.next();
  const QItem mine{self.t, self.tie, self.id};
  if (earlier(mine, top)) return;
  // Otherwise self's entry takes the top's place, and the top is what the pop returns.
  qpos_[top.tid] = -1;
  q_sift_down(0, mine);
  exact_horizon();
  TimedThread& n = thread(top.tid);
  if (n.state == State::Running) {
    switch_thread(n);
    return;
  }
  if (n.state == State::Blocked) {
    wake(n, top.time);  // its timeout
  } else if (n.state == State::Ready) {
    ready_timer(n, top.time);
  }
  reschedule();
}

void TimedDriver::yield_if_late() { yield_if_late_inline(); }

// enforce_limits must run at the event after the limit and at each progress report.
void TimedDriver::set_next_limits() {
  next_limits_ = std::min(event_limit_ == UINT64_MAX ? UINT64_MAX : event_limit_ + 1, (stats_.events | kProgressMask) + 1);
}

void TimedDriver::enforce_limits() {
  set_next_limits();
  if ((stats_.events & kProgressMask) == 0 && cfg_.progress) cfg_.progress(cur().t, stats_.events);
  if (stats_.events > event_limit_) {
    stop_run(Stop::EventLimit, 2,
             "stopped after " + std::to_string(cfg_.event_limit) + " scheduler events (--max-events)");
  }
  if (cur().t > time_limit_) {
    stop_run(Stop::TimeLimit, 2,
             "stopped at virtual time " + std::to_string(time_limit_) +
                 (time_limit_ == cfg_.time_limit ? " ns (--max-time)" : " ns (the end of virtual time)"));
  }
}

void TimedDriver::preempt_if_slice_over() {
  TimedThread& self = cur();
  if (self.t < self.slice_end || self.in_handler || !others_ready(self.core)) return;
  // Time slice over and someone waits for a core: go to the back of the run queue (affine: the
  // EEVDF pick decides, and may keep this thread).
  yield_core();
}

// The current thread gives its core to the head of the OS run queue (which must not be empty)
// and waits at the queue's tail.
void TimedDriver::yield_core() {
  if (cfg_.costs.affine) {
    yield_core_linux(false);
    return;
  }
  stats_.os_preemptions++;
  TimedThread& self = cur();
  const int core = self.core;
  std::deque<uint32_t>& q = runq_of(core);
  const auto pick = static_cast<size_t>(constrained_ ? spread_pick(core) : 0);
  const uint32_t next = q[pick];
  q.erase(q.begin() + static_cast<std::ptrdiff_t>(pick));
  if (self.grp >= 0) bw_leave(self, core, self.t, /*dequeued=*/false);  // preempted: still queued
  set_core(core, -1, self.t);
  self.core = -1;
  self.state = State::Ready;
  waiting_--;
  TimedThread& n = thread(next);
  n.queued_on = -1;
  wait_for_core(self, core, /*front=*/false);
  give_core(n, core, self.t);
  reschedule();
}

// The hot path: every platform operation comes through here. Each check is one comparison in the
// common case; the work is in the functions it calls when one fires.
[[gnu::always_inline]] inline void TimedDriver::advance(int64_t ns) {
  TimedThread& self = cur();
  if ((rare_ | self.pending) != 0) {
    advance_rare(ns);
    return;
  }
  // t in a local: the counter below is a uint64_t, which may alias the clock as far as the
  // compiler knows, and reloading the clock after each store costs a cycle-eating round trip.
  const int64_t t = self.t + ns;
  self.t = t;
  // due_ is the lesser of horizon_ and the time limit's first late time: one comparison for both.
  if (++stats_.events >= next_limits_ || t >= due_) [[unlikely]] advance_due(t);
}

// advance's checks that fired, out of line so that the hot path saves no registers: the limits,
// then whether someone is due no later than this thread. Signals can only have come while others
// ran, so they are looked for only after a yield.
[[gnu::noinline]] void TimedDriver::advance_due(int64_t t) {
  if (stats_.events >= next_limits_ || t > time_limit_) enforce_limits();
  if (t >= horizon_) {
    yield_if_late_inline();
    if (cur().pending != 0) deliver_signals();
  }
}

// advance when a stress jitter is set, threads wait for cores or this thread has a signal pending.
void TimedDriver::advance_rare(int64_t ns) {
  TimedThread& self = cur();
  if (cfg_.jitter != 0) ns += static_cast<int64_t>(rng_.next() % static_cast<uint64_t>(cfg_.jitter));
  self.t += ns;
  if (++stats_.events >= next_limits_ || self.t > time_limit_) enforce_limits();
  if (self.pending != 0) deliver_signals();
  if (waiting_ != 0) preempt_if_slice_over();
  // Threads due earlier run first: a throttle (and its trace event) happens at this thread's
  // clock, so nothing earlier may still be to come.
  if (self.t >= horizon_) yield_if_late();
  if ((rare_ & kRareBw) != 0) bw_check();
  if (cur().pending != 0) deliver_signals();
}

bool TimedDriver::make_ready(TimedThread& t, int64_t at, int waker) {
  if (t.grp >= 0) {  // the periods that ended while it slept count without it
    BwGroup& g = bw_[static_cast<size_t>(t.grp)];
    bw_sync(g, std::max(t.t, at));
    g.active = true;
  }
  t.state = State::Ready;
  t.t = std::max(t.t, at);
  if (cfg_.costs.affine) return place_linux(t, waker);
  const int best = constrained_ ? free_core_for(t) : fastest_free_core();
  if (best >= 0) {
    stats_.placed_on_other++;
    give_core(t, best, t.t);
    return false;
  }
  wait_for_core(t, 0, /*front=*/false);
  // Someone waits for a core: cut long computes at the end of their slices.
  if (computing_ != 0) for (auto& p : threads_) {
    auto& r = static_cast<TimedThread&>(*p);
    if (r.state == State::Running && r.computing && r.slice_end < r.compute_end) {
      interrupt(r, std::max(r.slice_end, t.t));
    }
  }
  return false;
}

int TimedDriver::fastest_free_core() const {
  int best = -1;
  for (size_t c = 0; c < core_thread_.size(); c++) {
    if (core_thread_[c] != -1) continue;
    if (best < 0 || cfg_.cores[c].speed > cfg_.cores[static_cast<size_t>(best)].speed) best = static_cast<int>(c);
  }
  return best;
}

void TimedDriver::wait_for_core(TimedThread& t, int core, bool front) {
  if (cfg_.costs.affine) {
    rq_add_ready(t, core);
    return;
  }
  std::deque<uint32_t>& q = runq_of(core);
  if (front) {
    q.push_front(t.id);
  } else {
    q.push_back(t.id);
  }
  t.queued_on = 0;
  waiting_++;
  rare_ |= kRareWaiting;
  unqueue(t);
  idle_wait_update(t.t);
}

void TimedDriver::give_core(TimedThread& t, int core, int64_t at) {
  set_core(core, static_cast<int32_t>(t.id), at);
  if (t.woken) stats_.wakeups_ran++;
  if (t.woken && core == t.last_core) stats_.wake_on_prev++;
  if (t.last_core >= 0 && core != t.last_core) stats_.migrations++;
  t.woken = false;
  t.core = core;
  t.last_core = core;
  if (waiting_ == 0) rare_ &= ~kRareWaiting;
  t.state = State::Running;
  t.t = std::max(t.t, at) + cfg_.costs.context_switch;
  if (t.grp >= 0) bw_enter(t, core, t.t);
  if (cfg_.costs.affine) {
    cs_[static_cast<size_t>(core)].idle_stamp = -1;
    t.run_start = t.t;
    if (t.vrt >= t.deadline) t.deadline = t.vrt + slice_;  // update_deadline
    // The deadline is checked at the tick: the slice ends at the first tick past it.
    t.slice_end = tick_ceil(t.t + (t.deadline - t.vrt));
  } else {
    t.slice_end = t.t + cfg_.costs.os_quantum;
  }
  push(t);
  idle_wait_update(at);
  if (speed_varies_) replan(at);
}

void TimedDriver::release_core(TimedThread& t, int64_t at) {
  if (t.core < 0) return;
  const int core = t.core;
  if (t.grp >= 0) bw_leave(t, core, at);
  set_core(core, -1, at);
  t.core = -1;
  t.exec_end = at;
  if (serve_queue(core, at)) return;  // give_core re-plans
  if (cfg_.costs.affine) {
    cs_[static_cast<size_t>(core)].idle_stamp = at;
    if (newidle_balance(core, at)) return;  // give_core re-plans
  }
  move_to_faster_core(core, at);
  idle_wait_update(at);
  if (speed_varies_) replan(at);
}

// A free core takes the head of its run queue, if any (affine: the EEVDF pick).
bool TimedDriver::serve_queue(int core, int64_t at) {
  if (cfg_.costs.affine) {
    TimedThread* n = pick_eevdf(core, nullptr);
    if (n == nullptr) return false;
    rq_remove(*n);
    give_core(*n, core, at);
    return true;
  }
  std::deque<uint32_t>& q = runq_of(core);
  if (q.empty()) return false;
  const int pick = constrained_ ? spread_pick(core) : 0;
  if (pick < 0) return false;
  TimedThread& n = thread(q[static_cast<size_t>(pick)]);
  q.erase(q.begin() + pick);
  waiting_--;
  n.queued_on = -1;
  give_core(n, core, at);
  return true;
}

// A core that frees up with nobody waiting takes over the computation running on the slowest
// core that is slower than it, as the OS moves a busy thread off an efficiency core when a
// performance core goes idle (Linux's misfit-task migration, macOS's preference for performance
// cores): cut there, the computation goes on at the new core's speed. The move itself costs
// nothing (a context switch's microseconds, against computations long enough to be worth moving).
void TimedDriver::move_to_faster_core(int core, int64_t at) {
  const double speed = cfg_.cores[static_cast<size_t>(core)].speed;
  if (speed <= slowest_speed_) return;  // no core is slower (every core, on a uniform machine)
  TimedThread* slowest = nullptr;
  for (size_t c = 0; c < core_thread_.size(); c++) {
    const int32_t id = core_thread_[c];
    if (id < 0 || cfg_.cores[c].speed >= speed) continue;
    TimedThread& r = thread(static_cast<size_t>(id));
    if (!r.computing || at < r.compute_start || at >= r.compute_end) continue;
    if (constrained_ && !allowed(r, core)) continue;
    if (slowest == nullptr || cfg_.cores[c].speed < cfg_.cores[static_cast<size_t>(slowest->core)].speed) slowest = &r;
  }
  if (slowest == nullptr) return;
  const int left = slowest->core;
  if (slowest->grp >= 0) {
    bw_leave(*slowest, left, at);
    bw_enter(*slowest, core, at);
  }
  set_core(left, -1, at);
  set_core(core, static_cast<int32_t>(slowest->id), at);
  stats_.migrations++;
  slowest->core = core;
  slowest->last_core = core;
  interrupt(*slowest, at);
  serve_queue(left, at);  // affine: the slower core's own queue may hold threads
}

void TimedDriver::block(Wait w, const void* on, int64_t deadline, bool keep_core) {
  TimedThread& self = cur();
  self.state = State::Blocked;
  self.wait = w;
  self.wait_on = on;
  self.wait_seq = ++wait_seq_;
  if (on != nullptr) add_waiter(self, on);
  if (!keep_core) {
    if (cfg_.costs.affine) dequeue_sleep(self, self.t);
    release_core(self, self.t);
  }
  if (deadline != kNever) {
    enqueue(self, deadline);
  } else {
    unqueue(self);
  }
  reschedule();
}

bool TimedDriver::wake(TimedThread& t, int64_t at, int waker) {
  if (t.state != State::Blocked) return false;
  drop_waiter(t);
  t.wait = Wait::None;
  t.wait_on = nullptr;
  if (t.core >= 0) {  // it waited busy on its core (a spinning lock waiter): no switch back
    t.state = State::Running;
    t.t = std::max(t.t, at);
    push(t);
    return false;
  }
  stats_.wakeups++;
  t.woken = true;
  return make_ready(t, at, waker);
}

void TimedDriver::interrupt(TimedThread& t, int64_t at) {
  if (!t.computing || at >= t.compute_end || at < t.compute_start) return;
  t.t = at;
  t.compute_end = at;
  push(t);
}

int64_t TimedDriver::compute(int64_t work, double memory_share) {
  if (work <= 0) return 0;
  // Affine: a runner preempted while it kept its core blocked (a spinning lock waiter) may come
  // back with its slice already over; it yields before computing, not after.
  if (cfg_.costs.affine && waiting_ != 0) preempt_if_slice_over();
  if ((rare_ & kRareBw) != 0) bw_check();  // its runtime spent: throttled before it starts
  TimedThread& self = cur();
  self.memory_share = memory_share;
  const double speed = speed_varies_ ? speed_now(self) : cfg_.cores[static_cast<size_t>(self.core)].speed;
  const int64_t planned_end = self.t + time_for(static_cast<double>(work), speed);
  self.computing = true;
  computing_++;
  self.compute_start = self.t;
  self.compute_end = planned_end;
  self.rate = speed;
  self.rate_from = self.t;
  self.planned_end = planned_end;
  // Cut at the slice's end if someone is already waiting for a core; at the first pending
  // signal's delivery time.
  if (waiting_ != 0 && others_ready(self.core) && self.slice_end > self.t && self.slice_end < self.compute_end) {
    self.compute_end = self.slice_end;
  }
  // Cut when its core's runtime for its group runs out (bw_check left it in the future).
  if (self.bw_until < self.compute_end) self.compute_end = self.bw_until;
  for (uint64_t m = self.pending; m != 0; m &= m - 1) {
    const auto sig = static_cast<size_t>(std::countr_zero(m));
    self.compute_end = std::min(self.compute_end, std::max(self.t, self.sig_at[sig]));
  }
  self.t = self.compute_end;
  stats_.events++;
  yield_if_late();  // others run until this compute's end, or until someone cuts it
  TimedThread& me = cur();
  me.computing = false;
  computing_--;
  // What is left at the speed of the compute's last stretch (its first, unless re-planned).
  const int64_t left_ns = me.planned_end - me.t;
  const double rate = me.rate;
  enforce_limits();
  if (me.pending != 0) deliver_signals();
  // Cut by its runtime: throttled here, at that moment. A compute that ends exactly as the runtime
  // does returns first (the next operation finds the runtime spent).
  if (left_ns > 0 && (rare_ & kRareBw) != 0) bw_check();
  preempt_if_slice_over();
  if (left_ns <= 0) return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(left_ns) * rate));
}

// ns of virtual time for `work` at `speed`, rounded up; compared as a double, since a quotient
// beyond int64 must not be converted.
int64_t TimedDriver::time_for(double work, double speed) {
  const double exact = std::ceil(work / speed);
  return exact < static_cast<double>(kEndOfTime) ? static_cast<int64_t>(exact) : kEndOfTime;
}

// The speed of t's core now: the group's speed, times its curve's factor at the number of busy
// cores of its cluster, divided by the memory term (1 + share x memory_slowdown x other busy cores).
double TimedDriver::speed_now(const TimedThread& t) const {
  const Core& c = cfg_.cores[static_cast<size_t>(t.core)];
  double speed = c.speed;
  if (c.busy_speed && !c.busy_speed->empty()) {
    const std::vector<double>& curve = *c.busy_speed;
    const uint32_t busy = cluster_busy_[static_cast<size_t>(c.cluster)];
    speed *= curve[std::min<size_t>(std::max<uint32_t>(busy, 1), curve.size()) - 1];
  }
  if (t.memory_share > 0 && busy_total_ > 1) {
    speed /= 1 + t.memory_share * cfg_.costs.memory_slowdown * static_cast<double>(busy_total_ - 1);
  }
  return speed;
}

// A core has taken a thread (+1) or lost one (-1): the busy counts the speed curves read.
void TimedDriver::count_busy(int core, int delta) {
  const auto cl = static_cast<size_t>(cfg_.cores[static_cast<size_t>(core)].cluster);
  cluster_busy_[cl] = static_cast<uint32_t>(static_cast<int64_t>(cluster_busy_[cl]) + delta);
  busy_total_ = static_cast<uint32_t>(static_cast<int64_t>(busy_total_) + delta);
}

// The busy counts changed at `at`: every compute in flight whose core's speed is now different
// goes on from `at` at the new speed. The work done so far is what its stretch's planned end
// leaves out, in ns at the old speed, so a compute never re-planned ends exactly as planned. A
// compute cut short (a slice end, a signal) keeps its cut unless its work now ends sooner. Cores
// are visited in index order, and each re-planned thread is queued again with a tie from the seed:
// the same run re-plans the same way. Only machines with a curve or a memory_slowdown get here.
void TimedDriver::replan(int64_t at) {
  if (computing_ == 0) return;
  for (size_t c = 0; c < core_thread_.size(); c++) {
    const int32_t id = core_thread_[c];
    if (id < 0) continue;
    TimedThread& r = thread(static_cast<size_t>(id));
    if (!r.computing || r.state != State::Running || at >= r.compute_end) continue;
    const double speed = speed_now(r);
    if (speed == r.rate) continue;
    const int64_t from = std::max(at, r.rate_from);  // a stretch never starts before the last one
    const double left = static_cast<double>(r.planned_end - from) * r.rate;
    const bool cut = r.compute_end < r.planned_end;
    r.rate = speed;
    r.rate_from = from;
    r.planned_end = from + time_for(left, speed);
    r.compute_end = cut ? std::min(r.compute_end, r.planned_end) : r.planned_end;
    r.t = r.compute_end;
    stats_.replans++;
    push(r);
  }
}

// Coherence: an access to a cell that another thread wrote since this thread last saw it pays a
// cache-line transfer. Each cell stands for its own line (its Access::holders word records which
// threads hold a copy): objects sharing a line by accident of layout do not interfere, which keeps
// runs independent of where the allocator put things.
void TimedDriver::access(const plat::Access& a) { fast_access_of(this, a.op, a.holders); }

void TimedDriver::fast_access_of(plat::Driver* self, plat::Op op, uint64_t* holders) {
  auto& e = *static_cast<TimedDriver*>(self);
  int64_t cost = e.cfg_.costs.op[static_cast<size_t>(op)];
  if (holders != nullptr) cost += e.line_cost(*holders, !plat::is_load(op));
  e.advance(cost);
}

// What an access costs beyond its operation: cacheline_transfer if another thread holds the line
// this one needs (for a write, any other holder; for a read, a writer since this thread's copy);
// by distance to the nearest other holder where the machine has clusters (timed_driver.h, Coherence).
[[gnu::always_inline]] inline int64_t TimedDriver::line_cost(uint64_t& holders, bool write) {
  if (!lines_) return 0;
  const uint64_t me = cur_bit_;
  const uint64_t others = holders & ~me;
  bool transfer = false;
  if (write) {
    transfer = holders != 0 && holders != me;
    holders = me;
  } else if ((holders & me) == 0) {
    transfer = holders != 0;
    holders |= me;
  }
  if (!transfer) return 0;
  if (line_distance_) return line_cost_by_distance(others);
  stats_.line_transfers++;
  return cfg_.costs.cacheline_transfer;
}

// The transfer from the nearest of `others` (holder bits, never this thread's): each bit's thread
// (the one whose id is the bit) on the core it last ran on. A line from this thread's own core
// moves between no caches: it costs nothing and is not counted as a transfer.
[[gnu::noinline]] int64_t TimedDriver::line_cost_by_distance(uint64_t others) {
  const int here = cur().last_core;  // the running thread's core
  if (here < 0) return cfg_.costs.cacheline_transfer;  // not on a core: cannot happen in timing mode
  const int32_t cluster = cfg_.cores[static_cast<size_t>(here)].cluster;
  int64_t cost = cfg_.costs.cacheline_transfer;
  for (uint64_t bits = others; bits != 0; bits &= bits - 1) {
    const auto id = static_cast<size_t>(std::countr_zero(bits));
    if (id >= threads_.size()) continue;  // no thread has this id (yet): nobody to stand for the bit
    const int there = thread(id).last_core;
    if (there < 0) continue;
    if (there == here) return 0;
    if (cfg_.cores[static_cast<size_t>(there)].cluster == cluster) {
      cost = std::min(cost, cfg_.costs.cacheline_transfer_cluster);
    }
  }
  stats_.line_transfers++;
  return cost;
}

// Runtime locks follow Go 1.27's lock_spinbit.go. The key keeps the real platform's three states:
// 0 free, 1 held, 2 held and perhaps waited for (Drepper's futex mutex), so an uncontended unlock,
// nearly every one, searches no waiters. A contended lock2 lets one waiter at a time spin (every
// waiter, for a prefer_low_latency lock such as sched.lock): for mutexActiveSpinCount procyields
// of mutexActiveSpinSize and one osyield, and it takes the lock if an unlock comes meanwhile
// (lock_contended_handoff after it). The other waiters, and a spinner whose budget runs out,
// sleep in the kernel. unlock2 wakes the most recent sleeper when nobody spins (always, for a
// prefer_low_latency lock), and one time in mutexTailWakePeriod the oldest in any case; the
// unlocker pays futex_wake and the sleeper runs futex_wake_latency later, then tries again. A
// spinner keeps its core busy; a sleeper gives it up.
void TimedDriver::lock(plat::Mutex& l) {
  advance(cfg_.costs.lock_uncontended + line_cost(l.holders, /*write=*/true));
  if (l.key.load(std::memory_order_relaxed) == 0) {
    l.key.store(1, std::memory_order_relaxed);
    return;
  }
  bool spin = l.prefer_low_latency || l.spinners == 0;
  for (;;) {
    if (spin) {
      l.spinners++;
      const int64_t deadline = cur().t + spin_budget();
      do {
        l.key.store(2, std::memory_order_relaxed);
        block(Wait::Lock, &l, deadline, /*keep_core=*/true);
      } while (l.key.load(std::memory_order_relaxed) != 0 && cur().t < deadline);
      l.spinners--;
      if (l.key.load(std::memory_order_relaxed) == 0) break;
    }
    cur().lock_sleeping = true;
    l.key.store(2, std::memory_order_relaxed);
    block(Wait::Lock, &l, kNever);
    cur().lock_sleeping = false;
    advance(cfg_.costs.futex_sleep);
    if (l.key.load(std::memory_order_relaxed) == 0) break;
    spin = l.prefer_low_latency || l.spinners == 0;
  }
  l.key.store(2, std::memory_order_relaxed);
  l.holders = cur_bit_;  // the hand-off's cost includes the line's transfer
}

// lock_spinbit.go's spin before sleeping: mutexActiveSpinCount (4) procyields of
// mutexActiveSpinSize (30), then mutexPassiveSpinCount (1) osyield; none on a single core.
int64_t TimedDriver::spin_budget() const {
  constexpr int64_t mutexActiveSpinCount = 4, mutexActiveSpinSize = 30, mutexPassiveSpinCount = 1;  // lock_spinbit.go
  if (cfg_.cores.size() <= 1) return 0;
  return mutexActiveSpinCount * mutexActiveSpinSize * cfg_.costs.path[static_cast<size_t>(plat::Cost::ProcYield)] +
         mutexPassiveSpinCount * cfg_.costs.osyield;
}

// The release is a scheduling point of its own: the unlocker is charged the store first, and
// threads due before its end run before the lock is free, as they would against a real xchg.
void TimedDriver::unlock(plat::Mutex& l) {
  advance(cfg_.costs.op[static_cast<size_t>(plat::Op::Store)] + line_cost(l.holders, /*write=*/true));
  int64_t cost = 0;
  const uint32_t key = l.key.load(std::memory_order_relaxed);  // one OS thread: no bus-locked xchg
  l.key.store(0, std::memory_order_relaxed);
  if (key == 2) {
    TimedThread* spinner = nullptr;  // the longest-waiting spinner
    TimedThread* newest = nullptr;   // sleepers: Go keeps them on a stack
    TimedThread* oldest = nullptr;
    for (const Waiter& w : waiters_) {  // the choice depends on wait_seq only, not on this order
      if (w.on != &l) continue;
      TimedThread* t = &thread(w.tid);
      if (t->wait != Wait::Lock) continue;
      if (!t->lock_sleeping) {
        if (spinner == nullptr || t->wait_seq < spinner->wait_seq) spinner = t;
      } else {
        if (newest == nullptr || t->wait_seq > newest->wait_seq) newest = t;
        if (oldest == nullptr || t->wait_seq < oldest->wait_seq) oldest = t;
      }
    }
    if (spinner != nullptr) wake(*spinner, cur().t + cfg_.costs.lock_contended_handoff, cur().core);
    if (newest != nullptr) {
      constexpr uint64_t mutexTailWakePeriod = 16;  // lock_spinbit.go
      const bool anti_starve = rng_.next() % mutexTailWakePeriod == 0;
      if (anti_starve || spinner == nullptr || l.prefer_low_latency) {
        const bool ipi =
            wake(anti_starve ? *oldest : *newest, cur().t + cfg_.costs.futex_wake_latency + os_jitter(), cur().core);
        cost += cfg_.costs.futex_wake + (ipi ? cfg_.costs.os_wake_ipi : 0);
      }
    }
  }
  if (cost != 0) advance(cost);  // the futex wake, after the release
}

// A note sleep is Go's futexsleep loop: the key is checked first (an atomic load) and the futex is
// entered only if it is clear; the kernel checks the key again on entry, so a wake-up that lands
// before the sleeper blocks is never lost. The syscall's cost (futex_sleep) is paid when the
// sleeper comes back; the wake-up's latency is futex_wake_latency plus os_jitter().
void TimedDriver::notesleep(plat::Note& n) {
  advance(cfg_.costs.op[static_cast<size_t>(plat::Op::Load)]);
  if (n.key.load(std::memory_order_acquire) != 0) return;
  while (n.key.load(std::memory_order_acquire) == 0) block(Wait::Note, &n, kNever);
  advance(cfg_.costs.futex_sleep);
}

bool TimedDriver::notetsleep(plat::Note& n, int64_t ns) {
  if (ns < 0) {
    notesleep(n);
    return true;
  }
  advance(cfg_.costs.op[static_cast<size_t>(plat::Op::Load)]);
  if (n.key.load(std::memory_order_acquire) != 0) return true;
  block(Wait::Note, &n, cur().t + ns);
  advance(cfg_.costs.futex_sleep);
  return n.key.load(std::memory_order_acquire) != 0;
}

void TimedDriver::notewakeup(plat::Note& n) {
  // Go parks one M on a note at most; should there be more, they wake in thread order.
  uint32_t first = UINT32_MAX;
  std::vector<uint32_t> more;
  for (const Waiter& w : waiters_) {
    if (w.on != &n || thread(w.tid).wait != Wait::Note) continue;
    if (first == UINT32_MAX) {
      first = w.tid;
    } else {
      more.push_back(w.tid);
    }
  }
  int64_t cost = cfg_.costs.futex_wake;
  if (!more.empty()) {
    more.push_back(first);
    std::sort(more.begin(), more.end());
    for (uint32_t tid : more) {
      if (wake(thread(tid), cur().t + cfg_.costs.futex_wake_latency + os_jitter(), cur().core)) {
        cost += cfg_.costs.os_wake_ipi;
      }
    }
  } else if (first != UINT32_MAX) {
    if (wake(thread(first), cur().t + cfg_.costs.futex_wake_latency + os_jitter(), cur().core)) {
      cost += cfg_.costs.os_wake_ipi;
    }
  }
  advance(cost);
}

// A real OS wake-up is late by a varying amount (timer slack, idle-state exit, the wakee's run
// queue). Without this, fixed costs make a simulation periodic, and a thread that sleeps and then
// races another (runqgrab's usleep(3) before its runnext CAS) would meet it at the same phase
// every time: the outcome of each race would be a resonance of the cost table, not a chance.
int64_t TimedDriver::os_jitter() {
  const int64_t j = cfg_.costs.wakeup_jitter;
  return j > 0 ? static_cast<int64_t>(rng_.next() % static_cast<uint64_t>(j)) : 0;
}

void TimedDriver::usleep(uint32_t usec) {
  const int64_t d = std::max<int64_t>(static_cast<int64_t>(usec) * 1000, cfg_.costs.usleep_min_latency);
  block(Wait::Timer, nullptr, cur().t + d + os_jitter());
}

void TimedDriver::osyield() {
  advance(cfg_.costs.osyield);
  if (waiting_ == 0 || !others_ready(cur().core)) return;
  if (cfg_.costs.affine) {
    yield_core_linux(true);
  } else {
    yield_core();
  }
}

// The simulated program's monotonic clock. It reads kNanotimeEpoch at the start of the run, not 0:
// a real monotonic clock counts from boot, and Go takes 0 to mean "unset" in places
// (sched.lastpoll, pidleput's now). Everything the engine reports is relative to the start.
int64_t TimedDriver::nanotime() {
  advance(cfg_.costs.nanotime);
  return kNanotimeEpoch + cur().t;
}

void TimedDriver::tgkill(uint64_t tid, int sig) {
  require_signal(tid, sig);
  TimedThread& target = thread(tid);
  if (target.state != State::Exited) {
    const int64_t at = cur().t + cfg_.costs.signal_delivery_latency;
    auto& when = target.sig_at[static_cast<size_t>(sig)];
    if ((target.pending >> sig & 1) == 0 || at < when) when = at;
    target.pending |= uint64_t{1} << sig;
    if (target.state == State::Running) interrupt(target, std::max(at, target.compute_start));
  }
  advance(cfg_.costs.signal_send);
}

void TimedDriver::spend(int64_t ns) { advance(ns); }

void TimedDriver::charge(plat::Cost c) { advance(cfg_.costs.path[static_cast<size_t>(c)]); }

// ---- Core bookkeeping shared by both placements ----

void TimedDriver::set_core(int core, int32_t tid, int64_t at) {
  auto& slot = core_thread_[static_cast<size_t>(core)];
  if (cfg_.costs.affine && slot != tid) {  // PELT utilisation: the threads leaving and taking the core
    if (slot >= 0) set_on_cpu(thread(static_cast<size_t>(slot)), false, at);
    if (tid >= 0) set_on_cpu(thread(static_cast<size_t>(tid)), true, at);
  }
  if (slot == -1 && tid != -1) {
    free_cores_--;
    if (speed_varies_) count_busy(core, +1);
  }
  if (slot != -1 && tid == -1) {
    free_cores_++;
    if (speed_varies_) count_busy(core, -1);
  }
  slot = tid;
}

bool TimedDriver::others_ready(int core) const {
  if (cfg_.costs.affine) return cs_[static_cast<size_t>(core)].ready != 0;
  return constrained_ ? spread_pick(core) >= 0 : !runq_[0].empty();
}

// The idle-wait metric: time with a ready thread not running while a core is idle. Placement
// decisions are made at the time of the event that causes them, which may lie a little ahead of
// the last one measured: the clock of the metric only moves forward.
void TimedDriver::idle_wait_update(int64_t at) {
  const int64_t now = std::max(at, idle_wait_last_);
  idle_wait_last_ = now;
  const bool on = waiting_ != 0 && free_cores_ != 0;
  if (on && stats_.idle_wait_since < 0) {
    stats_.idle_wait_since = now;
  } else if (!on && stats_.idle_wait_since >= 0) {
    stats_.idle_wait_ns += now - stats_.idle_wait_since;
    stats_.idle_wait_since = -1;
  }
}

// ---- Linux placement (affine): docs/placement.md ----

double TimedDriver::thread_util(const TimedThread& t, int64_t at) const {
  return t.util.now(at, cfg_.costs.kernel.pelt_halflife);
}

void TimedDriver::set_on_cpu(TimedThread& t, bool on, int64_t at) { t.util.set(on, at, cfg_.costs.kernel.pelt_halflife); }

// The home of a live thread's PELT sums: the core it runs on, is queued on, or last ran on (a
// sleeper's blocked share stays on its core's cfs_rq, decaying, and leaves with it when it wakes
// elsewhere: attach/detach_entity_load_avg, remove_entity_load_avg). -1: none yet.
int TimedDriver::home_core(const TimedThread& t) {
  return t.core >= 0 ? t.core : t.queued_on >= 0 ? t.queued_on : t.last_core;
}

// cpu_util (cpu_util_cfs): the core's cfs_rq util_avg, the sum of its attached threads'
// utilisation, or with UTIL_EST the sum of the estimates of the threads enqueued there (running
// or ready; sleepers and delayed threads are out of it) when larger; at most the capacity.
double TimedDriver::core_util(int core, int64_t at) const {
  double avg = 0, est = 0;
  for (const auto& p : threads_) {
    const auto& t = static_cast<const TimedThread&>(*p);
    if (t.state == State::Exited || home_core(t) != core) continue;
    avg += thread_util(t, at);
    if (t.core >= 0 || (t.queued_on >= 0 && !t.delayed)) est += t.util_est;
  }
  return std::min(1.0, std::max(avg, est));
}

// util_est_update at a sleep: the estimate rises at once to the utilisation the thread leaves
// with, and falls toward it by a quarter of the difference (UTIL_EST_WEIGHT_SHIFT).
void TimedDriver::util_est_sleep(TimedThread& t, int64_t at) {
  const double u = thread_util(t, at);
  t.util_est = u >= t.util_est ? u : t.util_est + (u - t.util_est) / 4;
}

// post_init_entity_util_avg: a new thread starts with its core's utilisation shared by load (the
// core's util_avg x its weight / the cfs_rq's load), at most half the spare capacity.
void TimedDriver::post_init_util(TimedThread& t, int core, int64_t at) {
  double cu = 0, load = 0;
  for (const auto& p : threads_) {
    const auto& o = static_cast<const TimedThread&>(*p);
    if (&o == &t || o.state == State::Exited || home_core(o) != core) continue;
    cu += thread_util(o, at);
    load += thread_load(o, at);
  }
  cu = std::min(cu, 1.0);
  const double cap = (1 - cu) / 2;
  t.util.value = cu > 0 ? std::min(cap, cu / (load + 1.0 / 1024)) : cap;
  t.util.at = at;
}

double TimedDriver::thread_load(const TimedThread& t, int64_t at) const {
  return t.load.now(at, cfg_.costs.kernel.pelt_halflife);
}

void TimedDriver::set_runnable(TimedThread& t, bool runnable, int64_t at) {
  t.load.set(runnable, at, cfg_.costs.kernel.pelt_halflife);
}

// cpu_load: each live thread's load counts on the core it is on, queued on, or last ran on (a
// sleeper's load stays on its core's queue, decaying, until it moves).
double TimedDriver::cpu_load(int core, int64_t at) const {
  double sum = 0;
  for (const auto& p : threads_) {
    const auto& t = static_cast<const TimedThread&>(*p);
    if (t.state == State::Exited) continue;
    if (home_core(t) == core) sum += thread_load(t, at);
  }
  return sum;
}

bool TimedDriver::core_idle(int core) const {
  return core_thread_[static_cast<size_t>(core)] == -1 && cs_[static_cast<size_t>(core)].ready == 0;
}

bool TimedDriver::same_llc(int a, int b) const {
  return cfg_.cores[static_cast<size_t>(a)].cluster == cfg_.cores[static_cast<size_t>(b)].cluster;
}

int64_t TimedDriver::cur_vrt(const TimedThread& t, int64_t at) const {
  return t.vrt + std::max<int64_t>(0, at - t.run_start);
}

// The sum of the vruntimes of core's entities (queued, delayed and the one on the core) and
// their count: avg_vruntime is sum / n with equal weights.
__int128 TimedDriver::vsum(int core, int64_t at, int64_t& n) const {
  __int128 sum = 0;
  n = 0;
  for (uint32_t id : runq_[static_cast<size_t>(core)]) {
    sum += static_cast<const TimedThread&>(*threads_[id]).vrt;
    n++;
  }
  if (const int32_t r = core_thread_[static_cast<size_t>(core)]; r >= 0) {
    sum += cur_vrt(static_cast<const TimedThread&>(*threads_[static_cast<size_t>(r)]), at);
    n++;
  }
  return sum;
}

// place_entity: a thread joining core's queue gets the queue's average vruntime less its lag,
// the lag scaled by (n + 1) / n so that adding it leaves the average where the lag says; a new
// thread's first deadline is half a slice away (PLACE_DEADLINE_INITIAL).
void TimedDriver::place_entity(TimedThread& t, int core, int64_t at, bool initial) {
  int64_t n = 0;
  const __int128 sum = vsum(core, at, n);
  if (n == 0) {
    t.vrt = cs_[static_cast<size_t>(core)].vbase;
  } else {
    const auto avg = static_cast<int64_t>(sum / n);
    t.vrt = avg - static_cast<int64_t>(static_cast<__int128>(t.vlag) * (n + 1) / n);
  }
  t.vlag = 0;
  t.deadline = t.vrt + (initial ? slice_ / 2 : slice_);
}

// dequeue_entity at a sleep: the thread's lag is the average vruntime less its own. With
// DELAY_DEQUEUE a thread that owes time (negative lag) and has company stays on the queue,
// delayed; any other leaves with its lag, clamped to two slices or a tick (update_entity_lag).
void TimedDriver::dequeue_sleep(TimedThread& t, int64_t at) {
  const int core = t.core;
  t.vrt = cur_vrt(t, at);
  t.run_start = at;
  set_runnable(t, false, at);
  util_est_sleep(t, at);
  int64_t n = 0;
  const __int128 sum = vsum(core, at, n);
  const bool alone = n <= 1;
  const __int128 lag_n = sum - static_cast<__int128>(t.vrt) * n;  // n x lag
  if (cfg_.costs.kernel.delay_dequeue && !alone && lag_n < 0) {
    t.delayed = true;
    t.queued_on = core;
    runq_[static_cast<size_t>(core)].push_back(t.id);
    return;
  }
  const int64_t limit = std::max(2 * slice_, tick_);
  t.vlag = std::clamp(static_cast<int64_t>(lag_n / std::max<int64_t>(n, 1)), -limit, limit);
  if (alone) cs_[static_cast<size_t>(core)].vbase = t.vrt;
}

void TimedDriver::rq_add_ready(TimedThread& t, int core) {
  runq_[static_cast<size_t>(core)].push_back(t.id);
  t.queued_on = core;
  waiting_++;
  cs_[static_cast<size_t>(core)].ready++;
  rare_ |= kRareWaiting;
  enqueue(t, next_tick(t.t));  // its tick: periodic balancing may move it
  idle_wait_update(t.t);
}

void TimedDriver::rq_remove(TimedThread& t) {
  std::deque<uint32_t>& q = runq_[static_cast<size_t>(t.queued_on)];
  q.erase(std::find(q.begin(), q.end(), t.id));
  if (!t.delayed) {
    waiting_--;
    cs_[static_cast<size_t>(t.queued_on)].ready--;
  }
  t.queued_on = -1;
  t.delayed = false;
}

// pick_eevdf: among the eligible entities (vruntime at most the average), the earliest virtual
// deadline; curr (the thread on the core, if it competes) wins ties. A delayed thread that is
// picked leaves the queue for good (its lag, now >= 0, is dropped: DELAY_ZERO) and the pick
// runs again. Returns curr or a ready queued thread, or nullptr if none.
TimedDriver::TimedThread* TimedDriver::pick_eevdf(int core, TimedThread* curr) {
  std::deque<uint32_t>& q = runq_[static_cast<size_t>(core)];
  for (;;) {
    if (q.empty()) return curr;
    __int128 sum = 0;
    int64_t n = 0;
    for (uint32_t id : q) {
      sum += thread(id).vrt;
      n++;
    }
    if (curr != nullptr) {
      sum += curr->vrt;
      n++;
    }
    TimedThread* best = nullptr;
    auto consider = [&](TimedThread& e) {
      if (static_cast<__int128>(e.vrt) * n > sum) return;  // not eligible
      if (best == nullptr || e.deadline < best->deadline) best = &e;
    };
    if (curr != nullptr) consider(*curr);
    for (uint32_t id : q) consider(thread(id));
    if (best == nullptr) return curr;  // cannot happen: someone is at or below the average
    if (!best->delayed) return best;
    rq_remove(*best);
    best->vlag = 0;
    if (q.empty() && curr == nullptr) cs_[static_cast<size_t>(core)].vbase = static_cast<int64_t>(sum / n);
  }
}

// check_preempt_wakeup_fair: the woken thread w, queued on core, takes the core at once if the
// pick would choose it; RUN_TO_PARITY keeps an eligible running thread until its deadline.
void TimedDriver::wakeup_preempt(int core, TimedThread& w, int64_t at) {
  const int32_t rid = core_thread_[static_cast<size_t>(core)];
  if (rid < 0) return;
  TimedThread& r = thread(static_cast<size_t>(rid));
  const int64_t saved = r.vrt;
  r.vrt = cur_vrt(r, at);
  int64_t n = 0;
  const __int128 sum = vsum(core, r.run_start, n);  // r counted at its (updated) vrt
  bool preempt = false;
  if (static_cast<__int128>(r.vrt) * n > sum) {  // r is not eligible: no protection
    TimedThread* best = nullptr;
    for (uint32_t id : runq_[static_cast<size_t>(core)]) {
      TimedThread& e = thread(id);
      if (static_cast<__int128>(e.vrt) * n > sum) continue;
      if (best == nullptr || e.deadline < best->deadline) best = &e;
    }
    preempt = best == &w;
  }
  r.vrt = saved;
  if (preempt) {
    stats_.wake_preemptions++;
    r.slice_end = std::min(r.slice_end, w.t);
    if (r.state == State::Running) interrupt(r, std::max(w.t, r.compute_start));
  } else if (r.state == State::Running && r.computing && r.slice_end < r.compute_end) {
    interrupt(r, std::max(r.slice_end, w.t));  // someone waits: its compute ends with its slice
  }
}

// select_task_rq_fair's wake-up path: wake_affine between the waker's core and the previous one,
// then select_idle_sibling around the target; then the enqueue (place_entity) and the wake-up
// preemption check. A thread still delayed on its core is put back there (ttwu_runnable).
bool TimedDriver::place_linux(TimedThread& t, int waker) {
  const int64_t at = t.t;
  set_runnable(t, true, at);
  if (t.delayed) {
    const int core = t.queued_on;
    int64_t n = 0;
    const __int128 sum = vsum(core, at, n);
    if (static_cast<__int128>(t.vrt) * n > sum) {  // still owes time: requeued where it is
      stats_.woken_delayed++;
      rq_remove(t);
      if (t.grp >= 0 && bw_[static_cast<size_t>(t.grp)].q[static_cast<size_t>(core)].throttled) {
        bw_park(t, bw_[static_cast<size_t>(t.grp)], core, at);  // enqueued on its throttled queue
        return false;
      }
      rq_add_ready(t, core);
      wakeup_preempt(core, t, at);
      return false;
    }
    rq_remove(t);  // its lag is spent: it would have left the queue at the last pick
    t.vlag = 0;
  }
  const int prev = t.last_core;
  int core;
  if (prev < 0) {  // a new thread: an idle core, else its creator's (a simplification of fork balancing)
    core = constrained_ ? free_core_for(t) : fastest_free_core();
    if (core >= 0 && !core_idle(core)) core = -1;
    if (core < 0) core = running_ && cur().core >= 0 ? cur().core : 0;
    if (constrained_ && !in_cpuset(t, core)) {  // select_fallback_rq: the first core of its cpuset
      for (core = 0; !in_cpuset(t, core); core++) {
      }
    }
  } else {
    int this_core = waker >= 0 ? waker : prev;  // a timer fires on the sleeper's core
    if (constrained_ && !in_cpuset(t, this_core)) this_core = prev;  // no wake_affine onto a core it may not use
    const int target = this_core != prev ? wake_affine(t, this_core, prev, at) : prev;
    core = select_idle_sibling(t, prev, target, at);
  }
  if (t.grp >= 0 && bw_[static_cast<size_t>(t.grp)].q[static_cast<size_t>(core)].throttled) {
    place_entity(t, core, at, prev < 0);
    bw_park(t, bw_[static_cast<size_t>(t.grp)], core, at);  // enqueued on its throttled queue: it waits
    return false;
  }
  place_entity(t, core, at, prev < 0);
  if (prev < 0) post_init_util(t, core, at);
  if (core_idle(core)) {
    CoreState& c = cs_[static_cast<size_t>(core)];
    if (c.idle_stamp >= 0) {  // rq->avg_idle: a running average of idle periods, capped
      c.avg_idle += (std::max<int64_t>(0, at - c.idle_stamp) - c.avg_idle) / 8;
      c.avg_idle = std::min(c.avg_idle, 2 * cfg_.costs.kernel.migration_cost);
    }
    if (core == prev) {
      stats_.placed_on_prev++;
    } else {
      stats_.placed_on_other++;
    }
    give_core(t, core, at + cfg_.costs.os_idle_exit_latency);
    return true;
  }
  stats_.queued_busy++;
  rq_add_ready(t, core);
  wakeup_preempt(core, t, at);
  return false;
}

// wake_affine: wake_affine_idle (the waker's core idle; the previous one idle; futex wake-ups are
// not WF_SYNC), else wake_affine_weight, which moves the wakee to the waker's core only if that
// core's load with it is below the previous core's without it, biased by half of imbalance_pct.
int TimedDriver::wake_affine(TimedThread& t, int this_core, int prev, int64_t at) {
  if (core_idle(this_core) && same_llc(this_core, prev)) return core_idle(prev) ? prev : this_core;
  if (core_idle(prev)) return prev;
  const double tl = thread_load(t, at);
  const int32_t pct = cfg_.costs.kernel.imbalance_pct;
  const double this_eff = (cpu_load(this_core, at) + tl) * 100 * cfg_.cores[static_cast<size_t>(prev)].speed;
  const double prev_eff =
      (cpu_load(prev, at) - tl) * (100 + (pct - 100) / 2) * cfg_.cores[static_cast<size_t>(this_core)].speed;
  return this_eff < prev_eff ? this_core : prev;
}

// SIS_UTIL (update_idle_cpu_scan): how many cores of the LLC the idle search may look at, from
// the LLC's average utilisation x (core_util): llc_size x (1 - min(1, (x x imbalance_pct/100)^2)),
// in the kernel's fixed point (capacity 1024). The kernel computes it only in periodic load
// balancing of the LLC domain (update_sd_lb_stats, not newly idle) and the wake-ups read the last
// value: refresh_idle_scan is called where balance() balances, and idle_scan_depth refreshes it
// when it is older than a busy core's balance interval (the busy core's own periodic balancing,
// whose ticks the driver does not simulate) or was never computed.
void TimedDriver::refresh_idle_scan(int core, int64_t at) {
  constexpr int64_t kCapacity = 1024;  // SCHED_CAPACITY_SCALE
  double sum = 0;
  int64_t w = 0;
  for (size_t c = 0; c < cfg_.cores.size(); c++) {
    if (!same_llc(static_cast<int>(c), core)) continue;
    sum += core_util(static_cast<int>(c), at);
    w++;
  }
  const auto x = static_cast<int64_t>(sum * kCapacity) / w;
  const int64_t pct = cfg_.costs.kernel.imbalance_pct;
  const int64_t tmp = std::min(x * x * pct * pct / (10000 * kCapacity), kCapacity);
  const int depth = static_cast<int>((kCapacity - tmp) * w / kCapacity);
  for (size_t c = 0; c < cfg_.cores.size(); c++) {
    if (!same_llc(static_cast<int>(c), core)) continue;
    cs_[c].idle_scan = depth;
    cs_[c].idle_scan_at = at;
  }
}

int TimedDriver::idle_scan_depth(int target, int64_t at) {
  const CoreState& t = cs_[static_cast<size_t>(target)];
  const Costs::Kernel& k = cfg_.costs.kernel;
  const int64_t busy_interval =
      std::max(tick_, k.balance_interval_per_cpu * static_cast<int64_t>(cfg_.cores.size())) * k.busy_factor;
  bool busy = false;
  for (size_t c = 0; c < cfg_.cores.size(); c++) busy |= same_llc(static_cast<int>(c), target) && core_thread_[c] >= 0;
  if (t.idle_scan_at < 0 || (busy && at - t.idle_scan_at >= busy_interval)) refresh_idle_scan(target, at);
  return cs_[static_cast<size_t>(target)].idle_scan;
}

// select_idle_sibling: the target if idle; the previous core if idle (same LLC); the thread's
// recently used core if idle; else select_idle_cpu's scan of the LLC from target + 1, at most
// idle_scan_depth cores; else the target, busy.
int TimedDriver::select_idle_sibling(TimedThread& t, int prev, int target, int64_t at) {
  if (core_idle(target)) return target;
  if (prev != target && same_llc(prev, target) && core_idle(prev)) return prev;
  const int recent = t.recent_core;
  t.recent_core = prev;
  if (recent >= 0 && recent != prev && recent != target && same_llc(recent, target) && core_idle(recent) &&
      (!constrained_ || in_cpuset(t, recent))) {
    return recent;
  }
  int budget = idle_scan_depth(target, at) + 1;
  if (budget == 1) return target;  // the scan is cut
  const int n = static_cast<int>(cfg_.cores.size());
  for (int i = 1; i <= n; i++) {
    const int c = (target + i) % n;
    if (!same_llc(c, target)) continue;
    if (--budget <= 0) break;
    if (core_idle(c) && (!constrained_ || in_cpuset(t, c))) return c;
  }
  return target;
}

// task_hot: it ran on a core less than migration_cost ago.
bool TimedDriver::task_hot(const TimedThread& t, int64_t at) const {
  return t.exec_end >= 0 && at - t.exec_end < cfg_.costs.kernel.migration_cost;
}

void TimedDriver::migrate_queued(TimedThread& t, int dst, int64_t at) {
  t.t = std::max(t.t, at);  // it is ready on dst from now: its next tick and any preemption count from here
  const int src = t.queued_on;
  int64_t n = 0;
  const __int128 sum = vsum(src, at, n);
  const int64_t lag = n > 0 ? static_cast<int64_t>((sum - static_cast<__int128>(t.vrt) * n) / n) : 0;
  rq_remove(t);
  if (runq_[static_cast<size_t>(src)].empty() && core_thread_[static_cast<size_t>(src)] < 0) {
    cs_[static_cast<size_t>(src)].vbase = t.vrt;
  }
  t.vlag = lag;
  place_entity(t, dst, at, false);
}

// sched_balance_newidle: a core with nothing left to run looks for a queued thread elsewhere,
// unless its idle periods have been shorter than a balance costs. It takes, from the core with
// the most queued, the thread that ran least recently among those not cache hot (newidle
// balancing counts no failures, so a hot thread stays).
bool TimedDriver::newidle_balance(int core, int64_t at) {
  if (waiting_ == 0) return false;  // no core is overloaded
  const CoreState& me = cs_[static_cast<size_t>(core)];
  if (me.avg_idle < cfg_.costs.kernel.newidle_balance_cost) return false;
  int src = -1;
  for (size_t c = 0; c < cs_.size(); c++) {
    if (static_cast<int>(c) == core || cs_[c].ready == 0) continue;
    if (src < 0 || cs_[c].ready > cs_[static_cast<size_t>(src)].ready) src = static_cast<int>(c);
  }
  if (src < 0) return false;
  TimedThread* pick = nullptr;
  for (uint32_t id : runq_[static_cast<size_t>(src)]) {
    TimedThread& e = thread(id);
    if (e.delayed || task_hot(e, at) || (constrained_ && !allowed(e, core))) continue;
    if (pick == nullptr || e.exec_end < pick->exec_end) pick = &e;
  }
  if (pick == nullptr) return false;
  migrate_queued(*pick, core, at);
  stats_.newidle_pulls++;
  give_core(*pick, core, at);
  return true;
}

// A queued thread's tick (the balancer runs at ticks). An idle core is kicked from its core's
// tick (nohz_balancer_kick: that core has 2 or more runnable) and pulls it, once per idle
// balance interval, if it is not cache hot or balancing has failed more than cache_nice_tries
// times. With no idle core, a busy core with at least two fewer runnable pulls it, at most once
// per balance interval x busy_factor. Otherwise it waits for the next tick.
void TimedDriver::balance(TimedThread& t, int64_t at) {
  if (t.queued_on < 0 || t.delayed) return;
  const Costs::Kernel& k = cfg_.costs.kernel;
  const int src = t.queued_on;
  const auto ncores = static_cast<int64_t>(cfg_.cores.size());
  const int64_t interval = std::max(tick_, k.balance_interval_per_cpu * ncores);
  auto attempt = [&](int dst) {
    CoreState& d = cs_[static_cast<size_t>(dst)];
    if (!task_hot(t, at) || d.balance_failed > k.cache_nice_tries) {
      d.balance_failed = 0;
      return true;
    }
    if (d.failed_at != at) d.balance_failed++;  // one failed balance per tick
    d.failed_at = at;
    return false;
  };
  int idle = -1;
  for (size_t c = 0; c < cs_.size(); c++) {
    if (!core_idle(static_cast<int>(c)) || (constrained_ && !allowed(t, static_cast<int>(c)))) continue;
    if (idle < 0 || cfg_.cores[c].speed > cfg_.cores[static_cast<size_t>(idle)].speed) idle = static_cast<int>(c);
  }
  if (idle >= 0) {
    CoreState& d = cs_[static_cast<size_t>(idle)];
    if (at - d.last_idle_balance >= interval || d.last_idle_balance == at) {
      d.last_idle_balance = at;
      refresh_idle_scan(idle, at);
      if (attempt(idle)) {
        migrate_queued(t, idle, at);
        stats_.balance_pulls++;
        give_core(t, idle, at + cfg_.costs.os_idle_exit_latency);
        return;
      }
    }
  } else {
    const uint32_t nr_src = cs_[static_cast<size_t>(src)].ready + 1;
    for (size_t c = 0; c < cs_.size(); c++) {
      CoreState& d = cs_[c];
      if (static_cast<int>(c) == src || d.ready + 1 + 2 > nr_src) continue;
      if (constrained_ && !allowed(t, static_cast<int>(c))) continue;  // can_migrate_task: cpus_ptr, throttled_lb_pair
      if (at - d.last_busy_balance < interval * k.busy_factor && d.last_busy_balance != at) continue;
      d.last_busy_balance = at;
      refresh_idle_scan(static_cast<int>(c), at);
      if (attempt(static_cast<int>(c))) {
        migrate_queued(t, static_cast<int>(c), at);
        stats_.balance_pulls++;
        rq_add_ready(t, static_cast<int>(c));
        // attach_task ends in wakeup_preempt: the mover may preempt, and the thread running there
        // is cut at its slice's end now that someone waits.
        wakeup_preempt(static_cast<int>(c), t, at);
        return;
      }
      break;
    }
  }
  enqueue(t, next_tick(at));
}

// The running thread's slice is over (or a woken thread preempts it, or it calls sched_yield):
// its vruntime is brought up to date, its deadline renewed if passed (sched_yield: pushed a slice
// further), and the EEVDF pick chooses among it and the queue. Kept, it runs on with a new slice.
void TimedDriver::yield_core_linux(bool sched_yield) {
  TimedThread& self = cur();
  const int core = self.core;
  const int64_t at = self.t;
  self.vrt = cur_vrt(self, at);
  self.run_start = at;
  if (sched_yield) {
    self.deadline += slice_;
  } else if (self.vrt >= self.deadline) {
    self.deadline = self.vrt + slice_;
  }
  TimedThread* n = pick_eevdf(core, &self);
  if (n == &self || n == nullptr) {
    self.slice_end = tick_ceil(at + std::max<int64_t>(self.deadline - self.vrt, 1));
    if (self.slice_end <= at) self.slice_end = next_tick(at);
    return;
  }
  stats_.os_preemptions++;
  rq_remove(*n);
  if (self.grp >= 0) bw_leave(self, core, at, /*dequeued=*/false);  // preempted: still queued
  set_core(core, -1, at);
  self.core = -1;
  self.exec_end = at;
  self.state = State::Ready;
  rq_add_ready(self, core);
  give_core(*n, core, at);
  reschedule();
}

// ---- CPU bandwidth (cgroups): docs/placement.md, "CPU bandwidth (cgroups)" ----

bool TimedDriver::in_cpuset(const TimedThread& t, int core) const {
  return t.grp < 0 || bw_[static_cast<size_t>(t.grp)].allowed[static_cast<size_t>(core)] != 0;
}

bool TimedDriver::allowed(const TimedThread& t, int core) const {
  if (t.grp < 0) return true;
  const BwGroup& g = bw_[static_cast<size_t>(t.grp)];
  return g.allowed[static_cast<size_t>(core)] != 0 && !g.q[static_cast<size_t>(core)].throttled;
}

int TimedDriver::free_core_for(const TimedThread& t) const {
  int best = -1;
  for (size_t c = 0; c < core_thread_.size(); c++) {
    if (core_thread_[c] != -1 || !allowed(t, static_cast<int>(c))) continue;
    if (best < 0 || cfg_.cores[c].speed > cfg_.cores[static_cast<size_t>(best)].speed) best = static_cast<int>(c);
  }
  return best;
}

int TimedDriver::spread_pick(int core) const {
  const std::deque<uint32_t>& q = runq_[0];
  for (size_t i = 0; i < q.size(); i++) {
    if (allowed(static_cast<const TimedThread&>(*threads_[q[i]]), core)) return static_cast<int>(i);
  }
  return -1;
}

// A Ready thread's queue entry: a parked thread's is its group's period or slack timer
// (sched_cfs_period_timer, sched_cfs_slack_timer); any other's is its balancing tick.
void TimedDriver::ready_timer(TimedThread& t, int64_t at) {
  if (!t.throttled) {
    balance(t, at);
    return;
  }
  BwGroup& g = bw_[static_cast<size_t>(t.grp)];
  bw_sync(g, at);
  if (g.slack_at >= 0 && at >= g.slack_at) {  // do_sched_cfs_slack_timer
    g.slack_at = -1;
    const int64_t slice = std::max<int64_t>(cfg_.costs.kernel.cfs_bandwidth_slice, 1);
    if (g.next_refill - at >= cfg_.costs.kernel.min_bandwidth_expiration && g.quota >= 0 && g.pool > slice) {
      bw_distribute(g, at);
    }
  }
  bw_arm(g);
}

// The period boundaries due by `at`, in order. A group that has no limit and no change to come
// has nothing to do at its boundaries.
void TimedDriver::bw_sync(BwGroup& g, int64_t at) {
  while (at >= g.next_refill) {
    if (g.quota < 0 && g.next_change >= g.cfg->changes.size()) return;
    bw_period(g, g.next_refill);
  }
}

// do_sched_cfs_period_timer at the boundary `at`: the ending period counts in cpu.stat (nr_periods
// if it had a runnable thread, nr_throttled if a queue is throttled now), the quota changes due
// take effect, __refill_cfs_bandwidth_runtime fills the pool (up to quota + burst), and
// distribute_cfs_runtime hands it to the throttled queues.
void TimedDriver::bw_period(BwGroup& g, int64_t at) {
  GroupStats& st = stats_.groups[g.index];
  if (g.quota >= 0) {
    if (g.active) st.nr_periods++;
    if (!g.throttled.empty()) st.nr_throttled++;
  }
  const std::vector<CpuGroup::Change>& ch = g.cfg->changes;
  if (g.next_change < ch.size() && ch[g.next_change].at <= at) {
    // tg_set_cfs_bandwidth: the running threads' time so far is charged under the old quota, and
    // each queue starts again from no runtime.
    for (int32_t id : core_thread_) {
      if (id >= 0 && thread(static_cast<size_t>(id)).grp == static_cast<int32_t>(g.index)) {
        bw_charge(thread(static_cast<size_t>(id)), at);
      }
    }
    while (g.next_change < ch.size() && ch[g.next_change].at <= at) g.quota = ch[g.next_change++].quota;
    for (BwQueue& q : g.q) q.remaining = 0;
  }
  g.next_refill = at + g.cfg->period;
  if (g.quota >= 0) {
    g.pool = std::min(g.pool + g.quota, g.quota + std::max<int64_t>(g.cfg->burst, 0));
    bw_distribute(g, at);
  } else {
    g.pool = 0;
    const std::vector<int> cores = std::move(g.throttled);
    g.throttled.clear();
    for (int c : cores) bw_unthrottle(g, c, at);
  }
  // The next period counts if the group has a runnable thread as it starts (or gets one).
  g.active = false;
  for (const auto& p : threads_) {
    const auto& t = static_cast<const TimedThread&>(*p);
    if (t.grp != static_cast<int32_t>(g.index)) continue;
    if (t.state == State::Ready || t.state == State::Running || (t.state == State::Blocked && t.core >= 0)) {
      g.active = true;
      break;
    }
  }
}

// distribute_cfs_runtime: each throttled queue, in the order they were throttled, gets what it
// owes plus 1 ns while the pool lasts, and is unthrottled once its runtime is above 0.
void TimedDriver::bw_distribute(BwGroup& g, int64_t at) {
  std::vector<int> still, now;
  for (int c : g.throttled) {
    BwQueue& q = g.q[static_cast<size_t>(c)];
    if (g.pool > 0) {
      const int64_t give = std::min(-q.remaining + 1, g.pool);
      g.pool -= give;
      q.remaining += give;
    }
    (q.remaining > 0 ? now : still).push_back(c);
  }
  g.throttled = std::move(still);
  for (int c : now) bw_unthrottle(g, c, at);
}

// assign_cfs_rq_runtime: the queue tops its runtime up to a slice from the pool, as far as the
// pool goes; true if it has runtime now.
bool TimedDriver::bw_assign(BwGroup& g, BwQueue& q) {
  const int64_t want = std::max<int64_t>(cfg_.costs.kernel.cfs_bandwidth_slice, 1) - q.remaining;
  if (g.quota < 0) {
    q.remaining += want;
  } else if (g.pool > 0 && want > 0) {
    const int64_t amount = std::min(g.pool, want);
    g.pool -= amount;
    q.remaining += amount;
  }
  g.active = true;
  return q.remaining > 0;
}

// t starts running on core at `at` (after the context switch): its stretch starts, and its queue
// there takes runtime if it has none (check_enqueue_throttle's account of 0 ns).
void TimedDriver::bw_enter(TimedThread& t, int core, int64_t at) {
  BwGroup& g = bw_[static_cast<size_t>(t.grp)];
  bw_sync(g, at);
  g.active = true;
  t.bw_from = at;
  if (g.quota >= 0) {
    BwQueue& q = g.q[static_cast<size_t>(core)];
    if (q.remaining <= 0 && !q.throttled) bw_assign(g, q);
  }
  bw_set_until(t, at);
}

// account_cfs_rq_runtime: the time t ran since its stretch began is the group's usage and comes
// off its queue's runtime on the core it ran on.
void TimedDriver::bw_charge(TimedThread& t, int64_t at) {
  if (at <= t.bw_from) return;
  BwGroup& g = bw_[static_cast<size_t>(t.grp)];
  const int64_t d = at - t.bw_from;
  stats_.groups[g.index].usage += d;
  if (g.quota >= 0 && t.core >= 0) g.q[static_cast<size_t>(t.core)].remaining -= d;
  t.bw_from = at;
}

// When t, running, must look at its runtime again: when its queue's runtime runs out; without a
// limit, at the boundary where the group's next quota change takes effect (or never).
void TimedDriver::bw_set_until(TimedThread& t, int64_t at) {
  const BwGroup& g = bw_[static_cast<size_t>(t.grp)];
  if (g.quota >= 0) {
    t.bw_until = at + std::max<int64_t>(g.q[static_cast<size_t>(t.core)].remaining, 0);
  } else if (g.next_change < g.cfg->changes.size()) {
    const int64_t p = g.cfg->period, due = g.cfg->changes[g.next_change].at;
    t.bw_until = std::max(g.next_refill, (due + p - 1) / p * p);
  } else {
    t.bw_until = kNever;
  }
}

// t leaves core at `at`: its stretch is charged (after the period boundaries up to `at`, so that
// a return lands in the refilled pool, as the kernel's would). Only a thread that leaves its
// queue (blocks, exits, migrates: dequeue_entity) can return runtime; a preempted one stays queued
// there (put_prev_entity returns nothing). Then, if no other thread of its group is queued there,
// return_cfs_rq_runtime gives the queue's runtime beyond min_cfs_rq_runtime back to the pool, and
// with throttled queues waiting and more than a slice in the pool, arms the slack timer unless the
// refill is near (start_cfs_slack_bandwidth).
void TimedDriver::bw_leave(TimedThread& t, int core, int64_t at, bool dequeued) {
  BwGroup& g = bw_[static_cast<size_t>(t.grp)];
  bw_sync(g, at);
  bw_charge(t, at);
  t.bw_until = kNever;
  if (g.quota < 0 || !dequeued) return;
  if (cfg_.costs.affine) {
    for (uint32_t id : runq_[static_cast<size_t>(core)]) {
      const TimedThread& o = thread(id);
      if (o.grp == t.grp && !o.delayed) return;
    }
  }
  BwQueue& q = g.q[static_cast<size_t>(core)];
  const Costs::Kernel& k = cfg_.costs.kernel;
  const int64_t slack = q.remaining - k.min_cfs_rq_runtime;
  if (slack <= 0) return;
  g.pool += slack;
  q.remaining -= slack;
  if (g.pool <= std::max<int64_t>(k.cfs_bandwidth_slice, 1) || g.throttled.empty()) return;
  if (g.next_refill - at < k.cfs_bandwidth_slack_period + k.min_bandwidth_expiration || g.slack_at >= 0) return;
  g.slack_at = at + k.cfs_bandwidth_slack_period;
  bw_arm(g);
}

// The throttle happens at this thread's clock: threads due before it run first, so that nothing
// earlier is still to come (its trace event stays in time order).
void TimedDriver::bw_check() {
  if (cur().core < 0 || cur().t < cur().bw_until) return;
  if (cur().t >= horizon_) yield_if_late();
  TimedThread& self = cur();
  if (self.core >= 0 && self.t >= self.bw_until) bw_expired(self);
}

// The current thread's runtime is spent (or its group's quota may have changed): charge it, take
// more from the pool (__account_cfs_rq_runtime), and throttle its queue if the pool has none.
void TimedDriver::bw_expired(TimedThread& t) {
  BwGroup& g = bw_[static_cast<size_t>(t.grp)];
  const int64_t at = t.t;
  bw_sync(g, at);
  bw_charge(t, at);
  if (g.quota >= 0) {
    BwQueue& q = g.q[static_cast<size_t>(t.core)];
    if (q.remaining <= 0 && !q.throttled) bw_assign(g, q);
    if (q.remaining <= 0 || q.throttled) {
      bw_throttle(g, t.core, at);
      return;
    }
  }
  bw_set_until(t, at);
}

// throttle_cfs_rq: the group's queue on core stops. The current thread (running there) leaves the
// core and waits, ready, with the group's threads queued there (affine), until the unthrottle; the
// core goes to whoever is next.
void TimedDriver::bw_throttle(BwGroup& g, int core, int64_t at) {
  TimedThread& self = cur();
  BwQueue& q = g.q[static_cast<size_t>(core)];
  if (!q.throttled) {
    q.throttled = true;
    q.throttled_at = at;
    g.throttled.push_back(core);
  }
  if (cfg_.costs.affine) {
    std::vector<uint32_t> mine;
    for (uint32_t id : runq_[static_cast<size_t>(core)]) {
      const TimedThread& o = thread(id);
      if (o.grp == self.grp && !o.delayed) mine.push_back(id);
    }
    for (uint32_t id : mine) {
      TimedThread& o = thread(id);
      rq_remove(o);
      bw_park(o, g, core, at);
    }
    self.vrt = cur_vrt(self, at);
    self.run_start = at;
  }
  release_core(self, at);
  bw_park(self, g, core, at);
  reschedule();
}

// t waits on the throttled queue of core: ready, on no core and in no run queue, its queue entry
// the group's next timer.
void TimedDriver::bw_park(TimedThread& t, BwGroup& g, int core, int64_t at) {
  t.state = State::Ready;
  t.throttled = true;
  t.throttled_on = core;
  t.vlag = 0;
  g.active = true;
  g.q[static_cast<size_t>(core)].parked.push_back(t.id);
  enqueue(t, bw_next_timer(g));
  // A thread woken onto a throttled queue is parked from its wake-up time, which the OS's wake-up
  // latency can put after the waker's clock: the event is stamped no later than the caller's
  // clock, so that the trace stays in time order.
  if (cfg_.on_throttle) cfg_.on_throttle(t.id, true, std::min(at, now()));
}

int64_t TimedDriver::bw_next_timer(const BwGroup& g) const {
  return g.slack_at >= 0 ? std::min(g.slack_at, g.next_refill) : g.next_refill;
}

void TimedDriver::bw_arm(BwGroup& g) {
  const int64_t when = bw_next_timer(g);
  for (int c : g.throttled) {
    for (uint32_t id : g.q[static_cast<size_t>(c)].parked) enqueue(thread(id), when);
  }
}

// unthrottle_cfs_rq: the queue's throttled time goes into cpu.stat and its threads are ready again
// on that core (affine: back in its run queue, placed at its average vruntime; spread: placed as
// any ready thread). A free core takes one at once; a busy one's running compute ends with its slice.
void TimedDriver::bw_unthrottle(BwGroup& g, int core, int64_t at) {
  BwQueue& q = g.q[static_cast<size_t>(core)];
  q.throttled = false;
  stats_.groups[g.index].throttled_time += std::max<int64_t>(0, at - q.throttled_at);
  const std::vector<uint32_t> parked = std::move(q.parked);
  q.parked.clear();
  for (uint32_t id : parked) {
    TimedThread& t = thread(id);
    t.throttled = false;
    t.throttled_on = -1;
    if (cfg_.on_throttle) cfg_.on_throttle(t.id, false, at);
    if (t.state != State::Ready) continue;
    t.t = std::max(t.t, at);
    unqueue(t);
    if (cfg_.costs.affine) {
      place_entity(t, core, t.t, false);
      rq_add_ready(t, core);
    } else {
      make_ready(t, t.t);
    }
  }
  const int32_t r = core_thread_[static_cast<size_t>(core)];
  if (r < 0) {
    serve_queue(core, at);
  } else if (cfg_.costs.affine && cs_[static_cast<size_t>(core)].ready != 0) {
    TimedThread& run = thread(static_cast<size_t>(r));
    if (run.state == State::Running && run.computing && run.slice_end < run.compute_end) {
      interrupt(run, std::max(run.slice_end, at));
    }
  }
  idle_wait_update(at);
}

// The end of the run: the stretches still running are the groups' usage, the throttled queues'
// time so far their throttled time, and a period boundary passed but not yet handled counts.
void TimedDriver::run_ended(int64_t end) {
  for (BwGroup& g : bw_) {
    GroupStats& st = stats_.groups[g.index];
    if (g.quota >= 0 && end >= g.next_refill) {
      if (g.active) st.nr_periods++;
      if (!g.throttled.empty()) st.nr_throttled++;
    }
    for (int c : g.throttled) st.throttled_time += std::max<int64_t>(0, end - g.q[static_cast<size_t>(c)].throttled_at);
  }
  for (auto& p : threads_) {
    auto& t = static_cast<TimedThread&>(*p);
    if (t.grp >= 0 && t.core >= 0 && t.state != State::Exited) {
      stats_.groups[static_cast<size_t>(t.grp)].usage += std::max<int64_t>(0, std::min(t.t, end) - t.bw_from);
    }
  }
}

}  // namespace gmp::engine
