#include "traces/validate.h"

#include <utility>

#include "traces/trace_reader.h"

namespace gmp::trace {

namespace {

const char* state_name(int s) {
  static const char* const kNames[] = {"runnable", "running", "waiting", "in a system call", "dead"};
  return kNames[s];
}

std::string gname(int64_t g) { return "G" + std::to_string(g); }
std::string mname(int64_t m) { return "M" + std::to_string(m); }
std::string pname(int64_t p) { return "P" + std::to_string(p); }

}  // namespace

void Validator::issue(const Event& e, std::string what) {
  issue_count_++;
  if (issues_.size() < opt_.max_issues) issues_.push_back({index_, e.ts(), Kind_Name(e.kind()) + ": " + what});
}

Validator::G* Validator::g_of(const Event& e, GState assumed) {
  if (!e.has_g()) {
    issue(e, "no G");
    return nullptr;
  }
  auto it = gs_.find(e.g());
  if (it != gs_.end()) return &it->second;
  if (opt_.from_start) issue(e, gname(e.g()) + " was never created");
  G& g = gs_[e.g()];
  g.state = assumed;
  if (assumed == GState::Running || assumed == GState::Syscall) {
    // Seen for the first time while it runs: it runs where this event says.
    g.m = e.has_m() ? e.m() : -1;
    g.p = assumed == GState::Running && e.has_p() ? e.p() : -1;
    if (g.m >= 0 && ms_[g.m].g < 0) ms_[g.m].g = e.g();
    if (g.p >= 0 && ps_[g.p].g < 0) ps_[g.p].g = e.g();
  }
  return &g;
}

void Validator::start(const Event& e, G& g) {
  if (!e.has_m()) {
    issue(e, gname(e.g()) + " starts on no M");
    return;
  }
  M& m = ms_[e.m()];
  if (m.g >= 0 && m.g != e.g()) issue(e, mname(e.m()) + " starts " + gname(e.g()) + " while it runs " + gname(m.g));
  m.g = e.g();
  g.state = GState::Running;
  g.m = e.m();
  g.p = -1;
  if (!e.has_p()) return;
  P& p = ps_[e.p()];
  if (p.m != e.m()) {
    if (p.m < 0 && m.p < 0 && !opt_.from_start) {  // first sight of this ownership
      p.m = e.m();
      m.p = e.p();
    } else {
      issue(e, gname(e.g()) + " starts on " + pname(e.p()) + ", which " + mname(e.m()) + " does not hold" +
                   (p.m >= 0 ? " (" + mname(p.m) + " does)" : ""));
    }
  }
  if (p.g >= 0 && p.g != e.g()) issue(e, pname(e.p()) + " starts " + gname(e.g()) + " while it runs " + gname(p.g));
  p.g = e.g();
  g.p = e.p();
}

void Validator::stop(const Event& e, G& g, GState to) {
  if (g.m >= 0 && e.has_m() && e.m() != g.m) {
    issue(e, gname(e.g()) + " runs on " + mname(g.m) + ", not on " + mname(e.m()));
  }
  if (g.m >= 0) {
    M& m = ms_[g.m];
    if (m.g == e.g() && to != GState::Syscall) m.g = -1;
  }
  if (g.p >= 0) {
    P& p = ps_[g.p];
    if (p.g == e.g()) p.g = -1;
  }
  g.state = to;
  g.p = -1;
  if (to != GState::Syscall) g.m = -1;
}

void Validator::release_p(const Event& e, int64_t holder) {
  P& p = ps_[e.p()];
  if (p.m != holder && (p.m >= 0 || opt_.from_start)) {
    issue(e, pname(e.p()) + " released by " + mname(holder) + ", but " +
                 (p.m >= 0 ? mname(p.m) + " holds it" : std::string("no M holds it")));
  }
  if (p.g >= 0) issue(e, pname(e.p()) + " released while " + gname(p.g) + " runs on it");
  if (p.m >= 0) ms_[p.m].p = -1;
  p.m = -1;
  p.g = -1;
}

void Validator::acquire_p(const Event& e) {
  M& m = ms_[e.m()];
  P& p = ps_[e.p()];
  if (m.p >= 0 && m.p != e.p()) {
    issue(e, mname(e.m()) + " takes " + pname(e.p()) + " but holds " + pname(m.p));
    ps_[m.p].m = -1;
  }
  if (p.m >= 0 && p.m != e.m()) {
    issue(e, mname(e.m()) + " takes " + pname(e.p()) + ", which " + mname(p.m) + " holds");
    ms_[p.m].p = -1;
  }
  m.p = e.p();
  p.m = e.m();
}

void Validator::on_event(const Event& e) {
  if (e.ts() < last_ts_) issue(e, "time goes back from " + std::to_string(last_ts_) + " to " + std::to_string(e.ts()));
  last_ts_ = std::max(last_ts_, e.ts());
  auto need = [&](G* g, GState s) {
    if (g == nullptr) return false;
    if (g->state == s) return true;
    issue(e,
          gname(e.g()) + " is " + state_name(static_cast<int>(g->state)) + ", not " + state_name(static_cast<int>(s)));
    return false;
  };
  switch (e.kind()) {
    case KIND_GO_CREATE:
      if (!e.has_g()) {
        issue(e, "no G");
      } else if (gs_.count(e.g()) != 0) {
        issue(e, gname(e.g()) + " created again");
      } else {
        gs_[e.g()] = G{};
      }
      break;
    case KIND_GO_START:
      if (G* g = g_of(e, GState::Runnable)) {
        need(g, GState::Runnable);
        start(e, *g);
      }
      break;
    case KIND_GO_STOP:
    case KIND_GO_PARK:
    case KIND_GO_EXIT:
    case KIND_GO_SYSCALL_ENTER:
      if (G* g = g_of(e, GState::Running); need(g, GState::Running)) {
        const GState to = e.kind() == KIND_GO_STOP   ? GState::Runnable
                          : e.kind() == KIND_GO_PARK ? GState::Waiting
                          : e.kind() == KIND_GO_EXIT ? GState::Dead
                                                     : GState::Syscall;
        stop(e, *g, to);
      }
      break;
    case KIND_GO_UNPARK:
      if (G* g = g_of(e, GState::Waiting); need(g, GState::Waiting)) g->state = GState::Runnable;
      break;
    case KIND_GO_SYSCALL_EXIT:
      if (G* g = g_of(e, GState::Syscall); need(g, GState::Syscall)) {
        if (e.has_m() && g->m >= 0 && e.m() != g->m) {
          issue(e, gname(e.g()) + " entered its system call on " + mname(g->m) + ", not on " + mname(e.m()));
        }
        if (g->m >= 0) ms_[g->m].g = -1;
        g->m = -1;
        g->state = GState::Runnable;
        if (e.reason() != REASON_EXITSYSCALL_NO_P) {
          // It goes on running, with the P it kept or an idle one, which its M now holds.
          if (e.has_p() && e.has_m()) acquire_p(e);
          start(e, *g);
        }
      }
      break;
    case KIND_P_ACQUIRE:
      if (!e.has_m() || !e.has_p()) {
        issue(e, "needs an M and a P");
        break;
      }
      acquire_p(e);
      break;
    case KIND_P_HANDOFF:
      if (!e.has_p()) {
        issue(e, "no P");
      } else if (ps_[e.p()].m >= 0) {
        issue(e, pname(e.p()) + " handed off while " + mname(ps_[e.p()].m) + " holds it");
      }
      break;
    case KIND_P_RELEASE:
      if (!e.has_p()) {
        issue(e, "no P");
      } else if (e.reason() == REASON_RETAKE && e.has_peer_m()) {
        release_p(e, e.peer_m());
      } else if (!e.has_m()) {
        issue(e, "no M");
      } else {
        release_p(e, e.m());
      }
      break;
    default:
      break;
  }
  index_++;
}

Validator validate_file(const std::string& path, size_t max_issues) {
  TraceReader r(path);
  Validator::Options opt;
  opt.from_start = r.header().clock() != CLOCK_REAL;
  opt.max_issues = max_issues;
  Validator v(opt);
  Event e;
  while (r.next(e)) v.on_event(e);
  return v;
}

}  // namespace gmp::trace
