// A trace as each goroutine's life: its intervals (runnable, running, blocked, in a system call)
// and the edges between goroutines (who created or woke whom, when). The analyses (stats.h,
// critical_path.h) read this, not the raw events.
//
// How the events map to intervals is the schema's state machine (state_machine.h): an event that
// moves its G (Rule::to) ends the G's interval and begins one in the new state (Waiting is
// Blocked here), GO_EXIT ends the G; GO_CREATE and GO_UNPARK also make the edges (Edge::Create,
// Edge::Ready). An interval still open when the trace ends is closed at its end. A G seen first
// in the middle of its life (an imported trace starts mid-run) begins in the state its first event
// needs (Rule::need), at the start of the trace. The garbage collector's spans and counters
// (Rule::span, Rule::counter) are paired BEGIN to END: cycles and pauses per process, assists per
// G, sweeps per M; a cgroup's throttling of an M (THROTTLE_BEGIN .. END) likewise, per M.
// Every G, M and P is its process's (Event.process): a trace of several processes has a G1 in
// each, kept apart by GKey; a one-process trace has process 0 throughout.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "traces/trace.pb.h"

namespace gmp::trace {

enum class GState : uint8_t { Runnable, Running, Blocked, Syscall };
const char* gstate_name(GState s);

// A G of a trace: its process and its goid. Ordered by process, then goid.
struct GKey {
  uint32_t process = 0;
  int64_t g = -1;
  auto operator<=>(const GKey&) const = default;
};
// "G5", or "G5@1" for a G of process 1 (each process numbers its own Gs).
std::string g_text(const GKey& k);

struct Interval {
  GState state = GState::Runnable;
  int64_t t0 = 0, t1 = 0;
  int64_t m = -1, p = -1;                     // Running, Syscall: where
  WaitReason wait = WAIT_REASON_UNSPECIFIED;  // Blocked: why
  std::string label;                          // Blocked: the wait reason as Go writes it, when not listed
  bool open_end = false;                      // the trace ended in it
  bool assumed = false;                       // implied by the G's first event: began before the trace did
  Reason reason = REASON_UNSPECIFIED;         // the reason of the event that began it (GOSCHED, ...)
  // Blocked: where the G parked, the first frame of its GO_PARK's stack ("main.worker
  // /src/main.go:21"); empty when the trace has no stacks (simulated traces).
  std::string site;
  // Running: how much of it the OS held the G's thread off its core, as a trace cleaning
  // (replay_clean.h) estimates it; 0 in a trace as read. The G's work is t1 - t0 - off_cpu.
  int64_t off_cpu = 0;
};

// g became runnable at t because `by` created it (create) or readied it; by < 0: a timer, the
// netpoller or an unknown waker.
struct WakeEdge {
  int64_t t = 0;
  uint32_t process = 0;  // of g and by (an edge never joins two processes)
  int64_t g = -1, by = -1;
  bool create = false;
  size_t interval = 0;            // the interval of g it began
  size_t by_interval = SIZE_MAX;  // the interval of `by` it happened in; SIZE_MAX: by unknown
};

struct GLife {
  std::vector<Interval> intervals;  // in time order, contiguous
  bool exited = false;
  int64_t parent = -1;  // -1: not created in the trace (or by nobody)
  // Its start function, the label of its GO_CREATE ("main.worker", "main.main.func1"); and the go
  // statement, the first frame of that event's stack. Empty when the trace does not say (a G
  // already there when the trace began, a trace without stacks).
  std::string start_fn;
  std::string create_site;
  // The whole stack of its first GO_PARK (frames one a line, innermost first), "" without stacks:
  // how replay_clean.h recognises the runtime's and the tracer's goroutines that were already
  // there when the trace began (no start_fn).
  std::string first_park_stack;
};

// A span of the garbage collector (state_machine.h's GcSpan): a cycle, a stop-the-world pause, a
// G's mark assist, an M's sweeping. One whose BEGIN came before the trace began starts at t_begin
// (open_begin); one still open when it ended stops at t_end (open_end).
struct GcSpanRecord {
  int64_t t0 = 0, t1 = 0;
  uint32_t process = 0;
  int64_t g = -1, m = -1, p = -1;  // the BEGIN's (assists: the G; sweeps: the M)
  int64_t n = -1;                  // cycles: the number
  StwReason stw_reason = STW_REASON_UNSPECIFIED;  // pauses
  int64_t bytes = -1;              // sweeps: bytes swept (the END's value), -1 unknown
  bool open_begin = false, open_end = false;
  bool whole() const { return !open_begin && !open_end; }
};

// A counter's value from time t on (HEAP_ALLOC, HEAP_GOAL).
struct CounterSample {
  int64_t t = 0;
  int64_t value = 0;
  uint32_t process = 0;
};

// One HEAP_ALLOC event: the heap counter's value after it changed, and who changed it (the G
// its event names, else -1; the M and P that wrote it).
struct HeapSample {
  int64_t t = 0;
  int64_t g = -1, m = -1, p = -1;
  int64_t bytes = 0;
};

struct Timeline {
  Header header;
  int64_t t_begin = 0, t_end = 0;  // the first and last event's time
  uint64_t events = 0;
  std::map<GKey, GLife> gs;           // by process and goid (ordered: output does not depend on addresses)
  std::vector<WakeEdge> wakes;        // in trace order
  std::map<Kind, uint64_t> kinds;     // events of each kind
  std::map<std::pair<uint32_t, int64_t>, int64_t> p_busy;  // ns each (process, P) ran a G
  uint64_t steals = 0, stolen = 0, wakeups = 0, preempt_requests = 0, preemptions = 0, handoffs = 0, retakes = 0,
           syscalls = 0;
  // The garbage collector, each list in the order its spans began (or, for open_begin, ended).
  std::vector<GcSpanRecord> gc_cycles, stw_pauses, assists, sweeps;
  std::vector<CounterSample> heap_alloc, heap_goal;
  // The collector, as replay derives a program's allocation from it (derive_scenario.h).
  std::vector<HeapSample> heap;     // every HEAP_ALLOC, in trace order
  std::vector<int64_t> gc_ends;     // the time of every GC_END, in trace order
  std::set<GKey> gc_workers;        // Gs started as GC mark workers (GO_START with gc_worker_mode)
  // Containers: each M's throttled stretches (m, p: the BEGIN's; open_begin/open_end as for the
  // GC's spans), in the order they began; each PROCS (value: the new GOMAXPROCS), in trace order.
  std::vector<GcSpanRecord> throttles;
  std::vector<CounterSample> procs;
  // The processes, as Header.processes has them; one (id 0, named after the header's num_ps) for a
  // trace without the list.
  std::vector<Process> processes() const;
};

// Reads the trace at `path`; throws TraceFormatError on unreadable input.
Timeline build_timeline(const std::string& path);

}  // namespace gmp::trace
