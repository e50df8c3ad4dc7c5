// gmpsim calibrate's parts: reading go test -bench output, summarising repeated runs, writing a
// profile back as text, and the fit, on a problem whose answer is known.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "sim/calibration/bench_output.h"
#include "sim/calibration/fit.h"
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
