// Summary statistics of a trace (`gmpsim trace stats`, `gmpsim trace diff`): scheduling latency
// (runnable to running) overall and per G, per-P utilisation, and counts of the scheduler's
// decisions. Computed from the Timeline (timeline.h), so any producer's trace gives the same
// figures for the same story.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "traces/timeline.h"

namespace gmp::trace {

struct LatencySummary {
  uint64_t n = 0;
  int64_t p50 = 0, p90 = 0, p99 = 0, max = 0;
  double mean = 0;
};

struct GStats {
  int64_t g = -1;
  uint32_t process = 0;
  LatencySummary latency;
  int64_t running = 0, runnable = 0, blocked = 0, syscall = 0;  // ns in each state
};

// Spans of one sort: how many, their total and longest, in ns.
struct SpanSummary {
  uint64_t n = 0;
  int64_t total = 0, max = 0;
  void add(int64_t d) {
    n++;
    total += d;
    if (d > max) max = d;
  }
  double mean() const { return n != 0 ? static_cast<double>(total) / static_cast<double>(n) : 0; }
};

// The garbage collector's figures (Timeline's GC spans and counters). Cycles and pauses count
// those seen whole (their BEGIN and END in the trace); assist and sweep times add up the parts
// inside the trace.
struct GcSummary {
  SpanSummary cycles;
  SpanSummary stw;
  std::map<StwReason, SpanSummary> stw_by_reason;
  SpanSummary assists;
  std::map<int64_t, int64_t> assist_by_g;  // ns per goid
  SpanSummary sweeps;
  int64_t swept_bytes = 0;
  uint64_t heap_samples = 0, goal_samples = 0;
  int64_t heap_max = 0, heap_last = 0, goal_last = 0;  // bytes
  // Whether the trace had any GC event: the text shows the GC only then.
  bool any = false;
};

// Containers: an M's throttled stretches (THROTTLE_BEGIN .. END) and the GOMAXPROCS changes.
// `periods` is cpu.stat's nr_throttled as the trace shows it: the periods (cpu_period apart from
// the trace's start) in which some M of the process was throttled; 0 without a period.
struct ThrottleSummary {
  SpanSummary stretches;  // per M, summed over Ms (cpu.stat's throttled_usec sums per CPU instead)
  uint64_t periods = 0;
  uint64_t procs_changes = 0;
  int64_t procs_last = -1;  // GOMAXPROCS after the last PROCS, -1: none
};

// One process of a trace with several: its share of the figures above.
struct ProcessStats {
  uint32_t id = 0;
  std::string name;
  int32_t num_ps = 0;
  double cpu_quota = 0;  // CPUs, 0: none
  int64_t cpu_period = 0;
  uint64_t gs = 0;
  LatencySummary latency;
  std::vector<double> utilisation;  // per P id
  ThrottleSummary throttle;
};

struct TraceStats {
  std::string producer;
  int64_t span = 0;  // ns from the first event to the last
  int32_t num_ps = 0;
  uint64_t events = 0, gs = 0;
  LatencySummary latency;  // every runnable-to-running wait that began and ended in the trace
  // Latencies by powers of two: bucket i counts waits in [2^(i-1), 2^i) ns (bucket 0: 0 ns).
  std::vector<uint64_t> latency_log2;
  std::vector<double> utilisation;  // per P id, 0..1 of the span
  uint64_t steals = 0, stolen = 0, wakeups = 0, preempt_requests = 0, preemptions = 0, handoffs = 0, retakes = 0,
           syscalls = 0;
  std::vector<GStats> per_g;  // by process, then goid
  GcSummary gc;
  ThrottleSummary throttle;  // every process's
  // Per process, for a trace of several (empty for one: the figures above are its own). The
  // figures above then cover them all; utilisation lists each process's Ps in turn.
  std::vector<ProcessStats> processes;
};

TraceStats compute_stats(const Timeline& tl);

// Text for a terminal: the summary, the GC's figures (only for a trace with GC events), the
// throttling (only with THROTTLE or PROCS events), one line per process (several only), then the
// `top` Gs that waited longest.
std::string stats_text(const TraceStats& s, size_t top = 10);
// The same as one JSON object (every G included); the GC's keys (gc_cycles, stw_pauses,
// mark_assists, sweeps, heap) are always there, zero for a trace without GC events; "throttle" is
// there when the trace throttles or changes GOMAXPROCS, "processes" when it has several.
std::string stats_json(const TraceStats& s);
// Two traces side by side (`gmpsim trace diff`), with the ratio b/a.
std::string stats_diff(const TraceStats& a, const TraceStats& b, const std::string& name_a, const std::string& name_b);

}  // namespace gmp::trace
