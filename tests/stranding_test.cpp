// The stranding and starvation properties (model/properties.h's StrandingMonitor and
// StarvationMonitor): hand-made scenarios where they must fire and where they must not.
#include <catch2/catch.hpp>

#include <string>

#include "model/execution.h"
#include "tests/check_setup.h"
#include "model/policies.h"
#include "model/search.h"
#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"

using namespace gmp;
using namespace gmp::checktest;

namespace {

// main readies w into its runnext and computes: w waits behind main, uncovered, for the steps of
// M0 between runqput and wakep's pidlegetSpinning (which takes P1 off the idle list).
const char kOneGo[] = R"(
func { name: "main" op { go { func: "w" } } op { compute { duration: "1ms" } } }
func { name: "w" op { compute { duration: "10us" } } }
)";

// main starts 24 goroutines and computes. At 3 Ps, the first go's wakep hands P1 to a new M
// (m.nextp, then spinning) and every later wakep returns at once (an M spins): the goroutines
// wait behind main while P2 is idle, covered by that M for all of main's ~1,000 steps of newproc.
const char kSpawnMany[] = R"(
func { name: "main" op { loop { count: 24 op { go { func: "w" } } } } op { compute { duration: "1ms" } } }
func { name: "w" op { compute { duration: "10us" } } }
)";

// Two goroutines computing 25 ms each on one P: the one that waits for the P may wait one time
// slice and one sysmon period, no more.
const char kHogs[] = R"(
func { name: "main" op { go { func: "w" } } op { compute { duration: "25ms" } } }
func { name: "w" op { compute { duration: "25ms" } } }
)";



model::CheckReport search(const model::CheckSetup& s, const char* strategy, uint64_t n) {
  model::CheckConfig cfg;
  cfg.setup = s;
  cfg.strategy = strategy;
  cfg.max_executions = n;
  cfg.states = false;
  cfg.shrink = false;
  return model::run_check(cfg);
}

}  // namespace

TEST_CASE("stranding fires past its bound and names where the G waited", "[check][stranding]") {
  const scenario::Scenario sc = scenario::parse_scenario(kOneGo, "one_go");
  model::CheckSetup s = setup_for(sc, 2);
  s.stranding_steps = 1;
  const model::Execution ex = default_order(s);
  REQUIRE(ex.end == model::Execution::End::Violation);
  CHECK(ex.violation.property == model::kStranding);
  CHECK(ex.violation.message.find("waited in P0's runnext behind G1 (running on M0)") != std::string::npos);
  CHECK(ex.violation.message.find("stranded for 2 steps of M0 (bound 1)") != std::string::npos);
  CHECK(ex.violation.message.find("P1 was idle") != std::string::npos);
  // With the property off, the same run is clean.
  s.properties &= ~uint32_t{model::kStranding};
  CHECK(default_order(s).end == model::Execution::End::Completed);
}

TEST_CASE("stranding holds under its default bound on a wakep's window", "[check][stranding]") {
  const scenario::Scenario sc = scenario::parse_scenario(kOneGo, "one_go");
  const model::CheckSetup s = setup_for(sc, 2);
  CHECK(default_order(s).end == model::Execution::End::Completed);
  const model::CheckReport rep = search(s, "random", 300);
  CHECK(!rep.found.has_value());
  CHECK(rep.executions == 300);
}

TEST_CASE("stranding: an M about to wake or spinning covers the work it can take", "[check][stranding]") {
  const scenario::Scenario sc = scenario::parse_scenario(kSpawnMany, "spawn_many");
  model::CheckSetup s = setup_for(sc, 3);
  s.stranding_steps = 60;  // far below main's steps of newproc while P2 idles
  const model::Execution ex = default_order(s);
  INFO(ex.violation.message);
  CHECK(ex.end == model::Execution::End::Completed);
  // At 2 Ps the first wakep takes the only idle P: nothing to cover, nothing stranded.
  s.procs = 2;
  CHECK(default_order(s).end == model::Execution::End::Completed);
}

TEST_CASE("starvation: under strict time a goroutine runnable past the bound is a violation", "[check][starvation]") {
  const scenario::Scenario sc = scenario::parse_scenario(kHogs, "hogs");
  model::CheckSetup s = setup_for(sc, 1);
  s.strict_time = true;
  // One P, two 25 ms computations: w waits for main's time slice (10 ms) and sysmon's retake, at
  // most forcePreemptNS plus sysmon's longest pause: the default bound holds.
  model::Execution ex = default_order(s);
  INFO(ex.violation.message);
  CHECK(ex.end == model::Execution::End::Completed);
  // A bound below one time slice does not.
  s.starvation_ns = 5'000'000;
  ex = default_order(s);
  REQUIRE(ex.end == model::Execution::End::Violation);
  CHECK(ex.violation.property == model::kStarvation);
  INFO(ex.violation.message);
  CHECK(ex.violation.message.find("G6 has been runnable for 6100.000 us of virtual time without running (bound 5000.000 us: 1 turn of 5000.000 us") != std::string::npos);
  CHECK(ex.violation.message.find("in P0's runnext") != std::string::npos);
  // Under free time it is not tested: the clock says only that waits ended no earlier.
  s.strict_time = false;
  CHECK(default_order(s).end == model::Execution::End::Completed);
}

namespace {
// Three goroutines computing 30 ms each on one P, main waiting: round robin makes the last wait
// two time slices and a retake (about 21 ms), as Go does by design.
const char kThreeHogs[] = R"(
waitgroup { name: "wg" }
func { name: "main" op { add { wg: "wg" n: 3 } } op { go { func: "hog" } } op { go { func: "hog" } }
       op { go { func: "hog" } } op { wait { wg: "wg" } } }
func { name: "hog" op { compute { duration: "30ms" } } op { done { wg: "wg" } } }
)";

// main readies w, computes, then readies 40 more. w yields (gosched: the global queue) and computes.
const char kWakeInFlight[] = R"(
func { name: "main" op { go { func: "w" } } op { compute { duration: "50us" } }
       op { loop { count: 40 op { go { func: "a" } } } } op { compute { duration: "100us" } } }
func { name: "w" op { compute { duration: "10us" } } op { gosched {} } op { compute { duration: "1ms" } } }
func { name: "a" op { compute { duration: "1us" } } }
)";
}  // namespace

TEST_CASE("starvation: the bound grows with the goroutines a G waits behind", "[check][starvation]") {
  const scenario::Scenario sc = scenario::parse_scenario(kThreeHogs, "hogs3");
  model::CheckSetup s = setup_for(sc, 1);
  s.strict_time = true;
  // The third hog waits behind two: two turns of the default bound, which its 21 ms fits.
  model::Execution ex = default_order(s);
  INFO(ex.violation.message);
  CHECK(ex.end == model::Execution::End::Completed);
}

TEST_CASE("stranding: a wake-up under way covers the work", "[check][stranding]") {
  // One preemption: the M that queued w globally wins wakep's CAS of sched.nmspinning (0 -> 1) and
  // is switched out before it makes the spinning M; main's 40 wakeps then return at once. The
  // window is an OS stall inside wakep, which Go allows: covered, not stranded (the reviewer's
  // schedule; it reported 401 steps of the Ms holding Ps before).
  const scenario::Scenario sc = scenario::parse_scenario(kWakeInFlight, "wake");
  model::CheckSetup s = setup_for(sc, 3);
  model::ReplayPolicy p(model::Schedule::parse("850:0/1246"), false);
  const model::Execution ex = model::execute(s, p, {});
  INFO(ex.violation.message);
  CHECK(ex.end != model::Execution::End::Violation);
}
