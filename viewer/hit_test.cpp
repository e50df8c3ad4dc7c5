// Hit testing and view changes of the timeline: see timeline.h.
#include <algorithm>
#include <cmath>

#include "viewer/layout.h"
#include "viewer/timeline.h"

namespace gmp::view {

namespace {

// The item of a list of disjoint intervals sorted by start that covers t within `slack` (the
// nearest one when several do), or -1.
template <class Start, class End>
int64_t interval_at(size_t n, Start start, End end, double t, double slack) {
  // The first that ends after t - slack; then the next one may be nearer.
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (static_cast<double>(end(mid)) <= t - slack) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  int64_t best = -1;
  double best_d = 0;
  for (size_t i = lo; i < n && static_cast<double>(start(i)) <= t + slack; ++i) {
    const auto a = static_cast<double>(start(i)), b = static_cast<double>(end(i));
    const double d = t < a ? a - t : t >= b ? t - b : 0;
    if (best < 0 || d < best_d) best = static_cast<int64_t>(i), best_d = d;
    if (d == 0) break;
  }
  return best;
}

int64_t gc_at(const std::vector<GcInterval>& v, double t, double slack) {
  return interval_at(
      v.size(), [&](size_t i) { return v[i].start; }, [&](size_t i) { return v[i].end; }, t, slack);
}

}  // namespace

void TimelineState::show(double a, double b, float width) {
  if (b <= a) b = a + 1;
  t0 = a;
  ns_per_px = std::max(1e-3, (b - a) / std::max(1.0f, width));
}

void TimelineState::zoom_at(const Viewport& vp, float x, double factor) {
  const double t = axis(vp).t(x);
  ns_per_px = std::clamp(ns_per_px * factor, 1e-3, 1e15);
  t0 = t - static_cast<double>(x - vp.lanes_x()) * ns_per_px;
}

Hit hit_test(const Model& m, const Layout& l, const TimelineState& s, const Viewport& vp, float mx, float my) {
  Hit h;
  if (mx < vp.x || mx >= vp.x + vp.w || my < vp.y || my >= vp.y + vp.h) return h;
  const TimeAxis ax = s.axis(vp);
  h.t = ax.t(mx);
  if (my < vp.rows_y()) {
    h.kind = HitKind::Ruler;
    return h;
  }
  h.row = l.row_at(my - vp.rows_y() + s.scroll_y);
  if (h.row < 0) return h;
  const Row& row = l.rows()[static_cast<size_t>(h.row)];
  h.ref = row.ref;
  if (row.kind == RowKind::Group) {  // a process's header, across the whole row
    h.kind = HitKind::Group;
    return h;
  }
  if (mx < vp.lanes_x()) {
    h.kind = HitKind::Label;
    return h;
  }
  if (row.kind == RowKind::Counter) {
    h.kind = HitKind::Counter;
    h.value = counter_of(m, row.ref).value_at(static_cast<int64_t>(h.t));
    return h;
  }
  if (row.kind == RowKind::Heap) {
    h.kind = HitKind::Heap;
    h.value64 = m.heap_alloc.value_at(static_cast<int64_t>(h.t));
    h.goal = m.heap_goal.value_at(static_cast<int64_t>(h.t));
    return h;
  }
  if (row.kind == RowKind::GcBand) {
    if (const int64_t i = gc_at(m.stw_pauses, h.t, kPauseSlackPx * s.ns_per_px); i >= 0) {
      h.kind = HitKind::GcPause;
      h.first = h.last = static_cast<uint32_t>(i);
      h.ev = m.stw_pauses[static_cast<size_t>(i)].begin_ev;
      return h;
    }
    if (const int64_t i = gc_at(m.gc_cycles, h.t, s.ns_per_px / 2); i >= 0) {
      h.kind = HitKind::GcCycle;
      h.first = h.last = static_cast<uint32_t>(i);
      h.ev = m.gc_cycles[static_cast<size_t>(i)].begin_ev;
    }
    return h;
  }
  const Lane* lane = m.lane(row.ref);
  if (lane == nullptr) return h;
  // Assists, in the lane's lower part.
  const std::vector<uint32_t>* assists = ref_type(row.ref) == LaneType::P && ref_index(row.ref) < m.assists_of_p.size()
                                             ? &m.assists_of_p[ref_index(row.ref)]
                                         : ref_type(row.ref) == LaneType::G && ref_index(row.ref) < m.assists_of_g.size()
                                             ? &m.assists_of_g[ref_index(row.ref)]
                                             : nullptr;
  if (assists != nullptr && !assists->empty() &&
      my >= vp.rows_y() - s.scroll_y + row.y + row.h * (1 - kAssistFrac)) {
    const auto& ix = *assists;
    const int64_t k = interval_at(
        ix.size(), [&](size_t i) { return m.assists[ix[i]].start; }, [&](size_t i) { return m.assists[ix[i]].end; },
        h.t, s.ns_per_px / 2);
    if (k >= 0) {
      h.kind = HitKind::Assist;
      h.first = h.last = ix[static_cast<size_t>(k)];
      h.ev = m.assists[h.first].begin_ev;
      return h;
    }
  }
  // Markers first: they sit on top, within 4 px.
  const double slack = 4 * s.ns_per_px;
  const auto mk = std::lower_bound(lane->markers.begin(), lane->markers.end(), h.t - slack,
                                   [](const Marker& a, double v) { return static_cast<double>(a.ts) < v; });
  if (mk != lane->markers.end() && static_cast<double>(mk->ts) <= h.t + slack &&
      my < vp.rows_y() - s.scroll_y + row.y + row.h / 2) {
    h.kind = HitKind::Marker;
    h.first = h.last = static_cast<uint32_t>(mk - lane->markers.begin());
    h.ev = mk->ev;
    return h;
  }
  const auto& segs = lane->segs;
  const size_t i = lane->first_ending_after(static_cast<int64_t>(std::floor(h.t)));
  if (i >= segs.size() || static_cast<double>(segs[i].start) > h.t) {
    // Nothing here; a sub-pixel segment within half a pixel still counts.
    if (i >= segs.size() || static_cast<double>(segs[i].start) > h.t + s.ns_per_px / 2) return h;
  }
  const Segment& seg = segs[i];
  if (static_cast<double>(seg.end() - seg.start) >= s.ns_per_px) {
    h.kind = HitKind::Segment;
    h.first = h.last = static_cast<uint32_t>(i);
    h.ev = m.segment_event(*lane, seg);
    return h;
  }
  // Merged: every segment within this pixel column.
  const double c0 = std::floor((mx - vp.lanes_x())) * s.ns_per_px + s.t0;
  const size_t a = lane->first_ending_after(static_cast<int64_t>(std::floor(c0)));
  const auto b = std::lower_bound(segs.begin(), segs.end(), c0 + s.ns_per_px,
                                  [](const Segment& x, double v) { return static_cast<double>(x.start) < v; });
  h.kind = HitKind::Merged;
  h.first = static_cast<uint32_t>(std::min(a, i));
  h.last = static_cast<uint32_t>(std::max<ptrdiff_t>(static_cast<ptrdiff_t>(i), (b - segs.begin()) - 1));
  h.ev = m.segment_event(*lane, segs[h.first]);
  return h;
}

}  // namespace gmp::view
