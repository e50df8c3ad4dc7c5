// Parses go test -bench output: see bench_output.h.
#include "sim/calibration/bench_output.h"

#include "sim/calibration/gctrace.h"
#include "sim/scenario/limits.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <tuple>

namespace gmp::calibration {

namespace {

// The fields of a line split at tabs and spaces, empty ones dropped.
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : line) {
    if (c == '\t' || c == ' ' || c == '\r') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

}  // namespace

std::optional<BenchLine> parse_bench_line(const std::string& line, const std::string& origin, size_t line_no) {
  if (line.rfind("Benchmark", 0) != 0 || line.find('\t') == std::string::npos) return std::nullopt;
  const auto fail = [&](const std::string& what) {
    throw BenchOutputError(origin + ":" + std::to_string(line_no) + ": " + what);
  };
  const std::vector<std::string> f = fields(line);
  // name, iterations, value, "ns/op", then optional pairs of value and unit.
  size_t unit = 0;
  for (size_t i = 3; i < f.size(); ++i) {
    if (f[i] == "ns/op") unit = i;
  }
  if (f.size() < 4 || unit == 0) fail("expected \"BenchmarkName[-N] <iterations> <value> ns/op\"");
  std::string name = f[0];
  int32_t procs = 1;
  if (const size_t dash = name.rfind('-'); dash != std::string::npos && dash + 1 < name.size()) {
    const std::string suffix = name.substr(dash + 1);
    if (suffix.find_first_not_of("0123456789") == std::string::npos) {
      if (suffix.size() > 4 || std::stol(suffix) < 1 || std::stol(suffix) > scenario::kMaxProcs) {
        fail("GOMAXPROCS suffix -" + suffix + " is not 1 to " + std::to_string(scenario::kMaxProcs));
      }
      procs = static_cast<int32_t>(std::stol(suffix));
      name.resize(dash);
    }
  }
  if (name.size() <= 9 || name.size() > 200) fail("a benchmark name of 10 to 200 characters");
  const std::string& iters = f[1];
  // A benchmark that called b.Skip: go test prints "0  NaN ns/op" for it. Nothing was measured.
  if (iters == "0" && f[unit - 1] == "NaN") return std::nullopt;
  if (iters.empty() || iters.size() > 18 || iters.find_first_not_of("0123456789") != std::string::npos ||
      std::stoll(iters) < 1) {
    fail("iteration count '" + iters + "' is not a positive integer");
  }
  const std::string& v = f[unit - 1];
  char* end = nullptr;
  errno = 0;
  const double ns = std::strtod(v.c_str(), &end);
  if (end != v.c_str() + v.size() || errno != 0 || !std::isfinite(ns) || ns < 0 || ns > 1e12) {
    fail("ns/op '" + v + "' is not a number from 0 to 1e12");
  }
  return BenchLine{BenchKey{name, procs}, std::stoll(iters), ns};
}

BenchSamples parse_bench_output(const std::string& text, const std::string& origin) {
  BenchSamples out;
  for (const BenchRun& r : split_go_output(text, origin).runs) out[r.key].push_back(r.ns_per_op);
  return out;
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.median = n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  s.min = samples.front();
  s.max = samples.back();
  s.spread = s.median > 0 ? (s.max - s.min) / s.median : 0;
  // P(Binomial(n, 1/2) <= m), summed in logs so that large n does not underflow 2^-n.
  const auto cdf = [n](size_t m) {
    double sum = 0;
    for (size_t i = 0; i <= m; ++i) {
      sum += std::exp(std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                      std::lgamma(static_cast<double>(n - i) + 1) - static_cast<double>(n) * std::log(2.0));
    }
    return sum;
  };
  size_t k = 1;  // 1-based rank of the lower end
  s.ci_level = std::max(0.0, 1 - 2 * cdf(0));
  for (size_t j = 2; 2 * j <= n; ++j) {
    const double level = 1 - 2 * cdf(j - 1);
    if (level < 0.95) break;
    k = j;
    s.ci_level = level;
  }
  s.ci_lo = samples[k - 1];
  s.ci_hi = samples[n - k];
  return s;
}

}  // namespace gmp::calibration
