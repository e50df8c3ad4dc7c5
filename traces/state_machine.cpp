// The transitions of the schema's event kinds, and the machine that checks a trace against them
// (see state_machine.h).
#include "traces/state_machine.h"

#include <algorithm>

namespace gmp::trace {

const char* gstatus_name(GStatus s) {
  switch (s) {
    case GStatus::None: return "none";
    case GStatus::Runnable: return "runnable";
    case GStatus::Running: return "running";
    case GStatus::Waiting: return "waiting";
    case GStatus::Syscall: return "in a system call";
    case GStatus::Dead: return "dead";
  }
  return "?";
}

// ---- Issues -------------------------------------------------------------------------------------

namespace {

std::string gname(int64_t g) { return "G" + std::to_string(g); }
std::string mname(int64_t m) { return "M" + std::to_string(m); }
std::string pname(int64_t p) { return "P" + std::to_string(p); }
const char* sname(int64_t s) { return gstatus_name(static_cast<GStatus>(s)); }

}  // namespace

std::string Issue::text() const {
  switch (code) {
    case Code::TimeBack: return "time goes back from " + std::to_string(a) + " to " + std::to_string(b);
    case Code::NoG: return "no G";
    case Code::NoM: return "no M";
    case Code::NoP: return "no P";
    case Code::NeedsMAndP: return "needs an M and a P";
    case Code::NeverCreated: return gname(a) + " was never created";
    case Code::CreatedAgain: return gname(a) + " created again";
    case Code::WrongState: return gname(a) + " is " + sname(b) + ", not " + sname(c);
    case Code::StartsOnNoM: return gname(a) + " starts on no M";
    case Code::MBusy: return mname(a) + " starts " + gname(b) + " while it runs " + gname(c);
    case Code::PNotHeld:
      return gname(a) + " starts on " + pname(b) + ", which " + mname(c) + " does not hold" +
             (d >= 0 ? " (" + mname(d) + " does)" : "");
    case Code::PBusy: return pname(a) + " starts " + gname(b) + " while it runs " + gname(c);
    case Code::RunsElsewhere: return gname(a) + " runs on " + mname(b) + ", not on " + mname(c);
    case Code::SyscallElsewhere: return gname(a) + " entered its system call on " + mname(b) + ", not on " + mname(c);
    case Code::ReleasedByOther:
      return pname(a) + " released by " + mname(b) + ", but " + (c >= 0 ? mname(c) + " holds it" : "no M holds it");
    case Code::ReleasedRunning: return pname(a) + " released while " + gname(b) + " runs on it";
    case Code::TakesButHolds: return mname(a) + " takes " + pname(b) + " but holds " + pname(c);
    case Code::TakesHeld: return mname(a) + " takes " + pname(b) + ", which " + mname(c) + " holds";
    case Code::HandedOffHeld: return pname(a) + " handed off while " + mname(b) + " holds it";
    case Code::NoValue: return "no value";
    case Code::NegativeValue: return "negative value " + std::to_string(a);
    case Code::CycleOpen: return "GC cycle " + std::to_string(b) + " begins while cycle " + std::to_string(a) + " runs";
    case Code::CycleBack:
      return "GC cycle " + std::to_string(b) + " after cycle " + std::to_string(a) + ": numbers must increase";
    case Code::NoCycle: return "no GC cycle is running";
    case Code::CycleOther: return "ends GC cycle " + std::to_string(b) + ", but cycle " + std::to_string(a) + " runs";
    case Code::StwNested:
      return "the world is already stopped (" + StwReason_Name(static_cast<StwReason>(a)) + ")";
    case Code::NotStopped: return "the world is not stopped";
    case Code::StwReasonOther:
      return "restarts the world stopped for " + StwReason_Name(static_cast<StwReason>(a)) + " with reason " +
             StwReason_Name(static_cast<StwReason>(b));
    case Code::StwElsewhere: return mname(b) + " restarts the world " + mname(a) + " stopped";
    case Code::AssistAgain: return gname(a) + " is already in a mark assist";
    case Code::NoAssist: return gname(a) + " is not in a mark assist";
    case Code::ExitsInAssist: return gname(a) + " exits during its mark assist";
    case Code::SweepAgain: return mname(a) + " is already sweeping";
    case Code::NoSweep: return mname(a) + " is not sweeping";
    case Code::ThrottledAgain: return mname(a) + " is already throttled";
    case Code::NotThrottled: return mname(a) + " is not throttled";
    case Code::BadProcs: return "GOMAXPROCS " + std::to_string(a) + " is below 1";
    case Code::PGone: return pname(a) + " is gone: GOMAXPROCS is " + std::to_string(b);
  }
  return "?";
}

// ---- The machine --------------------------------------------------------------------------------

void StateMachine::issue(Issue::Code code, int64_t a, int64_t b, int64_t c, int64_t d) {
  if (t_.n_issues < Transition::kMaxIssues) t_.issues[t_.n_issues++] = Issue{code, a, b, c, d};
}

int64_t StateMachine::holder(uint32_t process, int64_t p) const {
  const auto it = ps_.find(Key{process, p});
  return it != ps_.end() ? it->second.m : -1;
}

const Transition& StateMachine::apply(const Event& e) {
  t_.n_issues = 0;
  t_.rule = rule(e.kind(), e.reason());
  t_.g_before = t_.g_after = GStatus::None;
  process_ = e.process();
  if (e.ts() < last_ts_) issue(Issue::Code::TimeBack, last_ts_, e.ts());
  last_ts_ = std::max(last_ts_, e.ts());
  if (t_.rule.moves_g()) move_g(e, t_.rule);
  own_p(e, t_.rule);
  if (t_.rule.span != GcSpan::None || t_.rule.counter != Counter::None) gc(e, t_.rule);
  containers(e, t_.rule);
  if (e.kind() == KIND_GO_EXIT && e.has_g()) {
    if (auto it = assisting_.find(Key{process_, e.g()}); it != assisting_.end() && it->second) {
      issue(Issue::Code::ExitsInAssist, e.g());
      it->second = false;
    }
  }
  return t_;
}

void StateMachine::gc(const Event& e, const Rule& r) {
  const bool opens = r.span_edge > 0;
  if (r.counter != Counter::None || r.span == GcSpan::Cycle) {
    if (!e.has_value()) {
      issue(Issue::Code::NoValue);
    } else if (e.value() < 0) {
      issue(Issue::Code::NegativeValue, e.value());
    }
  }
  if (e.kind() == KIND_GC_SWEEP_END && e.has_value() && e.value() < 0) issue(Issue::Code::NegativeValue, e.value());
  Gc& gc = gc_[process_];
  switch (r.span) {
    case GcSpan::None: break;
    case GcSpan::Cycle:
      if (!e.has_value()) break;
      if (opens) {
        if (gc.cycle >= 0) issue(Issue::Code::CycleOpen, gc.cycle, e.value());
        if (e.value() <= gc.last_cycle) issue(Issue::Code::CycleBack, gc.last_cycle, e.value());
        gc.cycle = e.value();
        gc.last_cycle = std::max(gc.last_cycle, e.value());
      } else {
        if (gc.cycle < 0) {
          if (opt_.from_start) issue(Issue::Code::NoCycle);
        } else if (gc.cycle != e.value()) {
          issue(Issue::Code::CycleOther, gc.cycle, e.value());
        }
        gc.cycle = -1;
        gc.last_cycle = std::max(gc.last_cycle, e.value());
      }
      break;
    case GcSpan::Stw:
      if (opens) {
        if (gc.stopped) issue(Issue::Code::StwNested, gc.stw_reason);
        gc.stopped = true;
        gc.stw_reason = e.stw_reason();
        gc.stw_m = e.has_m() ? e.m() : -1;
      } else {
        if (!gc.stopped) {
          if (opt_.from_start) issue(Issue::Code::NotStopped);
        } else {
          if (gc.stw_reason != e.stw_reason()) issue(Issue::Code::StwReasonOther, gc.stw_reason, e.stw_reason());
          if (gc.stw_m >= 0 && e.has_m() && e.m() != gc.stw_m) issue(Issue::Code::StwElsewhere, gc.stw_m, e.m());
        }
        gc.stopped = false;
      }
      break;
    case GcSpan::Assist: {
      if (!e.has_g()) {
        issue(Issue::Code::NoG);
        break;
      }
      // An assist with no M is one a trace restates at its start for a G that is not on an M:
      // parked on the assist queue, or runnable after a preemption inside its assist (Go's
      // GCMarkAssistActive names either). It says nothing of the G's state, which its own next
      // event sets; one with an M begins or ends while the G runs there.
      if (e.has_m()) {
        G* g = g_of(e, GStatus::Running);
        if (g != nullptr && g->state != GStatus::Running) {
          issue(Issue::Code::WrongState, e.g(), static_cast<int64_t>(g->state), static_cast<int64_t>(GStatus::Running));
        }
      }
      bool& in = assisting_[Key{process_, e.g()}];
      if (opens && in) issue(Issue::Code::AssistAgain, e.g());
      if (!opens && !in && opt_.from_start) issue(Issue::Code::NoAssist, e.g());
      in = opens;
      break;
    }
    case GcSpan::Sweep: {
      if (!e.has_m()) {
        issue(Issue::Code::NoM);
        break;
      }
      bool& in = sweeping_[Key{process_, e.m()}];
      if (opens && in) issue(Issue::Code::SweepAgain, e.m());
      if (!opens && !in && opt_.from_start) issue(Issue::Code::NoSweep, e.m());
      in = opens;
      break;
    }
  }
}

void StateMachine::containers(const Event& e, const Rule& r) {
  if (r.sets_procs) {
    if (!e.has_value()) {
      issue(Issue::Code::NoValue);
    } else if (e.value() < 1) {
      issue(Issue::Code::BadProcs, e.value());
    } else {
      procs_[process_] = e.value();
      if (e.has_m()) procs_mover_[process_] = static_cast<int64_t>(e.m());
    }
  } else if (e.has_p() && !procs_.empty()) {  // nothing to check before the first PROCS
    // procresize's caller may hold a P that goes away: it stops its goroutine there and releases
    // it after the PROCS event (Go traces it in that order too), then takes P 0.
    auto mover = procs_mover_.find(process_);
    const bool moving = mover != procs_mover_.end() && e.has_m() && mover->second == static_cast<int64_t>(e.m()) &&
                        (e.kind() == KIND_GO_STOP || e.kind() == KIND_P_RELEASE);
    if (moving) {
      if (e.kind() == KIND_P_RELEASE) procs_mover_.erase(mover);
    } else if (auto it = procs_.find(process_); it != procs_.end() && e.p() >= it->second) {
      issue(Issue::Code::PGone, e.p(), it->second);
    }
  }
  if (r.throttle == 0) return;
  if (!e.has_m()) {
    issue(Issue::Code::NoM);
    return;
  }
  bool& in = throttled_[Key{process_, e.m()}];
  if (r.throttle > 0 && in) issue(Issue::Code::ThrottledAgain, e.m());
  if (r.throttle < 0 && !in && opt_.from_start) issue(Issue::Code::NotThrottled, e.m());
  in = r.throttle > 0;
}

void StateMachine::move_g(const Event& e, const Rule& r) {
  if (r.creates_g()) {
    if (!e.has_g()) {
      issue(Issue::Code::NoG);
    } else if (gs_.count(Key{process_, e.g()}) != 0) {
      issue(Issue::Code::CreatedAgain, e.g());
    } else {
      g_at(e.g()).state = r.to;
      t_.g_after = r.to;
    }
    return;
  }
  G* g = g_of(e, r.need);
  if (g == nullptr) return;
  t_.g_before = g->state;
  const bool ok = g->state == r.need;
  if (!ok) issue(Issue::Code::WrongState, e.g(), static_cast<int64_t>(g->state), static_cast<int64_t>(r.need));
  if (ok && r.need == GStatus::Running) leave_running(e, *g, r.to);
  if (ok && r.need == GStatus::Syscall) leave_syscall(e, *g);
  if (ok || r.always) {
    if (r.to == GStatus::Running) {
      if (r.takes_p && e.has_p() && e.has_m()) acquire_p(e);  // it goes on with the P it kept or an idle one
      start(e, *g);
    } else {
      g->state = r.to;
    }
  }
  t_.g_after = g->state;
}

StateMachine::G* StateMachine::g_of(const Event& e, GStatus assumed) {
  if (!e.has_g()) {
    issue(Issue::Code::NoG);
    return nullptr;
  }
  auto it = gs_.find(Key{process_, e.g()});
  if (it != gs_.end()) return &it->second;
  if (opt_.from_start) issue(Issue::Code::NeverCreated, e.g());
  G& g = g_at(e.g());
  g.state = assumed;
  if (assumed == GStatus::Running || assumed == GStatus::Syscall) {
    // Seen for the first time while it runs: it runs where this event says.
    g.m = e.has_m() ? e.m() : -1;
    g.p = assumed == GStatus::Running && e.has_p() ? e.p() : -1;
    if (g.m >= 0 && m_at(g.m).g < 0) m_at(g.m).g = e.g();
    if (g.p >= 0 && p_at(g.p).g < 0) p_at(g.p).g = e.g();
  }
  return &g;
}

void StateMachine::start(const Event& e, G& g) {
  if (!e.has_m()) {
    issue(Issue::Code::StartsOnNoM, e.g());
    return;
  }
  M& m = m_at(e.m());
  if (m.g >= 0 && m.g != e.g()) issue(Issue::Code::MBusy, e.m(), e.g(), m.g);
  m.g = e.g();
  g.state = GStatus::Running;
  g.m = e.m();
  g.p = -1;
  if (!e.has_p()) return;
  P& p = p_at(e.p());
  if (p.m != e.m()) {
    if (p.m < 0 && m.p < 0 && !opt_.from_start) {  // first sight of this ownership
      p.m = e.m();
      m.p = e.p();
    } else {
      issue(Issue::Code::PNotHeld, e.g(), e.p(), e.m(), p.m);
    }
  }
  if (p.g >= 0 && p.g != e.g()) issue(Issue::Code::PBusy, e.p(), e.g(), p.g);
  p.g = e.g();
  g.p = e.p();
}

void StateMachine::leave_running(const Event& e, G& g, GStatus to) {
  if (g.m >= 0 && e.has_m() && e.m() != g.m) issue(Issue::Code::RunsElsewhere, e.g(), g.m, e.m());
  if (g.m >= 0) {
    M& m = m_at(g.m);
    if (m.g == e.g() && to != GStatus::Syscall) m.g = -1;  // a G in a system call keeps its M
  }
  if (g.p >= 0) {
    P& p = p_at(g.p);
    if (p.g == e.g()) p.g = -1;
  }
  g.state = to;
  g.p = -1;
  if (to != GStatus::Syscall) g.m = -1;
}

void StateMachine::leave_syscall(const Event& e, G& g) {
  if (e.has_m() && g.m >= 0 && e.m() != g.m) issue(Issue::Code::SyscallElsewhere, e.g(), g.m, e.m());
  if (g.m >= 0) m_at(g.m).g = -1;
  g.m = -1;
  g.state = GStatus::Runnable;
}

void StateMachine::own_p(const Event& e, const Rule& r) {
  switch (r.own) {
    case POwn::None: break;
    case POwn::Acquire:
      if (!e.has_m() || !e.has_p()) {
        issue(Issue::Code::NeedsMAndP);
      } else {
        acquire_p(e);
      }
      break;
    case POwn::Handoff:
      if (!e.has_p()) {
        issue(Issue::Code::NoP);
      } else if (const int64_t holder = p_at(e.p()).m; holder >= 0) {
        issue(Issue::Code::HandedOffHeld, e.p(), holder);
      }
      break;
    case POwn::Release:
      if (!e.has_p()) {
        issue(Issue::Code::NoP);
      } else if (r.holder_is_peer_m && e.has_peer_m()) {
        release_p(e, e.peer_m());
      } else if (!e.has_m()) {
        issue(Issue::Code::NoM);
      } else {
        release_p(e, e.m());
      }
      break;
  }
}

void StateMachine::release_p(const Event& e, int64_t holder) {
  P& p = p_at(e.p());
  if (p.m != holder && (p.m >= 0 || opt_.from_start)) issue(Issue::Code::ReleasedByOther, e.p(), holder, p.m);
  if (p.g >= 0) issue(Issue::Code::ReleasedRunning, e.p(), p.g);
  if (p.m >= 0) m_at(p.m).p = -1;
  p.m = -1;
  p.g = -1;
}

void StateMachine::acquire_p(const Event& e) {
  M& m = m_at(e.m());
  P& p = p_at(e.p());
  if (m.p >= 0 && m.p != e.p()) {
    issue(Issue::Code::TakesButHolds, e.m(), e.p(), m.p);
    p_at(m.p).m = -1;
  }
  if (p.m >= 0 && p.m != e.m()) {
    issue(Issue::Code::TakesHeld, e.m(), e.p(), p.m);
    m_at(p.m).p = -1;
  }
  m.p = e.p();
  p.m = e.m();
}

}  // namespace gmp::trace
