// The vertical layout of the timeline: see layout.h.
#include "viewer/layout.h"

#include <algorithm>

namespace gmp::view {

const Counter& counter_of(const Model& m, uint32_t index) {
  switch (index) {
    case 0: return m.global_queue;
    case 1: return m.spinning_ms;
    case 2: return m.idle_ps;
    default: return m.local_queues[index - 3];
  }
}

const char* counter_label(uint32_t index) {
  switch (index) {
    case 0: return "global q";
    case 1: return "spinning M";
    case 2: return "idle P";
    default: return "local q";
  }
}

void Layout::build(const Model& m, const LayoutOptions& opt) {
  rows_.clear();
  float y = 0;
  auto add = [&](RowKind k, uint32_t ref, float h) {
    rows_.push_back(Row{k, ref, y, h});
    y += h + opt.row_gap;
  };
  if (opt.counters) {
    for (uint32_t i = 0; i < 3 + m.local_queues.size(); ++i) add(RowKind::Counter, i, opt.counter_h);
    y += opt.group_gap;
  }
  heap_row_ = gc_row_ = -1;
  if (m.has_gc()) {
    heap_row_ = static_cast<int>(rows_.size());
    add(RowKind::Heap, 0, opt.heap_h);
    gc_row_ = static_cast<int>(rows_.size());
    add(RowKind::GcBand, 0, opt.gc_h);
  }
  first_p_ = static_cast<int>(rows_.size());
  num_p_ = m.p_lanes.size();
  for (uint32_t i = 0; i < m.p_lanes.size(); ++i) add(RowKind::Lane, lane_ref(LaneType::P, i), opt.lane_h);
  y += opt.group_gap;
  first_m_ = static_cast<int>(rows_.size());
  for (uint32_t i = 0; i < m.m_lanes.size(); ++i) add(RowKind::Lane, lane_ref(LaneType::M, i), opt.lane_h);
  first_g_ = -1;
  if (opt.g_lanes) {
    y += opt.group_gap;
    first_g_ = static_cast<int>(rows_.size());
    for (uint32_t i = 0; i < m.g_lanes.size(); ++i) add(RowKind::Lane, lane_ref(LaneType::G, i), opt.lane_h);
  }
  height_ = y;
}

int Layout::row_at(float y) const {
  const auto it = std::upper_bound(rows_.begin(), rows_.end(), y, [](float v, const Row& r) { return v < r.y; });
  if (it == rows_.begin()) return -1;
  const Row& r = *(it - 1);
  return y < r.y + r.h ? static_cast<int>(it - rows_.begin()) - 1 : -1;
}

std::pair<size_t, size_t> Layout::visible(float y0, float y1) const {
  const auto a = std::lower_bound(rows_.begin(), rows_.end(), y0, [](const Row& r, float v) { return r.y + r.h <= v; });
  const auto b = std::lower_bound(a, rows_.end(), y1, [](const Row& r, float v) { return r.y < v; });
  return {static_cast<size_t>(a - rows_.begin()), static_cast<size_t>(b - rows_.begin())};
}

int Layout::lane_row(uint32_t ref) const {
  const int first = ref_type(ref) == LaneType::P ? first_p_ : ref_type(ref) == LaneType::M ? first_m_ : first_g_;
  if (first < 0) return -1;
  const size_t i = static_cast<size_t>(first) + ref_index(ref);
  if (i >= rows_.size() || rows_[i].kind != RowKind::Lane || rows_[i].ref != ref) return -1;
  return static_cast<int>(i);
}

std::pair<float, float> Layout::p_extent() const {
  if (num_p_ == 0 || first_p_ < 0) return {0, 0};
  const Row& a = rows_[static_cast<size_t>(first_p_)];
  const Row& b = rows_[static_cast<size_t>(first_p_) + num_p_ - 1];
  return {a.y, b.y + b.h};
}

float Layout::lane_center(uint32_t ref) const {
  const int i = lane_row(ref);
  return i < 0 ? -1.0f : rows_[static_cast<size_t>(i)].y + rows_[static_cast<size_t>(i)].h / 2;
}

}  // namespace gmp::view
