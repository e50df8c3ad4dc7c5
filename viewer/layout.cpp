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
  collapsed_ = opt.collapsed;
  p_row_.assign(m.p_lanes.size(), -1);
  m_row_.assign(m.m_lanes.size(), -1);
  g_row_.assign(opt.g_lanes ? m.g_lanes.size() : 0, -1);
  p_top_ = p_bottom_ = 0;
  bool any_p = false;
  auto lanes = [&](LaneType t, std::vector<int>& row_of, uint32_t begin, uint32_t end) {
    for (uint32_t i = begin; i < end; ++i) {
      row_of[i] = static_cast<int>(rows_.size());
      if (t == LaneType::P) {
        if (!any_p) p_top_ = y;
        any_p = true;
        p_bottom_ = y + opt.lane_h;
      }
      add(RowKind::Lane, lane_ref(t, i), opt.lane_h);
    }
  };
  // G lanes of a process: those of its Gs (Model::gs is sorted by process, as g_lanes).
  auto g_range = [&](uint16_t process) {
    const auto lo = std::lower_bound(m.gs.begin(), m.gs.end(), process, [](const GInfo& g, uint16_t v) { return g.process < v; });
    const auto hi = std::upper_bound(lo, m.gs.end(), process, [](uint16_t v, const GInfo& g) { return v < g.process; });
    return std::pair<uint32_t, uint32_t>{static_cast<uint32_t>(lo - m.gs.begin()), static_cast<uint32_t>(hi - m.gs.begin())};
  };
  const bool groups = m.processes.size() > 1;
  for (uint32_t k = 0; k < m.processes.size(); ++k) {
    const ProcessGroup& g = m.processes[k];
    uint32_t pb = 0, pe = static_cast<uint32_t>(m.p_lanes.size()), mb = 0, me = static_cast<uint32_t>(m.m_lanes.size());
    if (groups) {
      if (k > 0) y += opt.group_gap;
      add(RowKind::Group, k, opt.group_h);
      if (k < opt.collapsed.size() && opt.collapsed[k] != 0) continue;
      pb = g.p_begin, pe = g.p_end, mb = g.m_begin, me = g.m_end;
    }
    lanes(LaneType::P, p_row_, pb, pe);
    y += opt.group_gap;
    lanes(LaneType::M, m_row_, mb, me);
    if (opt.g_lanes) {
      y += opt.group_gap;
      const auto [gb, ge] = groups ? g_range(g.id) : std::pair<uint32_t, uint32_t>{0, static_cast<uint32_t>(m.g_lanes.size())};
      lanes(LaneType::G, g_row_, gb, std::min(ge, static_cast<uint32_t>(m.g_lanes.size())));
    }
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
  const std::vector<int>& rows = ref_type(ref) == LaneType::P ? p_row_ : ref_type(ref) == LaneType::M ? m_row_ : g_row_;
  const size_t i = ref_index(ref);
  return i < rows.size() ? rows[i] : -1;
}

std::pair<float, float> Layout::p_extent() const { return {p_top_, p_bottom_}; }

float Layout::lane_center(uint32_t ref) const {
  const int i = lane_row(ref);
  return i < 0 ? -1.0f : rows_[static_cast<size_t>(i)].y + rows_[static_cast<size_t>(i)].h / 2;
}

}  // namespace gmp::view
