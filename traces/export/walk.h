// What the exporters write, in time order: a trace's lanes, counters, markers and arrows (the lane
// model, traces/lanes/model.h) as tracks and the items on them.
//
// Tracks, in this order (Walk::tracks):
//   - three groups: "Ps", "Ms" and "scheduler" (a process in Perfetto and in Chrome's format);
//   - one slice track per P lane ("P3", group Ps) and per M lane ("M5", group Ms);
//   - counter tracks: each P's local queue length (group Ps), then the global queue length,
//     spinning Ms and idle Ps (group scheduler);
//   - only for a trace with GC events (lanes::Model::has_gc), a fourth group "GC" (after the
//     others, so a GC-free trace's output is as before) with, each only when it has something:
//     "GC cycles" (a slice per cycle, "GC 3"), "stop-the-world" (a slice per pause, "STW
//     gc_mark_term"), one "G7 mark assist" track per assisting G (its assists may span its parks,
//     so they are not nested in its running slices), one "M3 sweeping" track per sweeping M, and
//     the counters "heap" and "heap goal" (bytes).
//   - a trace of several processes (lanes::Model::processes) has instead one group per process,
//     named with its name, GOMAXPROCS and quota ("server (GOMAXPROCS 2, quota 1.5 CPUs)"), holding
//     its P and M tracks, its local queues, its GC tracks and its "GOMAXPROCS" counter, then a
//     group "machine" with the global counters (queues, spinning Ms, idle Ps of all processes).
//     A one-process trace whose GOMAXPROCS changes (KIND_PROCS) has a "GOMAXPROCS" counter in
//     "scheduler", after the others.
//   - A throttled stretch of an M (or of the P it held) is a slice "throttled" on its track.
// Items (Walk::next), ordered by time, then by type in the order of Item::Type, then by track:
//   - SliceBegin and SliceEnd for each lane segment: a G running or in a system call (its goid), a
//     spinning M or P, a parked M. Consecutive segments of one G and state (the model splits runs
//     longer than 2^32 ns) are one slice. A slice ending where the next begins ends first, so
//     slices on a track never overlap.
//   - Counter: a counter's new value.
//   - Instant: a marker (preemption request, signal sent or received, handoff, sysmon retake).
//   - FlowOut and FlowIn: an arrow's two ends (steal: victim P to thief P; wake-up: waker M to
//     woken M; unpark: the P that readied a G to the P where it next ran), one flow id per arrow.
//     Arrows whose far end the trace never showed (a G readied but never run again) are left out,
//     as gmpview leaves them out.
// Sorting by type at equal times puts an instant or flow end inside the slice that begins then.
// The walk is a k-way merge of the model's already sorted columns: it allocates one index per
// arrow, nothing per segment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/lanes/model.h"

namespace gmp::exporter {

enum class Group : uint8_t { Ps, Ms, Scheduler, GC, Count_ };
const char* group_name(Group g);

struct Track {
  Group group;
  uint32_t gid = 0;  // its group: Walk::groups()'s index (one process: the Group)
  std::string name;
  bool counter = false;
  const lanes::Lane* lane = nullptr;        // slice tracks
  const lanes::Counter* values = nullptr;  // counter tracks
  // GC tracks: the spans (trace::GcSpan `gc_span`) or the 64-bit counter.
  const std::vector<lanes::GcInterval>* spans = nullptr;
  uint8_t gc_span = 0;
  const lanes::Counter64* values64 = nullptr;
};

struct Item {
  enum Type : uint8_t { SliceEnd, Counter, SliceBegin, Instant, FlowOut, FlowIn };
  Type type = SliceEnd;
  int64_t ts = 0;
  uint32_t track = 0;  // index into Walk::tracks()
  // SliceBegin, SliceEnd: what runs. SliceBegin also knows where the slice ends.
  int32_t g = lanes::kNoG;
  lanes::State state = lanes::State::Running;
  int64_t end = 0;
  int64_t value = 0;                                         // Counter
  const lanes::GcInterval* gc = nullptr;                     // SliceBegin of a GC span
  lanes::MarkerKind marker = lanes::MarkerKind::Count_;    // Instant
  lanes::ArrowKind arrow = lanes::ArrowKind::Count_;       // FlowOut, FlowIn
  uint64_t flow = 0;                                         // FlowOut, FlowIn: 1 + the arrow's index
  uint32_t ev = lanes::kNoEv;  // the model event behind an Instant or flow end
};

// The name of a slice: "G17", "G17 syscall", "spinning", "parked".
std::string slice_name(int32_t g, lanes::State s);
// The name of a SliceBegin on its track: slice_name's, or for a GC span "GC 3", "STW gc_mark_term",
// "mark assist", "sweep".
std::string slice_name(const Track& t, const Item& it);
// "gc_mark_term" for trace::STW_REASON_GC_MARK_TERM.
std::string stw_reason_name(int reason);
const char* arrow_name(lanes::ArrowKind k);

class Walk {
 public:
  explicit Walk(const lanes::Model& m);
  const std::vector<Track>& tracks() const { return tracks_; }
  // The groups' names, by gid; several processes: one group per process, then "machine".
  const std::vector<std::string>& groups() const { return groups_; }
  bool per_process() const { return per_process_; }
  // The next item in order; false at the end.
  bool next(Item& out);

 private:
  enum class Src : uint8_t { Segments, Markers, Samples, ArrowsOut, ArrowsIn, GcSpans, Samples64 };
  struct Cursor {
    Src src;
    uint32_t track;  // the track it feeds (arrow cursors: unused)
    size_t i = 0;    // next element
    bool in_slice = false;  // Segments: a begin was given, the end is next
    size_t last = 0;        // Segments: the last segment of the slice begun
  };
  bool peek(const Cursor& c, Item& out) const;
  void advance(Cursor& c);
  static bool before(const Item& a, const Item& b);
  void push(uint32_t cursor);

  const lanes::Model& m_;
  std::vector<Track> tracks_;
  std::vector<std::string> groups_;
  bool per_process_ = false;
  // The per-G assists and per-M sweeps, split from the model's lists (built once).
  std::vector<std::vector<lanes::GcInterval>> gc_split_;
  std::vector<Cursor> cursors_;
  std::vector<uint32_t> arrows_by_t1_;
  std::vector<Item> heads_;     // per cursor: its next item
  std::vector<uint32_t> heap_;  // cursors with an item, a min-heap on heads_
};

}  // namespace gmp::exporter
