// GODEBUG=gctrace=1 lines (sim/calibration/gctrace.h): parsing real Go 1.23 lines, errors at a
// column, go test output whose stderr (the runtime's gctrace) interleaves with stdout even inside
// a result line, and the GC figures of a run taken after its last forced cycle.
#include <catch2/catch.hpp>

#include <string>

#include "sim/calibration/bench_output.h"
#include "sim/calibration/gctrace.h"

using namespace gmp;
using calibration::GCTraceError;
using calibration::parse_gctrace_line;

// Lines printed by Go 1.23.5 (linux/amd64) running the held-out BenchmarkTreeBuild at -cpu 2 and
// the fit suite's BenchmarkAllocSmall with GOGC=off.
TEST_CASE("gctrace: a Go 1.23 line parses field by field") {
  const auto l = parse_gctrace_line(
      "gc 8 @0.291s 15%: 0.017+80+0.19 ms clock, 0.035+23/43/2.1+0.39 ms cpu, 13->16->10 MB, 16 MB goal, "
      "0 MB stacks, 0 MB globals, 2 P",
      "t");
  REQUIRE(l);
  CHECK(l->n == 8);
  CHECK(l->at_s == Approx(0.291));
  CHECK(l->percent == 15);
  CHECK(l->sweep_term_clock_ms == Approx(0.017));
  CHECK(l->mark_clock_ms == Approx(80));
  CHECK(l->mark_term_clock_ms == Approx(0.19));
  CHECK(l->sweep_term_cpu_ms == Approx(0.035));
  CHECK(l->assist_cpu_ms == Approx(23));
  CHECK(l->background_cpu_ms == Approx(43));
  CHECK(l->idle_cpu_ms == Approx(2.1));
  CHECK(l->mark_term_cpu_ms == Approx(0.39));
  CHECK(l->heap_start_mb == 13);
  CHECK(l->heap_end_mb == 16);
  CHECK(l->heap_live_mb == 10);
  CHECK(l->goal_mb == 16);
  CHECK(l->procs == 2);
  CHECK_FALSE(l->forced);
  CHECK(l->gc_cpu_ms() == Approx(0.035 + 23 + 43 + 0.39));  // idle left out
  CHECK(l->pause_ms() == Approx(0.017 + 0.19));

  const auto f = parse_gctrace_line(
      "gc 1 @0.000s 0%: 0.003+0.18+0.002 ms clock, 0.003+0/0.056/0.12+0.002 ms cpu, 0->0->0 MB, "
      "8532210231539 MB goal, 0 MB stacks, 0 MB globals, 1 P (forced)\n",
      "t");
  REQUIRE(f);
  CHECK(f->forced);
  CHECK(f->goal_mb == 8532210231539ULL);  // GOGC=off: no goal
  CHECK(f->mark_term_cpu_ms == Approx(0.002));

  // Older Go wrote "#MB globals".
  const auto old = parse_gctrace_line(
      "gc 3 @0.043s 8%: 0.014+74+0.044 ms clock, 0.028+1.2/15/0+0.088 ms cpu, 3->7->7 MB, 4 MB goal, "
      "0 MB stacks, 1MB globals, 2 P",
      "t");
  REQUIRE(old);
  CHECK(old->globals_mb == 1);
  CHECK(old->heap_end_mb == 7);
}

TEST_CASE("gctrace: other lines are not gctrace lines and a broken one is an error at its column") {
  CHECK_FALSE(parse_gctrace_line("PASS", "t"));
  CHECK_FALSE(parse_gctrace_line("gcfoo 1 @", "t"));
  CHECK_FALSE(parse_gctrace_line("gc x @0.1s", "t"));
  // A field missing, a bad number, a P count of 0, trailing text.
  CHECK_THROWS_WITH(parse_gctrace_line("gc 8 @0.291s 15%: 0.017+80 ms clock", "f.txt:3"),
                    Catch::Contains("f.txt:3: gctrace line, column 27: expected \"+\""));
  CHECK_THROWS_AS(parse_gctrace_line("gc 8 @0.291s 15%: 0.017+8.0.1+0.19 ms clock, 0.035+23/43/2.1+0.39 ms cpu, "
                                     "13->16->10 MB, 16 MB goal, 0 MB stacks, 0 MB globals, 2 P",
                                     "t"),
                  GCTraceError);
  CHECK_THROWS_WITH(parse_gctrace_line("gc 8 @0.291s 15%: 0.017+80+0.19 ms clock, 0.035+23/43/2.1+0.39 ms cpu, "
                                       "13->16->10 MB, 16 MB goal, 0 MB stacks, 0 MB globals, 0 P",
                                       "t"),
                    Catch::Contains("P count from 1 to 4096"));
  CHECK_THROWS_WITH(parse_gctrace_line("gc 8 @0.291s 15%: 0.017+80+0.19 ms clock, 0.035+23/43/2.1+0.39 ms cpu, "
                                       "13->16->10 MB, 16 MB goal, 0 MB stacks, 0 MB globals, 4097 P",
                                       "t"),
                    Catch::Contains("P count from 1 to 4096"));
  CHECK(parse_gctrace_line("gc 8 @0.291s 15%: 0.017+80+0.19 ms clock, 0.035+23/43/2.1+0.39 ms cpu, "
                           "13->16->10 MB, 16 MB goal, 0 MB stacks, 0 MB globals, 4096 P",
                           "t")
            ->procs == 4096);
  CHECK_THROWS_WITH(parse_gctrace_line("gc 8 @0.291s 15%: 0.017+80+0.19 ms clock, 0.035+23/43/2.1+0.39 ms cpu, "
                                       "13->16->10 MB, 16 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced) x",
                                       "t"),
                    Catch::Contains("the end of the line"));
  CHECK_THROWS_WITH(parse_gctrace_line("gc 8 @0.291s 150%: 0.017+80+0.19 ms clock", "t"),
                    Catch::Contains("percentage"));
  CHECK_THROWS_WITH(parse_gctrace_line("gc 8 @0.291s 15%: 0.017+80+0.19 ms clock, 0.035+23/43/2.1+0.39 ms cpu, "
                                       "13.5->16->10 MB, 16 MB goal, 0 MB stacks, 0 MB globals, 2 P",
                                       "t"),
                    Catch::Contains("whole number"));
}

TEST_CASE("gctrace: a formatted line reads back") {
  calibration::GCTraceLine l;
  l.n = 12;
  l.at_s = 1.5;
  l.percent = 7;
  l.sweep_term_clock_ms = 0.021;
  l.mark_clock_ms = 3.2;
  l.mark_term_clock_ms = 0.05;
  l.assist_cpu_ms = 1.5;
  l.background_cpu_ms = 6.25;
  l.heap_start_mb = 7;
  l.heap_end_mb = 9;
  l.heap_live_mb = 4;
  l.goal_mb = 8;
  l.procs = 4;
  l.forced = true;
  const auto back = parse_gctrace_line(calibration::format_gctrace_line(l), "t");
  REQUIRE(back);
  CHECK(back->n == 12);
  CHECK(back->mark_clock_ms == Approx(3.2));
  CHECK(back->background_cpu_ms == Approx(6.25));
  CHECK(back->goal_mb == 8);
  CHECK(back->procs == 4);
  CHECK(back->forced);
}

// go test's stdout and the runtime's stderr through one pipe (2>&1), as Go 1.23 printed them: the
// benchmark's name and tab come before it runs, the cycles during it, the figures after.
constexpr char kInterleaved[] =
    "gc 1 @0.000s 0%: 0.003+0.18+0.002 ms clock, 0.003+0/0.056/0.12+0.002 ms cpu, 0->0->0 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)\n"
    "goos: linux\n"
    "goarch: amd64\n"
    "pkg: gmpheldout\n"
    "cpu: AMD EPYC\n"
    "BenchmarkTreeBuild-2   \tgc 4 @0.128s 9%: 0.060+46+0.004 ms clock, 0.12+0/13/29+0.008 ms cpu, 8->8->8 MB, 15 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)\n"
    "gc 5 @0.192s 8%: 0.081+0.26+0.002 ms clock, 0.16+0/0.096/0.086+0.004 ms cpu, 8->8->0 MB, 16 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)\n"
    "gc 6 @0.214s 9%: 0.016+42+0.003 ms clock, 0.033+10/8.2/0+0.006 ms cpu, 3->7->7 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P\n"
    "gc 7 @0.260s 9%: 0.045+12+0.004 ms clock, 0.090+0/0.064/12+0.009 ms cpu, 8->8->8 MB, 15 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)\n"
    "gc 8 @0.291s 15%: 0.017+80+0.19 ms clock, 0.035+23/43/2.1+0.39 ms cpu, 13->16->10 MB, 16 MB goal, 0 MB stacks, 0 MB globals, 2 P\n"
    "gc 9 @0.406s 19%: 2.1+64+0.003 ms clock, 4.2+11/47/12+0.007 ms cpu, 18->21->11 MB, 21 MB goal, 0 MB stacks, 0 MB globals, 2 P\n"
    "     300\t   1062871 ns/op\n"
    "BenchmarkAllocSmall-2 \tgc 10 @0.513s 19%: 0.083+59+0.003 ms clock, 0.16+11/37/16+0.007 ms cpu, 19->23->11 MB, 23 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)\n"
    "    1000\t       100.2 ns/op\t      64 B/op\t       1 allocs/op\n"
    "PASS\n";

TEST_CASE("gctrace: go test output with stderr interleaved splits into results and their cycles") {
  const calibration::GoOutput o = calibration::split_go_output(kInterleaved, "run.txt");
  REQUIRE(o.runs.size() == 2);
  const calibration::BenchRun& tree = o.runs[0];
  CHECK(tree.key.name == "BenchmarkTreeBuild");
  CHECK(tree.key.procs == 2);
  CHECK(tree.iterations == 300);
  CHECK(tree.ns_per_op == Approx(1062871));
  REQUIRE(tree.cycles.size() == 7);  // gc 1 (before the header) to gc 9
  CHECK(tree.cycles.front().n == 1);
  CHECK(tree.cycles.back().n == 9);
  CHECK(o.runs[1].key.name == "BenchmarkAllocSmall");
  CHECK(o.runs[1].ns_per_op == Approx(100.2));
  REQUIRE(o.runs[1].cycles.size() == 1);
  CHECK(o.runs[1].cycles[0].n == 10);

  // The loop's cycles are those after the last forced one: gc 8 and gc 9.
  const calibration::GCFigures f = calibration::gc_figures(tree);
  CHECK(f.cycles == 2);
  CHECK(f.cycles_per_op == Approx(2.0 / 300));
  const double wall_ms = 1062871.0 * 300 / 1e6;
  CHECK(f.cycles_per_s == Approx(2 / (wall_ms / 1e3)));
  CHECK(f.gc_cpu_share == Approx((0.035 + 23 + 43 + 0.39 + 4.2 + 11 + 47 + 0.007) / (wall_ms * 2)));
  CHECK(f.pause_ms_max == Approx(2.1 + 0.003));
  CHECK(f.pause_ms_mean == Approx((0.017 + 0.19 + 2.1 + 0.003) / 2));
  CHECK(f.goal_mb_mean == Approx(18.5));
  // Only a forced cycle: nothing in the loop.
  CHECK(calibration::gc_figures(o.runs[1]).cycles == 0);

  // ns/op reads the same through parse_bench_output, which takes the gctrace lines out first.
  const calibration::BenchSamples s = calibration::parse_bench_output(kInterleaved, "run.txt");
  REQUIRE(s.size() == 2);
  CHECK(s.at(calibration::BenchKey{"BenchmarkTreeBuild", 2}).at(0) == Approx(1062871));

  // The clean text is go test output with the cycles as comments before their result; it reads
  // back to the same runs.
  CHECK(o.clean.find("BenchmarkTreeBuild-2   \t     300\t   1062871 ns/op\n") != std::string::npos);
  CHECK(o.clean.find("# gctrace: gc 9 @0.406s") < o.clean.find("BenchmarkTreeBuild-2"));
  CHECK(o.clean.find("\ngc ") == std::string::npos);
  const calibration::GoOutput again = calibration::split_go_output(o.clean, "saved.txt");
  REQUIRE(again.runs.size() == 2);
  CHECK(again.runs[0].cycles.size() == 7);
  CHECK(again.runs[1].cycles.size() == 1);
  CHECK(again.clean == o.clean);
}

TEST_CASE("gctrace: a broken gctrace line inside go test output is an error at its line") {
  const std::string text = std::string("pkg: x\nBenchmarkA-2 \tgc 3 @0.1s 5%: 1+2 ms clock\n   10\t 5 ns/op\n");
  CHECK_THROWS_WITH(calibration::split_go_output(text, "out.txt"), Catch::StartsWith("out.txt:2: gctrace line"));
}
