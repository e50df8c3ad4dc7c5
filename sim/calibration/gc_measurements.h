// The GC validation's measurement file (sim/bench/gc_measure.py writes it, gmp_gc_bench reads it)
// and the same figures from a simulated run.
//
// The file is go test output, one run of the held-out test binary per point and round, each run
// under a comment line naming its point:
//
//   # point: BenchmarkTreeBuild procs=2 gogc=100 round=3
//   <go test -bench output of that run, with GODEBUG=gctrace=1 on stderr joined to it, raw or with
//    the gctrace lines as "# gctrace: " comments (gctrace.h)>
//
// Other "# " lines (the header, the script's per-point summaries) are comments. gogc is a whole
// number from 1 to 100000 or "off". Protocol: read_gc_measurements(text, origin) returns every
// point's samples, in the order first seen; a point line that does not parse, a run without the
// named benchmark's result at that GOMAXPROCS (or with two), or a bad bench/gctrace line is a
// GCMeasurementError (or BenchOutputError/GCTraceError) "origin:line: what".
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "sim/calibration/bench_output.h"
#include "sim/calibration/gctrace.h"
#include "sim/simulation/simulation.h"

namespace gmp::calibration {

class GCMeasurementError : public BenchOutputError {
 public:
  using BenchOutputError::BenchOutputError;
};

struct GCPointKey {
  std::string bench;
  int32_t procs = 1;
  int32_t gogc = 100;  // -1: off
  bool operator<(const GCPointKey& o) const {
    return std::tie(bench, procs, gogc) < std::tie(o.bench, o.procs, o.gogc);
  }
};

// One run per entry (a round).
struct GCPointSamples {
  std::vector<double> ns_per_op, cycles_per_op, cycles_per_s, gc_cpu_share, pause_ms_mean, goal_mb;
  void add(double ns, const GCFigures& f);
};

struct GCMeasurements {
  std::vector<GCPointKey> order;  // first appearance
  std::map<GCPointKey, GCPointSamples> points;
};

GCMeasurements read_gc_measurements(const std::string& text, const std::string& origin);

// A simulated run as a go test result with its gctrace cycles (GCCycleRecord in gctrace's units:
// ms, MB as Go's >>20), so gc_figures treats both sides alike.
BenchRun bench_run_of(const engine::SimResult& r, const std::string& name);
GCTraceLine gctrace_line_of(const rt::GCCycleRecord& c);

}  // namespace gmp::calibration
