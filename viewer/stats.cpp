// Statistics of a time range: see stats.h.
#include "viewer/stats.h"

#include <algorithm>
#include <bit>

#include "viewer/lod.h"

namespace gmp::view {

int latency_bin(int64_t ns) {
  if (ns <= 1) return 0;
  return std::min(kLatencyBins - 1, 63 - std::countl_zero(static_cast<uint64_t>(ns)));
}

namespace {

LaneStats lane_stats(const Lane& l, int64_t t0, int64_t t1) {
  LaneStats s;
  if (t1 <= t0) return s;
  s.busy = static_cast<double>(busy_ns(l, t0, t1)) / static_cast<double>(t1 - t0);
  const size_t a = l.first_ending_after(t0);
  const size_t b = static_cast<size_t>(
      std::lower_bound(l.segs.begin(), l.segs.end(), t1, [](const Segment& x, int64_t v) { return x.start < v; }) -
      l.segs.begin());
  s.segments = b > a ? static_cast<uint32_t>(b - a) : 0;
  return s;
}

// Whether the interval and [t0, t1) share time (an empty interval: lies inside it).
bool overlaps(const GcInterval& v, int64_t t0, int64_t t1) {
  return v.start == v.end ? v.start >= t0 && v.start < t1 : v.start < t1 && v.end > t0;
}

// Whether a pause belongs to a cycle [t0, t1]: it overlaps or touches it (a producer may put
// GC_BEGIN at the very end of the sweep-termination pause, or GC_END at the start of mark
// termination's).
bool touches(const GcInterval& v, int64_t t0, int64_t t1) { return v.start <= t1 && v.end >= t0; }

// The interval's time inside [t0, t1).
int64_t inside(const GcInterval& v, int64_t t0, int64_t t1) {
  return std::max<int64_t>(0, std::min(v.end, t1) - std::max(v.start, t0));
}

}  // namespace

void compute_stats(const Model& m, int64_t t0, int64_t t1, Stats& out) {
  out.t0 = t0;
  out.t1 = t1;
  auto ev_lo = std::lower_bound(m.events.begin(), m.events.end(), t0, [](const Ev& e, int64_t v) { return e.ts < v; });
  auto ev_hi = std::lower_bound(ev_lo, m.events.end(), t1, [](const Ev& e, int64_t v) { return e.ts < v; });
  out.events = static_cast<uint64_t>(ev_hi - ev_lo);
  // Latencies of the starts inside [t0, t1]: the whole trace when the range covers it.
  const auto ts = [&](const LatencySample& s) { return m.events[s.ev].ts; };
  const auto lo = std::lower_bound(m.latencies.begin(), m.latencies.end(), t0,
                                   [&](const LatencySample& s, int64_t v) { return ts(s) < v; });
  const auto hi =
      std::upper_bound(lo, m.latencies.end(), t1, [&](int64_t v, const LatencySample& s) { return v < ts(s); });
  out.lat_hist.fill(0);
  out.scratch.clear();
  double sum = 0;
  for (auto it = lo; it != hi; ++it) {
    out.lat_hist[static_cast<size_t>(latency_bin(it->latency))] += 1;
    out.scratch.push_back(it->latency);
    sum += static_cast<double>(it->latency);
  }
  out.starts = out.scratch.size();
  out.last_bin = 0;
  for (int k = 0; k < kLatencyBins; ++k) {
    if (out.lat_hist[static_cast<size_t>(k)] > 0) out.last_bin = k;
  }
  auto pct = [&](double q) -> int64_t {
    if (out.scratch.empty()) return 0;
    const size_t i = std::min(out.scratch.size() - 1, static_cast<size_t>(q * static_cast<double>(out.scratch.size())));
    std::nth_element(out.scratch.begin(), out.scratch.begin() + static_cast<ptrdiff_t>(i), out.scratch.end());
    return out.scratch[i];
  };
  out.lat_p50 = pct(0.50);
  out.lat_p90 = pct(0.90);
  out.lat_p99 = pct(0.99);
  out.lat_max = out.scratch.empty() ? 0 : *std::max_element(out.scratch.begin(), out.scratch.end());
  out.lat_mean = out.scratch.empty() ? 0 : sum / static_cast<double>(out.scratch.size());
  out.p.resize(m.p_lanes.size());
  out.m.resize(m.m_lanes.size());
  double busy = 0;
  for (size_t i = 0; i < m.p_lanes.size(); ++i) {
    out.p[i] = lane_stats(m.p_lanes[i], t0, t1);
    busy += out.p[i].busy;
  }
  out.p_busy_mean = m.p_lanes.empty() ? 0 : busy / static_cast<double>(m.p_lanes.size());
  for (size_t i = 0; i < m.m_lanes.size(); ++i) out.m[i] = lane_stats(m.m_lanes[i], t0, t1);
  out.steals = out.wakeups = out.unparks = 0;
  const auto a0 =
      std::lower_bound(m.arrows.begin(), m.arrows.end(), t0, [](const Arrow& a, int64_t v) { return a.t0 < v; });
  for (auto it = a0; it != m.arrows.end() && it->t0 < t1; ++it) {
    (it->kind == ArrowKind::Steal ? out.steals : it->kind == ArrowKind::Wakeup ? out.wakeups : out.unparks) += 1;
  }
  out.gc_cycles = out.stw_pauses = 0;
  out.stw_ns = out.stw_max = out.assist_ns = 0;
  for (const GcInterval& c : m.gc_cycles) out.gc_cycles += overlaps(c, t0, t1);
  for (const GcInterval& p : m.stw_pauses) {
    if (!overlaps(p, t0, t1)) continue;
    ++out.stw_pauses;
    out.stw_ns += p.end - p.start;
    out.stw_max = std::max(out.stw_max, p.end - p.start);
  }
  for (const GcInterval& a : m.assists) out.assist_ns += inside(a, t0, t1);
  out.throttles = out.throttled_periods = 0;
  out.throttled_ns = out.throttled_max = 0;
  int64_t last_period = -1;
  uint16_t last_process = 0;
  for (const GcInterval& th : m.throttles) {  // sorted by start: a period's stretches are together per process
    if (!overlaps(th, t0, t1)) continue;
    ++out.throttles;
    out.throttled_ns += inside(th, t0, t1);
    out.throttled_max = std::max(out.throttled_max, th.end - th.start);
    const int64_t period = m.group(th.process).cpu_period;
    if (period <= 0) continue;
    const int64_t k = (th.start - m.t_begin) / period;
    if (k != last_period || th.process != last_process) ++out.throttled_periods;
    last_period = k;
    last_process = th.process;
  }
}

void compute_gc_item(const Model& m, GcItemStats::Kind kind, uint32_t index, GcItemStats& out) {
  out = GcItemStats{};
  const std::vector<GcInterval>& list = kind == GcItemStats::Kind::Cycle ? m.gc_cycles : m.stw_pauses;
  if (kind == GcItemStats::Kind::None || index >= list.size()) return;
  const GcInterval& it = list[index];
  out.kind = kind;
  out.index = index;
  out.start = it.start;
  out.end = it.end;
  if (kind == GcItemStats::Kind::Pause) {
    out.stw_reason = it.stw_reason;
    for (const GcInterval& c : m.gc_cycles) {
      if (touches(it, c.start, c.end)) {
        out.cycle = c.value;
        break;
      }
    }
    return;
  }
  out.cycle = it.value;
  for (const GcInterval& p : m.stw_pauses) {
    if (!touches(p, it.start, it.end)) continue;
    ++out.pauses;
    out.pause_ns += p.end - p.start;
    out.pause_max = std::max(out.pause_max, p.end - p.start);
  }
  for (const GcInterval& a : m.assists) {
    const int64_t d = inside(a, it.start, it.end);
    if (d > 0 || overlaps(a, it.start, it.end)) ++out.assists;
    out.assist_ns += d;
  }
  for (const GcInterval& w : m.mark_workers) {
    if (w.worker_mode < out.worker_ns.size()) out.worker_ns[w.worker_mode] += inside(w, it.start, it.end);
  }
}

}  // namespace gmp::view
