#include "traces/stats.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>

#include "traces/text.h"

namespace gmp::trace {

namespace {

LatencySummary summarise(std::vector<int64_t>& v) {
  LatencySummary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))]; };
  s.p50 = at(0.50);
  s.p90 = at(0.90);
  s.p99 = at(0.99);
  s.max = v.back();
  double sum = 0;
  for (int64_t x : v) sum += static_cast<double>(x);
  s.mean = sum / static_cast<double>(v.size());
  return s;
}

double mean_utilisation(const TraceStats& s) {
  if (s.utilisation.empty()) return 0;
  double sum = 0;
  for (double u : s.utilisation) sum += u;
  return sum / static_cast<double>(s.utilisation.size());
}

std::string json_latency(const LatencySummary& l) {
  return strfmt("{\"n\": %" PRIu64 ", \"mean_ns\": %.1f, \"p50_ns\": %" PRId64 ", \"p90_ns\": %" PRId64
                ", \"p99_ns\": %" PRId64 ", \"max_ns\": %" PRId64 "}",
                l.n, l.mean, l.p50, l.p90, l.p99, l.max);
}

// "gc_mark_term" for STW_REASON_GC_MARK_TERM.
std::string stw_name(StwReason r) {
  std::string n = StwReason_Name(r);
  if (n.rfind("STW_REASON_", 0) == 0) n = n.substr(11);
  for (char& c : n) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return n.empty() ? "?" : n;
}

std::string json_span(const SpanSummary& s) {
  return strfmt("\"n\": %" PRIu64 ", \"total_ns\": %" PRId64 ", \"mean_ns\": %.1f, \"max_ns\": %" PRId64, s.n,
                s.total, s.mean(), s.max);
}

std::string bytes_text(int64_t b) {
  if (b >= (int64_t{1} << 20)) return strfmt("%.1f MiB", static_cast<double>(b) / (1 << 20));
  if (b >= (int64_t{1} << 10)) return strfmt("%.1f KiB", static_cast<double>(b) / (1 << 10));
  return strfmt("%" PRId64 " B", b);
}

GcSummary gc_summary(const Timeline& tl) {
  GcSummary g;
  g.any = !tl.gc_cycles.empty() || !tl.stw_pauses.empty() || !tl.assists.empty() || !tl.sweeps.empty() ||
          !tl.heap_alloc.empty() || !tl.heap_goal.empty();
  for (const GcSpanRecord& c : tl.gc_cycles) {
    if (c.whole()) g.cycles.add(c.t1 - c.t0);
  }
  for (const GcSpanRecord& p : tl.stw_pauses) {
    if (!p.whole()) continue;
    g.stw.add(p.t1 - p.t0);
    g.stw_by_reason[p.stw_reason].add(p.t1 - p.t0);
  }
  for (const GcSpanRecord& a : tl.assists) {
    g.assists.add(a.t1 - a.t0);
    g.assist_by_g[a.g] += a.t1 - a.t0;
  }
  for (const GcSpanRecord& w : tl.sweeps) {
    g.sweeps.add(w.t1 - w.t0);
    if (w.bytes > 0) g.swept_bytes += w.bytes;
  }
  for (const CounterSample& c : tl.heap_alloc) {
    g.heap_samples++;
    g.heap_max = std::max(g.heap_max, c.value);
    g.heap_last = c.value;
  }
  for (const CounterSample& c : tl.heap_goal) {
    g.goal_samples++;
    g.goal_last = c.value;
  }
  return g;
}

ThrottleSummary throttle_summary(const Timeline& tl, uint32_t process, int64_t period, bool all) {
  ThrottleSummary t;
  std::set<int64_t> periods;
  for (const GcSpanRecord& r : tl.throttles) {
    if (!all && r.process != process) continue;
    t.stretches.add(r.t1 - r.t0);
    if (period > 0) periods.insert((r.t0 - tl.t_begin) / period);
  }
  t.periods = periods.size();
  for (const CounterSample& c : tl.procs) {
    if (!all && c.process != process) continue;
    t.procs_changes++;
    t.procs_last = c.value;
  }
  return t;
}

bool throttle_any(const ThrottleSummary& t) { return t.stretches.n != 0 || t.procs_changes != 0; }

std::string throttle_text(const ThrottleSummary& t) {
  std::string out = strfmt("throttled: %" PRIu64 " stretches of Ms, total %s, max %s", t.stretches.n,
                           human_ns(static_cast<double>(t.stretches.total)).c_str(),
                           human_ns(static_cast<double>(t.stretches.max)).c_str());
  if (t.periods != 0) out += strfmt(", in %" PRIu64 " periods", t.periods);
  if (t.procs_changes != 0) out += strfmt("; GOMAXPROCS changed %" PRIu64 " times, to %" PRId64 " last", t.procs_changes, t.procs_last);
  return out;
}

std::string json_throttle(const ThrottleSummary& t) {
  return "{" + json_span(t.stretches) +
         strfmt(", \"periods\": %" PRIu64 ", \"procs_changes\": %" PRIu64 ", \"procs_last\": %" PRId64 "}", t.periods,
                t.procs_changes, t.procs_last);
}

std::string json_string(const std::string& in) {
  std::string out;
  for (char c : in) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

}  // namespace

TraceStats compute_stats(const Timeline& tl) {
  TraceStats s;
  s.producer = tl.header.producer();
  s.span = tl.t_end - tl.t_begin;
  s.num_ps = tl.header.num_ps();
  s.events = tl.events;
  s.gs = tl.gs.size();
  std::vector<int64_t> all;
  std::map<uint32_t, std::vector<int64_t>> by_process;
  for (const auto& [id, life] : tl.gs) {
    GStats g;
    g.g = id.g;
    g.process = id.process;
    std::vector<int64_t> mine;
    for (size_t i = 0; i < life.intervals.size(); i++) {
      const Interval& iv = life.intervals[i];
      const int64_t d = iv.t1 - iv.t0;
      switch (iv.state) {
        case GState::Running:
          g.running += d;
          break;
        case GState::Runnable:
          g.runnable += d;
          // A wait counts when it is seen whole: it began in the trace and ended by running.
          if (!iv.assumed && !iv.open_end && i + 1 < life.intervals.size() &&
              life.intervals[i + 1].state == GState::Running) {
            mine.push_back(d);
          }
          break;
        case GState::Blocked:
          g.blocked += d;
          break;
        case GState::Syscall:
          g.syscall += d;
          break;
      }
    }
    all.insert(all.end(), mine.begin(), mine.end());
    std::vector<int64_t>& of = by_process[id.process];
    of.insert(of.end(), mine.begin(), mine.end());
    g.latency = summarise(mine);
    s.per_g.push_back(g);
  }
  for (int64_t x : all) {
    size_t b = 0;
    while (b < 63 && (int64_t{1} << b) <= x) b++;
    if (s.latency_log2.size() <= b) s.latency_log2.resize(b + 1, 0);
    s.latency_log2[b]++;
  }
  s.latency = summarise(all);
  // Each process's Ps: those its header names and those that ran a G.
  auto utilisation = [&](uint32_t process, int64_t nps) {
    for (const auto& [key, busy] : tl.p_busy) {
      if (key.first == process) nps = std::max<int64_t>(nps, key.second + 1);
    }
    std::vector<double> u(static_cast<size_t>(std::max<int64_t>(nps, 0)), 0.0);
    for (const auto& [key, busy] : tl.p_busy) {
      if (key.first == process && key.second >= 0 && s.span > 0)
        u[static_cast<size_t>(key.second)] = static_cast<double>(busy) / static_cast<double>(s.span);
    }
    return u;
  };
  const std::vector<Process> procs = tl.processes();
  if (procs.size() == 1) {
    s.utilisation = utilisation(procs[0].id(), s.num_ps);
  } else {
    for (const Process& p : procs) {
      ProcessStats ps;
      ps.id = p.id();
      ps.name = p.name();
      ps.num_ps = p.num_ps();
      ps.cpu_quota = p.cpu_quota();
      ps.cpu_period = p.cpu_period();
      for (const auto& [id, life] : tl.gs) ps.gs += id.process == p.id() ? 1 : 0;
      ps.latency = summarise(by_process[p.id()]);
      ps.utilisation = utilisation(p.id(), p.num_ps());
      ps.throttle = throttle_summary(tl, p.id(), p.cpu_period(), false);
      s.utilisation.insert(s.utilisation.end(), ps.utilisation.begin(), ps.utilisation.end());
      s.processes.push_back(std::move(ps));
    }
  }
  {
    int64_t period = 0;  // the periods of a process of one: its own
    if (procs.size() == 1) period = procs[0].cpu_period();
    s.throttle = throttle_summary(tl, 0, period, true);
    if (procs.size() > 1) {
      s.throttle.periods = 0;
      for (const ProcessStats& ps : s.processes) s.throttle.periods += ps.throttle.periods;
    }
  }
  s.steals = tl.steals;
  s.stolen = tl.stolen;
  s.wakeups = tl.wakeups;
  s.preempt_requests = tl.preempt_requests;
  s.preemptions = tl.preemptions;
  s.handoffs = tl.handoffs;
  s.retakes = tl.retakes;
  s.syscalls = tl.syscalls;
  s.gc = gc_summary(tl);
  return s;
}

std::string stats_text(const TraceStats& s, size_t top) {
  std::string out;
  out += strfmt("trace: %s, %" PRIu64 " events, %" PRIu64 " goroutines, %d Ps, %s\n", s.producer.c_str(), s.events,
                s.gs, s.num_ps, human_ns(static_cast<double>(s.span)).c_str());
  const LatencySummary& l = s.latency;
  out +=
      strfmt("scheduling latency (runnable to running), %" PRIu64 " waits: mean %s, p50 %s, p90 %s, p99 %s, max %s\n",
             l.n, human_ns(l.mean).c_str(), human_ns(static_cast<double>(l.p50)).c_str(),
             human_ns(static_cast<double>(l.p90)).c_str(), human_ns(static_cast<double>(l.p99)).c_str(),
             human_ns(static_cast<double>(l.max)).c_str());
  uint64_t peak = 0;
  for (uint64_t c : s.latency_log2) peak = std::max(peak, c);
  for (size_t b = 0; b < s.latency_log2.size(); b++) {
    if (s.latency_log2[b] == 0) continue;
    const std::string lo = b == 0 ? "0" : human_ns(static_cast<double>(int64_t{1} << (b - 1)));
    const size_t bar = static_cast<size_t>(40.0 * static_cast<double>(s.latency_log2[b]) / static_cast<double>(peak));
    out += strfmt("  >= %-8s %10" PRIu64 " %s\n", lo.c_str(), s.latency_log2[b],
                  std::string(std::max<size_t>(bar, 1), '#').c_str());
  }
  if (s.processes.empty()) {
    out += "P utilisation:";
    for (size_t p = 0; p < s.utilisation.size(); p++) out += strfmt(" P%zu %.1f%%", p, 100 * s.utilisation[p]);
    out += strfmt(" (mean %.1f%%)\n", 100 * mean_utilisation(s));
  } else {
    out += strfmt("P utilisation: mean %.1f%% over every process's Ps\n", 100 * mean_utilisation(s));
  }
  out +=
      strfmt("counts: steals %" PRIu64 " (%" PRIu64 " Gs moved), M wake-ups %" PRIu64 ", preemption requests %" PRIu64
             ", preemptions %" PRIu64 ", system calls %" PRIu64 ", P handoffs %" PRIu64 ", retakes %" PRIu64 "\n",
             s.steals, s.stolen, s.wakeups, s.preempt_requests, s.preemptions, s.syscalls, s.handoffs, s.retakes);
  if (s.gc.any) {
    const GcSummary& g = s.gc;
    out += strfmt("GC: %" PRIu64 " cycles, mean %s, max %s, total %s\n", g.cycles.n, human_ns(g.cycles.mean()).c_str(),
                  human_ns(static_cast<double>(g.cycles.max)).c_str(),
                  human_ns(static_cast<double>(g.cycles.total)).c_str());
    out += strfmt("stop-the-world: %" PRIu64 " pauses, total %s, max %s", g.stw.n,
                  human_ns(static_cast<double>(g.stw.total)).c_str(), human_ns(static_cast<double>(g.stw.max)).c_str());
    for (const auto& [reason, r] : g.stw_by_reason) {
      out += strfmt("; %s %" PRIu64 " (total %s, max %s)", stw_name(reason).c_str(), r.n,
                    human_ns(static_cast<double>(r.total)).c_str(), human_ns(static_cast<double>(r.max)).c_str());
    }
    out += "\n";
    out += strfmt("mark assists: %" PRIu64 ", total %s", g.assists.n, human_ns(static_cast<double>(g.assists.total)).c_str());
    std::vector<std::pair<int64_t, int64_t>> by_g(g.assist_by_g.begin(), g.assist_by_g.end());
    std::sort(by_g.begin(), by_g.end(),
              [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
    if (by_g.size() > top) by_g.resize(top);
    for (size_t i = 0; i < by_g.size(); i++) {
      out += strfmt("%s G%" PRId64 " %s", i == 0 ? "; longest:" : ",", by_g[i].first,
                    human_ns(static_cast<double>(by_g[i].second)).c_str());
    }
    out += "\n";
    out += strfmt("sweeping: %" PRIu64 " stretches, total %s, %s swept\n", g.sweeps.n,
                  human_ns(static_cast<double>(g.sweeps.total)).c_str(), bytes_text(g.swept_bytes).c_str());
    out += strfmt("heap: %" PRIu64 " samples, max %s, last %s; goal: %" PRIu64 " samples, last %s\n", g.heap_samples,
                  bytes_text(g.heap_max).c_str(), bytes_text(g.heap_last).c_str(), g.goal_samples,
                  bytes_text(g.goal_last).c_str());
  }
  if (throttle_any(s.throttle)) out += throttle_text(s.throttle) + "\n";
  for (const ProcessStats& p : s.processes) {
    out += strfmt("process %u %s: %" PRIu64 " goroutines, %d Ps", p.id, p.name.c_str(), p.gs, p.num_ps);
    if (p.cpu_quota > 0) out += strfmt(", quota %.2f CPUs per %s", p.cpu_quota, human_ns(static_cast<double>(p.cpu_period)).c_str());
    out += strfmt("; latency p50 %s, p99 %s; P utilisation", human_ns(static_cast<double>(p.latency.p50)).c_str(),
                  human_ns(static_cast<double>(p.latency.p99)).c_str());
    for (size_t i = 0; i < p.utilisation.size(); i++) out += strfmt(" P%zu %.1f%%", i, 100 * p.utilisation[i]);
    out += "\n";
    if (throttle_any(p.throttle)) out += "  " + throttle_text(p.throttle) + "\n";
  }
  std::vector<const GStats*> order;
  for (const GStats& g : s.per_g) {
    if (g.latency.n != 0) order.push_back(&g);
  }
  std::sort(order.begin(), order.end(), [](const GStats* a, const GStats* b) {
    if (a->latency.max != b->latency.max) return a->latency.max > b->latency.max;
    return a->process != b->process ? a->process < b->process : a->g < b->g;
  });
  if (order.size() > top) order.resize(top);
  if (!order.empty()) out += "goroutines that waited longest to run:\n";
  for (const GStats* g : order) {
    out += strfmt(
        "  %-7s %6" PRIu64 " waits, mean %s, max %s; running %s, runnable %s, blocked %s, syscall %s\n",
        g_text({g->process, g->g}).c_str(),
        g->latency.n, human_ns(g->latency.mean).c_str(), human_ns(static_cast<double>(g->latency.max)).c_str(),
        human_ns(static_cast<double>(g->running)).c_str(), human_ns(static_cast<double>(g->runnable)).c_str(),
        human_ns(static_cast<double>(g->blocked)).c_str(), human_ns(static_cast<double>(g->syscall)).c_str());
  }
  return out;
}

std::string stats_json(const TraceStats& s) {
  std::string out = "{";
  std::string producer;
  for (char c : s.producer) {
    if (c == '"' || c == '\\') producer += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) producer += c;
  }
  out += strfmt("\"producer\": \"%s\", \"span_ns\": %" PRId64 ", \"num_ps\": %d, \"events\": %" PRIu64
                ", \"goroutines\": %" PRIu64 ",\n",
                producer.c_str(), s.span, s.num_ps, s.events, s.gs);
  out += " \"latency\": " + json_latency(s.latency) + ",\n \"latency_log2\": [";
  for (size_t i = 0; i < s.latency_log2.size(); i++) out += strfmt("%s%" PRIu64, i == 0 ? "" : ", ", s.latency_log2[i]);
  out += "],\n \"utilisation\": [";
  for (size_t i = 0; i < s.utilisation.size(); i++) out += strfmt("%s%.6f", i == 0 ? "" : ", ", s.utilisation[i]);
  out += strfmt("],\n \"counts\": {\"steals\": %" PRIu64 ", \"stolen\": %" PRIu64 ", \"wakeups\": %" PRIu64
                ", \"preempt_requests\": %" PRIu64 ", \"preemptions\": %" PRIu64 ", \"syscalls\": %" PRIu64
                ", \"handoffs\": %" PRIu64 ", \"retakes\": %" PRIu64 "},\n",
                s.steals, s.stolen, s.wakeups, s.preempt_requests, s.preemptions, s.syscalls, s.handoffs, s.retakes);
  {
    const GcSummary& g = s.gc;
    out += " \"gc_cycles\": {" + json_span(g.cycles) + "},\n \"stw_pauses\": {" + json_span(g.stw) +
           ", \"by_reason\": {";
    bool first = true;
    for (const auto& [reason, r] : g.stw_by_reason) {
      out += strfmt("%s\"%s\": {%s}", first ? "" : ", ", stw_name(reason).c_str(), json_span(r).c_str());
      first = false;
    }
    out += "}},\n \"mark_assists\": {" + json_span(g.assists) + ", \"by_g\": {";
    first = true;
    for (const auto& [gid, ns] : g.assist_by_g) {
      out += strfmt("%s\"%" PRId64 "\": %" PRId64, first ? "" : ", ", gid, ns);
      first = false;
    }
    out += "}},\n \"sweeps\": {" + json_span(g.sweeps) + strfmt(", \"bytes\": %" PRId64 "},\n", g.swept_bytes);
    out += strfmt(" \"heap\": {\"samples\": %" PRIu64 ", \"max_bytes\": %" PRId64 ", \"last_bytes\": %" PRId64
                  ", \"goal_samples\": %" PRIu64 ", \"last_goal_bytes\": %" PRId64 "},\n \"goroutines_detail\": [",
                  g.heap_samples, g.heap_max, g.heap_last, g.goal_samples, g.goal_last);
  }
  if (throttle_any(s.throttle) || !s.processes.empty()) {
    // Before goroutines_detail, which the line above opened: move it after these keys.
    const std::string detail = " \"goroutines_detail\": [";
    out.resize(out.size() - detail.size());
    out += " \"throttle\": " + json_throttle(s.throttle) + ",\n";
    if (!s.processes.empty()) {
      out += " \"processes\": [";
      for (size_t i = 0; i < s.processes.size(); i++) {
        const ProcessStats& p = s.processes[i];
        out += strfmt("%s\n  {\"id\": %u, \"name\": \"%s\", \"num_ps\": %d, \"cpu_quota\": %.6g, \"cpu_period_ns\": %" PRId64
                      ", \"goroutines\": %" PRIu64 ", \"latency\": %s, \"utilisation\": [",
                      i == 0 ? "" : ",", p.id, json_string(p.name).c_str(), p.num_ps, p.cpu_quota, p.cpu_period, p.gs,
                      json_latency(p.latency).c_str());
        for (size_t k = 0; k < p.utilisation.size(); k++) out += strfmt("%s%.6f", k == 0 ? "" : ", ", p.utilisation[k]);
        out += "], \"throttle\": " + json_throttle(p.throttle) + "}";
      }
      out += "],\n";
    }
    out += detail;
  }
  for (size_t i = 0; i < s.per_g.size(); i++) {
    const GStats& g = s.per_g[i];
    if (g.process != 0) {  // a one-process trace's keys are as they were
      out += strfmt("%s\n  {\"process\": %u, \"g\": %" PRId64 ", \"latency\": %s, \"running_ns\": %" PRId64
                    ", \"runnable_ns\": %" PRId64 ", \"blocked_ns\": %" PRId64 ", \"syscall_ns\": %" PRId64 "}",
                    i == 0 ? "" : ",", g.process, g.g, json_latency(g.latency).c_str(), g.running, g.runnable, g.blocked,
                    g.syscall);
      continue;
    }
    out += strfmt("%s\n  {\"g\": %" PRId64 ", \"latency\": %s, \"running_ns\": %" PRId64 ", \"runnable_ns\": %" PRId64
                  ", \"blocked_ns\": %" PRId64 ", \"syscall_ns\": %" PRId64 "}",
                  i == 0 ? "" : ",", g.g, json_latency(g.latency).c_str(), g.running, g.runnable, g.blocked, g.syscall);
  }
  out += "]}\n";
  return out;
}

std::string stats_diff(const TraceStats& a, const TraceStats& b, const std::string& name_a, const std::string& name_b) {
  std::string out =
      strfmt("%-28s %16s %16s %8s\n", "", name_a.substr(0, 16).c_str(), name_b.substr(0, 16).c_str(), "b/a");
  auto row = [&](const char* what, double x, double y, bool time) {
    const std::string sx = time ? human_ns(x) : strfmt("%.0f", x), sy = time ? human_ns(y) : strfmt("%.0f", y);
    const std::string ratio = x != 0 ? strfmt("%.2f", y / x) : std::string(y == 0 ? "=" : "-");
    out += strfmt("%-28s %16s %16s %8s\n", what, sx.c_str(), sy.c_str(), ratio.c_str());
  };
  row("span", static_cast<double>(a.span), static_cast<double>(b.span), true);
  row("Ps", a.num_ps, b.num_ps, false);
  row("goroutines", static_cast<double>(a.gs), static_cast<double>(b.gs), false);
  row("latency mean", a.latency.mean, b.latency.mean, true);
  row("latency p50", static_cast<double>(a.latency.p50), static_cast<double>(b.latency.p50), true);
  row("latency p90", static_cast<double>(a.latency.p90), static_cast<double>(b.latency.p90), true);
  row("latency p99", static_cast<double>(a.latency.p99), static_cast<double>(b.latency.p99), true);
  row("latency max", static_cast<double>(a.latency.max), static_cast<double>(b.latency.max), true);
  out += strfmt("%-28s %15.1f%% %15.1f%% %8s\n", "P utilisation (mean)", 100 * mean_utilisation(a),
                100 * mean_utilisation(b),
                mean_utilisation(a) != 0 ? strfmt("%.2f", mean_utilisation(b) / mean_utilisation(a)).c_str() : "-");
  row("steals", static_cast<double>(a.steals), static_cast<double>(b.steals), false);
  row("M wake-ups", static_cast<double>(a.wakeups), static_cast<double>(b.wakeups), false);
  row("preemptions", static_cast<double>(a.preemptions), static_cast<double>(b.preemptions), false);
  row("system calls", static_cast<double>(a.syscalls), static_cast<double>(b.syscalls), false);
  row("P handoffs", static_cast<double>(a.handoffs), static_cast<double>(b.handoffs), false);
  row("retakes", static_cast<double>(a.retakes), static_cast<double>(b.retakes), false);
  if (a.gc.any || b.gc.any) {
    row("GC cycles", static_cast<double>(a.gc.cycles.n), static_cast<double>(b.gc.cycles.n), false);
    row("GC cycle mean", a.gc.cycles.mean(), b.gc.cycles.mean(), true);
    row("STW pauses", static_cast<double>(a.gc.stw.n), static_cast<double>(b.gc.stw.n), false);
    row("STW total", static_cast<double>(a.gc.stw.total), static_cast<double>(b.gc.stw.total), true);
    row("STW max", static_cast<double>(a.gc.stw.max), static_cast<double>(b.gc.stw.max), true);
    row("mark assist total", static_cast<double>(a.gc.assists.total), static_cast<double>(b.gc.assists.total), true);
    row("sweep total", static_cast<double>(a.gc.sweeps.total), static_cast<double>(b.gc.sweeps.total), true);
  }
  return out;
}

}  // namespace gmp::trace
