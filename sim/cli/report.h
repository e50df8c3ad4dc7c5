// What gmpsim prints: a run's report, a sweep's tables and go-test-bench lines, and its SVG chart.
#pragma once

#include <string>
#include <vector>

#include "sim/simulation/simulation.h"

namespace gmp::cli {

std::string format_run(const engine::SimResult& r, bool all_events = false);
// The lines about the scenario's assertions (part of format_run): none when it has none; else how
// many held, then each violation, with its assertion's position and text and what happened.
std::string format_assertions(const engine::SimResult& r);

// One point of a sweep: a (procs, cores) pair run under several seeds.
struct SweepPoint {
  int64_t procs = 0;
  int64_t cores = 0;
  std::vector<engine::SimResult> runs;
};

std::string format_sweep_tables(const std::vector<SweepPoint>& pts);
// `go test -bench` lines: BenchmarkName-N  iterations  ns/op, one per run, for benchstat, with a
// "cores: N" configuration line before each machine's block.
std::string format_bench_lines(const std::vector<SweepPoint>& pts);
// A line chart of ns/op (or the run's virtual time without a benchmark) against GOMAXPROCS.
std::string sweep_svg(const std::vector<SweepPoint>& pts, const std::string& title);

}  // namespace gmp::cli
