// gmpview's user interface: see app.h.
#include "viewer/app.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "traces/trace_reader.h"
#include "viewer/colors.h"
#include "viewer/time_format.h"
#include "viewer/timeline_draw.h"

namespace gmp::view {

namespace {

constexpr float kSideW = 380;
constexpr float kToolbarH = 30;

ImVec4 col4(uint32_t c) { return ImGui::ColorConvertU32ToFloat4(c); }

// "GC_MARK_TERM" for STW_REASON_GC_MARK_TERM; Go's own words would be longer than a tooltip needs.
const char* stw_reason_name(uint8_t r) {
  if (!trace::StwReason_IsValid(r)) return "?";
  const std::string& n = trace::StwReason_Name(static_cast<trace::StwReason>(r));
  return n.size() > 11 ? n.c_str() + 11 : n.c_str();
}

}  // namespace

App::App(const AppOptions& opt) : opt_(opt) {
  for (const std::string& p : opt_.paths) {
    auto d = std::make_unique<Doc>();
    d->path = p;
    try {
      d->model = load_trace(p, LoadOptions{opt_.axis});
    } catch (const trace::TraceFormatError& e) {
      d->error = e.what();
      std::fprintf(stderr, "gmpview: %s\n", e.what());
    }
    docs_.push_back(std::move(d));
  }
  setup();
}

App::App(Model&& model, const AppOptions& opt) : opt_(opt) {
  auto d = std::make_unique<Doc>();
  d->path = model.path;
  d->model = std::move(model);
  docs_.push_back(std::move(d));
  setup();
}

bool App::ok() const {
  return std::all_of(docs_.begin(), docs_.end(), [](const auto& d) { return d->ok(); });
}

void App::setup() {
  layout_opt_.g_lanes = opt_.g_lanes;
  layout_opt_.counters = opt_.counters;
  relayout();
  for (auto& d : docs_) {
    if (d->ok()) compute_stats(d->model, d->model.t_begin, d->model.t_end + 1, d->whole);
  }
  if (opt_.select_g != kNoG) select_g(opt_.select_g);
  if (opt_.gc_cycle >= 0 && !docs_.empty() && docs_[0]->ok()) {
    const auto& cycles = docs_[0]->model.gc_cycles;
    for (uint32_t i = 0; i < cycles.size(); ++i) {
      if (cycles[i].value == opt_.gc_cycle) pick_gc(*docs_[0], GcItemStats::Kind::Cycle, i);
    }
  }
  if (opt_.range) {
    for (auto& d : docs_) {
      d->state.has_selection = true;
      d->state.sel_t0 = static_cast<int64_t>(opt_.range->first);
      d->state.sel_t1 = static_cast<int64_t>(opt_.range->second);
    }
  }
  if (!docs_.empty() && docs_[0]->ok() && (opt_.step >= 0 || docs_[0]->model.is_counterexample())) {
    set_step(std::max<int64_t>(0, opt_.step));
  }
}

void App::relayout() {
  for (auto& d : docs_) {
    if (!d->ok()) continue;
    if (layout_opt_.g_lanes) d->model.build_g_lanes();
    d->layout.build(d->model, layout_opt_);
  }
}

void App::show_range(double t0, double t1) {
  for (auto& d : docs_) {
    d->state.show(t0, t1, std::max(1.0f, d->vp.lanes_w()));
  }
}

void App::sync_axis(const Doc& from) {
  for (auto& d : docs_) {
    d->state.t0 = from.state.t0;
    d->state.ns_per_px = from.state.ns_per_px;
    d->state.has_selection = from.state.has_selection;
    d->state.sel_t0 = from.state.sel_t0;
    d->state.sel_t1 = from.state.sel_t1;
  }
}

void App::select_g(int32_t g) {
  for (auto& d : docs_) {
    d->state.selected_g = g;
    d->life.clear();
    d->life_latency.clear();
    if (!d->ok() || g == kNoG) continue;
    int64_t runnable = -1;
    const auto& ev = d->model.events;
    for (uint32_t i = 0; i < ev.size(); ++i) {
      const Ev& e = ev[i];
      if (e.g != g) continue;
      int64_t lat = -1;
      switch (e.kind) {
        case trace::KIND_GO_CREATE:
        case trace::KIND_GO_STOP:
        case trace::KIND_GO_UNPARK:
        case trace::KIND_RUNQ_PUT:
          if (runnable < 0) runnable = e.ts;
          break;
        case trace::KIND_GO_START:
          lat = runnable >= 0 ? e.ts - runnable : -1;
          runnable = -1;
          break;
        case trace::KIND_GO_PARK:
        case trace::KIND_GO_SYSCALL_ENTER:
        case trace::KIND_GO_EXIT: runnable = -1; break;
        default: break;
      }
      if (e.kind == trace::KIND_RUNQ_PUT || e.kind == trace::KIND_RUNQ_GET) continue;  // queue detail: in the tooltip
      d->life.push_back(i);
      d->life_latency.push_back(lat);
    }
  }
}

void App::pick_gc(Doc& d, GcItemStats::Kind kind, uint32_t index) {
  compute_gc_item(d.model, kind, index, d.gc_pick);
  d.state.gc_pick = d.gc_pick.kind == GcItemStats::Kind::Cycle   ? TimelineState::GcPick::Cycle
                    : d.gc_pick.kind == GcItemStats::Kind::Pause ? TimelineState::GcPick::Pause
                                                                 : TimelineState::GcPick::None;
  d.state.gc_pick_index = index;
}

void App::set_step(int64_t step) {
  if (docs_.empty() || !docs_[0]->ok()) return;
  Doc& d = *docs_[0];
  const auto n = static_cast<int64_t>(d.model.events.size());
  if (n == 0) return;
  step_ = std::clamp<int64_t>(step, 0, n - 1);
  const int64_t ts = d.model.events[static_cast<size_t>(step_)].ts;
  d.state.cursor_ts = ts;
  step_follow_ = true;
  if (first_frame_) return;  // the first frame places the view
  // Keep the cursor in view: re-centre when it leaves the middle 80%.
  const TimeAxis ax = d.state.axis(d.vp);
  const float x = ax.x(ts);
  if (x < d.vp.lanes_x() + d.vp.lanes_w() * 0.1f || x > d.vp.lanes_x() + d.vp.lanes_w() * 0.9f) {
    d.state.t0 = static_cast<double>(ts) - d.state.ns_per_px * d.vp.lanes_w() / 2;
    sync_axis(d);
  }
  step_follow_ = true;
}

void App::keys(float dt) {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || docs_.empty()) return;
  Doc& d = *docs_[std::min(active_doc_, docs_.size() - 1)];
  const float w = std::max(1.0f, d.vp.lanes_w());
  const float cx = d.vp.lanes_x() + w / 2;
  bool changed = false;
  // GLFW's key codes for letters are their ASCII capitals.
  if (ImGui::IsKeyDown('W')) d.state.zoom_at(d.vp, cx, std::exp(-2.5 * dt)), changed = true;
  if (ImGui::IsKeyDown('S')) d.state.zoom_at(d.vp, cx, std::exp(2.5 * dt)), changed = true;
  if (ImGui::IsKeyDown('A')) d.state.t0 -= d.state.ns_per_px * w * 0.8 * dt, changed = true;
  if (ImGui::IsKeyDown('D')) d.state.t0 += d.state.ns_per_px * w * 0.8 * dt, changed = true;
  if (changed) sync_axis(d);
  if (step_ >= 0 || docs_[0]->model.is_counterexample()) {
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow))) set_step(step_ + 1);
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow))) set_step(step_ - 1);
  }
}

void App::frame(float dt) {
  ImGuiIO& io = ImGui::GetIO();
  const ImVec2 size = io.DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(size);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  ImGui::Begin("gmpview", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollWithMouse |
                   ImGuiWindowFlags_NoBackground);
  ImGui::PopStyleVar(2);
  toolbar();
  const float side = opt_.side_panel ? kSideW : 0;
  const float tl_w = size.x - side, tl_h = size.y - kToolbarH;
  const size_t n = docs_.size();
  for (size_t i = 0; i < n; ++i) {
    const float h = tl_h / static_cast<float>(n);
    timeline(*docs_[i], i, 0, kToolbarH + h * static_cast<float>(i), tl_w, h - (i + 1 < n ? 4 : 0));
  }
  if (opt_.side_panel) {
    ImGui::SetCursorPos(ImVec2(tl_w + 6, kToolbarH));
    ImGui::BeginChild("side", ImVec2(side - 8, tl_h - 4), false);
    side_panel();
    ImGui::EndChild();
  }
  keys(dt);
  ImGui::End();
  first_frame_ = false;
}

void App::toolbar() {
  ImGui::SetCursorPos(ImVec2(6, 4));
  for (size_t i = 0; i < docs_.size(); ++i) {
    if (i > 0) ImGui::SameLine(0, 6), ImGui::TextUnformatted("vs");
    if (i > 0) ImGui::SameLine(0, 6);
    const std::string& p = docs_[i]->path;
    const size_t slash = p.find_last_of('/');
    ImGui::TextUnformatted(slash == std::string::npos ? p.c_str() : p.c_str() + slash + 1);
  }
  ImGui::SameLine(0, 16);
  bool relay = false;
  relay |= ImGui::Checkbox("G lanes", &layout_opt_.g_lanes);
  ImGui::SameLine();
  relay |= ImGui::Checkbox("counters", &layout_opt_.counters);
  if (relay) relayout();
  ImGui::SameLine(0, 16);
  ImGui::SetNextItemWidth(90);
  if (ImGui::InputInt("##g", &search_g_, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue)) {
    select_g(search_g_);
    if (!docs_.empty() && docs_[0]->ok()) {
      if (const GInfo* gi = docs_[0]->model.find_g(search_g_)) {
        const double span = docs_[0]->state.ns_per_px * docs_[0]->vp.lanes_w();
        show_range(static_cast<double>(gi->first_ts) - span / 2, static_cast<double>(gi->first_ts) + span / 2);
      }
    }
  }
  ImGui::SameLine();
  ImGui::TextUnformatted("find G");
  ImGui::SameLine(0, 16);
  ImGui::SetNextItemWidth(90);
  if (ImGui::InputText("##jump", jump_, sizeof jump_, ImGuiInputTextFlags_EnterReturnsTrue)) {
    double t;
    if (parse_time(jump_, t) && !docs_.empty()) {
      const double span = docs_[0]->state.ns_per_px * docs_[0]->vp.lanes_w();
      show_range(t - span / 2, t + span / 2);
      for (auto& d : docs_) d->state.cursor_ts = static_cast<int64_t>(t);
    }
  }
  ImGui::SameLine();
  ImGui::TextUnformatted("jump to time");
  ImGui::SameLine(0, 16);
  if (ImGui::Button("fit")) {
    int64_t a = INT64_MAX, b = INT64_MIN;
    for (auto& d : docs_) {
      if (!d->ok()) continue;
      a = std::min(a, d->model.t_begin);
      b = std::max(b, d->model.t_end);
    }
    if (a < b) show_range(static_cast<double>(a), static_cast<double>(b));
  }
  ImGui::SameLine(0, 16);
  ImGui::TextDisabled("wheel/W S zoom, drag/A D pan, shift-drag select");
}

void App::timeline(Doc& d, size_t index, float x, float y, float w, float h) {
  ImGui::SetCursorPos(ImVec2(x, y));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  d.vp = Viewport{origin.x, origin.y, w, h};
  if (!d.ok()) {
    ImGui::PushTextWrapPos(x + w - 10);
    ImGui::SetCursorPos(ImVec2(x + 10, y + 10));
    ImGui::TextColored(col4(rgba(255, 110, 110)), "Cannot show this trace:\n%s", d.error.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  if (first_frame_) {
    // The initial view: --view, or the whole trace (the first doc's extent for all).
    const Doc& ref = *docs_[0];
    if (opt_.view) {
      d.state.show(opt_.view->first, opt_.view->second, std::max(1.0f, d.vp.lanes_w()));
    } else if (ref.ok()) {
      int64_t a = INT64_MAX, b = INT64_MIN;
      for (auto& o : docs_) {
        if (!o->ok()) continue;
        a = std::min(a, o->model.t_begin);
        b = std::max(b, o->model.t_end);
      }
      const double pad = static_cast<double>(b - a) * 0.01;
      d.state.show(static_cast<double>(a) - pad, static_cast<double>(b) + pad, std::max(1.0f, d.vp.lanes_w()));
    }
  }
  ImGui::PushID(static_cast<int>(index));
  ImGui::InvisibleButton("timeline", ImVec2(w, h),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  ImGui::PopID();
  ImGuiIO& io = ImGui::GetIO();
  const bool hovered = ImGui::IsItemHovered();
  const float visible_h = h - d.vp.ruler_h;
  if (hovered) {
    active_doc_ = index;
    if (io.MouseWheel != 0) {
      d.state.zoom_at(d.vp, io.MousePos.x, std::pow(0.8, static_cast<double>(io.MouseWheel)));
      sync_axis(d);
    }
  }
  if (ImGui::IsItemActivated()) {
    dragging_select_ = io.KeyShift || io.MousePos.y < d.vp.rows_y();
    drag_t0_ = d.state.axis(d.vp).t(io.MousePos.x);
  }
  const bool dragging = ImGui::IsItemActive() && (ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3) ||
                                                  ImGui::IsMouseDragging(ImGuiMouseButton_Right, 3));
  if (dragging) {
    if (dragging_select_) {
      const double t = d.state.axis(d.vp).t(io.MousePos.x);
      d.state.has_selection = true;
      d.state.sel_t0 = static_cast<int64_t>(std::min(t, drag_t0_));
      d.state.sel_t1 = static_cast<int64_t>(std::max(t, drag_t0_));
    } else {
      d.state.t0 -= static_cast<double>(io.MouseDelta.x) * d.state.ns_per_px;
      d.state.scroll_y -= io.MouseDelta.y;
    }
    sync_axis(d);
  }
  d.state.scroll_y = std::clamp(d.state.scroll_y, 0.0f, std::max(0.0f, d.layout.height() - visible_h + 8));
  if (ImGui::IsItemDeactivated() && !dragging_select_ && ImGui::GetMouseDragDelta(ImGuiMouseButton_Left).x == 0 &&
      ImGui::GetMouseDragDelta(ImGuiMouseButton_Left).y == 0) {
    const Hit hit = hit_test(d.model, d.layout, d.state, d.vp, io.MousePos.x, io.MousePos.y);
    if (hit.kind == HitKind::Group) {  // a process's header: collapse or expand its lanes
      if (layout_opt_.collapsed.size() <= hit.ref) layout_opt_.collapsed.resize(hit.ref + 1, 0);
      layout_opt_.collapsed[hit.ref] ^= 1;
      relayout();
    } else if (hit.kind == HitKind::Segment) {
      const Segment& s = d.model.lane(hit.ref)->segs[hit.first];
      select_g(s.g());
    } else if (hit.kind == HitKind::GcCycle || hit.kind == HitKind::GcPause) {
      pick_gc(d, hit.kind == HitKind::GcCycle ? GcItemStats::Kind::Cycle : GcItemStats::Kind::Pause, hit.first);
    } else if (hit.kind == HitKind::None || hit.kind == HitKind::Ruler) {
      for (auto& o : docs_) o->state.has_selection = false;
    }
    if (d.model.is_counterexample() && hit.kind != HitKind::None) {
      const auto it = std::lower_bound(d.model.events.begin(), d.model.events.end(), static_cast<int64_t>(hit.t),
                                       [](const Ev& e, int64_t v) { return e.ts < v; });
      set_step(it - d.model.events.begin());
    }
  }
  draw_timeline(ImGui::GetWindowDrawList(), d.model, d.layout, d.state, d.vp, &d.batch);
  if (hovered && !dragging) {
    const Hit hit = hit_test(d.model, d.layout, d.state, d.vp, io.MousePos.x, io.MousePos.y);
    ImGui::GetWindowDrawList()->AddLine(ImVec2(io.MousePos.x, d.vp.rows_y()), ImVec2(io.MousePos.x, d.vp.y + h),
                                        rgba(255, 255, 255, 50));
    tooltip(d, hit);
  }
}

void App::tooltip(const Doc& d, const Hit& h) {
  char buf[64], buf2[64];
  switch (h.kind) {
    case HitKind::None:
    case HitKind::Label: return;
    case HitKind::Ruler:
      format_point(buf, sizeof buf, h.t, d.state.ns_per_px, d.model.step_axis);
      ImGui::SetTooltip("%s (drag to select a range)", buf);
      return;
    case HitKind::Heap: {
      char goal[32];
      format_bytes(buf, sizeof buf, h.value64);
      format_bytes(goal, sizeof goal, h.goal);
      format_point(buf2, sizeof buf2, h.t, d.state.ns_per_px, d.model.step_axis);
      ImGui::SetTooltip("heap %s, goal %s at %s", buf, goal, buf2);
      return;
    }
    case HitKind::GcCycle:
    case HitKind::GcPause:
    case HitKind::Assist: {
      const bool pause = h.kind == HitKind::GcPause, assist = h.kind == HitKind::Assist;
      const GcInterval& g = pause ? d.model.stw_pauses[h.first] : assist ? d.model.assists[h.first] : d.model.gc_cycles[h.first];
      format_span(buf, sizeof buf, static_cast<double>(g.end - g.start), d.model.step_axis);
      format_point(buf2, sizeof buf2, static_cast<double>(g.start), 1, d.model.step_axis);
      ImGui::BeginTooltip();
      if (pause) {
        ImGui::TextColored(col4(kStw), "stop-the-world: %s", stw_reason_name(g.stw_reason));
      } else if (assist) {
        ImGui::TextColored(col4(kAssist), "G%d mark assist", g.g);
      } else {
        ImGui::TextColored(col4(kGcCycle), "GC %lld", static_cast<long long>(g.value));
      }
      ImGui::Text("%s from %s", buf, buf2);
      if (!assist) ImGui::TextDisabled("click for its statistics");
      ImGui::EndTooltip();
      return;
    }
    case HitKind::Counter:
      format_point(buf, sizeof buf, h.t, d.state.ns_per_px, d.model.step_axis);
      if (h.ref >= 3) {
        ImGui::SetTooltip("local queue of P%d: %d at %s", d.model.p_lanes[h.ref - 3].id, h.value, buf);
      } else {
        ImGui::SetTooltip("%s: %d at %s", counter_label(h.ref), h.value, buf);
      }
      return;
    default: break;
  }
  const Lane* lane = d.model.lane(h.ref);
  ImGui::BeginTooltip();
  if (h.kind == HitKind::Marker) {
    ImGui::TextColored(col4(marker_color(lane->markers[h.first].kind)), "%s", marker_name(lane->markers[h.first].kind));
  } else if (h.kind == HitKind::Segment) {
    const Segment& s = lane->segs[h.first];
    format_span(buf, sizeof buf, static_cast<double>(s.end() - s.start), d.model.step_axis);
    if (s.g() != kNoG) {
      ImGui::TextColored(col4(g_color(s.g())), "G%d %s", s.g(), state_name(s.state()));
    } else {
      ImGui::Text("%s", state_name(s.state()));
    }
    format_point(buf2, sizeof buf2, static_cast<double>(s.start), 1, d.model.step_axis);
    ImGui::Text("%s from %s", buf, buf2);
    ImGui::TextDisabled("click to follow this G");
  } else {
    ImGui::Text("%u segments merged here (zoom in)", h.last - h.first + 1);
  }
  ImGui::Separator();
  describe_event(d.model, h.ev, tip_);
  ImGui::TextUnformatted(tip_.c_str());
  ImGui::EndTooltip();
}

void App::side_panel() {
  if (!ImGui::BeginTabBar("panels")) return;
  if (ImGui::BeginTabItem("Statistics")) {
    if (docs_.size() > 1) {
      compare_panel();
    } else {
      stats_panel();
    }
    ImGui::EndTabItem();
  }
  if (ImGui::BeginTabItem("G life")) {
    life_panel();
    ImGui::EndTabItem();
  }
  const bool cx = !docs_.empty() && docs_[0]->ok() && docs_[0]->model.is_counterexample();
  const ImGuiTabItemFlags flags = (cx || opt_.step >= 0) && first_frame_ ? ImGuiTabItemFlags_SetSelected : 0;
  if (ImGui::BeginTabItem(cx ? "Steps" : "Events", nullptr, flags)) {
    steps_panel();
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

namespace {

void latency_table(const Stats& s, bool steps) {
  char a[32], b[32], c[32], d[32];
  format_span(a, sizeof a, static_cast<double>(s.lat_p50), steps);
  format_span(b, sizeof b, static_cast<double>(s.lat_p90), steps);
  format_span(c, sizeof c, static_cast<double>(s.lat_p99), steps);
  format_span(d, sizeof d, static_cast<double>(s.lat_max), steps);
  ImGui::Text("scheduling latency (%llu starts)", static_cast<unsigned long long>(s.starts));
  ImGui::Text("p50 %s  p90 %s\np99 %s  max %s", a, b, c, d);
}

void histogram(const Stats& s, bool steps) {
  const int n = std::max(1, s.last_bin + 1);
  const float top = *std::max_element(s.lat_hist.begin(), s.lat_hist.begin() + n);
  ImGui::PlotHistogram("##lat", s.lat_hist.data(), n, 0, nullptr, 0.0f, std::max(1.0f, top),
                       ImVec2(ImGui::GetContentRegionAvail().x, 90));
  char a[32], b[32];
  format_span(a, sizeof a, 1, steps);
  format_span(b, sizeof b, std::ldexp(1.0, n), steps);
  ImGui::TextDisabled("log2 bins, %s .. %s", a, b);
}

void lane_bars(const Model& m, const Stats& s) {
  char buf[32];
  for (size_t i = 0; i < s.p.size(); ++i) {
    std::snprintf(buf, sizeof buf, "P%d %.1f%%", m.p_lanes[i].id, s.p[i].busy * 100);
    ImGui::ProgressBar(static_cast<float>(s.p[i].busy), ImVec2(-1, 14), buf);
  }
}

}  // namespace

namespace {

// What the colours, markers and arrows mean.
void legend(bool gc) {
  if (!ImGui::CollapsingHeader("Legend")) return;  // closed by default: text costs a software renderer
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto item = [&](uint32_t col, const char* text, int shape) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    if (shape == 0) dl->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + 14, p.y + h - 2), col);
    if (shape == 1)
      dl->AddTriangleFilled(ImVec2(p.x + 3, p.y + 2), ImVec2(p.x + 11, p.y + 2), ImVec2(p.x + 7, p.y + 9), col);
    if (shape == 2) dl->AddLine(ImVec2(p.x, p.y + h / 2), ImVec2(p.x + 14, p.y + h / 2), col, 2);
    ImGui::Dummy(ImVec2(18, h));
    ImGui::SameLine();
    ImGui::TextUnformatted(text);
  };
  item(g_color(7), "a G running (its own colour, id inside)", 0);
  item(darker(g_color(7)), "a G in a syscall (lower, darker)", 0);
  item(kSpinning, "spinning M (and its P)", 0);
  item(kParked, "parked M (notesleep)", 0);
  item(kRunnable, "runnable G (G lanes)", 0);
  item(kBlocked, "blocked G (G lanes)", 0);
  item(kMerged, "many short runs: height = busy share", 0);
  item(arrow_color(ArrowKind::Steal), "steal: victim P to thief", 2);
  item(arrow_color(ArrowKind::Wakeup), "M wake-up: waker to woken M", 2);
  item(arrow_color(ArrowKind::Unpark), "G wake-up: readying P to where it runs", 2);
  for (int k = 0; k < static_cast<int>(MarkerKind::Count_); ++k) {
    item(marker_color(static_cast<MarkerKind>(k)), marker_name(static_cast<MarkerKind>(k)), 1);
  }
  if (!gc) return;
  item(kGcCycle, "GC cycle (GC band)", 0);
  item(kStw, "stop-the-world pause (band, and over the P lanes)", 0);
  item(kAssist, "mark assist (lower part of its P's and G's lanes)", 0);
  item(worker_color(1), "mark worker, dedicated (stripe on its P)", 0);
  item(worker_color(2), "mark worker, fractional", 0);
  item(worker_color(3), "mark worker, idle", 0);
  item(kHeap, "heap (per pixel: min to max)", 2);
  item(kHeapGoal, "heap goal", 2);
}

}  // namespace

void App::stats_panel() {
  Doc& d = *docs_[0];
  if (!d.ok()) return;
  const bool sel = d.state.has_selection && d.state.sel_t1 > d.state.sel_t0;
  if (sel && (d.sel_key0 != d.state.sel_t0 || d.sel_key1 != d.state.sel_t1)) {
    compute_stats(d.model, d.state.sel_t0, d.state.sel_t1, d.sel);
    d.sel_key0 = d.state.sel_t0;
    d.sel_key1 = d.state.sel_t1;
  }
  const Stats& s = sel ? d.sel : d.whole;
  gc_panel(d);
  char buf[32];
  format_span(buf, sizeof buf, static_cast<double>(s.t1 - s.t0), d.model.step_axis);
  ImGui::Text("%s: %s, %llu events", sel ? "selection" : "whole trace", buf, static_cast<unsigned long long>(s.events));
  if (!d.model.producer.empty()) ImGui::TextDisabled("%s, %d Ps", d.model.producer.c_str(), d.model.num_ps);
  ImGui::Separator();
  latency_table(s, d.model.step_axis);
  histogram(s, d.model.step_axis);
  ImGui::Separator();
  ImGui::Text("P utilisation (mean %.1f%%)", s.p_busy_mean * 100);
  lane_bars(d.model, s);
  ImGui::Separator();
  ImGui::Text("steals %llu  wake-ups %llu  unparks %llu", static_cast<unsigned long long>(s.steals),
              static_cast<unsigned long long>(s.wakeups), static_cast<unsigned long long>(s.unparks));
  if (d.model.has_gc()) {
    char a[32], b[32], c[32];
    format_span(a, sizeof a, static_cast<double>(s.stw_ns), d.model.step_axis);
    format_span(b, sizeof b, static_cast<double>(s.stw_max), d.model.step_axis);
    format_span(c, sizeof c, static_cast<double>(s.assist_ns), d.model.step_axis);
    ImGui::Text("GC: %u cycles, %u pauses (total %s, max %s)\nmark assists %s", s.gc_cycles, s.stw_pauses, a, b, c);
  }
  if (!d.model.throttles.empty()) {
    char a[32], b[32];
    format_span(a, sizeof a, static_cast<double>(s.throttled_ns), d.model.step_axis);
    format_span(b, sizeof b, static_cast<double>(s.throttled_max), d.model.step_axis);
    // cpu.stat's nr_throttled and throttled_usec, as the trace shows them (per M, not per CPU).
    ImGui::TextColored(col4(kThrottled), "throttled: %u stretches, total %s\n  max %s, in %u periods", s.throttles, a,
                       b, s.throttled_periods);
  }
  if (sel && ImGui::BeginTable("lanes", 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("lane");
    ImGui::TableSetupColumn("busy");
    ImGui::TableSetupColumn("segments");
    ImGui::TableHeadersRow();
    auto row = [&](const char* pre, int32_t id, const LaneStats& ls) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%s%d", pre, id);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f%%", ls.busy * 100);
      ImGui::TableNextColumn();
      ImGui::Text("%u", ls.segments);
    };
    for (size_t i = 0; i < s.p.size(); ++i) row("P", d.model.p_lanes[i].id, s.p[i]);
    for (size_t i = 0; i < s.m.size(); ++i) row("M", d.model.m_lanes[i].id, s.m[i]);
    ImGui::EndTable();
  }
  legend(docs_[0]->ok() && docs_[0]->model.has_gc());
}

// The clicked GC cycle or pause, as Tracy shows a clicked zone.
void App::gc_panel(Doc& d) {
  const GcItemStats& g = d.gc_pick;
  if (g.kind == GcItemStats::Kind::None) return;
  const bool steps = d.model.step_axis;
  char a[32], b[32], c[32];
  const bool cycle = g.kind == GcItemStats::Kind::Cycle;
  if (cycle) {
    ImGui::TextColored(col4(kGcCycle), "GC cycle %lld", static_cast<long long>(g.cycle));
  } else {
    ImGui::TextColored(col4(kStw), "stop-the-world pause: %s", stw_reason_name(g.stw_reason));
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("select its range")) {
    for (auto& o : docs_) {
      o->state.has_selection = true;
      o->state.sel_t0 = g.start;
      o->state.sel_t1 = std::max(g.end, g.start + 1);
    }
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("clear##gc")) {
    d.gc_pick = GcItemStats{};
    d.state.gc_pick = TimelineState::GcPick::None;
    return;
  }
  format_span(a, sizeof a, static_cast<double>(g.duration()), steps);
  format_point(b, sizeof b, static_cast<double>(g.start), 1, steps);
  ImGui::Text("duration %s, from %s", a, b);
  if (!cycle) {
    if (g.cycle >= 0) {
      ImGui::Text("in GC cycle %lld", static_cast<long long>(g.cycle));
    } else {
      ImGui::TextUnformatted("outside any GC cycle");
    }
  } else {
    format_span(a, sizeof a, static_cast<double>(g.pause_ns), steps);
    format_span(b, sizeof b, static_cast<double>(g.pause_max), steps);
    ImGui::Text("%u stop-the-world pauses: total %s, max %s", g.pauses, a, b);
    format_span(a, sizeof a, static_cast<double>(g.assist_ns), steps);
    ImGui::Text("%u mark assists: %s inside the cycle", g.assists, a);
    format_span(a, sizeof a, static_cast<double>(g.worker_ns[1]), steps);
    format_span(b, sizeof b, static_cast<double>(g.worker_ns[2]), steps);
    format_span(c, sizeof c, static_cast<double>(g.worker_ns[3]), steps);
    ImGui::Text("mark workers: dedicated %s\nfractional %s, idle %s", a, b, c);
  }
  ImGui::Separator();
}

void App::compare_panel() {
  for (auto& dp : docs_) {
    Doc& d = *dp;
    if (!d.ok()) continue;
    const bool sel = d.state.has_selection && d.state.sel_t1 > d.state.sel_t0;
    if (sel && (d.sel_key0 != d.state.sel_t0 || d.sel_key1 != d.state.sel_t1)) {
      compute_stats(d.model, d.state.sel_t0, d.state.sel_t1, d.sel);
      d.sel_key0 = d.state.sel_t0;
      d.sel_key1 = d.state.sel_t1;
    }
  }
  const bool sel = docs_[0]->state.has_selection;
  ImGui::Text("%s, side by side", sel ? "selection" : "whole traces");
  if (!ImGui::BeginTable("cmp", 1 + static_cast<int>(docs_.size()), ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders)) {
    return;
  }
  ImGui::TableSetupColumn("");
  char name[8];
  for (size_t i = 0; i < docs_.size(); ++i) {
    std::snprintf(name, sizeof name, "%c", static_cast<char>('A' + i));
    ImGui::TableSetupColumn(name);
  }
  ImGui::TableHeadersRow();
  auto text_row = [&](const char* label, auto fn) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(label);
    for (auto& dp : docs_) {
      ImGui::TableNextColumn();
      if (!dp->ok()) {
        ImGui::TextDisabled("-");
        continue;
      }
      fn(*dp, sel ? dp->sel : dp->whole);
    }
  };
  char buf[32];
  text_row("Ps", [&](const Doc& d, const Stats&) { ImGui::Text("%zu", d.model.p_lanes.size()); });
  text_row("Ms", [&](const Doc& d, const Stats&) { ImGui::Text("%zu", d.model.m_lanes.size()); });
  text_row("Gs", [&](const Doc& d, const Stats&) { ImGui::Text("%zu", d.model.gs.size()); });
  text_row("duration", [&](const Doc& d, const Stats& s) {
    format_span(buf, sizeof buf, static_cast<double>(s.t1 - s.t0), d.model.step_axis);
    ImGui::TextUnformatted(buf);
  });
  text_row("events",
           [&](const Doc&, const Stats& s) { ImGui::Text("%llu", static_cast<unsigned long long>(s.events)); });
  text_row("G starts",
           [&](const Doc&, const Stats& s) { ImGui::Text("%llu", static_cast<unsigned long long>(s.starts)); });
  auto dur_row = [&](const char* label, int64_t Stats::*field) {
    text_row(label, [&](const Doc& d, const Stats& s) {
      format_span(buf, sizeof buf, static_cast<double>(s.*field), d.model.step_axis);
      ImGui::TextUnformatted(buf);
    });
  };
  dur_row("latency p50", &Stats::lat_p50);
  dur_row("latency p90", &Stats::lat_p90);
  dur_row("latency p99", &Stats::lat_p99);
  dur_row("latency max", &Stats::lat_max);
  text_row("P busy (mean)", [&](const Doc&, const Stats& s) { ImGui::Text("%.1f%%", s.p_busy_mean * 100); });
  text_row("steals",
           [&](const Doc&, const Stats& s) { ImGui::Text("%llu", static_cast<unsigned long long>(s.steals)); });
  text_row("wake-ups",
           [&](const Doc&, const Stats& s) { ImGui::Text("%llu", static_cast<unsigned long long>(s.wakeups)); });
  ImGui::EndTable();
  legend(docs_[0]->ok() && docs_[0]->model.has_gc());
}

void App::life_panel() {
  if (docs_.empty() || !docs_[0]->ok()) return;
  Doc& d = *docs_[0];
  const int32_t g = d.state.selected_g;
  if (g == kNoG) {
    ImGui::TextWrapped("Click a G's segment, or type its id in \"find G\", to follow it.");
    return;
  }
  ImGui::TextColored(col4(g_color(g)), "G%d", g);
  if (const GInfo* gi = d.model.find_g(g); gi != nullptr && gi->create_ev != kNoEv) {
    const Ev& c = d.model.events[gi->create_ev];
    ImGui::SameLine();
    if (c.peer_g != kNoG) {
      ImGui::Text("created by G%d", c.peer_g);
    } else {
      ImGui::TextUnformatted("created");
    }
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("clear")) select_g(kNoG);
  if (!ImGui::BeginTable("life", 3,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp)) {
    return;
  }
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("time");
  ImGui::TableSetupColumn("what");
  ImGui::TableSetupColumn("detail");
  ImGui::TableHeadersRow();
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(d.life.size()));
  char buf[48], det[128];
  while (clip.Step()) {
    for (int r = clip.DisplayStart; r < clip.DisplayEnd; ++r) {
      const uint32_t i = d.life[static_cast<size_t>(r)];
      const Ev& e = d.model.events[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      format_point(buf, sizeof buf, static_cast<double>(e.ts), 1, d.model.step_axis);
      ImGui::PushID(r);
      if (ImGui::Selectable(buf, d.state.cursor_ts == e.ts, ImGuiSelectableFlags_SpanAllColumns)) {
        const double span = d.state.ns_per_px * d.vp.lanes_w();
        show_range(static_cast<double>(e.ts) - span / 2, static_cast<double>(e.ts) + span / 2);
        for (auto& o : docs_) o->state.cursor_ts = e.ts;
      }
      ImGui::PopID();
      ImGui::TableNextColumn();
      const char* k = kind_name(e.kind);
      ImGui::TextUnformatted(std::strncmp(k, "KIND_", 5) == 0 ? k + 5 : k);
      ImGui::TableNextColumn();
      det[0] = 0;
      const int64_t lat = d.life_latency[static_cast<size_t>(r)];
      if (e.kind == trace::KIND_GO_START) {
        format_span(buf, sizeof buf, static_cast<double>(std::max<int64_t>(0, lat)), d.model.step_axis);
        std::snprintf(det, sizeof det, "P%d M%d, waited %s", e.p == kNoId ? -1 : e.p, e.m == kNoId ? -1 : e.m,
                      lat >= 0 ? buf : "?");
      } else if (e.kind == trace::KIND_GO_PARK) {
        std::snprintf(det, sizeof det, "%s",
                      trace::WaitReason_IsValid(e.wait_reason)
                          ? trace::WaitReason_Name(static_cast<trace::WaitReason>(e.wait_reason)).c_str() + 12
                          : "?");
        if (const EvExtra* x = d.model.extra(i); x != nullptr && x->label != kNoEv) {
          std::snprintf(det, sizeof det, "%s", d.model.labels[x->label].c_str());
        }
      } else if (e.kind == trace::KIND_GO_UNPARK || e.kind == trace::KIND_GO_CREATE) {
        if (e.peer_g != kNoG) std::snprintf(det, sizeof det, "by G%d", e.peer_g);
      } else if (e.reason != 0 && trace::Reason_IsValid(e.reason)) {
        std::snprintf(det, sizeof det, "%s", trace::Reason_Name(static_cast<trace::Reason>(e.reason)).c_str() + 7);
      }
      ImGui::TextUnformatted(det);
    }
  }
  ImGui::EndTable();
}

void App::steps_panel() {
  if (docs_.empty() || !docs_[0]->ok()) return;
  Doc& d = *docs_[0];
  const Model& m = d.model;
  if (m.is_counterexample()) {
    const std::string sched = m.meta("schedule");
    ImGui::TextWrapped("counterexample, schedule %s", sched.empty() ? "(none)" : sched.c_str());
  }
  if (ImGui::Button("< prev")) set_step(step_ - 1);
  ImGui::SameLine();
  if (ImGui::Button("next >")) set_step(step_ + 1);
  ImGui::SameLine();
  ImGui::Text("step %lld of %zu (Up/Down)", static_cast<long long>(step_), m.events.size());
  if (!ImGui::BeginTable("steps", 4,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp)) {
    return;
  }
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("#");
  ImGui::TableSetupColumn("step");  // the checker's step, which the schedule string numbers
  ImGui::TableSetupColumn("time");
  ImGui::TableSetupColumn("event");
  ImGui::TableHeadersRow();
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(m.events.size()));
  if (step_follow_ && step_ >= 0) clip.ForceDisplayRangeByIndices(static_cast<int>(step_), static_cast<int>(step_) + 1);
  char buf[48], what[96];
  while (clip.Step()) {
    for (int r = clip.DisplayStart; r < clip.DisplayEnd; ++r) {
      const Ev& e = m.events[static_cast<size_t>(r)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      std::snprintf(buf, sizeof buf, "%d", r);
      if (ImGui::Selectable(buf, r == step_, ImGuiSelectableFlags_SpanAllColumns)) set_step(r);
      if (r == step_ && step_follow_) {
        ImGui::SetScrollHereY(0.5f);
        step_follow_ = false;
      }
      ImGui::TableNextColumn();
      if (const int64_t s = m.step(static_cast<uint32_t>(r)); s >= 0) {
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(s));
        ImGui::TextUnformatted(buf);
      }
      ImGui::TableNextColumn();
      // The trace's own clock: the checker's, on the step axis.
      format_time(buf, sizeof buf, static_cast<double>(m.step_axis ? m.clock_ts[static_cast<size_t>(r)] : e.ts), 1);
      ImGui::TextUnformatted(buf);
      ImGui::TableNextColumn();
      const char* k = kind_name(e.kind);
      int n = std::snprintf(what, sizeof what, "%s", std::strncmp(k, "KIND_", 5) == 0 ? k + 5 : k);
      if (e.g != kNoG && n < static_cast<int>(sizeof what)) n += std::snprintf(what + n, sizeof what - n, " G%d", e.g);
      if (e.m != kNoId && n < static_cast<int>(sizeof what)) n += std::snprintf(what + n, sizeof what - n, " M%d", e.m);
      if (e.p != kNoId && n < static_cast<int>(sizeof what)) std::snprintf(what + n, sizeof what - n, " P%d", e.p);
      ImGui::TextUnformatted(what);
    }
  }
  ImGui::EndTable();
}

}  // namespace gmp::view
