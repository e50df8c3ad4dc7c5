// Several traces of one program combined into one (`gmpsim replay A B C`), so that a replay does
// not inherit one run's luck.
//
// The goroutines of the program (replay_clean.h's program_goroutine) are matched across the traces
// by start function and creation order: the k-th goroutine created with start function F in each
// trace (goroutines already there when the trace began count after those created in it, in goid
// order, under replay_clean.h's start_function: G1 is main.main, others their first park's
// outermost frame outside package runtime). The combined timeline is the trace whose span is
// the median (of an even number, the lower of the two middle ones), with each of its matched
// goroutines' work (running time less off-CPU time) scaled to the median of that goroutine's work
// over the traces that have it. The scaling is carried by Interval::off_cpu: each running interval
// keeps its place and length, and off_cpu becomes length - work x scale, negative where the median
// asks for more work than the interval's running time (derive_scenario reads t1 - t0 - off_cpu).
// The structure (who starts and wakes whom, waits, system calls) is the median trace's.
//
// Traces of different programs are refused (CombineError): fewer than half of the goroutines of
// the two traces matched (the larger count), or G1 (main) starting in different functions (a
// simulated trace names the scenario's entry; in imported Go traces G1 is always main.main, so
// there only the matching tells programs apart). Traces at different GOMAXPROCS (the header's
// num_ps) are combined with a warning (CombineReport::warnings).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "traces/timeline.h"

namespace gmp::trace {

class CombineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CombineReport {
  std::vector<int64_t> spans;  // of each trace, in the order given
  size_t median = 0;           // the index of the trace whose span is the median
  uint64_t goroutines = 0;     // the program's goroutines of the median trace
  uint64_t matched = 0;        // of those, matched in every other trace
  int64_t work_before = 0;     // the median trace's program work, before and after scaling
  int64_t work_after = 0;
  std::vector<std::string> warnings;  // traces at different GOMAXPROCS (header num_ps), one line each
};

// The match key of each of the program's goroutines: (start function, k), k from 0 in creation order.
std::vector<std::pair<std::pair<std::string, uint64_t>, GKey>> match_keys(const Timeline& tl);

// tls: cleaned timelines (replay_clean.h), names: how errors name them. One trace: returned as
// it is. Throws CombineError for traces of different programs.
Timeline combine_timelines(const std::vector<Timeline>& tls, const std::vector<std::string>& names,
                           CombineReport* report = nullptr);

// The program's goroutines by start function, one line each: "8 x main.worker: 123.456 ms",
// most running first ("(before the trace)" for those whose start the trace does not say).
std::vector<std::string> start_function_lines(const Timeline& tl);

// Inserts `lines` as comments ("# ...") at the end of the first comment block of scenario text.
std::string add_header_comments(const std::string& text, const std::vector<std::string>& lines);

// The derived scenario's default path: next to the trace, under its whole name less a final
// .trace or .gmp ("DIR/trace-go1.23-p4.trace" -> "DIR/trace-go1.23-p4.replay.textproto").
std::string replay_output_path(const std::string& trace_path);

}  // namespace gmp::trace
