// The livelock property's fairness (model/execution.cpp, docs/checker.md "Livelock"): a cycle is the
// program's livelock only if every thread enabled throughout it takes a step in it (a timed wait's
// end counts), and under strict time no thread other than a daemon waits with a deadline through
// it. The unfair cycles below were reported as livelocks of the unmodified port before the rule
// (issue 27); the run is now let out of them and goes on. A fair cycle is still reported.
#include <catch2/catch.hpp>

#include <string>

#include "model/execution.h"
#include "tests/check_setup.h"
#include "model/policies.h"
#include "model/schedule.h"
#include "model/search.h"
#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"

using namespace gmp;
using namespace gmp::checktest;

namespace {



// Runs the departures of `schedule` (its length dropped: the run goes on by the default rule past
// them, as the search's execution did) with the default properties.
model::Execution run(const model::CheckSetup& setup, const std::string& schedule) {
  model::Schedule s = model::Schedule::parse(schedule);
  s.steps = 0;
  model::ReplayPolicy pol(s, false);
  return model::execute(setup, pol, model::ExecOptions{});
}

std::string what(const model::Execution& ex) {
  return ex.violation.message.empty() ? ex.how : model::property_name(ex.violation.property) + std::string(": ") +
                                                     ex.violation.message;
}

}  // namespace

// gc_alloc2's default order (bounded and PCT searches' first execution): main's runtime.GC calls
// Gosched until the sweep is done, alternating with bgsweep on M0, while the sweeper on M3 holds
// the sweep-active count in a sweep cost whose end the default order never picks (another thread
// can always step). Before the rule: livelock at step 20150.
TEST_CASE("gc_alloc2's default order ends the starved sweep instead of reporting a livelock", "[fairness]") {
  const scenario::Scenario sc = check_scenario("gc_alloc2");
  const model::Execution ex = run(setup_for(sc, 2), "/0");
  INFO(what(ex));
  CHECK(ex.end == model::Execution::End::Completed);
  CHECK(ex.unfair_cycles >= 1);
}

// mutex at 3 Ps, random search's execution 1203: two goroutines spin in sync.Mutex's active spin
// while the holder's compute is never ended (its end enabled throughout, never chosen).
TEST_CASE("a mutex holder's compute enabled throughout a spin ends with no livelock", "[fairness]") {
  const scenario::Scenario sc = check_scenario("mutex");
  const model::Execution ex = run(setup_for(sc, 3), "395:4,397:3,454:4,455:3,457:1,479:4,484:3,534:4,646:4,742:4,799:0/1242");
  INFO(what(ex));
  CHECK(ex.end == model::Execution::End::Completed);
  CHECK(ex.unfair_cycles >= 1);
}

// assist_handoff at 2 Ps under strict time, PCT's execution 2: the same Gosched loop as gc_alloc2's,
// but the sweep cost cannot end while a thread can step. The run lets time pass instead.
TEST_CASE("under strict time a cycle at one instant lets the pending wait end", "[fairness]") {
  const scenario::Scenario sc = check_scenario("assist_handoff");
  model::CheckSetup setup = setup_for(sc, 2);
  setup.strict_time = true;
  const model::Execution ex = run(setup, "109:2,244:3,313:0,801:2,2557:3,2671:3,2707:3,2874:7/8877");
  INFO(what(ex));
  CHECK(ex.end == model::Execution::End::Completed);
  CHECK(ex.unfair_cycles >= 1);
}

// A real livelock: two goroutines call Gosched forever on two Ps. Every thread that can step does,
// in the cycle; sysmon's waits (a daemon's) end only while it has rounds left, after which the
// cycle is fair. Reported under both clocks.
TEST_CASE("a fair cycle is still a livelock, under free and strict time", "[fairness]") {
  const scenario::Scenario sc = scenario::parse_scenario(R"(
func { name: "main" op { go { func: "spin" } } op { loop { forever: true op { gosched {} } } } }
func { name: "spin" op { loop { forever: true op { gosched {} } } } }
)",
                                                         "spin.textproto");
  for (bool strict : {false, true}) {
    INFO((strict ? "strict time" : "free time"));
    model::CheckSetup setup = setup_for(sc, 2);
    setup.strict_time = strict;
    const model::Execution ex = run(setup, "/0");
    INFO(what(ex));
    REQUIRE(ex.end == model::Execution::End::Violation);
    CHECK(ex.violation.property == model::kLivelock);
    CHECK(ex.violation.message.find("the cycle is fair") != std::string::npos);
  }
}
