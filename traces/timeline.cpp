#include "traces/timeline.h"

#include "traces/state_machine.h"
#include "traces/trace_reader.h"

namespace gmp::trace {

const char* gstate_name(GState s) {
  switch (s) {
    case GState::Runnable:
      return "runnable";
    case GState::Running:
      return "running";
    case GState::Blocked:
      return "blocked";
    case GState::Syscall:
      return "in a system call";
  }
  return "?";
}

std::string g_text(const GKey& k) {
  return "G" + std::to_string(k.g) + (k.process != 0 ? "@" + std::to_string(k.process) : "");
}

std::vector<Process> Timeline::processes() const {
  std::vector<Process> out(header.processes().begin(), header.processes().end());
  if (out.empty()) {
    Process p;
    p.set_num_ps(header.num_ps());
    out.push_back(p);
  }
  return out;
}

namespace {

// The interval of a G in `s` (never None or Dead: a dead G has none).
GState interval_state(GStatus s) {
  switch (s) {
    case GStatus::Running: return GState::Running;
    case GStatus::Waiting: return GState::Blocked;
    case GStatus::Syscall: return GState::Syscall;
    default: return GState::Runnable;
  }
}

// The first line of a stack (its innermost frame), or "".
std::string first_line(const std::string& stack) { return stack.substr(0, stack.find('\n')); }

class Builder {
 public:
  explicit Builder(Timeline& tl) : tl_(tl) {}

  void on_event(const Event& e) {
    if (tl_.events == 0) tl_.t_begin = e.ts();
    tl_.events++;
    tl_.t_end = std::max(tl_.t_end, e.ts());
    tl_.kinds[e.kind()]++;
    count(e);
    collector(e);
    const Rule r = rule(e.kind(), e.reason());
    if (r.span != GcSpan::None) span(e, r);
    if (r.counter != Counter::None && e.has_value()) {
      (r.counter == Counter::HeapAlloc ? tl_.heap_alloc : tl_.heap_goal).push_back({e.ts(), e.value(), e.process()});
    }
    if (r.sets_procs && e.has_value()) tl_.procs.push_back({e.ts(), e.value(), e.process()});
    if (r.throttle != 0) throttle(e, r);
    if (!e.has_g()) return;
    if (!r.moves_g()) return;
    const int64_t t = e.ts();
    if (r.creates_g()) {
      GLife& g = tl_.gs[GKey{e.process(), e.g()}];
      g.parent = e.has_peer_g() ? e.peer_g() : -1;
      g.start_fn = e.label();
      g.create_site = first_line(e.stack());
      enter(g, interval_state(r.to), t, e);
    } else {
      GLife& g = life(e, interval_state(r.need));
      if (r.to == GStatus::Dead) {
        close(g, t);
        g.exited = true;
      } else {
        enter(g, interval_state(r.to), t, e);
        if (r.to == GStatus::Waiting && g.first_park_stack.empty()) g.first_park_stack = e.stack();
      }
    }
    if (r.edge == Edge::Create || r.edge == Edge::Ready) {
      wake(e, e.has_peer_g() ? e.peer_g() : -1, r.edge == Edge::Create);
    }
  }

  void finish() {
    // Spans still open end with the trace; their records are already in the lists.
    for (auto& [key, at] : open_) {
      GcSpanRecord& rec = key.span == GcSpan::None ? tl_.throttles[at] : list(key.span)[at];
      rec.t1 = tl_.t_end;
      rec.open_end = true;
    }
    for (auto& [id, g] : tl_.gs) {
      if (g.exited || g.intervals.empty()) continue;
      Interval& last = g.intervals.back();
      last.t1 = tl_.t_end;
      last.open_end = true;
    }
    for (const auto& [id, g] : tl_.gs) {
      for (const Interval& iv : g.intervals) {
        if (iv.state == GState::Running && iv.p >= 0) tl_.p_busy[{id.process, iv.p}] += iv.t1 - iv.t0;
      }
    }
  }

 private:
  // The G of e; one seen for the first time is taken to have been `before` since the trace began.
  GLife& life(const Event& e, GState before) {
    auto [it, fresh] = tl_.gs.try_emplace(GKey{e.process(), e.g()});
    if (fresh) {
      Interval iv;
      iv.state = before;
      iv.t0 = iv.t1 = tl_.t_begin;
      iv.assumed = true;
      if (before == GState::Running || before == GState::Syscall) {
        iv.m = e.has_m() ? e.m() : -1;
        iv.p = before == GState::Running && e.has_p() ? e.p() : -1;
      }
      it->second.intervals.push_back(iv);
    }
    return it->second;
  }

  void wake(const Event& e, int64_t by, bool create) {
    WakeEdge w;
    w.t = e.ts();
    w.g = e.g();
    w.process = e.process();
    w.by = by;
    w.create = create;
    w.interval = tl_.gs[GKey{e.process(), e.g()}].intervals.size() - 1;
    if (auto it = tl_.gs.find(GKey{e.process(), by}); by >= 0 && it != tl_.gs.end() && !it->second.intervals.empty()) {
      w.by_interval = it->second.intervals.size() - 1;
    }
    tl_.wakes.push_back(w);
  }

  static void close(GLife& g, int64_t t) {
    if (!g.intervals.empty()) g.intervals.back().t1 = t;
  }

  static void enter(GLife& g, GState s, int64_t t, const Event& e) {
    close(g, t);
    Interval iv;
    iv.state = s;
    iv.t0 = iv.t1 = t;
    iv.reason = e.reason();
    if (s == GState::Running || s == GState::Syscall) {
      iv.m = e.has_m() ? e.m() : -1;
      iv.p = s == GState::Running && e.has_p() ? e.p() : -1;
    }
    if (s == GState::Blocked) {
      iv.wait = e.wait_reason();
      iv.label = e.label();
      iv.site = first_line(e.stack());
    }
    g.intervals.push_back(std::move(iv));
  }

  void count(const Event& e) {
    switch (e.kind()) {
      case KIND_STEAL:
        tl_.steals++;
        tl_.stolen += e.has_count() ? static_cast<uint64_t>(std::max<int64_t>(e.count(), 0)) : 1;
        break;
      case KIND_M_WAKEUP:
        tl_.wakeups++;
        break;
      case KIND_PREEMPT_REQUEST:
        tl_.preempt_requests++;
        break;
      case KIND_GO_STOP:
        if (e.reason() == REASON_PREEMPT_ASYNC || e.reason() == REASON_PREEMPT_COOPERATIVE) tl_.preemptions++;
        break;
      case KIND_P_HANDOFF:
        tl_.handoffs++;
        break;
      case KIND_P_RELEASE:
        if (e.reason() == REASON_RETAKE) tl_.retakes++;
        break;
      case KIND_GO_SYSCALL_ENTER:
        tl_.syscalls++;
        break;
      default:
        break;
    }
  }

  // The open span of a kind: per process, and per G (assists) or M (sweeps).
  struct SpanKey {
    GcSpan span;
    uint32_t process;
    int64_t id;
    bool operator<(const SpanKey& o) const {
      if (span != o.span) return span < o.span;
      return process != o.process ? process < o.process : id < o.id;
    }
  };

  std::vector<GcSpanRecord>& list(GcSpan s) {
    switch (s) {
      case GcSpan::Cycle: return tl_.gc_cycles;
      case GcSpan::Stw: return tl_.stw_pauses;
      case GcSpan::Assist: return tl_.assists;
      default: return tl_.sweeps;
    }
  }

  void span(const Event& e, const Rule& r) {
    const int64_t id = r.span == GcSpan::Assist ? (e.has_g() ? e.g() : -1)
                       : r.span == GcSpan::Sweep ? (e.has_m() ? e.m() : -1)
                                                 : 0;
    const SpanKey key{r.span, e.process(), id};
    std::vector<GcSpanRecord>& out = list(r.span);
    auto it = open_.find(key);
    if (r.span_edge > 0) {
      if (it != open_.end()) {  // a BEGIN inside an open one (the validator reports it): that one ends here
        out[it->second].t1 = e.ts();
        open_.erase(it);
      }
      GcSpanRecord rec;
      rec.t0 = rec.t1 = e.ts();
      rec.process = e.process();
      if (e.has_g()) rec.g = e.g();
      if (e.has_m()) rec.m = e.m();
      if (e.has_p()) rec.p = e.p();
      if (r.span == GcSpan::Cycle && e.has_value()) rec.n = e.value();
      rec.stw_reason = e.stw_reason();
      open_[key] = out.size();
      out.push_back(rec);
      return;
    }
    GcSpanRecord* rec = nullptr;
    if (it != open_.end()) {
      rec = &out[it->second];
      open_.erase(it);
    } else {  // it began before the trace did
      GcSpanRecord fresh;
      fresh.t0 = tl_.t_begin;
      fresh.open_begin = true;
      fresh.process = e.process();
      if (e.has_g()) fresh.g = e.g();
      if (e.has_m()) fresh.m = e.m();
      if (e.has_p()) fresh.p = e.p();
      fresh.stw_reason = e.stw_reason();
      if (r.span == GcSpan::Cycle && e.has_value()) fresh.n = e.value();
      out.push_back(fresh);
      rec = &out.back();
    }
    rec->t1 = e.ts();
    if (r.span == GcSpan::Sweep && e.has_value()) rec->bytes = e.value();
  }

  // An M's throttled stretch (its key: span None, the process, the M).
  void throttle(const Event& e, const Rule& r) {
    if (!e.has_m()) return;
    const SpanKey key{GcSpan::None, e.process(), e.m()};
    auto it = open_.find(key);
    if (r.throttle > 0) {
      if (it != open_.end()) return;  // throttled again (the validator reports it): the first one goes on
      GcSpanRecord rec;
      rec.t0 = rec.t1 = e.ts();
      rec.process = e.process();
      rec.m = e.m();
      if (e.has_p()) rec.p = e.p();
      open_[key] = tl_.throttles.size();
      tl_.throttles.push_back(rec);
      return;
    }
    if (it != open_.end()) {
      tl_.throttles[it->second].t1 = e.ts();
      open_.erase(it);
      return;
    }
    GcSpanRecord rec;  // throttled before the trace began
    rec.t0 = tl_.t_begin;
    rec.t1 = e.ts();
    rec.open_begin = true;
    rec.process = e.process();
    rec.m = e.m();
    if (e.has_p()) rec.p = e.p();
    tl_.throttles.push_back(rec);
  }

  // What replay reads of the collector: the heap counter, the cycles' ends, the mark workers.
  void collector(const Event& e) {
    switch (e.kind()) {
      case KIND_HEAP_ALLOC: {
        HeapSample s;
        s.t = e.ts();
        if (e.has_g()) s.g = e.g();
        if (e.has_m()) s.m = e.m();
        if (e.has_p()) s.p = e.p();
        s.bytes = e.value();
        tl_.heap.push_back(s);
        break;
      }
      case KIND_GC_END: tl_.gc_ends.push_back(e.ts()); break;
      case KIND_GO_START:
        if (e.gc_worker_mode() != GC_WORKER_MODE_UNSPECIFIED && e.has_g()) tl_.gc_workers.insert(GKey{e.process(), e.g()});
        break;
      default: break;
    }
  }

  Timeline& tl_;
  std::map<SpanKey, size_t> open_;  // the open spans: their index in their list
};

}  // namespace

Timeline build_timeline(const std::string& path) {
  TraceReader r(path);
  Timeline tl;
  tl.header = r.header();
  Builder b(tl);
  Event e;
  while (r.next(e)) b.on_event(e);
  b.finish();
  return tl;
}

}  // namespace gmp::trace
