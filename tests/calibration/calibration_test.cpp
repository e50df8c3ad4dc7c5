// gmpsim calibrate's parts: reading go test -bench output, summarising repeated runs, writing a
// profile back as text, the fit on a problem whose answer is known (with regularisation, physical
// ranges and cross-validation), the median's confidence interval and the quietness figures.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "sim/calibration/bench_output.h"
#include "sim/calibration/fit.h"
#include "sim/calibration/quiet.h"
#include "sim/cost/physical_bounds.h"
#include "sim/calibration/speed_curve.h"
#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"
#include "tests/pingpong_text.h"

using namespace gmp;
using calibration::BenchKey;

namespace {
// A second benchmark beside the ping-pong for the fit tests: 2,000 goroutines started and joined
// one at a time (newproc, goexit and a WaitGroup wake-up per op).
constexpr char kSpawn[] = R"(
waitgroup { name: "wg" }
func { name: "main"
  op { loop { name: "n" count: 2000 op { add { wg: "wg" n: 1 } } op { go { func: "w" } } op { wait { wg: "wg" } } } }
}
func { name: "w" op { done { wg: "wg" } } }
benchmark { name: "BenchmarkGo" loop: "n" }
)";
}  // namespace

TEST_CASE("calibrate: go test -bench output is read per benchmark and GOMAXPROCS") {
  const std::string out =
      "goos: linux\ngoarch: amd64\npkg: gmpcalib\ncpu: AMD EPYC 9R14\n"
      "BenchmarkPingPong\n"  // -v prints the name alone first
      "BenchmarkPingPong     \t 4251726\t       282.1 ns/op\n"
      "BenchmarkPingPong-2   \t 1000000\t      1049 ns/op\t      16 B/op\t       1 allocs/op\n"
      "BenchmarkPingPong     \t 4000000\t       290.5 ns/op\n"
      "BenchmarkGo-16        \t 100\t 1.5e+03 ns/op\n"
      "BenchmarkSkipped      \t       0\t               NaN ns/op\n"  // b.Skip
      "PASS\nok  \tgmpcalib\t12.3s\n";
  const calibration::BenchSamples s = calibration::parse_bench_output(out, "m.txt");
  REQUIRE(s.size() == 3);
  CHECK(s.at(BenchKey{"BenchmarkPingPong", 1}) == std::vector<double>{282.1, 290.5});
  CHECK(s.at(BenchKey{"BenchmarkPingPong", 2}) == std::vector<double>{1049});
  CHECK(s.at(BenchKey{"BenchmarkGo", 16}) == std::vector<double>{1500});
}

TEST_CASE("calibrate: a malformed benchmark line is an error at its line") {
  const auto err = [](const std::string& line) {
    try {
      calibration::parse_bench_output("goos: linux\n" + line + "\n", "m.txt");
    } catch (const calibration::BenchOutputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(err("BenchmarkX-2\t100\tabc ns/op") == "m.txt:2: ns/op 'abc' is not a number from 0 to 1e12");
  CHECK(err("BenchmarkX-2\t0\t12 ns/op") == "m.txt:2: iteration count '0' is not a positive integer");
  CHECK(err("BenchmarkX-2\t99999999999999999999\t12 ns/op").find("iteration count") != std::string::npos);
  CHECK(err("BenchmarkX-2\t100\t12 B/op") == "m.txt:2: expected \"BenchmarkName[-N] <iterations> <value> ns/op\"");
  CHECK(err("BenchmarkX-99999\t100\t12 ns/op") == "m.txt:2: GOMAXPROCS suffix -99999 is not 1 to 4096");
  CHECK(err("BenchmarkX-0\t100\t12 ns/op") == "m.txt:2: GOMAXPROCS suffix -0 is not 1 to 4096");
  CHECK(err("BenchmarkX-4097\t100\t12 ns/op") == "m.txt:2: GOMAXPROCS suffix -4097 is not 1 to 4096");
  CHECK(err("BenchmarkXYZ-4096\t100\t12 ns/op") == "no error");
  CHECK(err("BenchmarkX\t100\t1e13 ns/op") == "m.txt:2: ns/op '1e13' is not a number from 0 to 1e12");
  CHECK(err("BenchmarkX\t100\tnan ns/op") == "m.txt:2: ns/op 'nan' is not a number from 0 to 1e12");
}

TEST_CASE("calibrate: repeated runs are summarised by their median and spread") {
  const calibration::Summary odd = calibration::summarize({300, 100, 200});
  CHECK(odd.median == 200);
  CHECK(odd.spread == Approx(1.0));  // (300 - 100) / 200
  const calibration::Summary even = calibration::summarize({100, 110, 130, 120});
  CHECK(even.median == 115);
  CHECK(even.min == 100);
  CHECK(even.max == 130);
  CHECK(calibration::summarize({}).n == 0);
}

TEST_CASE("calibrate: a profile written as text reads back the same") {
  for (const std::string& name : cost::builtin_profile_names()) {
    INFO(name);
    const cost::Profile p = *cost::builtin_profile(name);
    const cost::Profile q = cost::parse_profile(cost::profile_text(p, "a comment\n\nover lines"), "again");
    CHECK(q.description == p.description);
    CHECK(q.machine.name == p.machine.name);
    CHECK(q.machine.cores() == p.machine.cores());
    CHECK(q.machine.os_time_slice.value == p.machine.os_time_slice.value);
    CHECK(q.machine.speed_ns_per_iteration.value == p.machine.speed_ns_per_iteration.value);
    for (size_t i = 0; i < cost::kNumParams; ++i) {
      CHECK(q.ns[i] == p.ns[i]);
      CHECK(q.params[i].source == p.params[i].source);
      CHECK(q.params[i].unit == p.params[i].unit);
    }
  }
}

// Measurements made by the simulator itself under a profile with two costs changed: the fit,
// started from the default profile and moving those two, must find them again.
TEST_CASE("calibrate: the fit recovers costs that produced the measurements") {
  const scenario::Scenario pingpong = scenario::parse_scenario(kPingPong, "pingpong");
  const scenario::Scenario spawn = scenario::parse_scenario(kSpawn, "spawn");
  cost::Profile truth = cost::default_profile();
  const calibration::FitParam chan = calibration::fit_param_by_name("chan_op");
  const calibration::FitParam newproc = calibration::fit_param_by_name("newproc");
  calibration::set(truth, chan, 1.6 * calibration::get(truth, chan));
  calibration::set(truth, newproc, 0.5 * calibration::get(truth, newproc));
  std::vector<calibration::Point> pts = {{"BenchmarkPingPong", 1, 0, 0, &pingpong},
                                         {"BenchmarkGo", 1, 0, 0, &spawn}};
  const std::vector<double> measured = calibration::simulate_points(pts, truth, 2);
  for (size_t i = 0; i < pts.size(); ++i) pts[i].measured = measured[i];
  calibration::FitOptions opt;
  opt.params = {chan, newproc};
  opt.jobs = 2;
  const calibration::FitResult r = calibration::fit_profile(pts, cost::default_profile(), opt);
  CHECK(r.error_after < r.error_before / 100);
  CHECK(calibration::get(r.profile, chan) == Approx(calibration::get(truth, chan)).epsilon(0.05));
  CHECK(calibration::get(r.profile, newproc) == Approx(calibration::get(truth, newproc)).epsilon(0.05));
  // Deterministic: the same problem gives the same profile.
  const calibration::FitResult again = calibration::fit_profile(pts, cost::default_profile(), opt);
  CHECK(calibration::get(again.profile, chan) == calibration::get(r.profile, chan));
  CHECK(again.evaluations == r.evaluations);
}

// calibrate writes comment lines into its measurement files (the command, the machine's
// quietness); the reader skips them, even one that names a benchmark after a tab.
TEST_CASE("calibrate: comment lines of a measurement file are skipped") {
  const std::string out =
      "# gmpsim calibrate: go test -c of suite, run with -test.cpu 1,2 interleaved\n"
      "# quiet: load average 0.12 before measuring the fit suite\n"
      "goos: linux\n"
      "BenchmarkPingPong     \t 4251726\t       282.1 ns/op\n"
      "PASS\n"
      "# quiet: repetition 1 of 2, -cpu 1: other processes 0.010 cores, steal 0.0%, over 1.20 s\n"
      "#\tBenchmarkPingPong\t1\tabc ns/op\n"
      "goos: linux\n"
      "BenchmarkPingPong     \t 4000000\t       290.5 ns/op\n";
  const calibration::BenchSamples s = calibration::parse_bench_output(out, "m.txt");
  REQUIRE(s.size() == 1);
  CHECK(s.at(BenchKey{"BenchmarkPingPong", 1}) == std::vector<double>{282.1, 290.5});
}

// The median's interval from order statistics: 10 runs give [x(2), x(9)], which covers it with
// probability 97.9% (x(3)-x(8) would cover 89.1%); 5 runs [min, max] at 93.75%; one run a point
// that covers nothing; 100 runs [x(40), x(61)] at 96.5% (x(41)-x(60): 94.3%).
TEST_CASE("calibrate: a median's confidence interval comes from order statistics") {
  const calibration::Summary ten = calibration::summarize({10, 1, 9, 2, 8, 3, 7, 4, 6, 5});
  CHECK(ten.ci_lo == 2);
  CHECK(ten.ci_hi == 9);
  CHECK(ten.ci_level == Approx(1 - 2 * 11.0 / 1024));  // 1 - 2 P(Bin(10, 1/2) <= 1)
  const calibration::Summary five = calibration::summarize({5, 1, 4, 2, 3});
  CHECK(five.ci_lo == 1);
  CHECK(five.ci_hi == 5);
  CHECK(five.ci_level == Approx(0.9375));
  const calibration::Summary one = calibration::summarize({7});
  CHECK(one.ci_lo == 7);
  CHECK(one.ci_hi == 7);
  CHECK(one.ci_level == 0);
  std::vector<double> many;
  for (int i = 1; i <= 100; ++i) many.push_back(i);
  const calibration::Summary hundred = calibration::summarize(many);
  CHECK(hundred.ci_lo == 40);
  CHECK(hundred.ci_hi == 61);
  CHECK(hundred.ci_level == Approx(0.9648).epsilon(1e-3));
}

// /proc/stat and /proc/loadavg as text: what the quietness figures are made of. Between the two
// readings 2 CPUs ran 200 ticks each (1 s at 100 ticks/s): 150 busy ticks, of which the run and
// calibrate took 1.2 s, leave 0.3 s of others over 1 s: 0.3 cores; 6 steal ticks of 400: 1.5%.
TEST_CASE("calibrate: quietness from /proc/stat readings and the run's own CPU time") {
  const auto stat = [](int user, int sys, int idle, int steal) {
    return "cpu  " + std::to_string(user) + " 0 " + std::to_string(sys) + " " + std::to_string(idle) + " 0 0 0 " +
           std::to_string(steal) + " 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\ncpu1 1 2 3 4 5 6 7 8 0 0\nintr 12345\n";
  };
  const auto before = calibration::parse_proc_stat(stat(1000, 500, 8000, 10));
  const auto after = calibration::parse_proc_stat(stat(1120, 530, 8244, 16));
  REQUIRE(before);
  REQUIRE(after);
  CHECK(before->cpus == 2);
  CHECK(before->busy == 1500);
  CHECK(before->total == 9510);
  const calibration::Quietness q = calibration::quietness(*before, *after, 1.2, 100);
  REQUIRE(q.known);
  CHECK(q.wall_s == Approx(2.0));
  CHECK(q.others_cores == Approx(0.15));  // (1.5 s busy - 1.2 s own) over 2 s
  CHECK(q.steal == Approx(6.0 / 400));
  CHECK_FALSE(q.quiet());  // 0.15 cores > 0.10
  const calibration::Quietness calm = calibration::quietness(*before, *after, 1.45, 100);
  CHECK(calm.others_cores == Approx(0.025));
  CHECK(calm.quiet());
  // A reading that did not advance, or by less than half a second, says nothing.
  CHECK_FALSE(calibration::quietness(*before, *before, 0, 100).known);
  CHECK_FALSE(calibration::quietness(*before, *after, 1.2, 1000).known);  // 0.2 s at 1000 ticks/s
  CHECK_FALSE(calibration::parse_proc_stat("intr 1 2 3\n"));
  CHECK_FALSE(calibration::parse_proc_stat("cpu  1 x 3 4\n"));
  CHECK(calibration::parse_loadavg("0.42 0.30 0.25 1/234 5678\n") == 0.42);
  CHECK_FALSE(calibration::parse_loadavg("high\n"));
  CHECK_FALSE(calibration::parse_loadavg(""));
}

// Every cost has a physical range, and the shipped profiles lie inside them: the fit can start
// from any of them without leaving its ranges at once.
TEST_CASE("calibrate: every profile value has a physical range that the shipped profiles respect") {
  for (size_t i = 0; i < cost::kNumParams; ++i) {
    const auto name = cost::param_name(static_cast<cost::Param>(i));
    INFO(name);
    const auto b = cost::physical_bound(name);
    REQUIRE(b);
    CHECK(b->lo <= b->hi);
    CHECK(!b->reason.empty());
  }
  REQUIRE(cost::physical_bound("speed_ns_per_iteration"));
  CHECK_FALSE(cost::physical_bound("no_such_cost"));
  for (const std::string& name : cost::builtin_profile_names()) {
    const cost::Profile p = *cost::builtin_profile(name);
    for (const cost::PhysicalBound& b : cost::physical_bounds()) {
      INFO(name << " " << b.name);
      const calibration::FitParam f = calibration::fit_param_by_name(std::string(b.name));
      if (f.gc >= 0 && !p.gc.has) continue;  // no gc section: nothing to check
      CHECK(calibration::get(p, f) >= b.lo);
      CHECK(calibration::get(p, f) <= b.hi);
    }
  }
}

namespace {

// The recovery problem above: ping-pong (chan_op) and goroutine creation (newproc), "measured"
// by the simulator under `truth`.
std::vector<calibration::Point> measured_under(const cost::Profile& truth) {
  static const scenario::Scenario pingpong = scenario::parse_scenario(kPingPong, "pingpong");
  static const scenario::Scenario spawn = scenario::parse_scenario(kSpawn, "spawn");
  std::vector<calibration::Point> pts = {{"BenchmarkPingPong", 1, 0, 0, &pingpong},
                                         {"BenchmarkPingPong", 2, 0, 0, &pingpong},
                                         {"BenchmarkGo", 1, 0, 0, &spawn}};
  const std::vector<double> m = calibration::simulate_points(pts, truth, 2);
  for (size_t i = 0; i < pts.size(); ++i) pts[i].measured = m[i];
  return pts;
}

}  // namespace

// The penalty pulls toward the anchor: with a large lambda the fit leaves chan_op where it was
// although the points want 1.6 times it; with none it goes there. A zero anchor has no term.
TEST_CASE("calibrate: regularisation holds a parameter near its starting value") {
  const calibration::FitParam chan = calibration::fit_param_by_name("chan_op");
  cost::Profile truth = cost::default_profile();
  const double start = calibration::get(truth, chan);
  calibration::set(truth, chan, 1.6 * start);
  const std::vector<calibration::Point> pts = measured_under(truth);
  calibration::FitOptions opt;
  opt.params = {chan};
  opt.jobs = 2;
  opt.max_evaluations = 40;
  const calibration::FitResult free = calibration::fit_profile(pts, cost::default_profile(), opt);
  CHECK(calibration::get(free.profile, chan) == Approx(1.6 * start).epsilon(0.05));
  opt.regularize = 100;
  const calibration::FitResult held = calibration::fit_profile(pts, cost::default_profile(), opt);
  CHECK(calibration::get(held.profile, chan) == start);
  CHECK(held.error_after > free.error_after);
  // The term itself: (ln 2)^2 over one parameter; none for a zero anchor.
  cost::Profile doubled = cost::default_profile();
  calibration::set(doubled, chan, 2 * start);
  CHECK(calibration::regularization(doubled, cost::default_profile(), {chan}) == Approx(std::log(2) * std::log(2)));
  const calibration::FitParam inplace = calibration::fit_param_by_name("os_wake_ipi");
  REQUIRE(calibration::get(cost::default_profile(), inplace) == 0);
  calibration::set(doubled, inplace, 5000);
  CHECK(calibration::regularization(doubled, cost::default_profile(), {inplace}) == 0);
}

// Measurements that want chan_op at 5 us, outside its physical range (2-1000 ns): the fit stops at
// 1000 ns and says so.
TEST_CASE("calibrate: the fit keeps to the physical ranges and reports a parameter at a bound") {
  const calibration::FitParam chan = calibration::fit_param_by_name("chan_op");
  cost::Profile truth = cost::default_profile();
  calibration::set(truth, chan, 5000);
  calibration::FitOptions opt;
  opt.params = {chan};
  opt.jobs = 2;
  opt.max_evaluations = 30;
  const calibration::FitResult r = calibration::fit_profile(measured_under(truth), cost::default_profile(), opt);
  CHECK(calibration::get(r.profile, chan) == 1000);
  REQUIRE(r.at_bound.size() == 1);
  CHECK(r.at_bound[0] == "chan_op at its upper bound 1000");
  CHECK(calibration::fit_range(chan).lo == 2);
}

// Leave-one-benchmark-out: one prediction per point, one progress line per benchmark, and, for
// measurements the model can match, predictions close to them; nothing with one benchmark.
TEST_CASE("calibrate: cross-validation predicts each benchmark from a fit without it") {
  const calibration::FitParam chan = calibration::fit_param_by_name("chan_op");
  const calibration::FitParam newproc = calibration::fit_param_by_name("newproc");
  cost::Profile truth = cost::default_profile();
  calibration::set(truth, chan, 1.6 * calibration::get(truth, chan));
  calibration::set(truth, newproc, 0.5 * calibration::get(truth, newproc));
  const std::vector<calibration::Point> pts = measured_under(truth);
  calibration::FitOptions opt;
  opt.params = {chan, newproc};
  opt.jobs = 2;
  const calibration::FitResult full = calibration::fit_profile(pts, cost::default_profile(), opt);
  opt.first_factor = 1.25;
  opt.max_evaluations = 10;
  std::vector<std::string> lines;
  const std::vector<double> cv =
      calibration::cross_validate(pts, full.profile, opt, [&](const std::string& l) { lines.push_back(l); });
  REQUIRE(cv.size() == pts.size());
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].find("[1/2] without BenchmarkPingPong") != std::string::npos);
  CHECK(lines[1].find("[2/2] without BenchmarkGo") != std::string::npos);
  for (size_t i = 0; i < pts.size(); ++i) CHECK(cv[i] == Approx(pts[i].measured).epsilon(0.05));
  const std::vector<calibration::Point> one(pts.begin(), pts.begin() + 2);
  CHECK(calibration::cross_validate(one, full.profile, opt, nullptr).empty());
}
// The speed curve from BenchmarkCPU at several GOMAXPROCS: each core's efficiency t1 / (n tn),
// over what the model loses by itself; which points set which busy count (speed_curve.h).
TEST_CASE("calibrate: the speed curve is derived from BenchmarkCPU's points", "[speed]") {
  cost::CoreGroup group{8, 1.0, "performance", "s", 4, {{3, 0.95, "kept"}}};
  SECTION("t1 / (n tn) per core, over the simulated efficiency") {
    const std::vector<calibration::CpuPoint> pts{{1, 1000, 1000}, {2, 520, 510}, {4, 280, 250}};
    const auto curve = calibration::busy_speed_from_points(pts, group, "m.txt");
    REQUIRE(curve.size() == 4);
    CHECK(curve[0].busy == 1);
    CHECK(curve[0].factor == 1.0);
    CHECK(curve[1].busy == 2);
    CHECK(curve[1].factor == Approx((1000.0 / (2 * 520)) / (1000.0 / (2 * 510))));
    CHECK(curve[2].busy == 3);  // no point measures 3 busy cores: the group's entry stays
    CHECK(curve[2].factor == 0.95);
    CHECK(curve[2].source == "kept");
    CHECK(curve[3].busy == 4);
    CHECK(curve[3].factor == Approx(1000.0 / (4 * 280)));  // simulated at 4 Ps: perfect scaling
    CHECK_THAT(curve[1].source, Catch::Matchers::StartsWith("measured: BenchmarkCPU at -cpu 1 and -cpu 2, 1000 and 520"));
    CHECK_THAT(curve[1].source, Catch::Matchers::EndsWith("(m.txt)"));
  }
  SECTION("full clusters stand for busy = cluster size only without a point there") {
    const std::vector<calibration::CpuPoint> with4{{1, 1000, 0}, {4, 270, 0}, {8, 150, 0}};
    CHECK(calibration::busy_speed_from_points(with4, group, "m").back().factor == Approx(1000.0 / (4 * 270)));
    const std::vector<calibration::CpuPoint> only8{{1, 1000, 0}, {8, 150, 0}};
    const auto curve = calibration::busy_speed_from_points(only8, group, "m");
    CHECK(curve.back().busy == 4);
    CHECK(curve.back().factor == Approx(1000.0 / (8 * 150)));
    CHECK_THAT(curve.back().source, Catch::Matchers::Contains("every busy cluster full"));
  }
  SECTION("part-full clusters, slower groups, and noise") {
    // 6 Ps: one cluster full, one half; 10 Ps: beyond the group. Neither says anything alone.
    CHECK(calibration::busy_speed_from_points({{1, 1000, 0}, {6, 170, 0}, {10, 100, 0}}, group, "m").empty());
    CHECK(calibration::busy_speed_from_points({{2, 500, 0}}, group, "m").empty());  // no 1-P point
    const auto fast = calibration::busy_speed_from_points({{1, 1000, 0}, {2, 480, 0}}, group, "m");
    CHECK(fast[1].factor == 1.0);  // a speed-up above n is noise: clamped
  }
}

namespace {
// An allocating benchmark for the gc fit tests: a live heap of 2,048 objects of 1,152 bytes and one
// more such object per op, dropped: cycles that mark the live heap (mark_ns_per_byte) and
// allocations (alloc_ns_per_object).
constexpr char kAllocLive[] = R"(
func { name: "main"
  op { alloc { bytes: 1152 count: 2048 retain: true } }
  op { gc {} }
  op { loop { name: "n" count: 20000 op { alloc { bytes: 1152 count: 1 retain: false } } } }
}
benchmark { name: "BenchmarkAllocLive" loop: "n" }
)";
// Nothing live: the allocation's own cost dominates (alloc_ns_per_object).
constexpr char kAllocSmall[] = R"(
func { name: "main"
  op { gc {} }
  op { loop { name: "n" count: 100000 op { alloc { bytes: 64 count: 1 retain: false } } } }
}
benchmark { name: "BenchmarkAllocSmall" loop: "n" }
)";
}  // namespace

// The gc section's fields are fit parameters: by name, with the loader's range and the physical one,
// read and written in the profile's gc section (and nowhere else).
TEST_CASE("calibrate: the gc section's costs are fit parameters") {
  const calibration::FitParam mark = calibration::fit_param_by_name("mark_ns_per_byte");
  CHECK(mark.gc >= 0);
  CHECK(mark.name() == "mark_ns_per_byte");
  cost::Profile p = cost::default_profile();
  REQUIRE(p.gc.has);
  CHECK(calibration::get(p, mark) == p.gc.mark_ns_per_byte.value);
  const cost::Profile before = p;
  calibration::set(p, mark, 0.25);
  CHECK(p.gc.mark_ns_per_byte.value == 0.25);
  CHECK(p.ns == before.ns);  // no cost moved with it
  calibration::set(p, mark, 1e6);
  CHECK(p.gc.mark_ns_per_byte.value == 100);  // the loader's range
  CHECK(calibration::fit_range(mark).lo == cost::physical_bound("mark_ns_per_byte")->lo);
  CHECK(calibration::fit_range(mark).hi == cost::physical_bound("mark_ns_per_byte")->hi);
  const calibration::FitParam pause = calibration::fit_param_by_name("sweep_termination_ns");
  calibration::set(p, pause, 4000);
  CHECK(p.gc.sweep_termination_ns.value == 4000);
  CHECK(p.gc.sweep_termination_ns.unit == "ns");
  for (const std::string& n : calibration::gc_fit_param_names()) {
    INFO(n);
    bool in_default = false;
    for (const calibration::FitParam& f : calibration::default_fit_params()) in_default |= f.name() == n;
    CHECK(in_default);
  }
}

// Measurements made by the simulator under a profile whose marking and allocation costs are
// changed (mark_ns_per_byte 0.3 times, alloc_ns_per_object 2 times the default's), with their GC
// targets, on a live heap and on none: the fit from the default profile finds both again.
TEST_CASE("calibrate: the fit moves gc costs toward the measurements and GC targets") {
  const scenario::Scenario alloc = scenario::parse_scenario(kAllocLive, "alloclive");
  const calibration::FitParam mark = calibration::fit_param_by_name("mark_ns_per_byte");
  const calibration::FitParam obj = calibration::fit_param_by_name("alloc_ns_per_object");
  cost::Profile truth = cost::default_profile();
  calibration::set(truth, mark, 0.3 * calibration::get(truth, mark));
  calibration::set(truth, obj, 2 * calibration::get(truth, obj));
  const scenario::Scenario small = scenario::parse_scenario(kAllocSmall, "allocsmall");
  std::vector<calibration::Point> pts = {{"BenchmarkAllocLive", 1, 0, 0, &alloc},
                                         {"BenchmarkAllocLive", 2, 0, 0, &alloc},
                                         {"BenchmarkAllocSmall", 1, 0, 0, &small}};
  const std::vector<calibration::SimPoint> m = calibration::simulate_points_gc(pts, truth, 2);
  for (size_t i = 0; i < pts.size(); ++i) {
    INFO(pts[i].bench << " " << pts[i].procs);
    REQUIRE(m[i].gc_cycles_per_op > 0);
    pts[i].measured = m[i].ns_per_op;
    pts[i].gc_cycles_per_op = m[i].gc_cycles_per_op;
    pts[i].gc_cpu_share = m[i].gc_cpu_share;
  }
  calibration::FitOptions opt;
  opt.params = {mark, obj};
  opt.jobs = 2;
  opt.gc_weight = 0.5;
  opt.max_evaluations = 80;
  const calibration::FitResult r = calibration::fit_profile(pts, cost::default_profile(), opt);
  INFO("error " << r.error_before << " -> " << r.error_after << ", gc error " << r.gc_error_before << " -> "
                << r.gc_error_after << " in " << r.evaluations << " runs");
  CHECK(r.error_after < r.error_before / 10);
  CHECK(r.gc_error_after < r.gc_error_before);
  CHECK(calibration::get(r.profile, mark) == Approx(calibration::get(truth, mark)).epsilon(0.1));
  CHECK(calibration::get(r.profile, obj) == Approx(calibration::get(truth, obj)).epsilon(0.1));
  CHECK(r.profile.ns == cost::default_profile().ns);  // only the gc section moved
}

// Marking costs per object as well as per byte (mark_ns_per_object): two live heaps of the same
// 18 MiB, one of 16,384 objects of 1,152 bytes and one of 1,179,648 of 16, under the same loop.
// Without the per-object cost their loops cost the same; with it the heap of small objects marks
// slower, by its 72 times as many objects.
TEST_CASE("calibrate: marking costs per reachable object with mark_ns_per_object") {
  const auto heap = [](const char* objects) {
    return std::string("func { name: \"main\"\n  op { alloc { ") + objects +
           " retain: true } }\n  op { gc {} }\n"
           "  op { loop { name: \"n\" count: 40000 op { alloc { bytes: 1152 count: 1 retain: false } } } }\n}\n"
           "benchmark { name: \"BenchmarkHeap\" loop: \"n\" }\n";
  };
  const scenario::Scenario large = scenario::parse_scenario(heap("bytes: 1152 count: 16384"), "large");
  const scenario::Scenario small = scenario::parse_scenario(heap("bytes: 16 count: 1179648"), "small");
  const std::vector<calibration::Point> pts = {{"BenchmarkHeap", 1, 0, 0, &large}, {"BenchmarkHeap", 1, 0, 0, &small}};
  const calibration::FitParam per_object = calibration::fit_param_by_name("mark_ns_per_object");
  cost::Profile p = cost::default_profile();
  calibration::set(p, calibration::fit_param_by_name("mark_ns_per_byte"), 0.05);  // GC CPU far from 100%
  calibration::set(p, per_object, 0);
  const std::vector<calibration::SimPoint> without = calibration::simulate_points_gc(pts, p, 2);
  REQUIRE(without[0].gc_cycles_per_op > 0);
  CHECK(without[1].gc_cpu_share == Approx(without[0].gc_cpu_share).epsilon(0.02));
  calibration::set(p, per_object, 50);
  const std::vector<calibration::SimPoint> with = calibration::simulate_points_gc(pts, p, 2);
  CHECK(with[0].gc_cpu_share > without[0].gc_cpu_share);         // 16,384 objects: a little more
  CHECK(with[1].gc_cpu_share > 1.5 * with[0].gc_cpu_share);      // 1.2 million: much more
  CHECK(with[1].ns_per_op > 1.5 * with[0].ns_per_op);
}
