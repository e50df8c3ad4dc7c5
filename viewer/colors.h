// Colours of the timeline, as ImGui's packed ABGR (IM_COL32 order, without needing ImGui here).
//
// A G's colour depends only on its goid (the golden ratio for the hue, a hash for the shade), so
// it is the same in every trace, lane and session.
#pragma once

#include <cmath>
#include <cstdint>

#include "viewer/model.h"

namespace gmp::view {

constexpr uint32_t rgba(uint32_t r, uint32_t g, uint32_t b, uint32_t a = 255) { return a << 24 | b << 16 | g << 8 | r; }

inline uint32_t hsv(float h, float s, float v) {
  const float i = std::floor(h * 6), f = h * 6 - i;
  const float p = v * (1 - s), q = v * (1 - f * s), t = v * (1 - (1 - f) * s);
  float r = 0, g = 0, b = 0;
  switch (static_cast<int>(i) % 6) {
    case 0: r = v, g = t, b = p; break;
    case 1: r = q, g = v, b = p; break;
    case 2: r = p, g = v, b = t; break;
    case 3: r = p, g = q, b = v; break;
    case 4: r = t, g = p, b = v; break;
    default: r = v, g = p, b = q; break;
  }
  auto c = [](float x) { return static_cast<uint32_t>(std::lround(x * 255)); };
  return rgba(c(r), c(g), c(b));
}

inline uint32_t g_color(int32_t goid) {
  // Hue by the golden ratio: Gs with neighbouring ids (a parent and its children) get hues far
  // apart; saturation and value vary a little by a hash, so Gs a cycle apart still differ.
  const double hue = static_cast<double>(goid) * 0.6180339887498949 + 0.13;
  uint64_t x = static_cast<uint64_t>(goid) + 0x9e3779b97f4a7c15ull;  // splitmix64
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return hsv(static_cast<float>(hue - std::floor(hue)), 0.5f + static_cast<float>(x % 25) / 100.0f,
             0.8f + static_cast<float>((x >> 8) % 15) / 100.0f);
}

inline uint32_t darker(uint32_t c, float k = 0.55f) {
  auto ch = [&](int s) { return static_cast<uint32_t>(static_cast<float>((c >> s) & 0xff) * k) << s; };
  return (c & 0xff000000u) | ch(0) | ch(8) | ch(16);
}

inline constexpr uint32_t kBackground = rgba(30, 30, 34);
inline constexpr uint32_t kLaneBg = rgba(42, 42, 48);
inline constexpr uint32_t kSpinning = rgba(240, 160, 40);
inline constexpr uint32_t kParked = rgba(70, 80, 110);
inline constexpr uint32_t kRunnable = rgba(120, 120, 120);
inline constexpr uint32_t kBlocked = rgba(60, 60, 66);
// An M (and its P) throttled by its cgroup's CPU quota: off the CPU until the refill.
// Brighter and more saturated than any G's colour (g_color: saturation <= 0.75, value <= 0.95),
// with a dark cut across its middle (timeline_draw.cpp).
inline constexpr uint32_t kThrottled = rgba(255, 30, 30);
inline constexpr uint32_t kGroupHeader = rgba(46, 50, 60);
inline constexpr uint32_t kMerged = rgba(150, 150, 160);
inline constexpr uint32_t kText = rgba(230, 230, 230);
inline constexpr uint32_t kDimText = rgba(150, 150, 150);
inline constexpr uint32_t kSelection = rgba(80, 140, 255, 60);
inline constexpr uint32_t kCursor = rgba(255, 230, 0);
inline constexpr uint32_t kHighlight = rgba(255, 255, 255);

// The garbage collector.
inline constexpr uint32_t kGcCycle = rgba(60, 150, 140);
inline constexpr uint32_t kStw = rgba(235, 60, 60);
inline constexpr uint32_t kStwOverlay = rgba(235, 60, 60, 45);  // over the P lanes during a pause
inline constexpr uint32_t kAssist = rgba(225, 70, 225);
inline constexpr uint32_t kHeap = rgba(90, 190, 255);
inline constexpr uint32_t kHeapGoal = rgba(255, 170, 50);

// A mark worker's stripe by trace::GcWorkerMode: dedicated, fractional, idle (0: merged runs).
inline uint32_t worker_color(uint8_t mode) {
  switch (mode) {
    case 1: return rgba(40, 210, 110);
    case 2: return rgba(240, 220, 40);
    case 3: return rgba(150, 190, 255);
    default: return rgba(170, 170, 170);
  }
}

inline uint32_t arrow_color(ArrowKind k) {
  switch (k) {
    case ArrowKind::Steal: return rgba(255, 60, 60);
    case ArrowKind::Wakeup: return rgba(80, 230, 120);
    default: return rgba(120, 190, 255);
  }
}

inline uint32_t marker_color(MarkerKind k) {
  switch (k) {
    case MarkerKind::PreemptRequest: return rgba(255, 80, 200);
    case MarkerKind::SignalSend: return rgba(255, 255, 90);
    case MarkerKind::SignalReceive: return rgba(255, 200, 40);
    case MarkerKind::Handoff: return rgba(90, 255, 255);
    default: return rgba(255, 110, 60);
  }
}

inline uint32_t counter_color(uint32_t index) {
  switch (index) {
    case 0: return rgba(230, 90, 90);
    case 1: return kSpinning;
    case 2: return rgba(110, 150, 230);
    default: return rgba(120, 200, 140);
  }
}

// The colour of a segment when drawn alone.
inline uint32_t segment_color(const Segment& s) {
  switch (s.state()) {
    case State::Running: return g_color(s.g());
    case State::Syscall: return darker(g_color(s.g()));
    case State::Spinning: return kSpinning;
    case State::Parked: return kParked;
    case State::Runnable: return kRunnable;
    case State::Throttled: return kThrottled;
    default: return kBlocked;
  }
}

}  // namespace gmp::view
