// Level of detail: what of a lane is drawn at a zoom level, in O(pixels * log n), never O(events).
//
// Protocol (as Tracy draws zones):
//   - TimeAxis maps time to screen x: x = x0 + (t - t0) / ns_per_px.
//   - for_each_run(lane, axis, x_begin, x_end, min_px, f) finds the first segment visible in
//     [x_begin, x_end) through the lane's time grid, then calls f(Run) left to right. A segment at least
//     min_px wide is its own Run. A narrower one starts a merged Run that swallows what follows:
//     each step jumps, by binary search, to the first segment that ends at least min_px further
//     right, and the run stops at the first gap of 2 * min_px or more. So a run costs one search
//     per pixel it covers, and a frame O(visible pixels * log n) whatever the zoom. Zoomed out past
//     the lane's grid cells, whole cells whose segments and gaps are all narrow join at once.
//   - busy_ns(lane, t0, t1): Running time inside [t0, t1), from the lane's prefix sums: O(log n).
//     Merged runs are drawn per pixel column with that busy fraction, so zoomed out the lanes show
//     utilisation rather than a solid bar.
//   - for_each_point(items, time_of, axis, x_begin, x_end, spacing_px, f) thins instants (markers,
//     arrows) the same way: at most one per spacing_px columns, each next one by binary search.
//   - for_each_interval(n, start, end, axis, x_begin, x_end, min_px, f) is for_each_run over a list
//     of disjoint intervals given by accessors (the GC's cycles, pauses, a P's assists): the same
//     merge of sub-pixel items, each step a galloping search.
//   - for_each_plot_column(counter, axis, x_begin, x_end, col_px, t_stop, f) gives, per column of
//     col_px pixels, the min and max of a 64-bit counter's values in force during the column, from
//     its min/max pyramid (as Tracy draws plots: a vertical span per pixel column), so a plot costs
//     O(columns * log samples).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

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

// The first index i >= from with !before(i), for a `before` that is true then false along
// [from, n): galloping, so a scan that moves right a little at a time costs O(log step) per call.
template <class Before>
size_t gallop(size_t from, size_t n, Before before) {
  size_t lo = from, step = 1;
  while (lo < n && before(lo)) {
    const size_t probe = std::min(n, lo + step);
    if (probe < n && before(probe)) {
      lo = probe + 1;
      step *= 2;
      continue;
    }
    // The answer is in (lo, probe]: binary search.
    size_t a = lo + 1, b = probe;
    while (a < b) {
      const size_t mid = a + (b - a) / 2;
      if (before(mid)) {
        a = mid + 1;
      } else {
        b = mid;
      }
    }
    return a;
  }
  return lo;
}

template <class F>
void for_each_run(const Lane& lane, const TimeAxis& axis, float x_begin, float x_end, float min_px, F&& f) {
  const std::vector<Segment>& segs = lane.segs;
  if (segs.empty()) return;
  const double t_end = axis.t(x_end);
  const double min_ns = min_px * axis.ns_per_px;
  const size_t cells = lane.grid_span.size();
  const bool coarse = cells > 0 && static_cast<double>(lane.grid_dt) * 4 < min_ns;
  size_t i = lane.first_ending_after(static_cast<int64_t>(std::floor(axis.t(x_begin))));
  while (i < segs.size() && static_cast<double>(segs[i].start) < t_end) {
    const Segment& s = segs[i];
    const float sx0 = axis.x(s.start), sx1 = axis.x(s.end());
    if (sx1 - sx0 >= min_px) {
      f(Run{sx0, sx1, static_cast<uint32_t>(i), static_cast<uint32_t>(i), false});
      ++i;
      continue;
    }
    // Merge: jump to the first segment ending at least min_px beyond the run's end, until a gap.
    const size_t first = i;
    double run_end = static_cast<double>(s.end());
    size_t last = i;
    for (;;) {
      if (coarse) {
        // Whole cells of the lane's grid whose segments and gaps are all narrower than min_px join
        // the run at once: zoomed out, a pixel holds many cells and a search per pixel would cost.
        auto c =
            static_cast<size_t>(std::max<int64_t>(0, (static_cast<int64_t>(run_end) - lane.grid_t0) / lane.grid_dt));
        const size_t c0 = c;
        while (c < cells && static_cast<double>(lane.grid_span[c]) < min_ns &&
               static_cast<double>(lane.grid_t0 + static_cast<int64_t>(c) * lane.grid_dt) < t_end) {
          ++c;
        }
        if (c > c0 && c <= cells && lane.grid[c] > 0 && lane.grid[c] - 1 > last) {
          last = lane.grid[c] - 1;
          run_end = static_cast<double>(segs[last].end());
        }
      }
      const double next_time = run_end + min_ns;
      // The first segment ending at or after next_time, through the lane's time grid.
      const size_t j = std::max(last + 1, lane.first_ending_after(static_cast<int64_t>(std::ceil(next_time)) - 1));
      // Segments before j end within min_px of run_end: they belong to the run.
      if (j > last + 1) last = j - 1;
      if (j >= segs.size()) break;
      const Segment& n = segs[j];
      if (static_cast<double>(n.start) - run_end >= 2 * min_ns) break;  // a visible gap ends the run
      if (static_cast<double>(n.end() - n.start) >= min_ns) break;      // a wide segment draws itself
      last = j;
      run_end = static_cast<double>(n.end());
      if (static_cast<double>(n.start) >= t_end) break;
    }
    if (static_cast<double>(segs[last].end()) > run_end) run_end = static_cast<double>(segs[last].end());
    f(Run{sx0, axis.x(static_cast<int64_t>(run_end)), static_cast<uint32_t>(first), static_cast<uint32_t>(last), true});
    i = last + 1;
  }
}

// Running time of `lane` inside [t0, t1).
int64_t busy_ns(const Lane& lane, int64_t t0, int64_t t1);

// Running time before t, for t that never decreases from one call to the next (the columns of a
// frame, left to right).
class BusyCursor {
 public:
  explicit BusyCursor(const Lane& lane) : lane_(lane) {}
  int64_t until(int64_t t);

 private:
  const Lane& lane_;
  size_t i_ = 0;
};

// The counter sample in force at t, for t that never decreases: index into Counter::v, or
// SIZE_MAX before the first sample.
class CounterCursor {
 public:
  explicit CounterCursor(const Counter& c) : c_(c) {}
  size_t at(int64_t t) {
    i_ = gallop(i_, c_.ts.size(), [&](size_t k) { return c_.ts[k] <= t; });
    return i_ == 0 ? SIZE_MAX : i_ - 1;
  }

 private:
  const Counter& c_;
  size_t i_ = 0;
};

// Calls f(index) for items of the time-sorted `items` (time_of gives an item's time) visible in
// [x_begin, x_end), at most one per spacing_px pixel columns.
template <class T, class Time, class F>
void for_each_point(std::span<const T> items, Time time_of, const TimeAxis& axis, float x_begin, float x_end,
                    float spacing_px, F&& f) {
  const double t_begin = axis.t(x_begin), t_end = axis.t(x_end);
  auto cmp = [&](const T& a, double v) { return static_cast<double>(time_of(a)) < v; };
  auto it = std::lower_bound(items.begin(), items.end(), t_begin, cmp);
  while (it != items.end() && static_cast<double>(time_of(*it)) < t_end) {
    f(static_cast<size_t>(it - items.begin()));
    const float px = std::floor(axis.x(time_of(*it)));
    it = std::lower_bound(it + 1, items.end(), axis.t(px + std::max(1.0f, spacing_px)), cmp);
  }
}

// for_each_run over intervals [start(i), end(i)), i in [0, n), sorted by start and disjoint (so
// their ends never decrease either). Run::first/last are indices into [0, n).
template <class Start, class End, class F>
void for_each_interval(size_t n, Start start, End end, const TimeAxis& axis, float x_begin, float x_end, float min_px,
                       F&& f) {
  if (n == 0) return;
  const double t_begin = axis.t(x_begin), t_end = axis.t(x_end);
  const double min_ns = min_px * axis.ns_per_px;
  // The first interval that ends after t_begin.
  size_t i = gallop(0, n, [&](size_t k) { return static_cast<double>(end(k)) <= t_begin; });
  while (i < n && static_cast<double>(start(i)) < t_end) {
    const float sx0 = axis.x(start(i)), sx1 = axis.x(end(i));
    if (sx1 - sx0 >= min_px) {
      f(Run{sx0, sx1, static_cast<uint32_t>(i), static_cast<uint32_t>(i), false});
      ++i;
      continue;
    }
    const size_t first = i;
    size_t last = i;
    auto run_end = static_cast<double>(end(i));
    for (;;) {
      const double next_time = run_end + min_ns;
      // Intervals ending before next_time lie within min_px of the run's end: they join it.
      const size_t j = gallop(last + 1, n, [&](size_t k) { return static_cast<double>(end(k)) < next_time; });
      if (j > last + 1) {
        last = j - 1;
        run_end = std::max(run_end, static_cast<double>(end(last)));
      }
      if (j >= n) break;
      const auto js = static_cast<double>(start(j)), je = static_cast<double>(end(j));
      if (js - run_end >= 2 * min_ns || je - js >= min_ns || js >= t_end) break;  // a gap or a wide one
      last = j;
      run_end = std::max(run_end, je);
    }
    f(Run{sx0, axis.x(static_cast<int64_t>(std::ceil(run_end))), static_cast<uint32_t>(first),
          static_cast<uint32_t>(last), true});
    i = last + 1;
  }
}

// One column of a plot: its time and screen extent, the min and max of the values in force during it, and
// the range of samples [first, last] that were.
struct PlotColumn {
  double t0, t1;  // the column's time [t0, t1)
  float x0, x1;
  int64_t lo, hi;
  size_t first, last;
};

// Calls f(PlotColumn) for the columns of col_px pixels covering [x_begin, x_end) in which c has a
// sample in force, columns on a grid of absolute time (panning does not shimmer); none from t_stop
// on (the trace's end) or before c's first sample.
template <class F>
void for_each_plot_column(const Counter64& c, const TimeAxis& ax, float x_begin, float x_end, float col_px,
                          int64_t t_stop, F&& f) {
  const size_t n = c.ts.size();
  if (n == 0) return;
  const double w = col_px * ax.ns_per_px;
  size_t i = 0;  // the first sample after the column's start
  for (double k = std::floor(ax.t(x_begin) / w);; k += 1) {
    const double a = k * w, b = a + w;
    const float x0 = ax.x(static_cast<int64_t>(std::llround(a))), x1 = ax.x(static_cast<int64_t>(std::llround(b)));
    if (x0 >= x_end || a >= static_cast<double>(t_stop)) break;
    i = gallop(i, n, [&](size_t s) { return static_cast<double>(c.ts[s]) <= a; });
    // In force: the sample at or before a (i - 1), through the last one before b.
    const size_t j = gallop(i, n, [&](size_t s) { return static_cast<double>(c.ts[s]) < b; });
    if (j == 0) continue;  // before the first sample
    const size_t first = i == 0 ? 0 : i - 1, last = j - 1;
    const auto [lo, hi] = c.min_max_range(first, last + 1);
    f(PlotColumn{a, b, x0, x1, lo, hi, first, last});
  }
}

}  // namespace gmp::view
