// The timeline's geometry and view state, shared by drawing, hit testing and navigation.
//
// Viewport: where the timeline sits on screen: a label column on the left, the time ruler on top,
// the rows (layout.h) below it, scrolled by scroll_y. TimelineState: the time axis (zoom and
// pan), the range selection, the selected G and the step cursor. Neither needs ImGui.
#pragma once

#include <cstdint>

#include "viewer/layout.h"
#include "viewer/lod.h"
#include "viewer/model.h"

namespace gmp::view {

inline constexpr float kAssistFrac = 0.4f;  // assists fill the lower 40% of a lane

struct Viewport {
  float x = 0, y = 0, w = 800, h = 600;
  float label_w = 84;
  float ruler_h = 22;

  float lanes_x() const { return x + label_w; }
  float lanes_w() const { return w - label_w; }
  float rows_y() const { return y + ruler_h; }
};

struct TimelineState {
  double t0 = 0;         // time at the left edge of the lanes
  double ns_per_px = 1;  // zoom
  float scroll_y = 0;
  bool has_selection = false;
  int64_t sel_t0 = 0, sel_t1 = 0;
  int32_t selected_g = kNoG;
  int64_t cursor_ts = -1;  // the step cursor, or -1
  // The GC cycle or pause clicked (outlined, its statistics in the side panel).
  enum class GcPick : uint8_t { None, Cycle, Pause } gc_pick = GcPick::None;
  uint32_t gc_pick_index = 0;  // into Model::gc_cycles or stw_pauses

  TimeAxis axis(const Viewport& vp) const { return TimeAxis{t0, ns_per_px, vp.lanes_x()}; }
  // Shows [a, b) across `width` pixels.
  void show(double a, double b, float width);
  // Zooms by `factor` (> 1 zooms out) keeping the time under screen x fixed.
  void zoom_at(const Viewport& vp, float x, double factor);
};

// GcCycle, GcPause: Hit::first is the index into Model::gc_cycles or stw_pauses; Assist: into
// Model::assists; Heap: value64 and goal are the heap and its goal at t.
enum class HitKind : uint8_t { None, Ruler, Label, Counter, Segment, Merged, Marker, GcCycle, GcPause, Assist, Heap, Group };

struct Hit {
  HitKind kind = HitKind::None;
  int row = -1;
  uint32_t ref = 0;              // the row's lane_ref or counter index
  uint32_t first = 0, last = 0;  // segment indices (Segment: first == last) or the marker index
  uint32_t ev = kNoEv;           // the event to describe
  double t = 0;                  // time under the cursor
  int32_t value = 0;             // Counter: its value at t
  int64_t value64 = 0, goal = 0;  // Heap: the heap and its goal at t
};

// The pixels either side of a stop-the-world pause within which the cursor finds it (pauses are
// often narrower than a pixel).
inline constexpr float kPauseSlackPx = 3;

// What is under screen point (mx, my). Segments narrower than a pixel report the merged range. In
// the GC band a pause (within kPauseSlackPx) wins over the cycle under it; in a lane's lower part
// (kAssistFrac of its height, where they are drawn) an assist wins over the segment.
Hit hit_test(const Model& m, const Layout& l, const TimelineState& s, const Viewport& vp, float mx, float my);

}  // namespace gmp::view
