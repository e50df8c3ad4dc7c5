// Draws the timeline into an ImGui draw list: the ruler, the counter graphs, the P, M and G lanes
// at their level of detail (lod.h), the markers, the arrows, the range selection and the step
// cursor. The cost is O(visible pixels * log events); nothing is allocated once ImGui's own
// buffers have grown to the frame's size.
#pragma once

#include <cstdint>

#include "viewer/layout.h"
#include "viewer/model.h"
#include "viewer/rect_batch.h"
#include "viewer/timeline.h"

struct ImDrawList;
struct ImDrawCmd;

namespace gmp::view {

struct DrawCounts {
  uint32_t runs = 0;     // segments drawn alone
  uint32_t merged = 0;   // merged runs
  uint32_t columns = 0;  // pixel columns drawn for merged runs and counters
  uint32_t points = 0;   // markers and arrows
};

inline constexpr float kMinRunPx = 2.0f;  // narrower segments merge
inline constexpr float kColumnPx = 3.0f;  // merged runs and dense counters are drawn in columns this wide

// The draw callback that renders a RectBatch (flat_renderer.h registers it); null: none.
using FlatDrawCallback = void (*)(const ImDrawList*, const ImDrawCmd*);
void set_flat_draw_callback(FlatDrawCallback cb);
FlatDrawCallback flat_draw_callback();

// Solid rectangles go to `batch` when given (drawn by the flat renderer when installed, see
// flat_renderer.h), else to the draw list as ImGui rectangles.
void draw_timeline(ImDrawList* dl, const Model& m, const Layout& l, const TimelineState& s, const Viewport& vp,
                   RectBatch* batch, DrawCounts* counts = nullptr);

}  // namespace gmp::view
