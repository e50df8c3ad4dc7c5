// Draws the timeline: see timeline_draw.h.
#include "viewer/timeline_draw.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "viewer/colors.h"
#include "viewer/lod.h"
#include "viewer/time_format.h"

namespace gmp::view {

namespace {

FlatDrawCallback g_flat_callback = nullptr;

struct Ctx {
  ImDrawList* dl;
  const Model& m;
  const Layout& l;
  const TimelineState& s;
  const Viewport& vp;
  TimeAxis ax;
  float left, right;  // the lanes' screen extent
  DrawCounts& n;
  RectBatch* batch;  // solid rectangles go here when set, else to dl

  void fill(float x0, float y0, float x1, float y1, uint32_t col) const {
    if (batch != nullptr) {
      batch->add(x0, y0, x1, y1, col);
    } else {
      dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), col);
    }
  }
};

// Bars drawn left to right; a bar of the same top, bottom and colour as the one before it, and
// touching it, extends it instead of adding a quad (each quad costs a software rasteriser).
class Bars {
 public:
  explicit Bars(const struct Ctx& c) : c_(c) {}
  ~Bars() { flush(); }
  void add(float x0, float x1, float top, float bottom, uint32_t col) {
    if (x1 <= x0) return;
    if (open_ && col == col_ && top == top_ && bottom == bottom_ && x0 <= x1_ + 0.01f) {
      x1_ = x1;
      return;
    }
    flush();
    open_ = true;
    x0_ = x0, x1_ = x1, top_ = top, bottom_ = bottom, col_ = col;
  }
  void flush() {
    if (open_) c_.fill(x0_, top_, x1_, bottom_, col_);
    open_ = false;
  }

 private:
  const Ctx& c_;
  bool open_ = false;
  float x0_ = 0, x1_ = 0, top_ = 0, bottom_ = 0;
  uint32_t col_ = 0;
};

// Calls f(t0, t1, x0, x1) for the columns of kColumnPx pixels covering [x_begin, x_end). Columns
// sit on a grid of absolute time, so panning does not make a zoomed-out graph shimmer.
template <class F>
void for_each_column(const TimeAxis& ax, float x_begin, float x_end, F&& f) {
  const double w = kColumnPx * ax.ns_per_px;
  for (double k = std::floor(ax.t(x_begin) / w);; k += 1) {
    const double a = k * w, b = a + w;
    const float x0 = ax.x(static_cast<int64_t>(std::llround(a))), x1 = ax.x(static_cast<int64_t>(std::llround(b)));
    if (x0 >= x_end) break;
    f(a, b, x0, x1);
  }
}

void draw_ruler(Ctx& c) {
  const float y0 = c.vp.y, y1 = c.vp.rows_y();
  c.dl->AddLine(ImVec2(c.vp.x, y1 - 0.5f), ImVec2(c.vp.x + c.vp.w, y1 - 0.5f), kLaneBg);
  const bool steps = c.m.step_axis;
  const double step = std::max(steps ? 1.0 : 0.0, nice_step(c.s.ns_per_px * 90));
  const double first = std::ceil(c.ax.t(c.left) / step) * step;
  char buf[48];
  for (double t = first; c.ax.x(static_cast<int64_t>(t)) < c.right; t += step) {
    const float x = std::round(c.left + static_cast<float>((t - c.s.t0) / c.s.ns_per_px));
    c.dl->AddLine(ImVec2(x, y1 - 8), ImVec2(x, y1), kDimText);
    for (int k = 1; k < 5; ++k) {
      const float xs = x + static_cast<float>(k * step / 5 / c.s.ns_per_px);
      if (xs < c.right) c.dl->AddLine(ImVec2(xs, y1 - 4), ImVec2(xs, y1), kDimText);
    }
    if (steps) {
      std::snprintf(buf, sizeof buf, "%.0f", std::fabs(t) < 0.5 ? 0.0 : t);
    } else {
      format_time(buf, sizeof buf, std::fabs(t) < step / 2 ? 0.0 : t, step);
    }
    c.dl->AddText(ImVec2(x + 3, y0 + 2), kText, buf);
  }
  // The visible span, at the right of the label column.
  format_span(buf, sizeof buf, c.s.ns_per_px * static_cast<double>(c.right - c.left), steps);
  c.dl->AddText(ImVec2(c.vp.x + 4, y0 + 2), kDimText, buf);
}

void draw_counter(Ctx& c, const Row& row, float y) {
  const Counter& k = counter_of(c.m, row.ref);
  const uint32_t col = counter_color(row.ref);
  const uint32_t fill = darker(col, 0.7f);
  const float bottom = y + row.h, top = y + 2;
  const float scale = k.max_value > 0 ? (bottom - top) / static_cast<float>(k.max_value) : 0;
  if (k.ts.empty()) return;
  const double t_begin = c.ax.t(c.left), t_end = c.ax.t(c.right);
  // Few samples in view: one step per sample; many: one column per pixel, its max from the pyramid.
  auto lo = std::upper_bound(k.ts.begin(), k.ts.end(), static_cast<int64_t>(t_begin));
  size_t i = lo == k.ts.begin() ? 0 : static_cast<size_t>(lo - k.ts.begin()) - 1;
  const size_t j =
      static_cast<size_t>(std::lower_bound(k.ts.begin(), k.ts.end(), static_cast<int64_t>(t_end) + 1) - k.ts.begin());
  if (j - i < static_cast<size_t>(c.right - c.left) / 2) {
    for (; i < j; ++i) {
      const float x0 = std::max(c.left, c.ax.x(k.ts[i]));
      const float x1 =
          i + 1 < k.ts.size() ? std::min(c.right, c.ax.x(k.ts[i + 1])) : std::min(c.right, c.ax.x(c.m.t_end));
      if (x1 <= x0 || k.v[i] <= 0) continue;
      c.fill(x0, bottom - std::round(static_cast<float>(k.v[i]) * scale), x1, bottom, fill);
      ++c.n.columns;
    }
  } else {
    Bars bars(c);
    CounterCursor cur(k);
    size_t prev = SIZE_MAX;
    bool started = false;
    for_each_column(c.ax, c.left, c.right, [&](double a, double b, float x0, float x1) {
      // Samples in force during the column: the one at its start through the last before its end.
      const size_t first = started ? prev : cur.at(static_cast<int64_t>(a));
      const size_t last = cur.at(static_cast<int64_t>(std::ceil(b)) - 1);
      started = true;
      prev = last;
      if (last == SIZE_MAX || a > static_cast<double>(c.m.t_end)) return;
      const int32_t v = k.max_range(first == SIZE_MAX ? 0 : first, last + 1);
      if (v > 0) bars.add(x0, x1, bottom - std::round(static_cast<float>(v) * scale), bottom, fill);
      ++c.n.columns;
    });
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "max %d", k.max_value);
  c.dl->AddText(ImVec2(c.right - ImGui::CalcTextSize(buf).x - 4, y + 1), kDimText, buf);
}

template <class V>
auto starts_of(const V& v) {
  return [&v](size_t i) { return v[i].start; };
}
template <class V>
auto ends_of(const V& v) {
  return [&v](size_t i) { return v[i].end; };
}

// The heap and its goal: per pixel column, a vertical span from the column's min to its max (as
// Tracy plots), so a step reads as a step and a column of many samples as their range; the heap
// has a dim fill under its max.
void draw_heap(Ctx& c, const Row& row, float y) {
  const Model& m = c.m;
  const float top = y + 3, bottom = y + row.h;
  const int64_t vmax = std::max(m.heap_alloc.max_value, m.heap_goal.max_value);
  if (vmax <= 0) return;
  const float scale = (bottom - top) / static_cast<float>(vmax);
  auto ypos = [&](int64_t v) { return bottom - std::round(static_cast<float>(v) * scale); };
  {
    Bars fill(c);
    for_each_plot_column(m.heap_alloc, c.ax, c.left, c.right, 1.0f, m.t_end, [&](const PlotColumn& p) {
      fill.add(std::max(c.left, p.x0), std::min(c.right, p.x1), ypos(p.hi), bottom, darker(kHeap, 0.35f));
      ++c.n.columns;
    });
  }
  for (const auto& [k, col] : {std::pair{&m.heap_goal, kHeapGoal}, std::pair{&m.heap_alloc, kHeap}}) {
    Bars line(c);
    for_each_plot_column(*k, c.ax, c.left, c.right, 1.0f, m.t_end, [&](const PlotColumn& p) {
      const float y_hi = ypos(p.hi), y_lo = std::max(ypos(p.lo), y_hi + 1.5f);
      line.add(std::max(c.left, p.x0), std::min(c.right, p.x1), y_hi - 0.5f, y_lo, col);
      ++c.n.columns;
    });
  }
  char a[24], b[24], buf[80];
  format_bytes(a, sizeof a, m.heap_alloc.max_value);
  format_bytes(b, sizeof b, m.heap_goal.max_value);
  std::snprintf(buf, sizeof buf, "heap max %s, goal max %s", a, b);
  c.dl->AddText(ImVec2(c.right - ImGui::CalcTextSize(buf).x - 4, y + 1), kDimText, buf);
}

// The GC band: a bar per cycle ("GC n" inside when it fits), the stop-the-world pauses over it.
void draw_gc_band(Ctx& c, const Row& row, float y) {
  const Model& m = c.m;
  const float top = y + 1, bottom = y + row.h;
  const float text_h = ImGui::GetFontSize();
  char buf[32];
  {
    Bars bars(c);
    for_each_interval(m.gc_cycles.size(), starts_of(m.gc_cycles), ends_of(m.gc_cycles), c.ax, c.left, c.right,
                      kMinRunPx, [&](const Run& r) {
                        const float x0 = std::max(c.left, r.x0), x1 = std::min(c.right, std::max(r.x1, r.x0 + 1));
                        bars.add(x0, x1, top, bottom, r.merged ? darker(kGcCycle, 0.75f) : kGcCycle);
                        const int64_t n = m.gc_cycles[r.first].value;
                        if (r.merged || n < 0 || x1 - x0 < 30) return;
                        std::snprintf(buf, sizeof buf, "GC %lld", static_cast<long long>(n));
                        const float w = ImGui::CalcTextSize(buf).x;
                        if (w + 6 <= x1 - x0) {
                          c.dl->AddText(ImVec2(std::max(x0 + 3, (x0 + x1 - w) / 2), top + (bottom - top - text_h) / 2),
                                        rgba(0, 0, 0), buf);
                        }
                      });
  }
  Bars pauses(c);
  for_each_interval(m.stw_pauses.size(), starts_of(m.stw_pauses), ends_of(m.stw_pauses), c.ax, c.left, c.right, 1.0f,
                    [&](const Run& r) {
                      pauses.add(std::max(c.left, r.x0), std::min(c.right, std::max(r.x1, r.x0 + 2)), top, bottom, kStw);
                    });
  pauses.flush();
  // The clicked cycle or pause, outlined.
  const std::vector<GcInterval>* picked = c.s.gc_pick == TimelineState::GcPick::Cycle   ? &m.gc_cycles
                                          : c.s.gc_pick == TimelineState::GcPick::Pause ? &m.stw_pauses
                                                                                       : nullptr;
  if (picked != nullptr && c.s.gc_pick_index < picked->size()) {
    const GcInterval& g = (*picked)[c.s.gc_pick_index];
    const float x0 = c.ax.x(g.start), x1 = std::max(c.ax.x(g.end), x0 + 2);
    if (x1 >= c.left && x0 <= c.right) {
      c.dl->AddRect(ImVec2(std::max(c.left - 2, x0) - 1, top - 1), ImVec2(std::min(c.right + 2, x1) + 1, bottom + 1),
                    kHighlight, 0, 0, 2.0f);
    }
  }
}

// A lane's GC work over its segments: on a P lane a stripe along the top for each mark worker's
// run in its mode's colour (merged runs grey); on P and G lanes the mark assists in the lower part.
void draw_lane_gc(Ctx& c, const Row& row, float y) {
  const Model& m = c.m;
  const LaneType type = ref_type(row.ref);
  const uint32_t idx = ref_index(row.ref);
  const float top = y, bottom = y + row.h;
  if (type == LaneType::P && idx < m.workers_of_p.size() && !m.workers_of_p[idx].empty()) {
    const std::vector<uint32_t>& ix = m.workers_of_p[idx];
    Bars bars(c);
    for_each_interval(
        ix.size(), [&](size_t i) { return m.mark_workers[ix[i]].start; },
        [&](size_t i) { return m.mark_workers[ix[i]].end; }, c.ax, c.left, c.right, kMinRunPx, [&](const Run& r) {
          const uint32_t col = worker_color(r.merged ? 0 : m.mark_workers[ix[r.first]].worker_mode);
          bars.add(std::max(c.left, r.x0), std::min(c.right, std::max(r.x1, r.x0 + 1)), top, top + 4, col);
        });
  }
  const std::vector<uint32_t>* assists = type == LaneType::P && idx < m.assists_of_p.size()   ? &m.assists_of_p[idx]
                                         : type == LaneType::G && idx < m.assists_of_g.size() ? &m.assists_of_g[idx]
                                                                                              : nullptr;
  if (assists != nullptr && !assists->empty()) {
    const std::vector<uint32_t>& ix = *assists;
    Bars bars(c), edge(c);
    const float a_top = bottom - std::round(row.h * kAssistFrac);
    for_each_interval(
        ix.size(), [&](size_t i) { return m.assists[ix[i]].start; }, [&](size_t i) { return m.assists[ix[i]].end; },
        c.ax, c.left, c.right, kMinRunPx, [&](const Run& r) {
          const float x0 = std::max(c.left, r.x0), x1 = std::min(c.right, std::max(r.x1, r.x0 + 1));
          bars.add(x0, x1, a_top, bottom, kAssist);
          edge.add(x0, x1, a_top - 1, a_top, rgba(0, 0, 0));  // an edge, so it reads apart from a G's colour
          ++c.n.runs;
        });
  }
}

// Stop-the-world: a translucent band over every P lane for each pause (at least a pixel wide).
void draw_stw_overlay(Ctx& c) {
  const Model& m = c.m;
  if (c.l.gc_row() < 0 || m.stw_pauses.empty()) return;
  const auto [pt, pb] = c.l.p_extent();
  const float base = c.vp.rows_y() - c.s.scroll_y;
  const float y0 = std::max(c.vp.rows_y(), base + pt), y1 = std::min(c.vp.y + c.vp.h, base + pb);
  if (y1 <= y0) return;
  Bars bars(c);
  for_each_interval(m.stw_pauses.size(), starts_of(m.stw_pauses), ends_of(m.stw_pauses), c.ax, c.left, c.right, 1.0f,
                    [&](const Run& r) {
                      bars.add(std::max(c.left, r.x0), std::min(c.right, std::max(r.x1, r.x0 + 1)), y0, y1, kStwOverlay);
                    });
}

void draw_lane(Ctx& c, const Row& row, float y) {
  const Lane* lane = c.m.lane(row.ref);
  if (lane == nullptr) return;
  const float top = y, bottom = y + row.h;
  const float text_h = ImGui::GetFontSize();
  char buf[24];
  for_each_run(*lane, c.ax, c.left, c.right, kMinRunPx, [&](const Run& r) {
    const float x0 = std::max(c.left, r.x0), x1 = std::min(c.right, r.x1);
    if (!r.merged) {
      const Segment& sg = lane->segs[r.first];
      const State st = sg.state();
      const float t = st == State::Syscall ? top + row.h * 0.35f : st == State::Parked ? top + row.h * 0.6f : top;
      c.fill(x0, t, x1, bottom, segment_color(sg));
      if (st == State::Throttled) c.fill(x0, top + row.h * 0.4f, x1, top + row.h * 0.6f, kBackground);  // off the CPU
      if (c.s.selected_g != kNoG && sg.g() == c.s.selected_g) {
        c.dl->AddRect(ImVec2(x0, top), ImVec2(x1, bottom), kHighlight, 0, 0, 2.0f);
      }
      if (sg.g() != kNoG && x1 - x0 > 14) {
        std::snprintf(buf, sizeof buf, "%d", sg.g());
        const float w = ImGui::CalcTextSize(buf).x;
        if (w + 4 <= x1 - x0) {
          c.dl->AddText(ImVec2(std::max(x0, (x0 + x1 - w) / 2), top + (row.h - text_h) / 2), rgba(0, 0, 0), buf);
        }
      }
      ++c.n.runs;
      return;
    }
    // A merged run: per pixel column, a bar as high as the column's Running share.
    ++c.n.merged;
    const float h = bottom - top;
    Bars bars(c);
    BusyCursor cur(*lane);
    // Columns many grid cells wide read the cells' busy time (within a pixel of exact).
    const bool coarse = static_cast<double>(lane->grid_dt) * 8 <= kColumnPx * c.s.ns_per_px;
    auto busy = [&](int64_t t) { return coarse ? lane->busy_before_coarse(t) : cur.until(t); };
    int64_t prev = -1;
    for_each_column(c.ax, x0, x1, [&](double ta, double tb, float cx0, float cx1) {
      const auto a = static_cast<int64_t>(ta), b = static_cast<int64_t>(std::ceil(tb));
      if (prev < 0) prev = busy(a);
      const int64_t next = busy(b);
      const double frac = static_cast<double>(next - prev) / static_cast<double>(std::max<int64_t>(1, b - a));
      prev = next;
      const float bh = std::max(2.0f, std::round(static_cast<float>(frac) * h));
      bars.add(std::max(cx0, x0), std::min(cx1, x1), bottom - bh, bottom, frac > 0 ? kMerged : darker(kMerged));
      ++c.n.columns;
    });
  });
  draw_lane_gc(c, row, y);
  for_each_point(
      std::span<const Marker>(lane->markers), [](const Marker& mk) { return mk.ts; }, c.ax, c.left, c.right, 5,
      [&](size_t i) {
        const Marker& mk = lane->markers[i];
        const float x = c.ax.x(mk.ts);
        c.dl->AddTriangleFilled(ImVec2(x - 4, top), ImVec2(x + 4, top), ImVec2(x, top + 7), marker_color(mk.kind));
        ++c.n.points;
      });
}

void draw_arrows(Ctx& c) {
  const float base = c.vp.rows_y() - c.s.scroll_y;
  for (const std::vector<uint32_t>& kind : c.m.arrows_of_kind) {
    for_each_point(
        std::span<const uint32_t>(kind), [&](uint32_t i) { return c.m.arrows[i].t0; }, c.ax, c.left, c.right, 10,
        [&](size_t k) {
          const Arrow& a = c.m.arrows[kind[k]];
          const float ys = c.l.lane_center(a.src), yd = c.l.lane_center(a.dst);
          if (ys < 0 || yd < 0) return;
          const ImVec2 p0(c.ax.x(a.t0), base + ys), p1(std::min(c.right + 50, c.ax.x(a.t1)), base + yd);
          const uint32_t col = arrow_color(a.kind);
          c.dl->AddLine(p0, p1, col, 1.5f);
          // The head points along the arrow, at the target.
          float dx = p1.x - p0.x, dy = p1.y - p0.y;
          const float len = std::sqrt(dx * dx + dy * dy);
          if (len < 1) return;
          dx /= len;
          dy /= len;
          const ImVec2 back(p1.x - dx * 7, p1.y - dy * 7);
          c.dl->AddTriangleFilled(p1, ImVec2(back.x - dy * 4, back.y + dx * 4),
                                  ImVec2(back.x + dy * 4, back.y - dx * 4), col);
          c.dl->AddCircleFilled(p0, 2.5f, col, 6);
          ++c.n.points;
        });
  }
}

void draw_labels(Ctx& c, size_t first, size_t last) {
  char buf[32];
  const float base = c.vp.rows_y() - c.s.scroll_y;
  c.dl->AddLine(ImVec2(c.left - 0.5f, c.vp.rows_y()), ImVec2(c.left - 0.5f, c.vp.y + c.vp.h), kLaneBg);
  for (size_t i = first; i < last; ++i) {
    const Row& row = c.l.rows()[i];
    const float y = base + row.y;
    if (row.kind == RowKind::Counter) {
      if (row.ref >= 3) {
        std::snprintf(buf, sizeof buf, "P%d queue", c.m.p_lanes[row.ref - 3].id);
      } else {
        std::snprintf(buf, sizeof buf, "%s", counter_label(row.ref));
      }
      c.dl->AddText(ImVec2(c.vp.x + 4, y + 2), counter_color(row.ref), buf);
      continue;
    }
    if (row.kind == RowKind::Heap) {
      c.dl->AddText(ImVec2(c.vp.x + 4, y + 2), kHeap, "heap");
      c.dl->AddText(ImVec2(c.vp.x + 4, y + 2 + ImGui::GetFontSize()), kHeapGoal, "heap goal");
      continue;
    }
    if (row.kind == RowKind::GcBand) {
      c.dl->AddText(ImVec2(c.vp.x + 6, y + (row.h - ImGui::GetFontSize()) / 2), kGcCycle, "GC");
      continue;
    }
    if (row.kind == RowKind::Group) {  // "v server  GOMAXPROCS 2  quota 1.5 CPUs" across the row
      const ProcessGroup& g = c.m.processes[row.ref];
      const Counter& procs = g.gomaxprocs;
      const int32_t now = procs.ts.empty() ? g.num_ps : std::max(1, procs.value_at(static_cast<int64_t>(c.s.t0)));
      char text[160];
      int n = std::snprintf(text, sizeof text, "%s %s  GOMAXPROCS %d", c.l.collapsed(row.ref) ? ">" : "v",
                            g.name.empty() ? "process" : g.name.c_str(), procs.ts.empty() ? g.num_ps : now);
      if (g.cpu_quota > 0 && n > 0 && static_cast<size_t>(n) < sizeof text) {
        std::snprintf(text + n, sizeof text - static_cast<size_t>(n), "  quota %.2f CPUs", g.cpu_quota);
      }
      c.dl->AddRectFilled(ImVec2(c.vp.x, y), ImVec2(c.right, y + row.h), kGroupHeader);
      c.dl->AddText(ImVec2(c.vp.x + 4, y + (row.h - ImGui::GetFontSize()) / 2), kText, text);
      continue;
    }
    const Lane* lane = c.m.lane(row.ref);
    const char* prefix = lane->type == LaneType::P ? "P" : lane->type == LaneType::M ? "M" : "G";
    std::snprintf(buf, sizeof buf, "%s%d", prefix, lane->id);
    const uint32_t col = lane->type == LaneType::G ? g_color(lane->id) : kText;
    c.dl->AddText(ImVec2(c.vp.x + 6, y + (row.h - ImGui::GetFontSize()) / 2), col, buf);
  }
}

}  // namespace

void set_flat_draw_callback(FlatDrawCallback cb) { g_flat_callback = cb; }
FlatDrawCallback flat_draw_callback() { return g_flat_callback; }

void draw_timeline(ImDrawList* dl, const Model& m, const Layout& l, const TimelineState& s, const Viewport& vp,
                   RectBatch* batch, DrawCounts* counts) {
  DrawCounts local;
  Ctx c{dl, m, l, s, vp, s.axis(vp), vp.lanes_x(), vp.x + vp.w, counts != nullptr ? *counts : local, batch};
  if (batch != nullptr) {
    batch->clear();
    batch->set_clip(c.left, vp.rows_y(), c.right, vp.y + vp.h);
    // The rectangles are drawn here, under everything ImGui draws after this point.
    if (g_flat_callback != nullptr) {
      dl->AddCallback(g_flat_callback, batch);
      dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
    }
  }
  dl->PushClipRect(ImVec2(vp.x, vp.y), ImVec2(vp.x + vp.w, vp.y + vp.h), true);
  // The background is the cleared framebuffer (kBackground): every full-window layer costs a
  // software renderer (llvmpipe) milliseconds.
  const float rows_top = vp.rows_y();
  const auto [first, last] = l.visible(s.scroll_y, s.scroll_y + (vp.y + vp.h - rows_top));
  dl->PushClipRect(ImVec2(c.left, rows_top), ImVec2(c.right, vp.y + vp.h), true);
  // The trace's extent: outside it the lanes are darker.
  const float xb = std::max(c.left, c.ax.x(m.t_begin)), xe = std::min(c.right, c.ax.x(m.t_end));
  // Filled shapes (markers) and the arrows without anti-aliasing: a third of the vertices, and
  // they are small. The text and the ruler keep it.
  const ImDrawListFlags aa = dl->Flags;
  dl->Flags &= ~ImDrawListFlags_AntiAliasedFill;
  for (size_t i = first; i < last; ++i) {
    const Row& row = l.rows()[i];
    const float y = rows_top + row.y - s.scroll_y;
    // A lane is a baseline over the trace's extent, not a filled band: under a software renderer
    // (llvmpipe) every filled pixel costs, and glClear already paints the background.
    if (xe > xb) dl->AddLine(ImVec2(xb, y + row.h - 0.5f), ImVec2(xe, y + row.h - 0.5f), kLaneBg);
    switch (row.kind) {
      case RowKind::Counter: draw_counter(c, row, y); break;
      case RowKind::Heap: draw_heap(c, row, y); break;
      case RowKind::GcBand: draw_gc_band(c, row, y); break;
      case RowKind::Lane: draw_lane(c, row, y); break;
      case RowKind::Group: break;  // its band and text are drawn with the labels
    }
  }
  draw_stw_overlay(c);
  dl->Flags &= ~ImDrawListFlags_AntiAliasedLines;
  draw_arrows(c);
  dl->Flags = aa;
  if (s.has_selection) {
    const float a = std::max(c.left, c.ax.x(s.sel_t0)), b = std::min(c.right, c.ax.x(s.sel_t1));
    if (b > a) {
      c.fill(a, rows_top, std::max(a + 1, b), vp.y + vp.h, kSelection);
      char buf[32];
      format_span(buf, sizeof buf, static_cast<double>(s.sel_t1 - s.sel_t0), m.step_axis);
      dl->AddText(ImVec2(a + 3, rows_top + 2), kText, buf);
    }
  }
  if (s.cursor_ts >= 0) {
    const float x = c.ax.x(s.cursor_ts);
    dl->AddLine(ImVec2(x, rows_top), ImVec2(x, vp.y + vp.h), kCursor, 1.5f);
  }
  dl->PopClipRect();
  draw_labels(c, first, last);
  draw_ruler(c);
  dl->PopClipRect();
}

}  // namespace gmp::view
