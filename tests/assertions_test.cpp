// A scenario's assertions checked against whole simulations (sim/workload/assertions.h): each kind
// holding, each violated with the detail the report prints, and what a run that does not exit can
// and cannot check.
#include <catch2/catch.hpp>

#include <string>

#include "sim/cost/profile.h"
#include "sim/simulation/simulation.h"
#include "sim/scenario/scenario.h"

using namespace gmp;
using engine::Engine;
using engine::SimConfig;
using engine::SimResult;
using Catch::Contains;
using Catch::StartsWith;

namespace {

SimResult run(const std::string& text, int32_t procs, uint64_t seed = 1) {
  const scenario::Scenario sc = scenario::parse_scenario(text, "a.textproto");
  SimConfig cfg;
  cfg.procs = procs;
  cfg.seed = seed;
  cfg.time_limit = 5LL * 1000 * 1000 * 1000;
  return engine::simulate(sc, cost::default_profile(), cfg);
}

// One goroutine, w, blocks on `c` until main sends; then main either blocks at once (waiting for
// w) or first computes for `after` of virtual time on its P.
std::string readies(const std::string& after, const std::string& asserts) {
  return R"(
chan { name: "c" }
chan { name: "done" }
func { name: "worker" op { recv { chan: "c" } } op { send { chan: "done" } } }
func {
  name: "main"
  op { go { func: "worker" name: "w" } }
  op { sleep { duration: "100us" } }
  op { send { chan: "c" } }
)" + (after.empty() ? "" : "  op { compute { duration: \"" + after + "\" } }\n") +
         R"(  op { recv { chan: "done" } }
}
)" + asserts;
}

}  // namespace

TEST_CASE("start_latency holds when the readier blocks at once", "[sim][assert]") {
  for (int32_t procs : {1, 2}) {
    const SimResult r = run(readies("", "assertion { start_latency { goroutine: \"w\" duration: \"20us\" } }\n"), procs);
    REQUIRE(r.stop == Engine::Stop::Exit);
    CHECK(r.assertions == 1);
    CHECK(r.violations.empty());
    CHECK(r.assertions_unchecked == 0);
  }
}

TEST_CASE("start_latency is violated when the readier keeps the only P", "[sim][assert]") {
  const std::string limit = "assertion { start_latency { goroutine: \"w\" duration: \"100us\" } }\n";
  const SimResult r = run(readies("1ms", limit), 1);
  REQUIRE(r.stop == Engine::Stop::Exit);
  // The creation is followed by main's sleep, so only the readying by the send is late.
  REQUIRE(r.violations.size() == 1);
  const auto& v = r.violations[0];
  CHECK(v.index == 0);
  CHECK(v.assertion == "a.textproto:" + std::to_string(13) + ":1: start_latency { goroutine: \"w\" duration: \"100us\" }");
  CHECK_THAT(v.detail, StartsWith("goroutine "));
  CHECK_THAT(v.detail, Contains(" (w) started 1."));  // 1ms of main's compute, and a little more
  CHECK_THAT(v.detail, Contains("ms after being readied at "));
  CHECK_THAT(v.detail, Contains("; limit 100us"));
  CHECK(v.at > 1'100'000);
  CHECK(v.at <= r.end_time);
  // The same goroutines named by their function; another function's goroutines are not watched.
  SimResult by_func = run(readies("1ms", "assertion { start_latency { func: \"worker\" ns: 100000 } }\n"), 1);
  REQUIRE(by_func.violations.size() == 1);
  CHECK(by_func.violations[0].detail == v.detail);
  CHECK(by_func.violations[0].at == v.at);
  CHECK(run(readies("1ms", "assertion { start_latency { func: \"main\" ns: 100000 } }\n"), 1).violations.empty());
  // A limit above the wait holds.
  CHECK(run(readies("1ms", "assertion { start_latency { goroutine: \"w\" duration: \"2ms\" } }\n"), 1).violations.empty());
}

TEST_CASE("start_latency counts from a goroutine's creation too, and from a readying it never got to run after",
          "[sim][assert]") {
  const std::string text = R"(
func { name: "worker" }
func {
  name: "main"
  op { go { func: "worker" name: "late" } }
  op { compute { duration: "300us" } }
  op { gosched {} }
  op { go { func: "worker" name: "never" } }
  op { compute { duration: "400us" } }
}
assertion { start_latency { goroutine: "late" duration: "200us" } }
assertion { start_latency { goroutine: "never" duration: "200us" } }
)";
  const SimResult r = run(text, 1);
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.violations.size() == 2);
  CHECK(r.violations[0].index == 0);
  CHECK_THAT(r.violations[0].detail, Contains("(late) started 3"));
  CHECK_THAT(r.violations[0].detail, Contains("us after being created at "));
  // Main returns while "never" waits in its P's runnext: the run's end is when it is checked.
  CHECK(r.violations[1].index == 1);
  CHECK(r.violations[1].at == r.end_time);
  CHECK_THAT(r.violations[1].detail, Contains("(never) was created at "));
  CHECK_THAT(r.violations[1].detail, Contains(" and had not started when the run ended at "));
}

// y yields once while a CPU hog is runnable: it waits runnable for the hog's 2ms, though nothing
// readied it; start_latency is about readyings only, max_runnable_latency about every wait.
TEST_CASE("max_runnable_latency counts every wait to run, start_latency only the waits after a readying",
          "[sim][assert]") {
  const std::string program = R"(
chan { name: "done" cap: 2 }
func { name: "hog" op { compute { duration: "2ms" } } op { send { chan: "done" } } }
func { name: "yielder" op { gosched {} } op { send { chan: "done" } } }
func {
  name: "main"
  op { go { func: "hog" } }
  op { go { func: "yielder" name: "y" } }
  op { recv { chan: "done" } }
  op { recv { chan: "done" } }
}
)";
  SimResult r = run(program + "assertion { start_latency { goroutine: \"y\" duration: \"500us\" } }\n", 1);
  REQUIRE(r.stop == Engine::Stop::Exit);
  CHECK(r.violations.empty());
  r = run(program + "assertion { max_runnable_latency { duration: \"500us\" } }\n", 1);
  REQUIRE(r.violations.size() == 1);
  CHECK_THAT(r.violations[0].detail, Contains("(y) waited runnable 2."));
  CHECK_THAT(r.violations[0].detail, Contains("ms, from "));
  CHECK(run(program + "assertion { max_runnable_latency { duration: \"1.5ms\" } }\n", 1).violations.size() == 1);
  CHECK(run(program + "assertion { max_runnable_latency { duration: \"3ms\" } }\n", 1).violations.empty());
  // At two Ps the hog and y run side by side: it holds.
  CHECK(run(program + "assertion { max_runnable_latency { duration: \"500us\" } }\n", 2).violations.empty());
}

// s's system call outlives sysmon's retake; it comes back to no idle P and waits on the global
// queue, runnable but not readied, while main computes, until the program ends.
TEST_CASE("max_runnable_latency: leaving a system call without a P is a wait to run", "[sim][assert]") {
  const std::string text = R"(
func { name: "caller" op { syscall { duration: "1ms" } } }
func {
  name: "main"
  op { go { func: "caller" name: "s" } }
  op { sleep { duration: "10us" } }
  op { compute { duration: "3ms" } }
}
assertion { max_runnable_latency { duration: "500us" } }
assertion { start_latency { goroutine: "s" duration: "500us" } }
)";
  const SimResult r = run(text, 1);
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].index == 0);
  CHECK_THAT(r.violations[0].detail, Contains("(s) was runnable from 1.0"));
  CHECK_THAT(r.violations[0].detail, Contains("had not started when the run ended"));
}

TEST_CASE("chan_empty_at_exit: buffered elements and waiting senders and receivers", "[sim][assert]") {
  const std::string decls = R"(
chan { name: "buf" cap: 4 }
chan { name: "in" }
chan { name: "out" }
func { name: "sender" op { send { chan: "out" } } }
func { name: "receiver" op { recv { chan: "in" } } }
assertion { chan_empty_at_exit { chan: "buf" } }
assertion { chan_empty_at_exit { chan: "in" } }
assertion { chan_empty_at_exit { chan: "out" } }
)";
  SimResult r = run(decls + R"(func { name: "main" op { send { chan: "buf" } } op { recv { chan: "buf" } } })", 1);
  REQUIRE(r.stop == Engine::Stop::Exit);
  CHECK(r.assertions == 3);
  CHECK(r.violations.empty());
  r = run(decls + R"(
func {
  name: "main"
  op { send { chan: "buf" } }
  op { send { chan: "buf" } }
  op { go { func: "sender" } }
  op { go { func: "receiver" } }
  op { go { func: "receiver" } }
  op { sleep { ns: 10000 } }
})",
          1);
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.violations.size() == 3);
  CHECK(r.violations[0].index == 0);
  CHECK_THAT(r.violations[0].detail, StartsWith("channel \"buf\" is not empty when the program exits at "));
  CHECK_THAT(r.violations[0].detail, Contains(": 2 buffered elements"));
  CHECK(r.violations[1].index == 1);
  CHECK_THAT(r.violations[1].detail, Contains(": 2 goroutines waiting to receive ("));
  CHECK(r.violations[2].index == 2);
  CHECK_THAT(r.violations[2].detail, Contains(": 1 goroutine waiting to send ("));
  for (const auto& v : r.violations) CHECK(v.at == r.end_time);
}

// A select's goroutine, woken by one case, leaves its sudog queued on the other channel until it
// runs again; if the program exits first, that sudog waits for nothing.
TEST_CASE("chan_empty_at_exit: a woken select does not wait on its other channels", "[sim][assert]") {
  const std::string text = R"(
chan { name: "a" }
chan { name: "b" }
func { name: "either" op { select { case { recv { chan: "a" } } case { recv { chan: "b" } } } } }
func {
  name: "main"
  op { go { func: "either" name: "e" } }
  op { sleep { ns: 10000 } }
  op { send { chan: "a" } }
}
assertion { chan_empty_at_exit { chan: "a" } }
assertion { chan_empty_at_exit { chan: "b" } }
assertion { finished_at_exit { goroutine: "e" } }
)";
  const SimResult r = run(text, 1);
  REQUIRE(r.stop == Engine::Stop::Exit);
  // e was readied, not run: it has not finished, but waits on neither channel.
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].index == 2);
  CHECK_THAT(r.violations[0].detail, Contains("(e) had not ended when the program exited at "));
  CHECK_THAT(r.violations[0].detail, Contains(": runnable"));
}

TEST_CASE("finished_at_exit: a goroutine blocked forever, and ones that ended", "[sim][assert]") {
  const std::string text = R"(
chan { name: "never" }
chan { name: "done" }
func { name: "stuck" op { recv { chan: "never" } } }
func { name: "quick" op { send { chan: "done" } } }
func {
  name: "main"
  op { go { func: "stuck" name: "s" } }
  op { go { func: "quick" } }
  op { go { func: "quick" } }
  op { recv { chan: "done" } }
  op { recv { chan: "done" } }
}
assertion { finished_at_exit { func: "quick" } }
assertion { finished_at_exit { func: "main" } }
assertion { finished_at_exit { goroutine: "s" } }
)";
  for (int32_t procs : {1, 3}) {
    const SimResult r = run(text, procs);
    REQUIRE(r.stop == Engine::Stop::Exit);
    REQUIRE(r.violations.size() == 1);
    CHECK(r.violations[0].index == 2);
    CHECK_THAT(r.violations[0].detail, Contains("(s) had not ended when the program exited at "));
    CHECK_THAT(r.violations[0].detail, Contains(": blocked (chan receive) since "));
  }
}

TEST_CASE("a run that does not exit leaves the assertions about the exit unchecked", "[sim][assert]") {
  const std::string text = R"(
chan { name: "c" }
func { name: "main" op { go { func: "w" } } op { compute { duration: "1ms" } } op { recv { chan: "c" } } }
func { name: "w" op { compute { duration: "1ms" } } }
assertion { chan_empty_at_exit { chan: "c" } }
assertion { finished_at_exit { func: "w" } }
assertion { start_latency { func: "w" duration: "10us" } }
)";
  const SimResult r = run(text, 1);
  REQUIRE(r.stop == Engine::Stop::Fatal);  // all goroutines are asleep
  CHECK(r.assertions == 3);
  CHECK(r.assertions_unchecked == 2);
  // The start latency is checked all the same: w was created, then waited for main's 1ms.
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].index == 2);
  CHECK_THAT(r.violations[0].detail, Contains("after being created at "));
}

TEST_CASE("the first ten violations of an assertion are shown, the rest counted", "[sim][assert]") {
  const std::string text = R"(
func { name: "w" }
func {
  name: "main"
  op { loop { count: 25 op { go { func: "w" } } } }
  op { compute { duration: "1ms" } }
}
assertion { start_latency { func: "w" duration: "100us" } }
)";
  const SimResult r = run(text, 1);
  REQUIRE(r.stop == Engine::Stop::Exit);
  // The 24 goroutines main kicked out of runnext wait in its run queue; the last is in runnext.
  REQUIRE(r.violations.size() == 11);
  for (size_t i = 0; i < 10; i++) CHECK_THAT(r.violations[i].detail, Contains("had not started when the run ended"));
  CHECK_THAT(r.violations[10].detail, StartsWith("and 15 more violations (25 in all, the last at "));
  CHECK(r.violations[10].at == r.end_time);
}

// The checker observes: a run with assertions schedules exactly as the same run without them.
TEST_CASE("assertions do not change the run", "[sim][assert][determinism]") {
  const std::string program = readies("300us", "");
  const std::string asserts = R"(
assertion { start_latency { goroutine: "w" ns: 1 } }
assertion { max_runnable_latency { ns: 1 } }
assertion { chan_empty_at_exit { chan: "c" } }
assertion { finished_at_exit { func: "worker" } }
)";
  for (int32_t procs : {1, 2, 4}) {
    const SimResult plain = run(program, procs, 7);
    const SimResult checked = run(program + asserts, procs, 7);
    CHECK(plain.assertions == 0);
    CHECK(plain.violations.empty());
    CHECK(checked.assertions == 4);
    CHECK_FALSE(checked.violations.empty());
    CHECK(plain.end_time == checked.end_time);
    CHECK(plain.events == checked.events);
    CHECK(plain.event_counts == checked.event_counts);
    CHECK(plain.lat_max == checked.lat_max);
    // And the violations are the same from run to run.
    const SimResult again = run(program + asserts, procs, 7);
    REQUIRE(again.violations.size() == checked.violations.size());
    for (size_t i = 0; i < again.violations.size(); i++) {
      CHECK(again.violations[i].detail == checked.violations[i].detail);
      CHECK(again.violations[i].at == checked.violations[i].at);
    }
  }
}
