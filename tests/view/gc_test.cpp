// The viewer's garbage collector, without a window: the model's mark-worker runs and per-P indices,
// the heap's min/max pyramid and per-column plot, the merge of sub-pixel GC intervals, the layout's
// GC rows (only with GC), hit testing of pauses, cycles, assists and the heap, and a clicked
// cycle's and pause's statistics, on tests/view/gc_trace.h's known trace.
#include <algorithm>
#include <cmath>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/temp_dir.h"
#include "tests/view/gc_trace.h"
#include "tests/view/small_trace.h"
#include "traces/trace_writer.h"
#include "viewer/layout.h"
#include "viewer/lod.h"
#include "viewer/model.h"
#include "viewer/stats.h"
#include "viewer/timeline.h"

using namespace gmp::view;
namespace tr = gmp::trace;

namespace {

Model gc_model() {
  TempDir dir("gmp_view_gc");
  testing::write_gc_trace(dir.file("gc.trace"));
  return load_trace(dir.file("gc.trace"));
}

Model small_model() {
  TempDir dir("gmp_view_gc");
  testing::write_small_trace(dir.file("small.trace"));
  return load_trace(dir.file("small.trace"));
}

// Two Ps: G5, a dedicated mark worker, runs on P0 [100, 300), then G1 [300, 400); G6, an idle
// worker, runs on P1 [150, 250) and again [260, 280) as a fractional one.
Model worker_model() {
  TempDir dir("gmp_view_gc");
  tr::Header h;
  h.set_producer("gc worker test");
  h.set_num_ps(2);
  h.set_clock(tr::CLOCK_VIRTUAL);
  tr::TraceWriter w(dir.file("w.trace"), h);
  auto ev = [&](int64_t ts, tr::Kind k, int64_t g, int64_t m, int64_t p, tr::GcWorkerMode mode = {}) {
    tr::Event e;
    e.set_ts(ts);
    e.set_kind(k);
    if (g >= 0) e.set_g(g);
    e.set_m(m);
    e.set_p(p);
    if (mode != tr::GC_WORKER_MODE_UNSPECIFIED) e.set_gc_worker_mode(mode);
    if (k == tr::KIND_GO_PARK) e.set_wait_reason(tr::WAIT_REASON_OTHER);
    w.write(e);
  };
  ev(0, tr::KIND_P_ACQUIRE, -1, 0, 0);
  ev(0, tr::KIND_P_ACQUIRE, -1, 1, 1);
  for (int g : {1, 5, 6}) ev(10 + g, tr::KIND_GO_CREATE, g, 0, 0);
  ev(100, tr::KIND_GO_START, 5, 0, 0, tr::GC_WORKER_MODE_DEDICATED);
  ev(150, tr::KIND_GO_START, 6, 1, 1, tr::GC_WORKER_MODE_IDLE);
  ev(250, tr::KIND_GO_PARK, 6, 1, 1);
  ev(260, tr::KIND_GO_START, 6, 1, 1, tr::GC_WORKER_MODE_FRACTIONAL);
  ev(280, tr::KIND_GO_PARK, 6, 1, 1);
  ev(300, tr::KIND_GO_PARK, 5, 0, 0);
  ev(300, tr::KIND_GO_START, 1, 0, 0);
  ev(400, tr::KIND_GO_EXIT, 1, 0, 0);
  w.close();
  return load_trace(dir.file("w.trace"));
}

constexpr int64_t MiB = 1 << 20;

// A viewport whose lanes are 1000 px wide, showing [0, 1000) ns: 1 ns a pixel.
struct View {
  Viewport vp{0, 0, 1084, 600};
  TimelineState s;
  View() { s.show(0, 1000, vp.lanes_w()); }
  float x(double t) const { return vp.lanes_x() + static_cast<float>((t - s.t0) / s.ns_per_px); }
  float y(const Layout& l, int row, float dy) const { return vp.rows_y() + l.rows()[static_cast<size_t>(row)].y + dy; }
};

}  // namespace

TEST_CASE("view gc model: mark workers' runs keep their mode and end with their G's run") {
  const Model m = worker_model();
  REQUIRE(m.mark_workers.size() == 3);
  CHECK(m.has_gc());
  const GcInterval& d = m.mark_workers[0];
  CHECK(d.start == 100);
  CHECK(d.end == 300);
  CHECK(d.g == 5);
  CHECK(d.p == 0);
  CHECK(d.worker_mode == tr::GC_WORKER_MODE_DEDICATED);
  CHECK(m.mark_workers[1].start == 150);
  CHECK(m.mark_workers[1].end == 250);
  CHECK(m.mark_workers[1].worker_mode == tr::GC_WORKER_MODE_IDLE);
  CHECK(m.mark_workers[2].end == 280);
  CHECK(m.mark_workers[2].worker_mode == tr::GC_WORKER_MODE_FRACTIONAL);
  REQUIRE(m.workers_of_p.size() == 2);
  CHECK(m.workers_of_p[0] == std::vector<uint32_t>{0});
  CHECK(m.workers_of_p[1] == std::vector<uint32_t>{1, 2});
  // gc_trace.h: no workers, G2's assist on P1.
  Model g = gc_model();
  CHECK(g.mark_workers.empty());
  REQUIRE(g.assists_of_p.size() == 2);
  CHECK(g.assists_of_p[0].empty());
  CHECK(g.assists_of_p[1] == std::vector<uint32_t>{0});
  g.build_g_lanes();
  REQUIRE(g.assists_of_g.size() == 2);
  CHECK(g.assists_of_g[1] == std::vector<uint32_t>{0});  // G2's lane
  CHECK_FALSE(small_model().has_gc());
}

TEST_CASE("view gc model: the heap's min/max pyramid gives the brute-force min and max of any range") {
  std::mt19937_64 rng(7);
  Counter64 c;
  for (int i = 0; i < 5000; ++i) {
    c.ts.push_back(i * 10);
    c.v.push_back(static_cast<int64_t>(rng() % (1ull << 40)));
  }
  c.build_levels();
  REQUIRE(c.lo.size() >= 2);
  for (int k = 0; k < 3000; ++k) {
    size_t a = rng() % c.v.size(), b = rng() % c.v.size();
    if (a > b) std::swap(a, b);
    ++b;
    const auto [lo, hi] = c.min_max_range(a, b);
    INFO("range " << a << " .. " << b);
    CHECK(lo == *std::min_element(c.v.begin() + static_cast<ptrdiff_t>(a), c.v.begin() + static_cast<ptrdiff_t>(b)));
    CHECK(hi == *std::max_element(c.v.begin() + static_cast<ptrdiff_t>(a), c.v.begin() + static_cast<ptrdiff_t>(b)));
  }
}

TEST_CASE("view gc lod: each plot column is the min and max of the samples in force during it") {
  std::mt19937_64 rng(3);
  Counter64 c;
  int64_t t = 500;
  for (int i = 0; i < 20000; ++i) {
    t += static_cast<int64_t>(rng() % 3) * static_cast<int64_t>(rng() % 50);  // repeated timestamps too
    c.ts.push_back(t);
    c.v.push_back(static_cast<int64_t>(rng() % 1000));
  }
  c.build_levels();
  const int64_t t_stop = t + 1000;
  for (double ns_per_px : {0.25, 1.0, 7.0, 130.0, 2000.0}) {
    TimeAxis ax{1000, ns_per_px, 0};
    size_t cols = 0;
    double prev_x1 = -1e300;
    for_each_plot_column(c, ax, 0, 800, 1.0f, t_stop, [&](const PlotColumn& p) {
      ++cols;
      CHECK(p.x0 >= prev_x1 - 0.01);
      prev_x1 = p.x1;
      // Columns on a grid of absolute time, one pixel wide.
      const double a = p.t0, b = p.t1;
      CHECK(b - a == Approx(ns_per_px));
      CHECK(std::fmod(a, ns_per_px) == Approx(0).margin(1e-6));
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      bool any = false;
      for (size_t i = 0; i < c.ts.size(); ++i) {
        const auto ts = static_cast<double>(c.ts[i]);
        const bool last_at_or_before = ts <= a && (i + 1 == c.ts.size() || static_cast<double>(c.ts[i + 1]) > a);
        if (last_at_or_before || (ts > a && ts < b)) {
          lo = std::min(lo, c.v[i]), hi = std::max(hi, c.v[i]);
          any = true;
        }
      }
      INFO("ns_per_px " << ns_per_px << " column at " << a);
      REQUIRE(any);
      CHECK(p.lo == lo);
      CHECK(p.hi == hi);
    });
    CHECK(cols > 0);
    CHECK(cols <= 801);
  }
}

TEST_CASE("view gc lod: sub-pixel intervals merge, each visible one drawn exactly once") {
  std::mt19937_64 rng(11);
  std::vector<GcInterval> v;
  int64_t t = 0;
  for (int i = 0; i < 200000; ++i) {
    t += static_cast<int64_t>(rng() % 40);
    const int64_t len = rng() % 50 == 0 ? 2000 : 1 + static_cast<int64_t>(rng() % 10);
    v.push_back(GcInterval{t, t + len, 0, 0, -1, 0, 0, 0, 0, 0});
    t += len;
  }
  auto st = [&](size_t i) { return v[i].start; };
  auto en = [&](size_t i) { return v[i].end; };
  for (double ns_per_px : {0.5, 4.0, 60.0, 3000.0, 20000.0}) {
    TimeAxis ax{1000, ns_per_px, 0};
    std::vector<int> seen(v.size(), 0);
    size_t runs = 0;
    for_each_interval(v.size(), st, en, ax, 0, 1000, 2.0f, [&](const Run& r) {
      ++runs;
      REQUIRE(r.first <= r.last);
      for (uint32_t i = r.first; i <= r.last; ++i) {
        ++seen[i];
        if (r.merged) CHECK(ax.x(v[i].end) - ax.x(v[i].start) < 2.0f);
      }
      if (!r.merged) CHECK(r.x1 - r.x0 >= 2.0f);
    });
    INFO("ns_per_px " << ns_per_px);
    for (size_t i = 0; i < v.size(); ++i) {
      const bool visible = ax.x(v[i].end) > 0 && ax.x(v[i].start) < 1000;
      if (visible) REQUIRE(seen[i] == 1);
      if (!visible) REQUIRE(seen[i] <= 1);
    }
    CHECK(runs <= 1000);
  }
}

TEST_CASE("view gc layout: the heap plot and the GC band above the P lanes, only with GC") {
  LayoutOptions opt;
  Layout l;
  const Model small = small_model();
  l.build(small, opt);
  CHECK(l.rows().size() == 10);  // as before: 5 counters, 2 P lanes, 3 M lanes
  CHECK(l.heap_row() == -1);
  CHECK(l.gc_row() == -1);
  for (const Row& r : l.rows()) CHECK((r.kind == RowKind::Counter || r.kind == RowKind::Lane));
  const Model m = gc_model();
  l.build(m, opt);
  // 5 counters, heap, GC band, 2 P lanes, 2 M lanes.
  REQUIRE(l.rows().size() == 11);
  REQUIRE(l.heap_row() == 5);
  REQUIRE(l.gc_row() == 6);
  CHECK(l.rows()[5].kind == RowKind::Heap);
  CHECK(l.rows()[5].h == opt.heap_h);
  CHECK(l.rows()[6].kind == RowKind::GcBand);
  CHECK(l.rows()[7].ref == lane_ref(LaneType::P, 0));
  CHECK(l.rows()[6].y < l.rows()[7].y);
  CHECK(l.lane_row(lane_ref(LaneType::P, 1)) == 8);
  const auto [top, bottom] = l.p_extent();
  CHECK(top == l.rows()[7].y);
  CHECK(bottom == l.rows()[8].y + l.rows()[8].h);
  opt.counters = false;
  l.build(m, opt);
  CHECK(l.heap_row() == 0);
  CHECK(l.gc_row() == 1);
}

TEST_CASE("view gc hit test: a pause wins over its cycle, assists in a lane's lower part, the heap") {
  const Model m = gc_model();
  Layout l;
  l.build(m, LayoutOptions{});
  View v;
  const float band = v.y(l, l.gc_row(), 5);
  Hit h = hit_test(m, l, v.s, v.vp, v.x(215.5), band);  // in the sweep-termination pause [200, 230)
  REQUIRE(h.kind == HitKind::GcPause);
  CHECK(h.first == 0);
  CHECK(m.events[h.ev].kind == tr::KIND_STW_BEGIN);
  h = hit_test(m, l, v.s, v.vp, v.x(225.5), band);  // also inside cycle 1 [220, 510): the pause wins
  REQUIRE(h.kind == HitKind::GcPause);
  CHECK(h.first == 0);
  h = hit_test(m, l, v.s, v.vp, v.x(232.5), band);  // 2.5 px after the pause: within its slack
  CHECK(h.kind == HitKind::GcPause);
  h = hit_test(m, l, v.s, v.vp, v.x(350.5), band);
  REQUIRE(h.kind == HitKind::GcCycle);
  CHECK(h.first == 0);
  CHECK(m.gc_cycles[h.first].value == 1);
  h = hit_test(m, l, v.s, v.vp, v.x(505.5), band);  // the mark-termination pause [500, 520)
  REQUIRE(h.kind == HitKind::GcPause);
  CHECK(h.first == 1);
  h = hit_test(m, l, v.s, v.vp, v.x(600.5), band);  // after the cycle, far from any pause
  CHECK(h.kind == HitKind::None);
  // Zoomed out to 100 ns a pixel the mark-termination pause is a fifth of a pixel, still found.
  v.s.show(0, 100000, v.vp.lanes_w());
  h = hit_test(m, l, v.s, v.vp, v.x(650), band);
  REQUIRE(h.kind == HitKind::GcPause);
  CHECK(h.first == 1);
  v = View{};
  // G2's assist [300, 400) on P1: in the lane's lower part; its upper part is G2's segment.
  const int p1 = l.lane_row(lane_ref(LaneType::P, 1));
  const float p1_h = l.rows()[static_cast<size_t>(p1)].h;
  h = hit_test(m, l, v.s, v.vp, v.x(350.5), v.y(l, p1, p1_h - 2));
  REQUIRE(h.kind == HitKind::Assist);
  CHECK(m.assists[h.first].g == 2);
  h = hit_test(m, l, v.s, v.vp, v.x(350.5), v.y(l, p1, p1_h * 0.5f - 2));
  REQUIRE(h.kind == HitKind::Segment);
  CHECK(m.lane(h.ref)->segs[h.first].g() == 2);
  h = hit_test(m, l, v.s, v.vp, v.x(450.5), v.y(l, p1, p1_h - 2));  // after the assist
  CHECK(h.kind == HitKind::Segment);
  // The heap plot: 5 MiB from 350 on, the goal 4 MiB until 520.
  h = hit_test(m, l, v.s, v.vp, v.x(400.5), v.y(l, l.heap_row(), 10));
  REQUIRE(h.kind == HitKind::Heap);
  CHECK(h.value64 == 5 * MiB);
  CHECK(h.goal == 4 * MiB);
}

TEST_CASE("view gc stats: a clicked cycle's pauses and assists, a pause's reason and cycle") {
  const Model m = gc_model();
  GcItemStats g;
  compute_gc_item(m, GcItemStats::Kind::Cycle, 0, g);
  REQUIRE(g.kind == GcItemStats::Kind::Cycle);
  CHECK(g.cycle == 1);
  CHECK(g.duration() == 290);  // [220, 510)
  CHECK(g.pauses == 2);        // sweep termination [200, 230) and mark termination [500, 520), whole
  CHECK(g.pause_ns == 50);
  CHECK(g.pause_max == 30);
  CHECK(g.assists == 1);
  CHECK(g.assist_ns == 100);   // G2's [300, 400)
  // A producer that puts GC_BEGIN at the end of the first pause and GC_END at the start of the
  // second: both still belong to the cycle.
  Model touching = m;
  touching.stw_pauses[0].end = 220;
  touching.stw_pauses[1].start = 510;
  compute_gc_item(touching, GcItemStats::Kind::Cycle, 0, g);
  CHECK(g.pauses == 2);
  compute_gc_item(touching, GcItemStats::Kind::Pause, 0, g);
  CHECK(g.cycle == 1);
  compute_gc_item(m, GcItemStats::Kind::Pause, 1, g);
  REQUIRE(g.kind == GcItemStats::Kind::Pause);
  CHECK(g.duration() == 20);
  CHECK(g.stw_reason == tr::STW_REASON_GC_MARK_TERM);
  CHECK(g.cycle == 1);
  compute_gc_item(m, GcItemStats::Kind::Pause, 0, g);
  CHECK(g.stw_reason == tr::STW_REASON_GC_SWEEP_TERM);
  CHECK(g.cycle == 1);  // it overlaps the cycle's start
  compute_gc_item(m, GcItemStats::Kind::Pause, 2, g);  // out of range
  CHECK(g.kind == GcItemStats::Kind::None);
  // A cycle's worker time by mode, clipped to the cycle.
  const Model w = worker_model();
  Model wc = w;
  wc.gc_cycles.push_back(GcInterval{120, 270, 0, 0, 4, 0, 0, 0, 0, 0});
  compute_gc_item(wc, GcItemStats::Kind::Cycle, 0, g);
  CHECK(g.worker_ns[tr::GC_WORKER_MODE_DEDICATED] == 150);  // [120, 270) of [100, 300)
  CHECK(g.worker_ns[tr::GC_WORKER_MODE_IDLE] == 100);       // [150, 250)
  CHECK(g.worker_ns[tr::GC_WORKER_MODE_FRACTIONAL] == 10);  // [260, 270) of [260, 280)
  // The whole trace's and a range's GC lines.
  Stats s;
  compute_stats(m, m.t_begin, m.t_end + 1, s);
  CHECK(s.gc_cycles == 1);
  CHECK(s.stw_pauses == 2);
  CHECK(s.stw_ns == 50);
  CHECK(s.stw_max == 30);
  CHECK(s.assist_ns == 100);
  compute_stats(m, 240, 350, s);
  CHECK(s.gc_cycles == 1);
  CHECK(s.stw_pauses == 0);
  CHECK(s.assist_ns == 50);
  compute_stats(small_model(), 0, 100000, s);
  CHECK(s.gc_cycles == 0);
  CHECK(s.stw_ns == 0);
}
