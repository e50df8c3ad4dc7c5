// GODEBUG=gctrace=1 lines and the GC figures of a benchmark run (gmpsim calibrate, gmp_gc_bench).
//
// Go 1.23 prints one line per cycle on stderr (mgc.go, gcMarkTermination):
//
//   gc 8 @0.291s 15%: 0.017+80+0.19 ms clock, 0.035+23/43/2.1+0.39 ms cpu, 13->16->10 MB, 16 MB goal,
//   0 MB stacks, 0 MB globals, 2 P (forced)
//
// (one line): cycle number, seconds since the program started, the share of CPU spent in GC since
// then (percent), the wall times of sweep termination, concurrent mark and mark termination (ms);
// the CPU times of sweep termination, mark assists, background and idle marking, mark termination
// (ms; the stop-the-world phases count all Ps); the heap at the cycle's start, at mark's end and
// the marked (live) heap, the heap goal, the stacks and globals scanned (MB, whole); the P count;
// " (forced)" for runtime.GC and forcegc. Older Go wrote "#MB globals" without the space: both read.
//
// Protocol: parse_gctrace_line returns nothing for a line that is not a gctrace line (one not
// starting "gc <digits> @") and throws GCTraceError ("where: what") for one that starts like one
// but does not parse. split_go_output takes go test output with stderr joined to stdout, where
// the runtime's gctrace lines fall anywhere, also inside a benchmark's result line (go test prints
// "BenchmarkX-2 \t" before running it and the figures after), and returns each result with the
// cycles printed while it was measured, plus the text with every gctrace line moved out onto a
// "# gctrace: ..." comment line before the result it belongs to: valid go test -bench output that
// split_go_output reads back to the same runs (a saved measurement file).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/calibration/bench_output.h"

namespace gmp::calibration {

// A bad gctrace line is bad go test output: callers that catch BenchOutputError catch it too.
class GCTraceError : public BenchOutputError {
 public:
  using BenchOutputError::BenchOutputError;
};

struct GCTraceLine {
  uint32_t n = 0;
  double at_s = 0;     // since the program started
  int32_t percent = 0;  // GC CPU share since the start, as Go rounds it
  double sweep_term_clock_ms = 0, mark_clock_ms = 0, mark_term_clock_ms = 0;
  double sweep_term_cpu_ms = 0, assist_cpu_ms = 0, background_cpu_ms = 0, idle_cpu_ms = 0, mark_term_cpu_ms = 0;
  uint64_t heap_start_mb = 0, heap_end_mb = 0, heap_live_mb = 0, goal_mb = 0, stacks_mb = 0, globals_mb = 0;
  int32_t procs = 0;
  bool forced = false;

  // The GC's own CPU (idle marking left out, as Go's gc_cpu_fraction does): sweep and mark
  // termination, assists, background marking.
  double gc_cpu_ms() const { return sweep_term_cpu_ms + assist_cpu_ms + background_cpu_ms + mark_term_cpu_ms; }
  // Stop-the-world time of the cycle: sweep termination plus mark termination.
  double pause_ms() const { return sweep_term_clock_ms + mark_term_clock_ms; }
};

// True when `s` starts "gc <digits> @".
bool looks_like_gctrace(std::string_view s);

std::optional<GCTraceLine> parse_gctrace_line(std::string_view line, const std::string& where);

// Go's print of the line (the inverse of parse_gctrace_line up to float formatting): what
// gmpsim run --gctrace prints, and the tests' round trip.
std::string format_gctrace_line(const GCTraceLine& l);

// One benchmark result of go test output and the GC cycles printed while it ran (since the
// previous result).
struct BenchRun {
  BenchKey key;
  int64_t iterations = 0;
  double ns_per_op = 0;
  std::vector<GCTraceLine> cycles;
};

struct GoOutput {
  std::string clean;          // the text with gctrace lines as "# gctrace: " comments
  std::vector<BenchRun> runs;  // in order
};

// Throws BenchOutputError or GCTraceError with "origin:line: what".
GoOutput split_go_output(const std::string& text, const std::string& origin);

// What a run says about its GC. Its timed loop is taken to start at its last forced cycle (go test
// forces one before every b.N round, and the allocating benchmarks force one after their set-up),
// so the cycles counted are the unforced ones after the last forced one (all of them when none was
// forced). The wall time is ns/op x iterations.
struct GCFigures {
  size_t cycles = 0;
  double cycles_per_op = 0;
  double cycles_per_s = 0;
  double gc_cpu_share = 0;     // the cycles' gc_cpu_ms over wall x GOMAXPROCS, 0 to 1
  double pause_ms_mean = 0;    // per cycle
  double pause_ms_max = 0;
  double goal_mb_mean = 0;     // per cycle
};
GCFigures gc_figures(const BenchRun& r);

}  // namespace gmp::calibration
