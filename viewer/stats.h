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
  std::vector<int64_t> scratch;  // reused for percentiles
};

int latency_bin(int64_t ns);
void compute_stats(const Model& m, int64_t t0, int64_t t1, Stats& out);

}  // namespace gmp::view
