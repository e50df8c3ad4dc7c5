#include "sim/engine/driver_base.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <utility>

#include "sim/engine/engine_thread.h"
#include "sim/platform/platform.h"
#include "sim/platform/throw.h"

namespace gmp::engine {

using engine_detail::kEndOfTime;
using engine_detail::kSignals;

DriverBase::DriverBase(EngineConfig cfg) : cfg_(std::move(cfg)) {
  if (cfg_.cores.empty()) throw std::invalid_argument("engine: a machine needs at least one core");
  if (cfg_.event_limit != 0) event_limit_ = cfg_.event_limit;
  time_limit_ = cfg_.time_limit > 0 ? std::min(cfg_.time_limit, kEndOfTime) : kEndOfTime;
}

DriverBase::~DriverBase() = default;

DriverBase::Thread& DriverBase::add_thread(std::unique_ptr<Thread> t, std::string name, plat::Fiber::Entry entry,
                                           void* arg, rt::g* g0, uint32_t process) {
  t->eng = this;
  t->id = static_cast<uint32_t>(threads_.size());
  t->process = process;
  t->name = std::move(name);
  t->entry = entry;
  t->arg = arg;
  t->g0ctx = std::make_unique<plat::Context>(&DriverBase::thread_main, t.get(), g0);
  t->ctx = t->g0ctx.get();
  Thread& ref = *t;
  threads_.push_back(std::move(t));
  return ref;
}

void DriverBase::thread_main(void* arg) {
  auto* t = static_cast<Thread*>(arg);
  t->eng->drop_if_dead();  // started by a process that exited before it first ran
  t->entry(t->arg);  // a throw here reaches crash() through plat::Context
  t->eng->exit_thread();
}

void DriverBase::crash(const char* msg) { stop_run(Stop::Fatal, 2, msg); }

void DriverBase::fail(std::exception_ptr e) {
  if (!failure_) failure_ = std::move(e);
  e = nullptr;  // this frame is abandoned, never unwound
  stop_run(Stop::Fatal, 2, "");
}

DriverBase::Result DriverBase::run() {
  plat::DriverScope scope(this);
  running_ = true;
  for (;;) {
    if (stopping_) break;
    if (Thread* n = next_to_run()) {
      make_current(*n);
      plat::Fiber::switch_to(main_, n->ctx->fiber);
      continue;  // control came back: a thread found nothing to run next, or the run stopped
    }
    if (ended_by_driver()) {
      result_.stop = Stop::Stopped;
      break;
    }
    // Nothing can run: every thread has exited, or the rest can never run again (a dead
    // process's blocked threads count as exited).
    bool alive = false;
    for (auto& t : threads_) alive |= t->state != State::Exited && !dead(*t);
    result_.stop = alive ? stuck() : Stop::AllExited;
    if (alive) result_.message = stuck_message();
    break;
  }
  int64_t end = 0;
  for (auto& t : threads_) end = std::max(end, t->t);
  if (result_.end_time == 0) result_.end_time = end;
  run_ended(result_.end_time);
  plat::set_current_context(nullptr);
  running_ = false;
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
  return result_;
}

std::string DriverBase::blocked_threads() const {
  std::string who;
  for (const auto& t : threads_) {
    if (t->state == State::Exited || dead(*t)) continue;
    who += (who.empty() ? "" : ", ") + t->name;
  }
  return who;
}

void DriverBase::stop_run(Stop s, int code, std::string msg) {
  if (!stopping_) {
    stopping_ = true;
    result_.stop = s;
    result_.exit_code = code;
    result_.message = std::move(msg);
    result_.end_time = cur().t;
  }
  plat::Fiber::switch_to(cur().ctx->fiber, main_);
  __builtin_unreachable();  // main never resumes a stopped run
}

void DriverBase::exit(int code) {
  if (cfg_.processes.empty()) stop_run(Stop::Exit, code, "");
  const uint32_t me = cur().process;
  if (dead_.empty()) dead_.assign(cfg_.processes.size(), 0);
  if (me < dead_.size()) dead_[me] = 1;
  any_dead_ = true;
  // The run waits for every process that is not a daemon; when all are daemons, for all.
  bool any_user = false, user_left = false, any_left = false;
  for (size_t p = 0; p < cfg_.processes.size(); p++) {
    const bool live = dead_[p] == 0;
    any_left |= live;
    if (cfg_.processes[p].daemon) continue;
    any_user = true;
    user_left |= live;
  }
  if (any_user ? !user_left : !any_left) stop_run(Stop::Exit, code, "");
  exit_thread();  // its other threads go at their next resumption (drop_if_dead)
  __builtin_unreachable();  // a call through the vtable loses the attribute
}

bool DriverBase::dead(const Thread& t) const { return any_dead_ && process_dead(t.process); }

void DriverBase::drop_if_dead() {
  if (any_dead_) [[unlikely]] {
    if (process_dead(cur().process)) exit_thread();
  }
}

plat::Context* DriverBase::thread_context(uint64_t tid) const { return threads_.at(tid)->g0ctx.get(); }

int64_t DriverBase::now() const { return running_ ? threads_[cur_]->t : 0; }

uint64_t DriverBase::gettid() { return cur_; }

void DriverBase::make_current(Thread& t) {
  if (t.process != cur_process_) [[unlikely]] enter_process(t.process);
  cur_ = t.id;
  curp_ = &t;
  cur_bit_ = uint64_t{1} << (cur_ % 64);
  plat::set_current_context(t.ctx);
}

void DriverBase::enter_process(uint32_t process) {
  if (process_hook_ != nullptr) process_hook_(process_ctx_, process);
  cur_process_ = process;  // after the hook: one that throws leaves the last process current
}

// A switch to a goroutine's pooled stack can fail (std::bad_alloc: no memory to save the frames
// it displaces). The exception then unwinds the thread that switched, which must be current again.
void DriverBase::switch_thread(Thread& to) {
  if (to.id == cur_) return;
  Thread& self = cur();
  make_current(to);
  try {
    plat::Fiber::switch_to(self.ctx->fiber, to.ctx->fiber);
  } catch (...) {
    make_current(self);
    throw;
  }
  drop_if_dead();
}

void DriverBase::to_main() {
  plat::Fiber::switch_to(cur().ctx->fiber, main_);
  drop_if_dead();
}

void DriverBase::deliver_signals() {
  Thread& self = cur();
  if (self.in_handler) return;
  // Pending signals in increasing order, re-reading the mask after each (a handler may add some).
  for (int sig = 0; sig < kSignals; sig++) {
    const uint64_t above = self.pending >> sig;
    if (above == 0) break;
    sig += std::countr_zero(above);
    if (self.sig_at[static_cast<size_t>(sig)] > self.t) continue;
    self.pending &= ~(uint64_t{1} << sig);
    if (plat::SignalHandler h = plat::signal_handler(sig)) {
      self.in_handler = true;
      h(sig);
      cur().in_handler = false;
    }
  }
}

void DriverBase::require_signal(uint64_t tid, int sig) const {
  if (tid >= threads_.size() || sig <= 0 || sig >= kSignals) plat::throw_("tgkill: no such thread or signal");
}

void DriverBase::add_waiter(Thread& t, const void* on) {
  t.waiter_idx = static_cast<uint32_t>(waiters_.size());
  waiters_.push_back(Waiter{on, t.id});
}

void DriverBase::drop_waiter(Thread& t) {
  if (t.wait_on == nullptr) return;
  const Waiter last = waiters_.back();
  waiters_[t.waiter_idx] = last;
  threads_[last.tid]->waiter_idx = t.waiter_idx;
  waiters_.pop_back();
}

// The runtime charges gogo and mcall themselves (Cost::Gogo, Cost::Mcall); the switch is free.
// As in switch_thread, a failed switch leaves the thread on the stack it tried to leave.
void DriverBase::switchto(plat::Context& to) {
  Thread& self = cur();
  plat::Context* from = self.ctx;
  self.ctx = &to;
  plat::set_current_context(&to);
  try {
    plat::Fiber::switch_to(from->fiber, to.fiber);
  } catch (...) {
    self.ctx = from;
    plat::set_current_context(from);
    throw;
  }
}

}  // namespace gmp::engine
