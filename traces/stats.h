// Summary statistics of a trace (`gmpsim trace stats`, `gmpsim trace diff`): scheduling latency
// (runnable to running) overall and per G, per-P utilisation, and counts of the scheduler's
// decisions. Computed from the Timeline (timeline.h), so any producer's trace gives the same
// figures for the same story.
#pragma once

#include <cstdint>
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
  LatencySummary latency;
  int64_t running = 0, runnable = 0, blocked = 0, syscall = 0;  // ns in each state
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
  std::vector<GStats> per_g;  // by goid
};

TraceStats compute_stats(const Timeline& tl);

// Text for a terminal: the summary, then the `top` Gs that waited longest.
std::string stats_text(const TraceStats& s, size_t top = 10);
// The same as one JSON object (every G included).
std::string stats_json(const TraceStats& s);
// Two traces side by side (`gmpsim trace diff`), with the ratio b/a.
std::string stats_diff(const TraceStats& a, const TraceStats& b, const std::string& name_a, const std::string& name_b);

}  // namespace gmp::trace
