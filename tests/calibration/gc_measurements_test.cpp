// The GC validation's measurement file (sim/calibration/gc_measurements.h): points read from
// go test runs with interleaved gctrace output, summarised per point; errors at their line.
#include <catch2/catch.hpp>

#include <string>

#include <cmath>
#include <vector>

#include "sim/calibration/fit.h"
#include "sim/calibration/gc_measurements.h"

using namespace gmp;

namespace {
// Two rounds of one point and one round of another, as gc_measure.py writes them (raw 2>&1
// output; lines printed by Go 1.23.5).
constexpr char kFile[] =
    "# gmp gc measurements: go1.23.5, rounds 2\n"
    "# point: BenchmarkTreeBuild procs=2 gogc=100 round=1\n"
    "goos: linux\n"
    "BenchmarkTreeBuild-2   \tgc 7 @0.260s 9%: 0.045+12+0.004 ms clock, 0.090+0/0.064/12+0.009 ms cpu, 8->8->8 MB, 15 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)\n"
    "gc 8 @0.291s 15%: 0.017+80+0.19 ms clock, 0.035+23/43/2.1+0.39 ms cpu, 13->16->10 MB, 16 MB goal, 0 MB stacks, 0 MB globals, 2 P\n"
    "     300\t   1000000 ns/op\n"
    "PASS\n"
    "# point: BenchmarkTreeBuild procs=2 gogc=100 round=2\n"
    "BenchmarkTreeBuild-2   \tgc 7 @0.260s 9%: 0.045+12+0.004 ms clock, 0.090+0/0.064/12+0.009 ms cpu, 8->8->8 MB, 15 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)\n"
    "gc 8 @0.291s 15%: 0.017+80+0.19 ms clock, 0.035+23/43/2.1+0.39 ms cpu, 13->16->10 MB, 16 MB goal, 0 MB stacks, 0 MB globals, 2 P\n"
    "gc 9 @0.406s 19%: 2.1+64+0.003 ms clock, 4.2+11/47/12+0.007 ms cpu, 18->21->11 MB, 21 MB goal, 0 MB stacks, 0 MB globals, 2 P\n"
    "     300\t   1200000 ns/op\n"
    "# summary: not read\n"
    "# point: BenchmarkSpawnStorm procs=1 gogc=off round=1\n"
    "BenchmarkSpawnStorm \t  100000\t      3312 ns/op\n";
}  // namespace

TEST_CASE("gc measurements: points, rounds and their GC figures") {
  const calibration::GCMeasurements m = calibration::read_gc_measurements(kFile, "m.txt");
  REQUIRE(m.order.size() == 2);
  CHECK(m.order[0].bench == "BenchmarkTreeBuild");
  CHECK(m.order[0].procs == 2);
  CHECK(m.order[0].gogc == 100);
  CHECK(m.order[1].gogc == -1);
  const calibration::GCPointSamples& t = m.points.at(m.order[0]);
  REQUIRE(t.ns_per_op.size() == 2);
  CHECK(t.ns_per_op[1] == Approx(1200000));
  CHECK(t.cycles_per_op[0] == Approx(1.0 / 300));
  CHECK(t.cycles_per_op[1] == Approx(2.0 / 300));
  CHECK(t.gc_cpu_share[0] == Approx((0.035 + 23 + 43 + 0.39) / (300.0 * 2)));
  CHECK(t.goal_mb[1] == Approx(18.5));
  const calibration::Summary s = calibration::summarize(t.cycles_per_op);
  CHECK(s.median == Approx(1.5 / 300));
  const calibration::GCPointSamples& sp = m.points.at(m.order[1]);
  CHECK(sp.cycles_per_op.at(0) == 0);
}

TEST_CASE("gc measurements: a bad point line or a run without its result is an error at its line") {
  CHECK_THROWS_WITH(calibration::read_gc_measurements("# point: BenchmarkX procs=0 gogc=100 round=1\n", "m.txt"),
                    Catch::StartsWith("m.txt:1: procs '0' is not 1 to 4096"));
  CHECK_THROWS_WITH(calibration::read_gc_measurements("# point: BenchmarkX procs=4097 gogc=100 round=1\n", "m.txt"),
                    Catch::StartsWith("m.txt:1: procs '4097' is not 1 to 4096"));
  CHECK_THROWS_WITH(calibration::read_gc_measurements("\n# point: BenchmarkX procs=2 gogc=abc round=1\n", "m.txt"),
                    Catch::Contains("m.txt:2: gogc 'abc'"));
  CHECK_THROWS_WITH(calibration::read_gc_measurements("# point: BenchmarkX procs=2\n", "m.txt"),
                    Catch::Contains("expected \"# point:"));
  // The run printed the benchmark at another GOMAXPROCS.
  CHECK_THROWS_WITH(calibration::read_gc_measurements(
                        "# point: BenchmarkTreeBuild procs=4 gogc=100 round=1\nBenchmarkTreeBuild-2 \t 10\t 5 ns/op\n",
                        "m.txt"),
                    Catch::Contains("m.txt:1: the run has no result of BenchmarkTreeBuild at 4 Ps"));
}

TEST_CASE("gc measurements: a simulated run's cycles read as gctrace lines") {
  engine::SimResult r;
  r.procs = 2;
  r.ops = 100;
  r.ns_per_op = 1e6;  // 100 ms
  rt::GCCycleRecord forced;
  forced.n = 1;
  forced.forced = true;
  forced.backgroundCpu = 50'000'000;
  rt::GCCycleRecord c;
  c.n = 2;
  c.assistCpu = 4'000'000;
  c.backgroundCpu = 6'000'000;
  c.idleCpu = 30'000'000;
  c.sweepTermWall = 100'000;
  c.markTermWall = 200'000;
  c.heapGoal = 16ULL << 20;
  c.procs = 2;
  r.gc.cycles = {forced, c};
  const calibration::BenchRun b = calibration::bench_run_of(r, "BenchmarkTreeBuild");
  CHECK(b.key.procs == 2);
  REQUIRE(b.cycles.size() == 2);
  CHECK(b.cycles[1].goal_mb == 16);
  const calibration::GCFigures f = calibration::gc_figures(b);
  CHECK(f.cycles == 1);
  CHECK(f.cycles_per_op == Approx(0.01));
  CHECK(f.gc_cpu_share == Approx(10.0 / (100.0 * 2)));  // idle left out, the forced cycle too
  CHECK(f.pause_ms_mean == Approx(0.3));
}

TEST_CASE("gc measurements: the fit's GC error weighs cycles and GC CPU of the points with a target") {
  std::vector<calibration::Point> pts(3);
  pts[0].gc_cycles_per_op = 0.01;  // 1 cycle per 100 ops, 10% GC CPU
  pts[0].gc_cpu_share = 0.10;
  pts[1].gc_cycles_per_op = 0;  // no target: its simulation does not count
  pts[2].gc_cycles_per_op = 0.002;
  pts[2].gc_cpu_share = 0.04;
  std::vector<calibration::SimPoint> sim(3);
  sim[0].gc_cycles_per_op = 0.02;  // twice the cycles, the same CPU
  sim[0].gc_cpu_share = 0.10;
  sim[1].gc_cycles_per_op = 5;
  sim[1].gc_cpu_share = 0.9;
  sim[2].gc_cycles_per_op = 0;  // no cycle against a measured one: ln(10) for the cycles
  sim[2].gc_cpu_share = 0.09;
  const double want = ((std::log(2.0) + 0) / 2 + (std::log(10.0) + std::log(0.10 / 0.05)) / 2) / 2;
  CHECK(calibration::gc_fit_error(pts, sim) == Approx(want));
  CHECK(calibration::gc_fit_error({pts[1]}, {sim[1]}) == 0);
}
