// The loaded trace, in compact columnar arrays built once at load; nothing here is a protobuf
// object. The drawing code reads it without allocating.
//
// What the loader derives from the events (schema: traces/trace.proto). What each kind does to a
// G, its M's and its P's lanes, the idle Ps, spinning, and which arrow or marker it makes is the
// schema's state machine (traces/state_machine.h, trace::rule), applied to the event's own m and
// p: the viewer draws what the events say, consistent or not. The run-queue counts are its own.
//   - One lane per P and per M, each a time-sorted array of non-overlapping Segments. A gap is the
//     lane's idle state: a P that runs no G (held or not), an M in the scheduler.
//     P lane: Running g, Syscall g (the P left in syscall state), Spinning (its M looks for work).
//     M lane: Running g, Syscall g, Spinning, Parked (from M_SLEEP to its next own event).
//   - Counters as (ts, value) columns with a max pyramid: the global queue length, each P's local
//     queue (runnext + runq) length, spinning Ms, idle Ps. Queue lengths are derived from
//     RUNQ_PUT/RUNQ_GET/STEAL counts and the GO_STARTs that take a queued G; they never go below 0.
//   - Markers (instants) on P lanes, or M lanes when the event has no P: preemption requests,
//     signals sent and received, handoffs (P_HANDOFF, or P_RELEASE for HANDOFFP from older
//     producers), sysmon retakes.
//   - Arrows: STEAL from the victim P to the thief; M_WAKEUP from the waker M to the woken M (the
//     M named by peer_m at its next event, or else the M that next acquires the P passed along) ;
//     GO_UNPARK from the readying P to the P where the G next starts.
//   - Scheduling latencies: for each GO_START, the time since its G last became runnable.
//   - Per G: id, creation event and first start, sorted by id.
//   - The garbage collector (trace::Rule::span, ::counter): GC cycles and stop-the-world pauses
//     (with their reason), each G's mark assists, each M's sweeping, as intervals; the heap and its
//     goal as 64-bit counters (with a min/max pyramid); each mark worker's run on its P (from a
//     GO_START with gc_worker_mode to the end of that run of its G on the P lane) with its mode;
//     per P lane, the indices of the assists and worker runs on it.
//   - Several processes (Event.process, Header.processes): every G, M and P is its process's, so
//     lanes, Gs and GC spans carry their process; lanes are sorted by process, then id, and
//     Model::processes gives each process's range of P and M lanes (the viewer's and exporters'
//     groups), with its name, GOMAXPROCS, quota and a GOMAXPROCS counter (KIND_PROCS). A trace of
//     one process has one group, process 0. The counters of queues, spinning Ms and idle Ps add up
//     every process's.
//   - Containers: THROTTLE_BEGIN .. END is a Throttled segment on its M's lane and on the lane of
//     the P it names (the G running there stays the segment's G); what the lane showed before goes
//     on after it. Model::throttles lists the stretches (m, p, process).
// Limits: at most 2^28 events, at most 256 processes, M and P ids below 65535, goids below 2^28 - 1, timestamps within
// +-2^61 ns (where the simulator's time ends) and at most 2^50 ns (13 days) after the first
// event. A trace beyond them is refused with a TraceFormatError at the offending event.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "traces/trace.pb.h"

namespace gmp::lanes {

inline constexpr int32_t kNoG = -1;
inline constexpr uint16_t kNoId = 0xffff;
inline constexpr uint32_t kNoEv = 0xffffffffu;
inline constexpr uint32_t kMaxEvents = 1u << 28;

// One event, its common fields packed (24 bytes). Absent ids are kNoG / kNoId. The rarer fields
// (peer_m, peer_p, count, signal, object, user_op, phase, label) are in Model::extras.
struct Ev {
  int64_t ts;
  int32_t g, peer_g;
  uint16_t m, p;
  uint8_t kind, reason, queue, wait_reason;
};
static_assert(sizeof(Ev) == 24);

// The rarely filled fields of an event (Model::extras, sorted by ev).
struct EvExtra {
  uint32_t ev;
  int32_t count;  // -1: absent
  uint16_t peer_m, peer_p;
  int32_t signal;
  uint64_t object;
  uint32_t label;  // index into Model::labels, or kNoEv
  uint8_t user_op, phase, has_signal, has_object;
  int64_t step;  // the checker's step (Event.step), -1: absent
  int64_t value;  // Event.value (GC cycle number, bytes), -1: absent
  uint8_t stw_reason, gc_worker_mode;
};

enum class State : uint8_t { Running, Syscall, Spinning, Parked, Runnable, Blocked, Throttled, Count_ };
const char* state_name(State s);

// A stretch of one state on a lane (16 bytes). A segment longer than 2^32 ns (4.3 s) is stored as
// several. Its event: Model::segment_event.
struct Segment {
  int64_t start;
  uint32_t dur;   // end - start
  uint32_t bits;  // the G + 1 (28 bits; 0: none) | state << 28

  static Segment make(int64_t start, int64_t end, int32_t g, State st) {
    return Segment{start, static_cast<uint32_t>(end - start),
                   static_cast<uint32_t>(g + 1) | static_cast<uint32_t>(st) << 28};
  }
  int64_t end() const { return start + dur; }
  // The G running (Running, Syscall), or kNoG.
  int32_t g() const { return static_cast<int32_t>(bits & 0x0fffffffu) - 1; }
  State state() const { return static_cast<State>(bits >> 28); }
};
static_assert(sizeof(Segment) == 16);
inline constexpr int32_t kMaxGoid = (1 << 28) - 2;

enum class MarkerKind : uint8_t { PreemptRequest, SignalSend, SignalReceive, Handoff, Retake, Count_ };
const char* marker_name(MarkerKind k);

struct Marker {
  int64_t ts;
  uint32_t ev;
  MarkerKind kind;
};

enum class LaneType : uint8_t { P, M, G };

// A lane reference packed into 32 bits: type in the top 2 bits, index into that lane array below.
inline uint32_t lane_ref(LaneType t, uint32_t index) { return static_cast<uint32_t>(t) << 30 | index; }
inline LaneType ref_type(uint32_t ref) { return static_cast<LaneType>(ref >> 30); }
inline uint32_t ref_index(uint32_t ref) { return ref & ((1u << 30) - 1); }

enum class ArrowKind : uint8_t { Steal, Wakeup, Unpark, Count_ };

struct Arrow {
  int64_t t0, t1;
  uint32_t src, dst;  // lane_ref
  uint32_t ev;        // the event that made it
  ArrowKind kind;
};

struct Lane {
  LaneType type;
  uint16_t process = 0;  // Event.process of its events
  int32_t id;  // p.id, m.id or goid
  std::vector<Segment> segs;
  // busy_before[k]: total Running time of segs[0 .. 16k), so a time range's busy time is two
  // binary searches and at most 2 * 15 segments summed (lod.h busy_ns).
  std::vector<int64_t> busy_before;
  std::vector<Marker> markers;
  // A time grid over the segments: grid[c] is the first segment ending after grid_t0 + c * grid_dt.
  // About one cell per 32 segments, so finding a time is one division and a search among a few
  // neighbouring segments, not a binary search over the whole lane (which misses the cache at
  // every step: zoomed out, a frame asks thousands of times).
  std::vector<uint32_t> grid;
  int64_t grid_t0 = 0, grid_dt = 1;
  // Per cell, for views zoomed out past the cells: grid_busy[c], the Running time before the cell's
  // start; grid_span[c], the longest segment or gap (from the previous segment's end) among the
  // segments ending in the cell, so level of detail can tell a cell merges whole (lod.h).
  std::vector<int64_t> grid_busy, grid_span;

  // Running time before t, interpolated inside t's cell: exact at the cells' edges, off by at most
  // one cell's Running time; for drawing columns many cells wide.
  int64_t busy_before_coarse(int64_t t) const;

  // Index of the first segment that ends after t (segs.size() if none).
  size_t first_ending_after(int64_t t) const;
  void build_grid();
};

struct Counter {
  std::string name;
  std::vector<int64_t> ts;  // when the value changed
  std::vector<int32_t> v;   // the value from ts[i] on
  // levels[k][j]: max of v over the block of 16^(k+1) samples starting at j * 16^(k+1).
  std::vector<std::vector<int32_t>> levels;
  int32_t max_value = 0;

  // Value at time t (0 before the first sample).
  int32_t value_at(int64_t t) const;
  // Max of the values in force during [t0, t1): O(16 * levels) after two binary searches.
  int32_t max_in(int64_t t0, int64_t t1) const;
  // Max of v[a .. b), b > a: O(16 * levels).
  int32_t max_range(size_t a, size_t b) const;
  void build_levels();
};

// A span of the garbage collector (trace::GcSpan): a cycle, a stop-the-world pause, a G's mark
// assist, an M's sweeping. One whose BEGIN the trace does not show starts at Model::t_begin
// (begin_ev kNoEv), one never closed ends at Model::t_end (end_ev kNoEv).
struct GcInterval {
  int64_t start, end;
  uint32_t begin_ev, end_ev;
  int64_t value;       // cycles: the number; sweeps: bytes swept; -1: unknown
  int32_t g;           // assists: the G
  uint16_t m, p;       // the BEGIN's (sweeps: the M)
  uint8_t stw_reason;  // pauses: trace::StwReason
  uint8_t worker_mode = 0;  // mark workers: trace::GcWorkerMode
  uint16_t process = 0;
};

// A counter of 64-bit values (the heap's bytes), a (ts, value) column.
struct Counter64 {
  std::string name;
  std::vector<int64_t> ts, v;
  int64_t max_value = 0;
  // lo[k][j], hi[k][j]: min and max of v over the block of 16^(k+1) samples from j * 16^(k+1).
  std::vector<std::vector<int64_t>> lo, hi;
  // Value at time t (0 before the first sample).
  int64_t value_at(int64_t t) const;
  // Min and max of v[a .. b), b > a: O(16 * levels).
  std::pair<int64_t, int64_t> min_max_range(size_t a, size_t b) const;
  void build_levels();
};

struct LatencySample {
  uint32_t ev;       // the GO_START (its time: Model::events[ev].ts)
  uint32_t latency;  // ns runnable before it, at most kMaxLatency
};
inline constexpr uint32_t kMaxLatency = 0xffffffffu;  // about 4.3 s: longer waits count as this

struct GInfo {
  int32_t goid;
  uint32_t create_ev;  // kNoEv if the trace does not show its creation
  int64_t first_ts;    // its first event
  uint16_t process = 0;
};

inline constexpr uint32_t kMaxProcesses = 256;

// One process of the trace (Header.processes; one, id 0, for a trace without the list) and its
// lanes: p_lanes[p_begin, p_end) and m_lanes[m_begin, m_end).
struct ProcessGroup {
  uint16_t id = 0;
  std::string name;
  int32_t num_ps = 0;
  double cpu_quota = 0;  // CPUs, 0: none
  int64_t cpu_period = 0;
  uint32_t p_begin = 0, p_end = 0, m_begin = 0, m_end = 0;
  Counter gomaxprocs;  // from KIND_PROCS; empty when it never changes
};

class Model {
 public:
  // Header.
  std::string path;
  std::string producer;
  std::vector<std::pair<std::string, std::string>> metadata;
  uint32_t schema_version = 0;
  int32_t num_ps = 0;
  trace::Clock clock = trace::CLOCK_UNSPECIFIED;

  std::vector<Ev> events;
  std::vector<EvExtra> extras;
  std::vector<std::string> labels;

  std::vector<Lane> p_lanes, m_lanes;  // sorted by id
  std::vector<Lane> g_lanes;           // empty until build_g_lanes()
  std::vector<Arrow> arrows;           // sorted by t0
  // Per ArrowKind, the indices of its arrows in `arrows`: the drawing thins each kind on its own,
  // so a dense kind does not hide a rare one.
  std::array<std::vector<uint32_t>, static_cast<size_t>(ArrowKind::Count_)> arrows_of_kind;
  Counter global_queue, spinning_ms, idle_ps;
  std::vector<Counter> local_queues;     // one per P lane
  std::vector<LatencySample> latencies;  // sorted by ev, so by time
  std::vector<GInfo> gs;                 // sorted by goid
  int64_t t_begin = 0, t_end = 0;
  // The garbage collector, each sorted by start: cycles, pauses, assists (any G), sweeps (any M).
  std::vector<GcInterval> gc_cycles, stw_pauses, assists, sweeps;
  // Mark workers' runs (g, m, p, worker_mode; begin_ev: the GO_START), sorted by start.
  std::vector<GcInterval> mark_workers;
  // Per P lane (index into p_lanes), the indices into assists and mark_workers of those on that P,
  // by start (a P runs one G at a time, so they do not overlap unless the trace is malformed).
  std::vector<std::vector<uint32_t>> assists_of_p, workers_of_p;
  // Per G lane, the indices into assists of that G's; filled by build_g_lanes().
  std::vector<std::vector<uint32_t>> assists_of_g;
  Counter64 heap_alloc, heap_goal;
  // Containers: each M's throttled stretches (m; p: the P it named; begin_ev, end_ev), by start.
  std::vector<GcInterval> throttles;
  // The processes, by id; at least one.
  std::vector<ProcessGroup> processes;
  // Per event, its process; empty when every event is process 0's.
  std::vector<uint16_t> ev_process;
  uint16_t process_of(uint32_t ev) const { return ev < ev_process.size() ? ev_process[ev] : 0; }
  // The group of a process id (processes[0] when it has none).
  const ProcessGroup& group(uint16_t process) const;
  bool has_gc() const {
    return !gc_cycles.empty() || !stw_pauses.empty() || !assists.empty() || !sweeps.empty() || !heap_alloc.ts.empty() ||
           !heap_goal.ts.empty() || !mark_workers.empty();
  }

  // The producer is the model checker: its events are the counterexample's steps.
  bool is_counterexample() const { return producer == "gmpsim check"; }
  // Events are placed by their order (Ev::ts is the event's index); clock_ts keeps the trace's
  // own timestamps.
  bool step_axis = false;
  std::vector<int64_t> clock_ts;
  std::string meta(const std::string& key) const;

  const Lane* lane(uint32_t ref) const;
  int p_lane_index(int64_t p, uint16_t process = 0) const;  // -1 if none
  int m_lane_index(int64_t m, uint16_t process = 0) const;
  const GInfo* find_g(int64_t goid, uint16_t process = 0) const;
  const EvExtra* extra(uint32_t ev) const;
  // The event that started a segment of `lane`: the first at its start time about its G (or, with
  // no G, about the lane's M or P).
  uint32_t segment_event(const Lane& lane, const Segment& s) const;
  // The fields kept in extras, absent (kNoId, -1) when the event has none.
  uint16_t peer_m(uint32_t ev) const;
  uint16_t peer_p(uint32_t ev) const;
  int32_t count(uint32_t ev) const;
  int64_t step(uint32_t ev) const;  // -1: absent

  // One lane per G (Running, Syscall, Runnable, Blocked), built from the events on first request.
  void build_g_lanes();
  // Bytes held by the model's arrays (capacity, not size).
  size_t memory_bytes() const;
};

struct LoadOptions {
  // The time axis: the trace's timestamps, or the events' order (step i at t = i), which is what
  // a model-checker counterexample means (its clock barely moves, and order is the point). Auto:
  // steps for "gmpsim check" traces, time otherwise.
  enum class Axis { Auto, Time, Steps } axis = Axis::Auto;
};

// Loads a trace file; throws trace::TraceFormatError (with the byte offset) on bad input.
Model load_trace(const std::string& path, const LoadOptions& opt = {});

// Event fields as text, one "name: value" line each, into `out` (no allocation when it has room).
void describe_event(const Model& m, uint32_t ev, std::string& out);
const char* kind_name(int kind);

}  // namespace gmp::lanes
