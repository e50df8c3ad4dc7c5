#include "model/recorder.h"

#include <algorithm>
#include <stdexcept>

#include "sim/runtime/runtime.h"
#include "sim/runtime/time.h"

namespace gmp::model {

namespace {

// The first thread after t (in thread order, wrapping) that is enabled and not in a timed wait;
// t if there is none.
uint32_t next_after(std::span<const engine::Step> enabled, uint32_t t) {
  uint32_t first = UINT32_MAX, after = UINT32_MAX;
  for (const engine::Step& e : enabled) {
    if (e.kind == engine::StepKind::Timeout || e.tid == t) continue;
    if (first == UINT32_MAX) first = e.tid;
    if (e.tid > t && after == UINT32_MAX) after = e.tid;
  }
  return after != UINT32_MAX ? after : first != UINT32_MAX ? first : t;
}

}  // namespace

void Recorder::process_started(uint32_t process, rt::Runtime& r) {
  if (runtimes_.size() <= process) runtimes_.resize(process + 1, nullptr);
  runtimes_[process] = &r;
  if (monitor_ != nullptr) monitor_->started(r, process);
}

bool Recorder::timers_pending(uint32_t process) const {
  if (process >= runtimes_.size() || runtimes_[process] == nullptr) return false;
  for (const rt::p* pp : runtimes_[process]->allp) {
    if (pp->timers_ != nullptr && (pp->timers_->minWhenHeap.peek() != 0 || pp->timers_->minWhenModified.peek() != 0))
      return true;
  }
  return false;
}

void Recorder::thread_created(uint32_t tid, uint32_t parent, bool daemon, uint32_t process) {
  if (monitor_ != nullptr) monitor_->thread_created(tid, parent, daemon, process);
  if (process_of_.size() <= tid) process_of_.resize(tid + 1, 0);
  process_of_[tid] = process;
  if (!checked(process)) return;  // its steps are no choices: the policy never sees them
  out_.threads = std::max<uint32_t>(out_.threads, tid + 1);
  policy_.thread_created(tid, parent, daemon);
}

size_t Recorder::choose(std::span<const engine::Step> enabled, uint32_t current, const engine::PointInfo& info) {
  if (first_current_ == kNoThread) first_current_ = current;
  if (checked_ != kAllProcesses) {
    // Another process's thread goes first, without a choice (enabled is in thread order).
    for (size_t k = 0; k < enabled.size(); k++) {
      if (enabled[k].process == checked_) continue;
      if (monitor_ != nullptr && monitor_->before_pick(out_.steps, {}, info, false)) return engine::kStopRun;
      out_.forced++;
      return k;
    }
    // The thread that goes on by default is the checked process's that took the last step, as if
    // the other processes' steps had not been there.
    if (current < process_of_.size() && !checked(process_of_[current]))
      current = last_tid_ != kNoThread ? last_tid_ : first_current_;
  }
  if (monitor_ != nullptr && monitor_->before_pick(out_.steps, enabled, info, true)) return engine::kStopRun;
  // After a yield (osyield, a spin-wait's procyield) the thread that yielded does not go on by
  // default: the next thread in order does, as on a machine where the others run meanwhile.
  if (last_yield_) current = next_after(enabled, current);
  // A step the monitor's fairness forces is the only one the policy is offered.
  std::span<const engine::Step> offered = enabled;
  size_t base = 0;
  if (monitor_ != nullptr) {
    const size_t f = monitor_->forced(enabled);
    if (f < enabled.size()) {
      offered = enabled.subspan(f, 1);
      base = f;
    }
  }
  const size_t k = policy_.pick(out_.steps, offered, current);
  if (k == engine::kStopRun) {
    out_.pruned = true;
    return k;
  }
  if (k >= offered.size()) throw std::logic_error("checker: a policy picked a step that is not enabled");
  const size_t i = base + k;
  const engine::Step& s = enabled[i];
  if (k != default_pick(offered, current)) out_.schedule.picks.emplace_back(out_.steps, s.tid);
  bool current_enabled = false;
  for (const engine::Step& e : offered) current_enabled |= e.tid == current && e.kind != engine::StepKind::Timeout;
  if (current_enabled && s.tid != current) out_.preemptions++;
  if (offered.size() > 1 && out_.tree_product < 1e300) out_.tree_product *= static_cast<double>(offered.size());
  if (last_tid_ != kNoThread && s.tid != last_tid_) out_.switches++;
  last_tid_ = s.tid;
  last_yield_ = s.kind == engine::StepKind::Yield;
  if (monitor_ != nullptr) monitor_->taken(s, info, offered.size());
  out_.steps++;
  out_.schedule.steps = out_.steps;
  return i;
}

}  // namespace gmp::model
