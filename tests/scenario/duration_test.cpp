// Duration strings: Go's time.ParseDuration syntax, held to whole non-negative nanoseconds.
#include "sim/scenario/duration.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>

using gmp::scenario::parse_duration;

TEST_CASE("durations with units become nanoseconds") {
  constexpr int64_t us = 1'000, ms = 1'000'000, s = 1'000'000'000;
  CHECK(parse_duration("0").ns == 0);
  CHECK(parse_duration("1500ns").ns == 1500);
  CHECK(parse_duration("1.5us").ns == 1500);
  CHECK(parse_duration("1.5\u00b5s").ns == 1500);  // micro sign, as Go accepts
  CHECK(parse_duration("1.5\u03bcs").ns == 1500);  // Greek mu
  CHECK(parse_duration("10ms").ns == 10 * ms);
  CHECK(parse_duration(".25s").ns == s / 4);
  CHECK(parse_duration("1h2m3s").ns == (3600 + 120 + 3) * s);
  CHECK(parse_duration("1ms500us").ns == ms + 500 * us);
  CHECK(parse_duration("0.000000001s").ns == 1);
  CHECK(parse_duration("1.5us").error.empty());
}

TEST_CASE("the largest duration int64 nanoseconds hold is accepted, one more is not") {
  const int64_t max = std::numeric_limits<int64_t>::max();
  CHECK(parse_duration(std::to_string(max) + "ns").ns == max);
  CHECK_FALSE(parse_duration(std::to_string(max) + "1ns").error.empty());
  CHECK_FALSE(parse_duration("2562048h").error.empty());  // 2^63 ns is about 2562047.8 h
}

TEST_CASE("bad duration strings say why") {
  auto error = [](const char* text) { return parse_duration(text).error; };
  CHECK_THAT(error("-1ms"), Catch::Contains("negative"));
  CHECK_THAT(error(""), Catch::Contains("empty"));
  CHECK_THAT(error("10"), Catch::Contains("missing unit"));
  CHECK_THAT(error("1.5x"), Catch::Contains("unknown unit \"x\""));
  CHECK_THAT(error("1.5ns"), Catch::Contains("whole number of nanoseconds"));
  CHECK_THAT(error("ms"), Catch::Contains("expected a number"));
  CHECK_THAT(error("1ms."), Catch::Contains("expected a number"));
  CHECK_THAT(error("1000000000000000000000000000000ns"), Catch::Contains("too many digits"));
  CHECK_THAT(error("1.5us"), Catch::Equals(""));
}
