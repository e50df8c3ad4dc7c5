// The output of `go test -bench` (what gmpsim calibrate runs, and what it saves as a measurement
// file): lines "BenchmarkName-4 \t 1000000 \t 1234 ns/op [\t ... more metrics]" (no "-N" suffix
// at -cpu 1, as go test prints it when GOMAXPROCS is 1). Everything else (goos:, pkg:, PASS, ok,
// comments) is skipped.
//
// Protocol: parse_bench_output(text, origin) gathers every ns/op per (benchmark, GOMAXPROCS), in
// the order seen. A line that starts with "Benchmark" and has a tab must parse: name, an
// iteration count of at least 1, and a finite ns/op of at most 1e12; otherwise BenchOutputError
// says "origin:line: what". Lines that start with "Benchmark" without a tab are go test's
// progress lines (the name printed before the result, under -v) and are skipped, as are the
// "0 NaN ns/op" lines of a benchmark that skipped itself (b.Skip). Comment lines ("# ...", which
// calibrate writes into its measurement files: the command run, the machine's quietness) are
// skipped like go test's own header lines. GODEBUG=gctrace=1 lines, on their own line or inside
// a result line (stderr joined to stdout: sim/calibration/gctrace.h), are taken out first.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gmp::calibration {

class BenchOutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BenchKey {
  std::string name;  // "BenchmarkPingPong", without the -N suffix
  int32_t procs = 1;
  bool operator<(const BenchKey& o) const { return std::tie(name, procs) < std::tie(o.name, o.procs); }
};

using BenchSamples = std::map<BenchKey, std::vector<double>>;  // ns/op samples

BenchSamples parse_bench_output(const std::string& text, const std::string& origin);

// One result line: nothing for a line that is not one (see above; a skipped benchmark's "0 NaN"
// line is not one either); BenchOutputError "origin:line: what" for one that does not parse.
struct BenchLine {
  BenchKey key;
  int64_t iterations = 0;
  double ns_per_op = 0;
};
std::optional<BenchLine> parse_bench_line(const std::string& line, const std::string& origin, size_t line_no);

// What a benchmark's samples say.
struct Summary {
  double median = 0;
  double min = 0, max = 0;
  // (max - min) / median: how far apart repeated runs came, the noise a difference must exceed.
  double spread = 0;
  size_t n = 0;
  // A distribution-free confidence interval of the median: [x(k), x(n+1-k)] of the sorted samples,
  // with the largest k whose coverage, 1 - 2 P(Binomial(n, 1/2) <= k - 1), is at least 95%. Under 6
  // samples no k reaches 95%: the interval is [min, max] and ci_level says what it covers (5
  // samples: 93.75%; 1 sample: 0).
  double ci_lo = 0, ci_hi = 0;
  double ci_level = 0;
};
Summary summarize(std::vector<double> samples);

}  // namespace gmp::calibration
