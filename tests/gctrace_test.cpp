// gmpsim run --gctrace's lines (sim/runtime/gctrace.h) are Go's GODEBUG=gctrace=1 lines: the
// expected strings below are lines Go 1.23 printed (a program building and dropping slices at
// GOMAXPROCS 2), and the records hold the values behind them.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/runtime/gctrace.h"

using namespace gmp::rt;

namespace {
constexpr uint64_t MiB = uint64_t{1} << 20;
}

TEST_CASE("gctrace: a cycle's line is the one Go prints for the same figures") {
  GCCycleRecord c;
  c.n = 9;
  c.start = 69'400'000;  // @0.069s: milliseconds, truncated, shown as seconds
  c.sweepTermWall = 16'000;
  c.markWall = 9'200'000;
  c.markTermWall = 5'000;
  c.sweepTermCpu = 32'000;
  c.assistCpu = 130'000;
  c.backgroundCpu = 600'000;
  c.idleCpu = 1'200'000;
  c.markTermCpu = 11'000;
  c.heapStart = 138 * MiB + 5;  // MB are 2^20 bytes, truncated
  c.heapEnd = 163 * MiB;
  c.heapLive = 42 * MiB + MiB - 1;
  c.heapGoal = 162 * MiB;
  c.procs = 2;
  CHECK(gctraceLine(c, 14) ==
        "gc 9 @0.069s 14%: 0.016+9.2+0.005 ms clock, 0.032+0.13/0.60/1.2+0.011 ms cpu, 138->163->42 MB, "
        "162 MB goal, 0 MB stacks, 0 MB globals, 2 P");
  c.n = 10;
  c.start = 80'000'000;
  c.forced = true;
  c.sweepTermWall = 1'300'000;
  c.markWall = 3'500'000;
  c.markTermWall = 3'000;
  c.sweepTermCpu = 2'700'000;
  c.assistCpu = 0;
  c.backgroundCpu = 740'000;
  c.idleCpu = 190'000;
  c.markTermCpu = 7'000;
  c.heapStart = 42 * MiB;
  c.heapEnd = 42 * MiB;
  c.heapLive = 20 * MiB;
  c.heapGoal = 85 * MiB;
  CHECK(gctraceLine(c, 14) ==
        "gc 10 @0.080s 14%: 1.3+3.5+0.003 ms clock, 2.7+0/0.74/0.19+0.007 ms cpu, 42->42->20 MB, 85 MB goal, "
        "0 MB stacks, 0 MB globals, 2 P (forced)");
}

TEST_CASE("gctrace: fmtNSAsMS and itoaDiv format as mgc.go's do") {
  CHECK(fmtNSAsMS(0) == "0");
  CHECK(fmtNSAsMS(999) == "0");        // under a microsecond
  CHECK(fmtNSAsMS(1'000) == "0.001");
  CHECK(fmtNSAsMS(99'999) == "0.099");  // two significant digits, at most three decimals
  CHECK(fmtNSAsMS(123'456) == "0.12");
  CHECK(fmtNSAsMS(9'999'999) == "9.9");
  CHECK(fmtNSAsMS(10'000'000) == "10");  // whole milliseconds from 10 ms
  CHECK(fmtNSAsMS(1'234'567'890) == "1234");
  CHECK(itoaDiv(5, 3) == "0.005");
  CHECK(itoaDiv(12345, 3) == "12.345");
  CHECK(itoaDiv(12, 0) == "12");
  CHECK(itoaDiv(7, 0) == "07");  // as Go's: the loop writes one digit, then the leading one
}

TEST_CASE("gctrace: each line's percentage is the GC's CPU so far, without idle marking, over GOMAXPROCS x time") {
  GCStats s;
  GCCycleRecord a;
  a.n = 1;
  a.start = 10'000'000;
  a.markWall = 10'000'000;     // ends at 20 ms: 40 ms of CPU at 2 Ps
  a.backgroundCpu = 10'000'000;  // 25% of it
  a.idleCpu = 100'000'000;       // free: not counted
  a.procs = 2;
  GCCycleRecord b = a;
  b.n = 2;
  b.start = 30'000'000;           // ends at 40 ms: 80 ms of CPU
  b.backgroundCpu = 2'000'000;   // 12 ms in all: 15%
  s.cycles = {a, b};
  const std::vector<std::string> lines = gctraceLines(s);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].rfind("gc 1 @0.010s 25%: ", 0) == 0);
  CHECK(lines[1].rfind("gc 2 @0.030s 15%: ", 0) == 0);
}
