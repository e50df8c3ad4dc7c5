// Statistics of a time range, for the statistics panel and compare mode: the scheduling-latency
// histogram and percentiles, per-lane utilisation and segment counts. Computed when the range
// changes (not per frame), into a Stats whose arrays are reused.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "viewer/model.h"

namespace gmp::view {

inline constexpr int kLatencyBins = 40;  // bin k: latencies in [2^k, 2^(k+1)) ns; bin 0 also holds 0

struct LaneStats {
  double busy = 0;        // fraction of the range spent Running
  uint32_t segments = 0;  // segments that intersect the range
};

struct Stats {
  int64_t t0 = 0, t1 = 0;
  uint64_t events = 0;
  uint64_t starts = 0;  // latency samples
  int64_t lat_p50 = 0, lat_p90 = 0, lat_p99 = 0, lat_max = 0;
  double lat_mean = 0;
  std::array<float, kLatencyBins> lat_hist{};
  int last_bin = 0;  // highest non-empty bin
  std::vector<LaneStats> p, m;
  double p_busy_mean = 0;
  uint64_t steals = 0, wakeups = 0, unparks = 0;
  // The garbage collector (zero for a GC-free trace): cycles and pauses that overlap the range,
  // the pauses' whole durations, and the assists' time inside the range.
  uint32_t gc_cycles = 0, stw_pauses = 0;
  int64_t stw_ns = 0, stw_max = 0, assist_ns = 0;
  // Containers: the throttled stretches of Ms that overlap the range, their time inside it and
  // longest, and the quota periods in which some M was throttled (cpu.stat's nr_throttled; periods
  // counted from the trace's start, per process with a period).
  uint32_t throttles = 0, throttled_periods = 0;
  int64_t throttled_ns = 0, throttled_max = 0;
  std::vector<int64_t> scratch;  // reused for percentiles
};

// The statistics of one clicked GC cycle or stop-the-world pause, as Tracy shows a zone's.
struct GcItemStats {
  enum class Kind : uint8_t { None, Cycle, Pause } kind = Kind::None;
  uint32_t index = 0;  // into Model::gc_cycles or stw_pauses
  int64_t start = 0, end = 0;
  int64_t cycle = -1;       // the cycle's number; a pause's: that of the cycle it overlaps, -1: none
  uint8_t stw_reason = 0;   // a pause's (trace::StwReason)
  // A cycle: the pauses that overlap it (whole durations: its sweep-termination pause begins
  // before GC_BEGIN), the mark assists' and mark workers' time inside it (per trace::GcWorkerMode).
  uint32_t pauses = 0, assists = 0;
  int64_t pause_ns = 0, pause_max = 0, assist_ns = 0;
  std::array<int64_t, 4> worker_ns{};
  int64_t duration() const { return end - start; }
};

int latency_bin(int64_t ns);
void compute_stats(const Model& m, int64_t t0, int64_t t1, Stats& out);
// Kind::None, or an index out of range, clears `out`.
void compute_gc_item(const Model& m, GcItemStats::Kind kind, uint32_t index, GcItemStats& out);

}  // namespace gmp::view
