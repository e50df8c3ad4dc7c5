// Solid rectangles of one frame, for a flat-colour renderer (flat_renderer.h).
//
// Why: under a software OpenGL (llvmpipe), ImGui's textured, blended shader costs about eight
// times as much per pixel as a flat colour written without blending, and the lanes are most of
// the window. The timeline therefore puts its segments, merged-run columns and counter graphs
// here, and ImGui draws only text, lines, markers and arrows on top.
//
// Protocol:
//   - clear() at the start of a frame; add() appends, clipped to the clip rectangle; a rectangle
//     of the same colour, top and bottom that touches the previous one extends it instead.
//   - The array keeps its capacity across frames, so a frame allocates nothing once it has grown.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gmp::view {

struct FlatRect {
  float x0, y0, x1, y1;
  uint32_t col;  // ImGui's packed colour (IM_COL32)
};

class RectBatch {
 public:
  RectBatch() { rects_.reserve(1 << 15); }
  void clear() { rects_.clear(); }
  void set_clip(float x0, float y0, float x1, float y1) { cx0_ = x0, cy0_ = y0, cx1_ = x1, cy1_ = y1; }
  void add(float x0, float y0, float x1, float y1, uint32_t col) {
    x0 = std::max(x0, cx0_), y0 = std::max(y0, cy0_), x1 = std::min(x1, cx1_), y1 = std::min(y1, cy1_);
    if (x1 <= x0 || y1 <= y0) return;
    if (!rects_.empty()) {
      FlatRect& b = rects_.back();
      if (b.col == col && b.y0 == y0 && b.y1 == y1 && x0 <= b.x1 + 0.01f && x0 >= b.x0) {
        b.x1 = std::max(b.x1, x1);
        return;
      }
    }
    rects_.push_back(FlatRect{x0, y0, x1, y1, col});
  }
  const std::vector<FlatRect>& rects() const { return rects_; }

 private:
  std::vector<FlatRect> rects_;
  float cx0_ = -1e30f, cy0_ = -1e30f, cx1_ = 1e30f, cy1_ = 1e30f;
};

}  // namespace gmp::view
