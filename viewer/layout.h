// The vertical layout of the timeline: which rows there are, in what order, at what height.
//
// Rows, top to bottom: the counters (global queue, spinning Ms, idle Ps, then each P's local
// queue), for a trace with GC events (Model::has_gc) the heap plot and the GC band (cycles and
// stop-the-world pauses), the P lanes, the M lanes and, on request, one lane per G. y is measured from the top of
// the rows (below the ruler), before scrolling. Built once per option change, never per frame.
// A trace of several processes (Model::processes) has, after the counters and the GC rows, one
// group per process: a header row (its name, GOMAXPROCS and quota; a click collapses it), then,
// unless collapsed, its P lanes, its M lanes and, on request, its G lanes. A one-process trace
// has no header row and its layout is as before.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "viewer/model.h"

namespace gmp::view {

struct LayoutOptions {
  bool counters = true;
  bool g_lanes = false;
  float lane_h = 20;
  float counter_h = 30;
  float heap_h = 44;  // the heap and heap goal plot
  float gc_h = 20;    // the GC band
  float row_gap = 2;
  float group_gap = 10;
  float group_h = 18;  // a process's header row
  // By index into Model::processes: 1 for a collapsed group (missing entries: expanded).
  std::vector<uint8_t> collapsed;
};

enum class RowKind : uint8_t { Counter, Lane, Heap, GcBand, Group };

struct Row {
  RowKind kind;
  uint32_t ref;  // Counter: counter index (counter_of); Lane: lane_ref; Group: index into Model::processes; Heap, GcBand: 0
  float y, h;
};

// Counter index: 0 global queue, 1 spinning Ms, 2 idle Ps, 3 + i local queue of P lane i.
const Counter& counter_of(const Model& m, uint32_t index);
const char* counter_label(uint32_t index);

class Layout {
 public:
  void build(const Model& m, const LayoutOptions& opt);

  const std::vector<Row>& rows() const { return rows_; }
  float height() const { return height_; }
  // The row under y, or -1.
  int row_at(float y) const;
  // Rows that intersect [y0, y1): [first, last).
  std::pair<size_t, size_t> visible(float y0, float y1) const;
  // The vertical centre of a lane's row, or -1 when it has none.
  float lane_center(uint32_t ref) const;
  int lane_row(uint32_t ref) const;
  // The heap plot's and the GC band's rows, or -1 (a trace without GC events has neither).
  int heap_row() const { return heap_row_; }
  int gc_row() const { return gc_row_; }
  // The vertical extent of the P lanes [top, bottom), for the stop-the-world overlay.
  std::pair<float, float> p_extent() const;
  // Whether group k (index into Model::processes) is collapsed.
  bool collapsed(uint32_t k) const { return k < collapsed_.size() && collapsed_[k] != 0; }

 private:
  std::vector<Row> rows_;
  float height_ = 0;
  // Each lane's row (by lane index), -1 for one without (a collapsed group's, G lanes not shown).
  std::vector<int> p_row_, m_row_, g_row_;
  int heap_row_ = -1, gc_row_ = -1;
  float p_top_ = 0, p_bottom_ = 0;
  std::vector<uint8_t> collapsed_;
};

}  // namespace gmp::view
