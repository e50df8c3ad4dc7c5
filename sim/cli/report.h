// What gmpsim prints: a run's report, a sweep's tables and go-test-bench lines, and its SVG chart.
#pragma once

#include <string>
#include <vector>

#include "sim/simulation/simulation.h"

namespace gmp::cli {

// gctrace: the GODEBUG=gctrace=1 line of each GC cycle too (sim/runtime/gctrace.h).
std::string format_run(const engine::SimResult& r, bool all_events = false, bool gctrace = false);
// The line `GC: N cycles, ...` for a program that allocated; "" for one that did not.
std::string format_gc_summary(const engine::SimResult& r);
// The line `cpu.stat: nr_periods N nr_throttled N throttled_usec N` for a process with a quota; ""
// for one without.
std::string format_cpu_stat(const engine::SimResult& r);
// The lines about the scenario's assertions (part of format_run): none when it has none; else how
// many held, then each violation, with its assertion's position and text and what happened.
std::string format_assertions(const engine::SimResult& r);

// One point of a sweep: a (procs, cores) pair, and GC settings, run under several seeds.
struct SweepPoint {
  int64_t procs = 0;
  int64_t cores = 0;
  std::vector<engine::SimResult> runs;
  rt::GCSettings gc;
  double cpu_quota = 0;  // --cpu-quota's CPUs; 0: no limit
};

// The sweep's dimensions beyond GOMAXPROCS and cores that were given (--gogc, --memlimit): each one
// given is a column of the tables, a configuration line of the bench lines and part of a chart
// line's name; none given, the output is what it was before they existed.
struct SweepDims {
  bool gogc = false;
  bool memlimit = false;
  bool quota = false;  // --cpu-quota
};

std::string format_sweep_tables(const std::vector<SweepPoint>& pts, SweepDims dims = {});
// `go test -bench` lines: BenchmarkName-N  iterations  ns/op, one per run, for benchstat, with a
// "cores: N" configuration line before each machine's block (and "gogc: N", "memlimit: SIZE").
std::string format_bench_lines(const std::vector<SweepPoint>& pts, SweepDims dims = {});
// A line chart of ns/op (or the run's virtual time without a benchmark) against GOMAXPROCS, a line
// per cores (and GC settings).
std::string sweep_svg(const std::vector<SweepPoint>& pts, const std::string& title, SweepDims dims = {});
// How a sweep's messages name a point's GC settings and quota: "GOGC=50 ", "GOMEMLIMIT=64MiB " and
// "quota=2.5 " for the dimensions given.
std::string gc_point_label(const SweepPoint& p, SweepDims dims);
// A sweep's GOMAXPROCS value: "4", or "auto" for --procs auto (0).
std::string procs_text(int64_t procs);
// A quota's CPUs: "2.5", or "none" for 0.
std::string quota_text(double cpus);

}  // namespace gmp::cli
