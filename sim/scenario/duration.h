// Duration strings of the scenario language: Go's time.ParseDuration syntax ("1.5us", "10ms",
// "1h30m"; units ns, us, µs, μs, ms, s, m, h; "0" needs no unit), held to whole, non-negative
// nanoseconds. Go rounds "1.5ns" down and accepts "-1s"; a scenario must not mean either, so both
// are errors here, as is a value beyond int64 nanoseconds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gmp::scenario {

struct ParsedDuration {
  int64_t ns = 0;
  std::string error;  // empty on success
};

ParsedDuration parse_duration(std::string_view text);

}  // namespace gmp::scenario
