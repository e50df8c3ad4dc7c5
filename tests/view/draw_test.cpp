// The viewer without a window: level of detail, busy time, layout, hit testing and drawing into an
// ImGui context (no OpenGL), time formats and statistics, on the small known trace and on large
// synthetic lanes.
#include <imgui.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/view/small_trace.h"
#include "tests/traces/two_process_trace.h"
#include "viewer/colors.h"
#include "viewer/layout.h"
#include "viewer/lod.h"
#include "viewer/model.h"
#include "viewer/stats.h"
#include "viewer/time_format.h"
#include "viewer/timeline.h"
#include "viewer/timeline_draw.h"

namespace fs = std::filesystem;
using namespace gmp::view;

namespace {

Model small_model() {
  std::string tmpl = (fs::temp_directory_path() / "gmp_view_draw.XXXXXX").string();
  REQUIRE(mkdtemp(tmpl.data()) != nullptr);
  const std::string path = tmpl + "/small.gmptrace";
  testing::write_small_trace(path);
  Model m = load_trace(path);
  fs::remove_all(tmpl);
  return m;
}

// A lane of n segments: widths and gaps drawn from the seed, a third of them Running.
Lane random_lane(size_t n, uint64_t seed, int64_t max_len = 100) {
  std::mt19937_64 rng(seed);
  Lane l;
  l.type = LaneType::P;
  int64_t t = 0;
  for (size_t i = 0; i < n; ++i) {
    t += static_cast<int64_t>(rng() % 20);
    const int64_t len = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(max_len));
    const State st = rng() % 3 == 0 ? State::Running : State::Syscall;
    l.segs.push_back(Segment::make(t, t + len, static_cast<int32_t>(i % 7), st));
    t += len;
  }
  l.busy_before.assign(l.segs.size() / 16 + 1, 0);
  int64_t sum = 0;
  for (size_t i = 0; i < l.segs.size(); ++i) {
    if (i % 16 == 0) l.busy_before[i / 16] = sum;
    if (l.segs[i].state() == State::Running) sum += l.segs[i].end() - l.segs[i].start;
  }
  if (l.segs.size() % 16 == 0) l.busy_before.back() = sum;
  l.build_grid();
  return l;
}

// An ImGui context with its font atlas built and one frame open, no window and no renderer.
struct ImGuiFrame {
  ImGuiFrame(float w, float h) {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(w, h);
    io.DeltaTime = 1.0f / 60;
    unsigned char* px;
    int tw, th;
    io.Fonts->GetTexDataAsRGBA32(&px, &tw, &th);
    ImGui::NewFrame();
  }
  ~ImGuiFrame() {
    ImGui::EndFrame();
    ImGui::DestroyContext();
  }
  ImDrawList* list() { return ImGui::GetForegroundDrawList(); }
};

}  // namespace

TEST_CASE("view lod: every visible segment is in exactly one run, merged ones are all narrow") {
  const Lane lane = random_lane(20000, 1);
  for (double ns_per_px : {0.5, 3.0, 40.0, 900.0, 5000.0, 20000.0}) {  // the last two merge whole grid cells
    TimeAxis ax{1000, ns_per_px, 0};
    const float width = 1000;
    std::vector<int> seen(lane.segs.size(), 0);
    size_t runs = 0;
    for_each_run(lane, ax, 0, width, 2.0f, [&](const Run& r) {
      ++runs;
      REQUIRE(r.first <= r.last);
      for (uint32_t i = r.first; i <= r.last; ++i) {
        ++seen[i];
        if (r.merged) CHECK(ax.x(lane.segs[i].end()) - ax.x(lane.segs[i].start) < 2.0f);
      }
      if (!r.merged) CHECK(r.x1 - r.x0 >= 2.0f);
    });
    INFO("ns_per_px " << ns_per_px);
    for (size_t i = 0; i < lane.segs.size(); ++i) {
      const bool visible = ax.x(lane.segs[i].end()) > 0 && ax.x(lane.segs[i].start) < width;
      if (visible) REQUIRE(seen[i] == 1);
      if (!visible) REQUIRE(seen[i] <= 1);  // a merged run may swallow a neighbour just outside
    }
    // Level of detail: never more runs than the width allows.
    CHECK(runs <= static_cast<size_t>(width));
  }
}

TEST_CASE("view lod: a million sub-pixel segments cost as many runs as pixels, not segments") {
  const Lane lane = random_lane(1000000, 2, 5);
  const double span = static_cast<double>(lane.segs.back().end());
  TimeAxis ax{0, span / 1000, 0};
  size_t runs = 0, covered = 0;
  for_each_run(lane, ax, 0, 1000, 2.0f, [&](const Run& r) {
    ++runs;
    covered += r.last - r.first + 1;
  });
  CHECK(runs <= 500);
  CHECK(covered == lane.segs.size());
}

TEST_CASE("view lod: busy time and the cursor agree with brute force") {
  const Lane lane = random_lane(5000, 3);
  std::mt19937_64 rng(4);
  auto brute = [&](int64_t a, int64_t b) {
    int64_t sum = 0;
    for (const Segment& s : lane.segs) {
      if (s.state() != State::Running) continue;
      sum += std::max<int64_t>(0, std::min(b, s.end()) - std::max(a, s.start));
    }
    return sum;
  };
  const int64_t end = lane.segs.back().end();
  for (int q = 0; q < 2000; ++q) {
    const int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(end + 200)) - 100;
    const int64_t b = a + static_cast<int64_t>(rng() % 3000);
    REQUIRE(busy_ns(lane, a, b) == brute(a, b));
  }
  BusyCursor cur(lane);
  int64_t prev = cur.until(-5);
  CHECK(prev == 0);
  for (int64_t t = 0; t < end + 50; t += 37) {
    const int64_t next = cur.until(t);
    REQUIRE(next - prev == brute(t - 37 < 0 ? -5 : t - 37, t));
    prev = next;
  }
  for (int64_t t = -3; t < end + 3; t += 11) {
    const size_t i = lane.first_ending_after(t);
    REQUIRE((i == lane.segs.size() || lane.segs[i].end() > t));
    REQUIRE((i == 0 || lane.segs[i - 1].end() <= t));
  }
}

TEST_CASE("view layout: rows in order, found by y, lanes centred") {
  const Model m = small_model();
  Layout l;
  LayoutOptions opt;
  l.build(m, opt);
  // 3 counters + 2 local queues, 2 P lanes, 3 M lanes.
  REQUIRE(l.rows().size() == 10);
  CHECK(l.rows()[0].kind == RowKind::Counter);
  CHECK(l.rows()[5].ref == lane_ref(LaneType::P, 0));
  CHECK(l.rows()[7].ref == lane_ref(LaneType::M, 0));
  const float p0 = 5 * (opt.counter_h + opt.row_gap) + opt.group_gap;
  CHECK(l.rows()[5].y == Approx(p0));
  CHECK(l.lane_center(lane_ref(LaneType::P, 1)) == Approx(p0 + opt.lane_h + opt.row_gap + opt.lane_h / 2));
  CHECK(l.row_at(p0 + 1) == 5);
  CHECK(l.row_at(p0 + opt.lane_h + 0.5f) == -1);  // the gap between rows
  CHECK(l.row_at(-1) == -1);
  const auto [a, b] = l.visible(p0 + 1, p0 + opt.lane_h + opt.row_gap + 1);
  CHECK(a == 5);
  CHECK(b == 7);
  CHECK(l.lane_center(lane_ref(LaneType::G, 0)) < 0);  // no G lanes unless asked
  Model mg = small_model();
  mg.build_g_lanes();
  opt.g_lanes = true;
  opt.counters = false;
  l.build(mg, opt);
  REQUIRE(l.rows().size() == 8);
  CHECK(l.rows()[0].ref == lane_ref(LaneType::P, 0));
  CHECK(l.lane_center(lane_ref(LaneType::G, 2)) > l.lane_center(lane_ref(LaneType::M, 2)));
}

TEST_CASE("view hit test: segments, markers, counters and merged runs under the cursor") {
  const Model m = small_model();
  Layout l;
  l.build(m, LayoutOptions{});
  Viewport vp{0, 0, 1484, 600};
  TimelineState s;
  s.show(0, 1400, vp.lanes_w());  // 1 ns per pixel
  const float p0_y = vp.rows_y() + l.lane_center(lane_ref(LaneType::P, 0));
  Hit h = hit_test(m, l, s, vp, vp.lanes_x() + 600, p0_y + 5);
  REQUIRE(h.kind == HitKind::Segment);
  CHECK(m.lane(h.ref)->segs[h.first].g() == 3);
  CHECK(m.events[h.ev].kind == gmp::trace::KIND_GO_START);
  CHECK(m.events[h.ev].ts == 510);
  h = hit_test(m, l, s, vp, vp.lanes_x() + 1100, p0_y + 5);  // P0 is idle at 1100
  CHECK(h.kind == HitKind::None);
  h = hit_test(m, l, s, vp, vp.lanes_x() + 701, p0_y - 8);  // the preemption request at 700
  REQUIRE(h.kind == HitKind::Marker);
  CHECK(m.events[h.ev].kind == gmp::trace::KIND_PREEMPT_REQUEST);
  h = hit_test(m, l, s, vp, vp.lanes_x() + 25, vp.rows_y() + l.rows()[3].y + 5);  // P0's local queue
  REQUIRE(h.kind == HitKind::Counter);
  CHECK(h.value == 2);
  h = hit_test(m, l, s, vp, vp.lanes_x() + 25, 5);
  CHECK(h.kind == HitKind::Ruler);
  // Zoomed out to 700 ns a pixel, P0's segments are narrower than a pixel: merged.
  s.show(0, 700.0 * 1400, vp.lanes_w());
  h = hit_test(m, l, s, vp, vp.lanes_x() + 0.5f, p0_y);
  REQUIRE(h.kind == HitKind::Merged);
  CHECK(h.first == 0);
  CHECK(h.last == 1);
}

TEST_CASE("view draw: the small trace's rectangles sit on their lanes in their G's colour") {
  const Model m = small_model();
  Layout l;
  l.build(m, LayoutOptions{});
  ImGuiFrame f(1600, 600);
  Viewport vp{0, 0, 1484, 600};
  TimelineState s;
  s.show(0, 1400, vp.lanes_w());
  s.selected_g = 3;
  RectBatch batch;
  DrawCounts n;
  draw_timeline(f.list(), m, l, s, vp, &batch, &n);
  CHECK(n.merged == 0);
  CHECK(n.runs == 5 + 3 + 5 + 4);  // P0, P1, M0 (as P0), M1 (with its parked stretch)
  auto find = [&](float x, float y) -> const FlatRect* {
    const FlatRect* hit = nullptr;
    for (const FlatRect& r : batch.rects()) {
      if (x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1) hit = &r;
    }
    return hit;
  };
  const float p0 = vp.rows_y() + l.rows()[5].y, p1 = vp.rows_y() + l.rows()[6].y;
  const FlatRect* g1 = find(vp.lanes_x() + 300, p0 + 10);
  REQUIRE(g1 != nullptr);
  CHECK(g1->col == g_color(1));
  CHECK(g1->x0 == Approx(vp.lanes_x() + 100));
  CHECK(g1->x1 == Approx(vp.lanes_x() + 500));
  CHECK(g1->y0 == Approx(p0));
  CHECK(g1->y1 == Approx(p0 + 20));
  const FlatRect* spin = find(vp.lanes_x() + 175, p1 + 10);
  REQUIRE(spin != nullptr);
  CHECK(spin->col == kSpinning);
  // The syscall is drawn lower and darker.
  const FlatRect* sys = find(vp.lanes_x() + 850, p0 + 19);
  REQUIRE(sys != nullptr);
  CHECK(sys->col == darker(g_color(3)));
  CHECK(sys->y0 > p0 + 5);
  CHECK(find(vp.lanes_x() + 1100, p0 + 10) == nullptr);
  // Arrows and the marker were drawn: the steals, the wake-up, the unpark.
  CHECK(n.points == 1 + 4);
  // Colours differ per G and never change.
  CHECK(g_color(1) != g_color(2));
  CHECK(g_color(7) == g_color(7));
  CHECK(g_color(1) == 0xffde4e94u);  // pinned: a change of the hash changes every screenshot
}

TEST_CASE("view draw: a zoomed-out frame costs pixels, not events") {
  Model m;
  m.p_lanes.push_back(random_lane(1000000, 5, 5));
  m.p_lanes[0].id = 0;
  m.local_queues.emplace_back();
  m.t_end = m.p_lanes[0].segs.back().end();
  Counter& q = m.local_queues[0];
  for (int64_t i = 0; i < 1000000; ++i) {
    q.ts.push_back(i * 7);
    q.v.push_back(static_cast<int32_t>(i % 13));
  }
  q.build_levels();
  Layout l;
  l.build(m, LayoutOptions{});
  ImGuiFrame f(1200, 400);
  Viewport vp{0, 0, 1084, 400};
  TimelineState s;
  s.show(0, static_cast<double>(m.t_end), vp.lanes_w());
  RectBatch batch;
  DrawCounts n;
  draw_timeline(f.list(), m, l, s, vp, &batch, &n);
  CHECK(n.runs + n.merged <= 1000);
  CHECK(n.columns <= 4 * 1000 / 3 + 8);
  CHECK(batch.rects().size() <= 4 * 1000 / 3 + 8);
  CHECK(f.list()->VtxBuffer.Size < 20000);
}

TEST_CASE("view time: formats with adaptive units, parses what users type") {
  char buf[32];
  format_time(buf, sizeof buf, 1500, 100);
  CHECK(std::string(buf) == "1.5 us");
  format_time(buf, sizeof buf, 2e6, 1e6);
  CHECK(std::string(buf) == "2 ms");
  format_duration(buf, sizeof buf, 123456);
  CHECK(std::string(buf) == "123 us");
  double t = 0;
  CHECK(parse_time("1.5ms", t));
  CHECK(t == Approx(1.5e6));
  CHECK(parse_time(" 250 ", t));
  CHECK(t == 250);
  CHECK(parse_time("2 s", t));
  CHECK(t == 2e9);
  CHECK_FALSE(parse_time("3 minutes", t));
  CHECK_FALSE(parse_time("", t));
  CHECK(nice_step(7) == 10);
  CHECK(nice_step(130) == 200);
  CHECK(nice_step(4100) == 5000);
}

TEST_CASE("view stats: latency percentiles and utilisation of the whole trace and a range") {
  const Model m = small_model();
  Stats s;
  compute_stats(m, m.t_begin, m.t_end + 1, s);
  CHECK(s.starts == 5);
  CHECK(s.lat_p50 == 230);
  CHECK(s.lat_max == 700);
  CHECK(s.p[0].busy == Approx(990.0 / 1401));
  CHECK(s.steals == 2);
  CHECK(s.wakeups == 1);
  CHECK(s.unparks == 1);
  CHECK(s.lat_hist[static_cast<size_t>(latency_bin(90))] == 2);  // 90 and 100 ns: [64, 128)
  compute_stats(m, 200, 600, s);
  CHECK(s.starts == 2);  // 250 and 510
  CHECK(s.p[1].busy == Approx(350.0 / 400));
  CHECK(s.p[1].segments == 1);
  CHECK(latency_bin(0) == 0);
  CHECK(latency_bin(1024) == 10);
}

TEST_CASE("view lod: the grid's coarse busy time is within a cell of exact") {
  const Lane lane = random_lane(100000, 6, 30);
  REQUIRE(lane.grid_busy.size() == lane.grid.size());
  std::mt19937_64 rng(8);
  const int64_t end = lane.segs.back().end();
  for (int q = 0; q < 3000; ++q) {
    const int64_t t = static_cast<int64_t>(rng() % static_cast<uint64_t>(end + 100));
    const int64_t exact = busy_ns(lane, INT64_MIN / 2, t);
    REQUIRE(std::llabs(lane.busy_before_coarse(t) - exact) <= lane.grid_dt);
  }
  // At the cells' edges it is exact.
  for (size_t c = 0; c < lane.grid.size(); c += 97) {
    const int64_t t = lane.grid_t0 + static_cast<int64_t>(c) * lane.grid_dt;
    REQUIRE(lane.busy_before_coarse(t) == busy_ns(lane, INT64_MIN / 2, t));
  }
}

// Issue 25: the two-process trace (tests/traces/two_process_trace.h) in the viewer.
namespace {
Model two_process_model() {
  std::string tmpl = (fs::temp_directory_path() / "gmp_view_draw.XXXXXX").string();
  REQUIRE(mkdtemp(tmpl.data()) != nullptr);
  const std::string path = tmpl + "/two.gmptrace";
  gmp::trace::testing::write_two_process_trace(path);
  Model m = load_trace(path);
  fs::remove_all(tmpl);
  return m;
}
}  // namespace

TEST_CASE("view layout: a group per process with its header, collapsible") {
  const Model m = two_process_model();
  Layout l;
  LayoutOptions opt;
  opt.counters = false;
  l.build(m, opt);
  // server: header, P0, M0; loadgen: header, P0, P1, M0, M1.
  REQUIRE(l.rows().size() == 8);
  CHECK(l.rows()[0].kind == RowKind::Group);
  CHECK(l.rows()[0].ref == 0);
  CHECK(l.rows()[1].ref == lane_ref(LaneType::P, 0));
  CHECK(l.rows()[2].ref == lane_ref(LaneType::M, 0));
  CHECK(l.rows()[3].kind == RowKind::Group);
  CHECK(l.rows()[3].ref == 1);
  CHECK(l.rows()[4].ref == lane_ref(LaneType::P, 1));
  CHECK(l.rows()[7].ref == lane_ref(LaneType::M, 2));
  CHECK(l.lane_row(lane_ref(LaneType::M, 1)) == 6);
  // A click on a header hits the group.
  Viewport vp{0, 0, 1484, 600};
  TimelineState s;
  s.show(0, 140, vp.lanes_w());
  const Hit h = hit_test(m, l, s, vp, vp.lanes_x() + 50, vp.rows_y() + l.rows()[3].y + 2);
  CHECK(h.kind == HitKind::Group);
  CHECK(h.ref == 1);
  // Collapsed, the server keeps its header only; its lanes have no row.
  opt.collapsed = {1};
  l.build(m, opt);
  REQUIRE(l.rows().size() == 6);
  CHECK(l.rows()[1].kind == RowKind::Group);
  CHECK(l.lane_row(lane_ref(LaneType::P, 0)) == -1);
  CHECK(l.lane_row(lane_ref(LaneType::P, 1)) == 2);
  CHECK(l.collapsed(0));
  CHECK(!l.collapsed(1));
}

TEST_CASE("view stats: the throttled stretches of a range, and their colour") {
  const Model m = two_process_model();
  Stats st;
  compute_stats(m, 0, 140, st);
  CHECK(st.throttles == 1);
  CHECK(st.throttled_ns == 30);
  CHECK(st.throttled_max == 30);
  CHECK(st.throttled_periods == 1);
  compute_stats(m, 60, 70, st);  // inside the stretch
  CHECK(st.throttled_ns == 10);
  compute_stats(m, 90, 140, st);
  CHECK(st.throttles == 0);
  const Lane& m0 = m.m_lanes[static_cast<size_t>(m.m_lane_index(0, 0))];
  REQUIRE(m0.segs.size() == 3);
  CHECK(segment_color(m0.segs[1]) == kThrottled);
}
