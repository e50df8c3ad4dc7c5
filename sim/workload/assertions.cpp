#include "sim/workload/assertions.h"

#include <algorithm>
#include <utility>

#include "sim/runtime/chan.h"
#include "sim/runtime/runtime2.h"
#include "sim/runtime/sudog.h"
#include "sim/workload/interpreter.h"

namespace gmp::workload {

using rt::Ev;
using scenario::AssertKind;

namespace {

// A duration as Go's time.Duration prints it, exactly ("1.5ms", "2m0.5s"), with "us" for µs.
std::string go_duration(int64_t ns) {
  if (ns < 0) return "-" + go_duration(ns == INT64_MIN ? INT64_MAX : -ns);
  auto frac = [](int64_t v, int64_t unit, int digits) {
    std::string s = std::to_string(v / unit);
    if (int64_t rem = v % unit; rem != 0) {
      std::string r = std::to_string(rem);
      r.insert(0, static_cast<size_t>(digits) - r.size(), '0');
      while (r.back() == '0') r.pop_back();
      s += "." + r;
    }
    return s;
  };
  if (ns < 1'000) return std::to_string(ns) + "ns";
  if (ns < 1'000'000) return frac(ns, 1'000, 3) + "us";
  if (ns < 1'000'000'000) return frac(ns, 1'000'000, 6) + "ms";
  constexpr int64_t kMinute = 60'000'000'000, kHour = 60 * kMinute;
  std::string s;
  if (ns >= kHour) s += std::to_string(ns / kHour) + "h";
  if (ns >= kMinute) s += std::to_string(ns % kHour / kMinute) + "m";
  return s + frac(ns % kMinute, 1'000'000'000, 9) + "s";
}

std::string plural(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

AssertionChecker::AssertionChecker(const scenario::Scenario& sc, const Interpreter& interp)
    : sc_(sc), interp_(interp), by_func_(sc.funcs.size()), by_spawn_(sc.spawns.size()),
      count_(sc.assertions.size(), 0), last_at_(sc.assertions.size(), 0) {
  for (size_t i = 0; i < sc.assertions.size(); i++) {
    const scenario::Assertion& a = sc.assertions[i];
    const auto index = static_cast<int32_t>(i);
    switch (a.kind) {
      case AssertKind::StartLatency:
      case AssertKind::FinishedAtExit:
        if (a.spawn >= 0) {
          by_spawn_[static_cast<size_t>(a.spawn)].push_back(index);
        } else {
          by_func_[static_cast<size_t>(a.func)].push_back(index);
        }
        watching_ = true;
        break;
      case AssertKind::MaxRunnableLatency:
        runnable_.push_back(index);
        watching_ = true;
        break;
      case AssertKind::ChanEmptyAtExit:
        break;
    }
  }
}

template <class F>
void AssertionChecker::each_about(const Watched& w, F f) const {
  for (int32_t i : by_func_[static_cast<size_t>(w.func)]) f(i, sc_.assertions[static_cast<size_t>(i)]);
  if (w.spawn >= 0) {
    for (int32_t i : by_spawn_[static_cast<size_t>(w.spawn)]) f(i, sc_.assertions[static_cast<size_t>(i)]);
  }
}

// "goroutine 7 (worker)": the name of the go statement that started it, or its function's.
std::string AssertionChecker::who(const Watched& w) const {
  const std::string& name = w.spawn >= 0 ? sc_.spawns[static_cast<size_t>(w.spawn)].name
                                         : sc_.funcs[static_cast<size_t>(w.func)].name;
  return "goroutine " + std::to_string(w.gp->goid) + " (" + name + ")";
}

std::string AssertionChecker::where(int32_t index) const {
  const scenario::Assertion& a = sc_.assertions[static_cast<size_t>(index)];
  return sc_.source + ":" + std::to_string(a.line) + ":" + std::to_string(a.column) + ": " + a.text;
}

void AssertionChecker::violate(int32_t index, int64_t at, std::string detail) {
  const auto i = static_cast<size_t>(index);
  last_at_[i] = at;
  if (++count_[i] > kShown) return;
  violations_.push_back({where(index), std::move(detail), at, index});
}

void AssertionChecker::on_event(Ev e, rt::g* gp, rt::p* pp, int64_t arg, int64_t now) {
  (void)pp;
  switch (e) {
    case Ev::GoCreate: {
      if (rt::isSystemGoroutine(gp)) return;
      Watched w;
      w.gp = gp;
      // runtime.main (startpc 0) runs main; the interpreter's goroutines run function startpc - 1.
      w.func = gp->startpc == 0 ? sc_.entry : static_cast<int32_t>(gp->startpc - 1);
      const auto* task = static_cast<const Task*>(gp->task);
      w.spawn = task != nullptr ? task->spawn : -1;
      if (runnable_.empty() && by_func_[static_cast<size_t>(w.func)].empty() &&
          (w.spawn < 0 || by_spawn_[static_cast<size_t>(w.spawn)].empty())) {
        return;  // no assertion is about it
      }
      w.readied = w.runnable = now;
      w.created = true;
      live_[gp->goid] = w;
      return;
    }
    case Ev::GoUnpark:
    case Ev::GoSched:
    case Ev::GoPreempt:
    case Ev::GoSysExit:
    case Ev::GoPark:
    case Ev::GoStart:
    case Ev::GoEnd:
      break;
    default:
      return;
  }
  auto it = live_.find(gp->goid);
  if (it == live_.end()) return;
  Watched& w = it->second;
  switch (e) {
    case Ev::GoUnpark:
      w.readied = w.runnable = now;
      w.created = false;
      w.parked = -1;
      break;
    case Ev::GoSched:
    case Ev::GoPreempt:
      w.runnable = now;
      break;
    case Ev::GoSysExit:
      if (arg == 2) w.runnable = now;  // no P: it waits runnable on the global queue
      break;
    case Ev::GoPark:
      w.parked = now;
      break;
    case Ev::GoStart:
      check_start(w, now, false);
      check_runnable(w, now, false);
      w.readied = w.runnable = -1;
      break;
    case Ev::GoEnd:
      live_.erase(it);
      break;
    default:
      break;
  }
}

// From being readied (or created) to its next start, checked when it starts, or at the end of the
// run if it has not started by then.
void AssertionChecker::check_start(const Watched& w, int64_t now, bool at_end) {
  if (w.readied < 0) return;
  const int64_t waited = now - w.readied;
  each_about(w, [&](int32_t i, const scenario::Assertion& a) {
    if (a.kind != AssertKind::StartLatency || waited <= a.limit) return;
    const std::string readied = w.created ? "created" : "readied";
    violate(i, now,
            at_end ? who(w) + " was " + readied + " at " + go_duration(w.readied) +
                         " and had not started when the run ended at " + go_duration(now) + ", " +
                         go_duration(waited) + " later; limit " + go_duration(a.limit)
                   : who(w) + " started " + go_duration(waited) + " after being " + readied + " at " +
                         go_duration(w.readied) + "; limit " + go_duration(a.limit));
  });
}

void AssertionChecker::check_runnable(const Watched& w, int64_t now, bool at_end) {
  if (w.runnable < 0) return;
  const int64_t waited = now - w.runnable;
  for (int32_t i : runnable_) {
    const scenario::Assertion& a = sc_.assertions[static_cast<size_t>(i)];
    if (waited <= a.limit) continue;
    violate(i, now,
            at_end ? who(w) + " was runnable from " + go_duration(w.runnable) +
                         " and had not started when the run ended at " + go_duration(now) + ", " +
                         go_duration(waited) + " later; limit " + go_duration(a.limit)
                   : who(w) + " waited runnable " + go_duration(waited) + ", from " +
                         go_duration(w.runnable) + " to " + go_duration(now) + "; limit " +
                         go_duration(a.limit));
  }
}

// The channel's buffer and its wait queues. A select's sudog stays queued on its other channels
// until the select's goroutine runs again after being woken; it is not waiting then (selectDone,
// as waitq.dequeue skips it).
void AssertionChecker::check_chan(int32_t index, int64_t now) {
  const scenario::Assertion& a = sc_.assertions[static_cast<size_t>(index)];
  const rt::hchan* c = interp_.chan(a.chan);
  const uint64_t buffered = c->qcount.peek();
  auto waiters = [&](const rt::waitq& q, const std::string& what) -> std::string {
    std::vector<int64_t> goids;
    for (const rt::sudog* s = q.first.peek(); s != nullptr; s = s->next) {
      if (s->isSelect && s->g->selectDone.peek() != 0) continue;
      goids.push_back(s->g->goid);
    }
    if (goids.empty()) return "";
    std::string out = plural(goids.size(), "goroutine", "goroutines") + " waiting to " + what + " (";
    for (size_t k = 0; k < goids.size() && k < 3; k++) out += (k > 0 ? ", " : "") + std::to_string(goids[k]);
    return out + (goids.size() > 3 ? ", ...)" : ")");
  };
  std::vector<std::string> parts;
  if (buffered > 0) parts.push_back(plural(buffered, "buffered element", "buffered elements"));
  if (std::string s = waiters(c->sendq, "send"); !s.empty()) parts.push_back(s);
  if (std::string r = waiters(c->recvq, "receive"); !r.empty()) parts.push_back(r);
  if (parts.empty()) return;
  std::string detail = "channel \"" + sc_.chans[static_cast<size_t>(a.chan)].name +
                       "\" is not empty when the program exits at " + go_duration(now) + ": ";
  for (size_t k = 0; k < parts.size(); k++) {
    detail += (k == 0 ? "" : k + 1 == parts.size() ? " and " : ", ") + parts[k];
  }
  violate(index, now, detail);
}

void AssertionChecker::check_finished(const Watched& w, int64_t now) {
  // The main goroutine's return is the program's exit: it ends there.
  if (w.gp->startpc == 0) return;
  std::string state;
  switch (w.gp->atomicstatus.peek() & ~rt::_Gscan) {
    case rt::_Gwaiting:
      state = "blocked (" + std::string(rt::waitReasonString(w.gp->waitreason)) + ")" +
              (w.parked >= 0 ? " since " + go_duration(w.parked) : "");
      break;
    case rt::_Grunnable: state = "runnable"; break;
    case rt::_Grunning: state = "running"; break;
    case rt::_Gsyscall: state = "in a system call"; break;
    default: state = "not ended"; break;
  }
  each_about(w, [&](int32_t i, const scenario::Assertion& a) {
    if (a.kind != AssertKind::FinishedAtExit) return;
    violate(i, now, who(w) + " had not ended when the program exited at " + go_duration(now) + ": " + state);
  });
}

void AssertionChecker::at_exit(int64_t now, bool exited) {
  std::vector<const Watched*> live;
  live.reserve(live_.size());
  for (const auto& [goid, w] : live_) live.push_back(&w);
  std::sort(live.begin(), live.end(), [](const Watched* a, const Watched* b) { return a->gp->goid < b->gp->goid; });
  for (const Watched* w : live) {
    check_start(*w, now, true);
    check_runnable(*w, now, true);
  }
  for (size_t i = 0; i < sc_.assertions.size(); i++) {
    const AssertKind k = sc_.assertions[i].kind;
    if (k != AssertKind::ChanEmptyAtExit && k != AssertKind::FinishedAtExit) continue;
    if (!exited) {
      unchecked_++;
    } else if (k == AssertKind::ChanEmptyAtExit) {
      check_chan(static_cast<int32_t>(i), now);
    }
  }
  if (exited) {
    for (const Watched* w : live) check_finished(*w, now);
  }
  for (size_t i = 0; i < count_.size(); i++) {
    if (count_[i] <= kShown) continue;
    const auto index = static_cast<int32_t>(i);
    violations_.push_back({where(index),
                           "and " + plural(count_[i] - kShown, "more violation", "more violations") + " (" +
                               std::to_string(count_[i]) + " in all, the last at " + go_duration(last_at_[i]) + ")",
                           last_at_[i], index});
  }
}

}  // namespace gmp::workload
