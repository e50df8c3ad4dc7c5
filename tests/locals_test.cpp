// Per-request objects (docs/scenarios.md, "Per-request objects"): WaitGroup and mutex arrays,
// `local` channels, WaitGroups and mutexes made each time a loop's body runs, and typed parameters
// that pass them to goroutines. What each run does shows in its virtual time, hand-computed; the
// mistakes are compile errors at their field, or a Go panic at the index's position.
#include <catch2/catch.hpp>

#include <string>

#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation/simulation.h"
#include "tests/scenario_run.h"

using namespace gmp;
using engine::Engine;
using engine::SimResult;

namespace {

constexpr int64_t kUs = 1000;
const std::string kName = "locals.textproto";

SimResult run(const std::string& text, int32_t procs) {
  SimResult r = test::run_scenario_text(text, kName, procs);
  INFO(r.message);
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.exit_code == 0);
  return r;
}

// The request fan-out of issue 26, as Go writes it:
//   for r := 0; r < 3; r++ {
//     var wg sync.WaitGroup; var mu sync.Mutex
//     wg.Add(4)
//     for k := 0; k < 4; k++ { go handler(&wg, &mu) }
//     wg.Wait()
//   }
//   func handler(wg *sync.WaitGroup, mu *sync.Mutex) { work(W); mu.Lock(); work(C); mu.Unlock(); wg.Done() }
std::string fanout(int64_t work, int64_t critical) {
  return R"(
func { name: "main"
  op { loop { count: 3
    op { local { waitgroup: "wg" } }
    op { local { mutex: "mu" } }
    op { add { wg: "wg" n: 4 } }
    op { loop { count: 4 op { go { func: "handler" arg: "wg" arg: "mu" } } } }
    op { wait { wg: "wg" } } } }
}
func { name: "handler" param: "wg waitgroup" param: "mu mutex"
  op { compute { ns: )" +
         std::to_string(work) + R"( } }
  op { lock { mutex: "mu" } }
  op { compute { ns: )" +
         std::to_string(critical) + R"( } }
  op { unlock { mutex: "mu" } }
  op { done { wg: "wg" } }
}
)";
}

// text with every WORK replaced by ns.
std::string with(std::string text, int64_t ns) {
  for (size_t at; (at = text.find("WORK")) != std::string::npos;) text.replace(at, 4, std::to_string(ns));
  return text;
}

// The virtual time text takes with WORK = ns beyond what it takes with WORK = 0: the run's own
// start (the runtime's initialisation, sysmon, the Ms started) is in both.
int64_t beyond(const std::string& text, int64_t ns, int32_t procs) {
  return run(with(text, ns), procs).end_time - run(with(text, 0), procs).end_time;
}

// The first error of text is at the first `at` after `after` and says `says`.
void expect_error(const std::string& text, const std::string& at, const std::string& after, const std::string& says) {
  INFO(text);
  const size_t from = after.empty() ? 0 : text.find(after);
  REQUIRE(from != std::string::npos);
  const size_t offset = text.find(at, from);
  REQUIRE(offset != std::string::npos);
  int line = 1;
  for (size_t i = 0; i < offset; i++) line += text[i] == '\n';
  const size_t nl = text.rfind('\n', offset);
  const int column = static_cast<int>(offset - (nl == std::string::npos ? 0 : nl + 1)) + 1;
  try {
    scenario::parse_scenario(text, kName);
  } catch (const scenario::ScenarioError& e) {
    REQUIRE_FALSE(e.diagnostics().empty());
    const scenario::Diagnostic& d = e.diagnostics().front();
    CHECK(d.message == says);
    CHECK(d.line == line);
    CHECK(d.column == column);
    return;
  }
  FAIL("no ScenarioError");
}

}  // namespace

// Each request: 4 handlers compute W = 100us, then C = 20us under the request's mutex. At 1 P they
// run one after another: 3 requests x 4 x (100 + 20) = 1440us. At 4 Ps the four W run side by side
// and the four C one after another: 3 x (100 + 4 x 20) = 540us. Both over the same program with
// W = C = 0 (its starts, wake-ups and hand-offs); what is left is the mutex hand-offs and wake-ups
// of 3 requests, a few us each (at most 30us at 1 P, 60us at 4 Ps, where each Lock that finds
// the mutex held spins, then parks, then is woken).
TEST_CASE("locals: a request fan-out with a WaitGroup and a mutex per request", "[sim][locals]") {
  const int64_t base1 = run(fanout(0, 0), 1).end_time;
  const int64_t base4 = run(fanout(0, 0), 4).end_time;
  const SimResult one = run(fanout(100 * kUs, 20 * kUs), 1);
  const SimResult four = run(fanout(100 * kUs, 20 * kUs), 4);
  CHECK(one.goroutines == 13);  // main and 3 x 4 handlers
  CHECK(one.end_time - base1 >= 1440 * kUs);
  CHECK(one.end_time - base1 < 1470 * kUs);
  CHECK(four.end_time - base4 >= 540 * kUs);
  CHECK(four.end_time - base4 < 600 * kUs);
}

// Four goroutines each lock a mutex of their own, made by `local` in the loop's body, and hold it
// for 100us: at 4 Ps they run side by side, about 100us. Were the four locals one mutex, they would
// take 400us one after another.
TEST_CASE("locals: a local made in a loop's body is a new object each time", "[sim][locals]") {
  const std::string text = R"(
waitgroup { name: "all" }
func { name: "main"
  op { add { wg: "all" n: 4 } }
  op { loop { count: 4
    op { local { mutex: "mu" } }
    op { go { func: "hold" arg: "mu" } } } }
  op { wait { wg: "all" } }
}
func { name: "hold" param: "m mutex"
  op { lock { mutex: "m" } }
  op { compute { ns: WORK } }
  op { done { wg: "all" } }
}
)";
  const int64_t four = beyond(text, 100 * kUs, 4);
  CHECK(four >= 100 * kUs);
  CHECK(four < 150 * kUs);
}

// A local channel per request (cap from an expression) that the handlers send on and main receives
// from 4 times: 3 requests x 100us at 4 Ps; 3 x 4 x 100us at 1 P. The handler receives the channel
// as a typed parameter and passes it on to the goroutine that does the work. At 4 Ps a request's
// last worker starts after up to three thread wake-ups one after another (Go wakes one spinning M
// at a time, and the M that finds work wakes the next): each futex_wake_latency, 6us, plus up to
// wakeup_jitter, 5us, so at most 3 x 33us and a few us of go statements and receives, 40us a
// request, over the 300us.
TEST_CASE("locals: a local channel per request passed through typed parameters", "[sim][locals]") {
  const std::string text = R"(
func { name: "main"
  op { loop { var: "r" count: 3
    op { local { chan: "results" cap_expr: "r + 4 - r" } }
    op { loop { count: 4 op { go { func: "handler" arg: "results" } } } }
    op { loop { count: 4 op { recv { chan: "results" } } } } } }
}
func { name: "handler" param: "out chan" op { go { func: "work" arg: "out" arg: "WORK" } } }
func { name: "work" param: "c chan" param: "ns" op { compute { ns_expr: "ns" } } op { send { chan: "c" } } }
)";
  const int64_t one = beyond(text, 100 * kUs, 1);
  const int64_t four = beyond(text, 100 * kUs, 4);
  CHECK(one >= 1200 * kUs);
  CHECK(one < 1260 * kUs);
  CHECK(four >= 300 * kUs);
  CHECK(four < 420 * kUs);
}

// Three workers, worker i computing (i+1) x 100us and then done[i]; main waits for done[0] alone
// and exits. At 4 Ps worker 0 finishes after 100us. At 1 P the last one started runs first (runnext),
// then the run queue's: worker 2 (300us), then worker 0 (100us): 400us. Were every index the same
// element, main would wait for all three: 300us at 4 Ps, 600us at 1 P.
TEST_CASE("locals: a WaitGroup array indexed by the loop var", "[sim][locals]") {
  const std::string text = R"(
waitgroup { name: "done" count: 3 }
func { name: "main"
  op { loop { var: "i" count: 3
    op { add { wg: "done" index: "i" n: 1 } }
    op { go { func: "worker" arg: "i" } } } }
  op { wait { wg: "done" index: "0" } }
}
func { name: "worker" param: "i"
  op { compute { ns_expr: "(i + 1) * WORK" } }
  op { done { wg: "done" index: "i" } }
}
)";
  const int64_t four = beyond(text, 100 * kUs, 4);
  const int64_t one = beyond(text, 100 * kUs, 1);
  CHECK(four >= 100 * kUs);
  CHECK(four < 150 * kUs);
  CHECK(one >= 400 * kUs);
  CHECK(one < 420 * kUs);
}

// A mutex array: locks[i] guards worker i's work; two workers per element, so each pair runs one
// after the other and the pairs side by side: 2 x 100us at 4 Ps.
TEST_CASE("locals: a mutex array serialises only the goroutines of one element", "[sim][locals]") {
  const std::string text = R"(
mutex { name: "locks" count: 2 }
waitgroup { name: "wg" }
func { name: "main"
  op { add { wg: "wg" n: 4 } }
  op { loop { var: "i" count: 4 op { go { func: "worker" arg: "i % 2" } } } }
  op { wait { wg: "wg" } }
}
func { name: "worker" param: "i"
  op { lock { mutex: "locks" index: "i" } }
  op { compute { ns: WORK } }
  op { unlock { mutex: "locks" index: "i" } }
  op { done { wg: "wg" } }
}
)";
  const int64_t four = beyond(text, 100 * kUs, 4);
  CHECK(four >= 200 * kUs);
  CHECK(four < 260 * kUs);
}

TEST_CASE("locals: an element index out of range ends the run as Go's panic does", "[sim][locals]") {
  const std::string text = R"(
waitgroup { name: "done" count: 3 }
mutex { name: "mu" count: 2 }
func { name: "main"
  op { lock { mutex: "mu" index: "1" } }
  op { loop { var: "i" count: 4
    op { add { wg: "done" index: "i" n: 1 } } } }
}
)";
  const scenario::Scenario sc = scenario::parse_scenario(text, kName);
  engine::SimConfig cfg;
  cfg.procs = 2;
  const SimResult r = engine::simulate(sc, cost::default_profile(), cfg);
  REQUIRE(r.stop == Engine::Stop::Fatal);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.message, Catch::StartsWith("panic: runtime error: index out of range [3] with length 3"));
  CHECK_THAT(r.message, Catch::Contains("locals.textproto:7:27: index \"i\""));
}

TEST_CASE("locals: mistakes are compile errors at their field", "[scenario][locals]") {
  const std::string decls = R"(
waitgroup { name: "wg" }
waitgroup { name: "wgs" count: 2 }
mutex { name: "mu" }
)";
  const std::string worker = R"(
func { name: "worker" param: "w waitgroup" op { done { wg: "w" } } }
)";
  // A mutex for a waitgroup parameter, declared or local.
  expect_error(decls + worker + R"(func { name: "main" op { go { func: "worker" arg: "mu" } } }
)", "arg", "name: \"main\"", "\"mu\" is a mutex: parameter 1 of worker takes a waitgroup");
  expect_error(decls + worker + R"(func { name: "main" op { local { mutex: "m" } } op { go { func: "worker" arg: "m" } } }
)", "arg", "go {", "\"m\" is a mutex: parameter 1 of worker takes a waitgroup");
  // An array without its element, an unknown name, an integer.
  expect_error(decls + worker + R"(func { name: "main" op { go { func: "worker" arg: "wgs" } } }
)", "arg", "name: \"main\"", "\"wgs\" is an array of 2: parameter 1 of worker takes a waitgroup, a single one");
  expect_error(decls + worker + R"(func { name: "main" op { go { func: "worker" arg: "nope" } } }
)", "arg", "name: \"main\"", "unknown waitgroup \"nope\": parameter 1 of worker takes a waitgroup (a declared one, a local in scope, or a parameter of that kind)");
  // A local used past the end of the list it is in.
  expect_error(decls + R"(func { name: "main"
  op { loop { count: 2 op { local { waitgroup: "req" } } } }
  op { wait { wg: "req" } }
}
)", "wg", "wait {", "undeclared waitgroup \"req\"");
  // A local that would hide a declared object, or another local in scope.
  expect_error(decls + R"(func { name: "main" op { local { mutex: "wg" } } }
)", "mutex", "local {", "\"wg\" would hide the waitgroup declared at 2:13: choose another name");
  expect_error(decls + R"(func { name: "main" op { local { mutex: "m" } } op { loop { count: 1 op { local { chan: "m" } } } } }
)", "chan", "count: 1", "duplicate name \"m\": a parameter, a loop's var or a local in scope has it");
  // An index without an array, an array without an index.
  expect_error(decls + R"(func { name: "main" op { wait { wg: "wg" index: "0" } } }
)", "index", "", "waitgroup \"wg\" is not an array: it takes no index");
  expect_error(decls + R"(func { name: "main" op { wait { wg: "wgs" } } }
)", "wg", "wait {", "waitgroup array \"wgs\" needs the element's index (index: \"i\")");
  // A handle is no integer; a mutex is no channel; an unknown parameter type.
  expect_error(decls + R"(func { name: "main" op { local { chan: "c" } } op { compute { ns_expr: "c" } } }
)", "ns_expr", "", "ns_expr \"c\": \"c\" is a channel, not an integer");
  expect_error(decls + R"(func { name: "main" op { local { mutex: "m" } } op { send { chan: "m" } } }
)", "chan", "send {", "\"m\" is a mutex, not a channel");
  expect_error(decls + R"(func { name: "f" param: "x sema" }
func { name: "main" }
)", "param", "", "parameter \"x sema\": write \"name\" (an int64), \"name chan\", \"name waitgroup\" or \"name mutex\"");
  // Array lengths and a local channel's capacity.
  expect_error(R"(mutex { name: "m" count: 0 }
func { name: "main" }
)", "count", "", "mutex array length 0 is out of range: from 1 to 1000000");
  expect_error(R"(func { name: "main" op { local { chan: "c" cap: -1 } } }
)", "cap", "", "cap -1 is out of range: from 0 to 1000000 elements");
  expect_error(R"(func { name: "main" op { local { waitgroup: "w" cap: 1 } } }
)", "cap", "", "cap is a channel's buffer: a waitgroup has none");
  expect_error(R"(func { name: "main" op { local { } } }
)", "local", "", "local needs the name of what it makes: chan, waitgroup or mutex");
}
