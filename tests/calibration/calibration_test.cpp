// gmpsim calibrate's parts: reading go test -bench output, summarising repeated runs, writing a
// profile back as text, and the fit, on a problem whose answer is known.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "sim/calibration/bench_output.h"
#include "sim/calibration/fit.h"
#include "sim/calibration/speed_curve.h"
#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"
#include "tests/pingpong_text.h"

using namespace gmp;
using calibration::BenchKey;

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
  CHECK(err("BenchmarkX-99999\t100\t12 ns/op") == "m.txt:2: GOMAXPROCS suffix -99999 is not 1 to 1024");
  CHECK(err("BenchmarkX-0\t100\t12 ns/op") == "m.txt:2: GOMAXPROCS suffix -0 is not 1 to 1024");
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
  const scenario::Scenario spawn = scenario::parse_scenario(R"(
waitgroup { name: "wg" }
func { name: "main"
  op { loop { name: "n" count: 2000 op { add { wg: "wg" n: 1 } } op { go { func: "w" } } op { wait { wg: "wg" } } } }
}
func { name: "w" op { done { wg: "wg" } } }
benchmark { name: "BenchmarkGo" loop: "n" }
)",
                                                            "spawn");
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
