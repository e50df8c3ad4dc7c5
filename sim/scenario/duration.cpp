// Parses Go duration strings exactly: each component is integer and fraction digits times its
// unit, summed in 128-bit arithmetic and checked against int64.
#include "sim/scenario/duration.h"

#include <array>
#include <limits>
#include <utility>

namespace gmp::scenario {

namespace {

using i128 = __int128;

constexpr int kMaxDigits = 24;  // 10^24 times the largest unit (3.6e12 ns) fits in i128
constexpr i128 kMaxNs = std::numeric_limits<int64_t>::max();

constexpr std::array<std::pair<std::string_view, int64_t>, 8> kUnits{{
    {"ns", 1},
    {"us", 1'000},
    {"\u00b5s", 1'000},  // micro sign
    {"\u03bcs", 1'000},  // Greek mu
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

ParsedDuration fail(std::string_view text, const std::string& why) {
  return {0, "bad duration \"" + std::string(text) + "\": " + why};
}

}  // namespace

ParsedDuration parse_duration(std::string_view text) {
  if (text.empty()) return fail(text, "empty");
  if (text[0] == '-') return fail(text, "durations must not be negative");
  if (text == "0") return {0, {}};
  i128 total = 0;
  size_t i = 0;
  while (i < text.size()) {
    i128 whole = 0, frac = 0, scale = 1;
    int digits = 0;
    for (; i < text.size() && is_digit(text[i]); i++) {
      if (++digits > kMaxDigits) return fail(text, "too many digits");
      whole = whole * 10 + (text[i] - '0');
    }
    if (i < text.size() && text[i] == '.') {
      for (i++; i < text.size() && is_digit(text[i]); i++) {
        if (++digits > kMaxDigits) return fail(text, "too many digits");
        frac = frac * 10 + (text[i] - '0');
        scale *= 10;
      }
    }
    if (digits == 0)
      return fail(text, "expected a number at \"" + std::string(text.substr(i)) + "\"");
    size_t unit_start = i;
    while (i < text.size() && !is_digit(text[i]) && text[i] != '.') i++;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    if (unit.empty()) return fail(text, "missing unit (ns, us, ms, s, m or h)");
    int64_t unit_ns = 0;
    for (const auto& [name, ns] : kUnits) {
      if (name == unit) unit_ns = ns;
    }
    if (unit_ns == 0) return fail(text, "unknown unit \"" + std::string(unit) + "\"");
    if (frac * unit_ns % scale != 0) return fail(text, "not a whole number of nanoseconds");
    if (whole > kMaxNs) return fail(text, "too large for int64 nanoseconds");
    total += whole * unit_ns + frac * unit_ns / scale;
    if (total > kMaxNs) return fail(text, "too large for int64 nanoseconds");
  }
  return {static_cast<int64_t>(total), {}};
}

}  // namespace gmp::scenario
