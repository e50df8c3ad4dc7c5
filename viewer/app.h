// gmpview's user interface, one ImGui frame at a time: the toolbar, one timeline (two in compare
// mode, on a shared time axis), and the side panel (statistics, a G's life, the step list).
//
// Protocol:
//   - App(options) loads the traces; a trace that fails to load keeps its message (with the byte
//     offset), which frame() shows in the window and load() has written to stderr.
//   - frame() builds the UI for io.DisplaySize; the caller renders it (main.cpp, screenshot.cpp).
//   - Input: wheel zooms around the cursor; dragging pans (both axes); shift-drag or a drag on the
//     ruler selects a range; a click on a segment selects its G, a click on a GC cycle or a
//     stop-the-world pause (the GC band) shows its statistics in the side panel; W/S zoom, A/D pan (as in Tracy);
//     Up/Down (or the buttons) move through the steps of a checker counterexample.
//   - A counterexample ("gmpsim check") is drawn on the step axis (model.h LoadOptions) and opens
//     with its step list; the step cursor and the list follow each other.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "viewer/layout.h"
#include "viewer/model.h"
#include "viewer/rect_batch.h"
#include "viewer/stats.h"
#include "viewer/timeline.h"

namespace gmp::view {

struct AppOptions {
  std::vector<std::string> paths;  // one trace, or two to compare
  bool g_lanes = false;
  bool counters = true;  // the counter rows (--no-counters: off)
  std::optional<std::pair<double, double>> view;   // initial [t0, t1) in ns
  std::optional<std::pair<double, double>> range;  // initial range selection
  int32_t select_g = kNoG;
  int64_t gc_cycle = -1;  // the GC cycle (its number) whose statistics show, as when clicked; -1: none
  int64_t step = -1;  // the step (event) the cursor starts at; -1: the first, for a counterexample
  LoadOptions::Axis axis = LoadOptions::Axis::Auto;
  bool side_panel = true;
};

struct Doc {
  std::string path;
  std::string error;  // non-empty: the trace did not load
  Model model;
  Layout layout;
  TimelineState state;  // its own scroll; the time axis is copied from the first doc
  Viewport vp;          // where it was drawn last frame
  RectBatch batch;      // its solid rectangles, reused every frame
  Stats whole, sel;
  GcItemStats gc_pick;  // the clicked GC cycle or pause (kind None: none)
  int64_t sel_key0 = -1, sel_key1 = -1;
  std::vector<uint32_t> life;  // the selected G's events
  std::vector<int64_t> life_latency;
  bool ok() const { return error.empty(); }
};

class App {
 public:
  explicit App(const AppOptions& opt);
  // Takes an already loaded model (the benchmark).
  App(Model&& model, const AppOptions& opt);

  // Whether every trace loaded.
  bool ok() const;
  const std::vector<std::unique_ptr<Doc>>& docs() const { return docs_; }
  Doc& doc(size_t i) { return *docs_[i]; }

  void frame(float dt);

  // View changes, as the UI makes them.
  void show_range(double t0, double t1);
  void select_g(int32_t g);
  void set_step(int64_t step);
  // Shows a GC cycle's (kind Cycle) or pause's statistics and outlines it, as a click does.
  void pick_gc(Doc& d, GcItemStats::Kind kind, uint32_t index);
  int64_t step() const { return step_; }

 private:
  void setup();
  void relayout();
  void toolbar();
  void timeline(Doc& d, size_t index, float x, float y, float w, float h);
  void tooltip(const Doc& d, const Hit& h);
  void side_panel();
  void stats_panel();
  void gc_panel(Doc& d);
  void life_panel();
  void steps_panel();
  void compare_panel();
  void sync_axis(const Doc& from);
  void keys(float dt);

  AppOptions opt_;
  std::vector<std::unique_ptr<Doc>> docs_;
  LayoutOptions layout_opt_;
  int64_t step_ = -1;
  bool step_follow_ = false;
  int32_t search_g_ = 0;
  char jump_[32] = "";
  std::string tip_;  // reused tooltip text
  bool dragging_select_ = false;
  double drag_t0_ = 0;
  size_t active_doc_ = 0;
  bool first_frame_ = true;
};

}  // namespace gmp::view
