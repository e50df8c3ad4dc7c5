#include "traces/stats.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

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

}  // namespace

TraceStats compute_stats(const Timeline& tl) {
  TraceStats s;
  s.producer = tl.header.producer();
  s.span = tl.t_end - tl.t_begin;
  s.num_ps = tl.header.num_ps();
  s.events = tl.events;
  s.gs = tl.gs.size();
  std::vector<int64_t> all;
  for (const auto& [id, life] : tl.gs) {
    GStats g;
    g.g = id;
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
  int64_t nps = s.num_ps;
  if (!tl.p_busy.empty()) nps = std::max<int64_t>(nps, tl.p_busy.rbegin()->first + 1);
  s.utilisation.assign(static_cast<size_t>(std::max<int64_t>(nps, 0)), 0.0);
  for (const auto& [p, busy] : tl.p_busy) {
    if (p >= 0 && s.span > 0)
      s.utilisation[static_cast<size_t>(p)] = static_cast<double>(busy) / static_cast<double>(s.span);
  }
  s.steals = tl.steals;
  s.stolen = tl.stolen;
  s.wakeups = tl.wakeups;
  s.preempt_requests = tl.preempt_requests;
  s.preemptions = tl.preemptions;
  s.handoffs = tl.handoffs;
  s.retakes = tl.retakes;
  s.syscalls = tl.syscalls;
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
  out += "P utilisation:";
  for (size_t p = 0; p < s.utilisation.size(); p++) out += strfmt(" P%zu %.1f%%", p, 100 * s.utilisation[p]);
  out += strfmt(" (mean %.1f%%)\n", 100 * mean_utilisation(s));
  out +=
      strfmt("counts: steals %" PRIu64 " (%" PRIu64 " Gs moved), M wake-ups %" PRIu64 ", preemption requests %" PRIu64
             ", preemptions %" PRIu64 ", system calls %" PRIu64 ", P handoffs %" PRIu64 ", retakes %" PRIu64 "\n",
             s.steals, s.stolen, s.wakeups, s.preempt_requests, s.preemptions, s.syscalls, s.handoffs, s.retakes);
  std::vector<const GStats*> order;
  for (const GStats& g : s.per_g) {
    if (g.latency.n != 0) order.push_back(&g);
  }
  std::sort(order.begin(), order.end(), [](const GStats* a, const GStats* b) {
    return a->latency.max != b->latency.max ? a->latency.max > b->latency.max : a->g < b->g;
  });
  if (order.size() > top) order.resize(top);
  if (!order.empty()) out += "goroutines that waited longest to run:\n";
  for (const GStats* g : order) {
    out += strfmt(
        "  G%-6" PRId64 " %6" PRIu64 " waits, mean %s, max %s; running %s, runnable %s, blocked %s, syscall %s\n", g->g,
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
                ", \"handoffs\": %" PRIu64 ", \"retakes\": %" PRIu64 "},\n \"goroutines_detail\": [",
                s.steals, s.stolen, s.wakeups, s.preempt_requests, s.preemptions, s.syscalls, s.handoffs, s.retakes);
  for (size_t i = 0; i < s.per_g.size(); i++) {
    const GStats& g = s.per_g[i];
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
  return out;
}

}  // namespace gmp::trace
