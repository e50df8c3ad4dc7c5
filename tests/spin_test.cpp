// Spin-wait loops under the checker (plat::SpinLoop, the choice driver's spin_* hooks): a
// busy-poll that found nothing is held until another thread writes what it read, so the busy-poll
// pair of issue 27 is checked exhaustively; a write that ends the poll still ends it; a poll that
// nothing can end is a livelock, said so; and a thread that runs alone still counts its steps.
#include <catch2/catch.hpp>

#include <string>

#include "model/execution.h"
#include "tests/check_setup.h"
#include "model/search.h"
#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"

using namespace gmp;
using namespace gmp::checktest;

namespace {


// Issue 27's pair: main readies g, then busy-polls until g, after 30 us of work, sends a tick.
const char kPair[] = R"(
chan { name: "tick" cap: 1 }  chan { name: "c" }
func { name: "main" op { go { func: "g" } } op { send { chan: "c" } } op { busy_poll { ns: 400 until_recv: "tick" safe_point: true } } }
func { name: "g" op { recv { chan: "c" } } op { compute { duration: "30us" } } op { send { chan: "tick" } } }
)";

}  // namespace

TEST_CASE("the busy-poll pair is checked exhaustively at one preemption", "[check][spin]") {
  // Before the polls were collapsed, each poll of main was steps more to interleave with g's and
  // the other M's, and a quiescent point to test: at 2 Ps, bounded search at one preemption had
  // not finished after 6,189 executions (5.2 million quiescent points, 28 s of CPU). Now main
  // polls once, is held until g's send, and the search completes in 11,421 executions.
  const scenario::Scenario sc = scenario::parse_scenario(kPair, "pair.textproto");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 2);
  cfg.strategy = "bounded";
  cfg.params["preemptions"] = 1;
  SECTION("main polls once per write it waits for") {
    // Each poll ends in a quiescent point (main computing, the other M parked): before, 840 an
    // execution; now about 2.
    cfg.max_executions = 200;
    const model::CheckReport r = model::run_check(cfg);
    INFO(r.executions << " executions, " << r.quiescent << " quiescent points");
    CHECK(r.quiescent < 5 * r.executions);
  }
  SECTION("complete") {
    cfg.max_executions = 15000;  // above what it takes (11,421); reaching it fails the test
    const model::CheckReport r = model::run_check(cfg);
    INFO(r.executions << " executions, longest " << r.max_steps_seen << " steps");
    CHECK(r.complete);
    CHECK(!r.found);
    CHECK(r.step_limited == 0);
    CHECK(r.executions < 15000);
  }
}

TEST_CASE("a held busy-poll is released by the write it waits for, so what follows is still explored",
          "[check][spin]") {
  // main exits as soon as its poll finds the tick; g sends it, then works on. So main can exit
  // while g still runs, and finished_at_exit fails, but only if main's poll is released by g's
  // send (one P: main is held, and sysmon's preemption of it lets g run). Held for good instead,
  // main would be reported as a livelock.
  const scenario::Scenario sc = scenario::parse_scenario(R"(
chan { name: "tick" cap: 1 }
func { name: "main" op { go { func: "g" } } op { busy_poll { ns: 400 until_recv: "tick" safe_point: true } } }
func { name: "g" op { send { chan: "tick" } } op { compute { duration: "10us" } } }
assertion { finished_at_exit { func: "g" } }
)",
                                                         "exit_early.textproto");
  for (int32_t procs : {1, 2}) {
    model::CheckConfig cfg;
    cfg.setup = setup_for(sc, procs);
    cfg.strategy = "bounded";
    cfg.params["preemptions"] = 1;
    cfg.max_executions = 5000;
    const model::CheckReport r = model::run_check(cfg);
    INFO("procs " << procs << ": " << r.executions << " executions");
    REQUIRE(r.found);
    CHECK(r.found->violation.property == model::kAssertions);
    CHECK(r.found->violation.message.find("finished_at_exit") != std::string::npos);
  }
}

TEST_CASE("a busy-poll that nothing can end is a livelock, said so, not a run to the step limit",
          "[check][spin]") {
  // Nobody ever sends on "never": main would poll forever.
  const scenario::Scenario sc = scenario::parse_scenario(R"(
chan { name: "never" cap: 1 }
func { name: "main" op { busy_poll { ns: 400 until_recv: "never" safe_point: true } } }
)",
                                                         "forever_poll.textproto");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 1);
  cfg.strategy = "bounded";
  cfg.params["preemptions"] = 0;
  cfg.shrink = false;
  const model::CheckReport r = model::run_check(cfg);
  REQUIRE(r.found);
  CHECK(r.found->violation.property == model::kLivelock);
  CHECK(r.found->violation.message.find("busy-polls") != std::string::npos);
  CHECK(r.found->violation.message.find("spin there forever") != std::string::npos);
  CHECK(r.step_limited == 0);
  CHECK(r.max_steps_seen < 20000);  // 9,606: 64 rounds of sysmon preempting main
  // Without the livelock property the execution ends there, as one the search has covered.
  cfg.setup.properties = model::kDefaultProperties & ~model::kLivelock;
  const model::CheckReport quiet = model::run_check(cfg);
  CHECK(!quiet.found);
  CHECK(quiet.step_limited == 0);
  CHECK(quiet.complete);
}

TEST_CASE("a thread that runs alone counts its steps toward the step limit", "[check][spin]") {
  // A poll with a count is no spin-wait (each poll changes the count), and one that counts past
  // any limit, alone on one P with nothing else to run, still stops at --max-steps; so does a
  // goroutine that computes forever.
  const char* programs[] = {
      R"(
chan { name: "never" cap: 1 }
func { name: "main" op { busy_poll { ns: 400 until_recv: "never" count: 1000000000 safe_point: true } } }
)",
      R"(
func { name: "main" op { loop { forever: true op { compute { ns: 1000 } } } } }
)"};
  for (const char* text : programs) {
    const scenario::Scenario sc = scenario::parse_scenario(text, "alone.textproto");
    model::CheckConfig cfg;
    cfg.setup = setup_for(sc, 1);
    cfg.setup.max_steps = 4000;
    cfg.strategy = "random";
    cfg.max_executions = 2;
    const model::CheckReport r = model::run_check(cfg);
    CHECK(!r.found);
    CHECK(r.step_limited == 2);
    CHECK(r.max_steps_seen <= 4000);
    CHECK(r.unbounded.find("G1 (main)") != std::string::npos);
  }
}

TEST_CASE("a busy-poll waiting for a sleeper's send is no livelock however long the sleep", "[check][spin]") {
  // At 1 P, main sleeps 3 s and then fills the channel the poller waits on: only the poller's trips
  // through the scheduler run main's timer. Its rounds read the same values while the clock moves
  // on; counted as fruitless, they ended the run as a livelock at about 1.3 s of virtual time.
  const scenario::Scenario sc = scenario::parse_scenario(R"(
chan { name: "tick" cap: 1 }  chan { name: "done" cap: 1 }
func { name: "main" op { go { func: "poller" } } op { sleep { duration: "3s" } } op { send { chan: "tick" } }
       op { recv { chan: "done" } } }
func { name: "poller" op { busy_poll { ns: 400 until_recv: "tick" safe_point: true } } op { send { chan: "done" } } }
)",
                                                         "sleeper_poll.textproto");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 1);
  cfg.strategy = "random";
  cfg.max_executions = 3;
  cfg.shrink = false;
  const model::CheckReport r = model::run_check(cfg);
  INFO((r.found ? r.found->violation.message : std::string()));
  CHECK(!r.found);
  CHECK(r.step_limited == 0);
}
