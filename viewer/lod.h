// Level of detail: what of a lane is drawn at a zoom level, in O(pixels * log n), never O(events).
//
// Protocol (as Tracy draws zones):
//   - TimeAxis maps time to screen x: x = x0 + (t - t0) / ns_per_px.
//   - for_each_run(segs, axis, x_begin, x_end, min_px, f) finds the first segment visible in
//     [x_begin, x_end) by binary search, then calls f(Run) left to right. A segment at least
//     min_px wide is its own Run. A narrower one starts a merged Run that swallows what follows:
//     each step jumps, by binary search, to the first segment that ends at least min_px further
//     right, and the run stops at the first gap of 2 * min_px or more. So a run costs one binary
//     search per pixel it covers, and a frame O(visible pixels * log n) whatever the zoom.
//   - busy_ns(lane, t0, t1): Running time inside [t0, t1), from the lane's prefix sums: O(log n).
//     Merged runs are drawn per pixel column with that busy fraction, so zoomed out the lanes show
//     utilisation rather than a solid bar.
//   - for_each_point(ts, axis, ...) thins instants (markers, arrows) the same way: at most one per
//     pixel column, each further one found by binary search.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "viewer/model.h"

namespace gmp::view {

struct TimeAxis {
  double t0 = 0;         // time at x0
  double ns_per_px = 1;  // zoom
  float x0 = 0;

  float x(int64_t t) const { return x0 + static_cast<float>((static_cast<double>(t) - t0) / ns_per_px); }
  double t(float x) const { return t0 + static_cast<double>(x - x0) * ns_per_px; }
};

struct Run {
  float x0, x1;          // screen extent, clipped to nothing
  uint32_t first, last;  // segment indices, inclusive
  bool merged;           // more than one segment, or one narrower than min_px
};

// Index of the first segment that ends after t.
inline size_t first_ending_after(std::span<const Segment> segs, double t) {
  return static_cast<size_t>(
      std::upper_bound(segs.begin(), segs.end(), t,
                       [](double v, const Segment& s) { return v < static_cast<double>(s.end); }) -
      segs.begin());
}

template <class F>
void for_each_run(std::span<const Segment> segs, const TimeAxis& axis, float x_begin, float x_end, float min_px,
                  F&& f) {
  if (segs.empty()) return;
  const double t_end = axis.t(x_end);
  const double min_ns = min_px * axis.ns_per_px;
  size_t i = first_ending_after(segs, axis.t(x_begin));
  while (i < segs.size() && static_cast<double>(segs[i].start) < t_end) {
    const Segment& s = segs[i];
    const float sx0 = axis.x(s.start), sx1 = axis.x(s.end);
    if (sx1 - sx0 >= min_px) {
      f(Run{sx0, sx1, static_cast<uint32_t>(i), static_cast<uint32_t>(i), false});
      ++i;
      continue;
    }
    // Merge: jump to the first segment ending at least min_px beyond the run's end, until a gap.
    const size_t first = i;
    double run_end = static_cast<double>(s.end);
    size_t last = i;
    for (;;) {
      const double next_time = run_end + min_ns;
      const auto it = std::lower_bound(segs.begin() + static_cast<ptrdiff_t>(last) + 1, segs.end(), next_time,
                                       [](const Segment& a, double v) { return static_cast<double>(a.end) < v; });
      size_t j = static_cast<size_t>(it - segs.begin());
      // Segments before j end within min_px of run_end: they belong to the run.
      if (j > last + 1) last = j - 1;
      if (j >= segs.size()) break;
      const Segment& n = segs[j];
      if (static_cast<double>(n.start) - run_end >= 2 * min_ns) break;  // a visible gap ends the run
      if (static_cast<double>(n.end - n.start) >= min_ns) break;        // a wide segment draws itself
      last = j;
      run_end = static_cast<double>(n.end);
      if (static_cast<double>(n.start) >= t_end) break;
    }
    if (static_cast<double>(segs[last].end) > run_end) run_end = static_cast<double>(segs[last].end);
    f(Run{sx0, axis.x(static_cast<int64_t>(run_end)), static_cast<uint32_t>(first), static_cast<uint32_t>(last), true});
    i = last + 1;
  }
}

// Running time of `lane` inside [t0, t1).
int64_t busy_ns(const Lane& lane, int64_t t0, int64_t t1);

// Calls f(index) for items of the time-sorted `ts` (projected by `time_of`) visible in
// [x_begin, x_end), at most one per pixel column.
template <class T, class Time, class F>
void for_each_point(std::span<const T> items, Time time_of, const TimeAxis& axis, float x_begin, float x_end, F&& f) {
  const double t_begin = axis.t(x_begin), t_end = axis.t(x_end);
  auto cmp = [&](const T& a, double v) { return static_cast<double>(time_of(a)) < v; };
  auto it = std::lower_bound(items.begin(), items.end(), t_begin, cmp);
  while (it != items.end() && static_cast<double>(time_of(*it)) < t_end) {
    f(static_cast<size_t>(it - items.begin()));
    const float px = std::floor(axis.x(time_of(*it)));
    it = std::lower_bound(it + 1, items.end(), axis.t(px + 1), cmp);
  }
}

}  // namespace gmp::view
