// Values on channels in the scenario language (docs/scenarios.md, "Values"): what a goroutine
// receives shows in the virtual time of a compute whose duration_expr reads it. Each program is
// run twice, with its unit U at 100us and at 0ns; the difference is the values' own work, a sum
// computed here by hand. The scheduling around the computes is the same in both runs up to a few
// us (the runs' own wake-ups), hence the small margin.
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

SimResult run(const std::string& text, int32_t procs) { return test::run_scenario_text(text, "values.textproto", procs); }

// text with every "U" in a duration_expr replaced by unit.
std::string with_unit(std::string text, const std::string& unit) {
  for (size_t at = text.find("*U"); at != std::string::npos; at = text.find("*U", at)) {
    text.replace(at + 1, 1, unit);
  }
  return text;
}

// The values' work in text (U = 100us) beyond the same program with U = 0, in units of U; checks
// that both runs exit.
double work_in_units(const std::string& text, int32_t procs) {
  const SimResult zero = run(with_unit(text, "0ns"), procs);
  const SimResult one = run(with_unit(text, "100us"), procs);
  INFO(one.message);
  REQUIRE(zero.stop == Engine::Stop::Exit);
  REQUIRE(one.stop == Engine::Stop::Exit);
  return static_cast<double>(one.end_time - zero.end_time) / (100.0 * kUs);
}

// A run that ends in a panic: its message and the field's position.
void expect_panic(const std::string& text, const std::string& says, const std::string& where) {
  INFO(text);
  test::check_panic(run(text, 1), "values.textproto", says, where);
}

}  // namespace

// docs/scenarios.md's worker pool: a feeder sends job sizes 1..10, three workers range over the
// jobs computing v*U each and send 2v on results; once all are done, results is closed; main
// ranges over results computing r*U. At GOMAXPROCS 1 all of it runs on one P, one after another:
// 55 U by the workers and 110 U by main, 165 U in all. Were values lost (0), duplicated or
// changed on the way, the sum would differ.
TEST_CASE("values: a worker pool's jobs carry their sizes", "[sim][values]") {
  const std::string pool = R"(
chan { name: "jobs" }
chan { name: "results" cap: 4 }
waitgroup { name: "wg" }
func { name: "main"
  op { add { wg: "wg" n: 3 } }
  op { loop { count: 3 op { go { func: "worker" } } } }
  op { go { func: "feeder" } }
  op { go { func: "closer" } }
  op { loop { range: "results" var: "r" op { compute { duration_expr: "r *U" } } } }
}
func { name: "feeder"
  op { loop { var: "i" count: 10 op { send { chan: "jobs" value: "i + 1" } } } }
  op { close { chan: "jobs" } }
}
func { name: "worker"
  op { loop { range: "jobs" var: "v" op {
    compute { duration_expr: "v *U" } } op {
    send { chan: "results" value: "2 * v" } } } }
  op { done { wg: "wg" } }
}
func { name: "closer"
  op { wait { wg: "wg" } }
  op { close { chan: "results" } }
}
)";
  const double units = work_in_units(pool, 1);
  CHECK(units >= 165);
  CHECK(units < 165.2);
}

// v, ok := <-c three times on a channel holding 5 and 7, then closed: (5 + 10) + (7 + 10) + 0.
// The third receive reuses the variables of the first two, so a closed channel that did not zero
// v would leave 7 there (39), and an ok that stayed 1 would add 10 (42).
TEST_CASE("values: a receive from a closed channel gives 0 and ok 0", "[sim][values]") {
  const std::string text = R"(
chan { name: "c" cap: 2 }
func { name: "main"
  op { send { chan: "c" value: "5" } }
  op { send { chan: "c" value: "7" } }
  op { close { chan: "c" } }
  op { loop { count: 3 op { recv { chan: "c" var: "v" ok: "ok" } }
                      op { compute { duration_expr: "(v + 10 * ok) *U" } } } }
}
)";
  const double units = work_in_units(text, 1);
  CHECK(units >= 32);
  CHECK(units < 32.1);
}

// A select's receive case on a closed channel: the buffered 4 first (4 U), then twice the closed
// case, with v = 0 and ok = 0 (10 U each), never the default (100 U): 24 U.
TEST_CASE("values: a select's receive case takes a closed channel's zero and ok 0", "[sim][values]") {
  const std::string text = R"(
chan { name: "data" cap: 1 }
func { name: "main"
  op { send { chan: "data" value: "4" } }
  op { close { chan: "data" } }
  op { loop { count: 3 op { select {
    case { recv { chan: "data" var: "v" ok: "ok" } op { compute { duration_expr: "(v + 10 * (1 - ok)) *U" } } }
    default { op { compute { duration_expr: "100 *U" } } } } } } }
}
)";
  const double units = work_in_units(text, 1);
  CHECK(units >= 24);
  CHECK(units < 24.1);
}

// Selects that park: main's send case waits for a receiver, which takes 6 from the parked case
// (6 U); then main's receive case waits and a sender hands it 9 directly (9 U): 15 U.
TEST_CASE("values: a parked select's send and receive cases carry values", "[sim][values]") {
  const std::string text = R"(
chan { name: "a" }
chan { name: "b" }
chan { name: "never" }
waitgroup { name: "wg" }
func { name: "main"
  op { add { wg: "wg" n: 2 } }
  op { go { func: "taker" } }
  op { select { case { send { chan: "a" value: "6" } } case { recv { chan: "never" } } } }
  op { go { func: "giver" } }
  op { select { case { recv { chan: "never" var: "x" } }
                case { recv { chan: "b" var: "w" } op { compute { duration_expr: "w *U" } } } } }
  op { wait { wg: "wg" } }
}
func { name: "taker"
  op { recv { chan: "a" var: "v" } }
  op { compute { duration_expr: "v *U" } }
  op { done { wg: "wg" } }
}
func { name: "giver"
  op { send { chan: "b" value: "9" } }
  op { done { wg: "wg" } }
}
)";
  const double units = work_in_units(text, 1);
  CHECK(units >= 15);
  CHECK(units < 15.1);
}

// A sender sends 1, 2, 3; the receiver's i-th receive computes (i+1)*v U: in order 1 + 4 + 9 =
// 14 U (reversed: 10; any other order or a lost value differs too). Unbuffered: each value goes
// directly from sender to receiver; cap 1: also through the buffer and through a full buffer with
// a parked sender; cap 3: through the buffer.
TEST_CASE("values: hand-offs keep values in order", "[sim][values]") {
  const std::string cap = GENERATE(as<std::string>{}, "0", "1", "3");
  const int32_t procs = GENERATE(1, 2);
  const std::string text = R"(
chan { name: "c" cap: )" + cap + R"( }
func { name: "main"
  op { go { func: "sender" } }
  op { loop { var: "i" count: 3 op { recv { chan: "c" var: "v" } }
                               op { compute { duration_expr: "(i + 1) * v *U" } } } }
}
func { name: "sender"
  op { loop { var: "i" count: 3 op { send { chan: "c" value: "i + 1" } } } }
}
)";
  INFO("cap " << cap << ", GOMAXPROCS " << procs);
  const double units = work_in_units(text, procs);
  CHECK(units >= 14);
  CHECK(units < 14.1);
}

TEST_CASE("values: a value that cannot be computed ends the run as a panic", "[sim][values]") {
  expect_panic(R"s(
chan { name: "c" cap: 1 }
func { name: "main" op { send { chan: "c" value: "1 / 0" } } }
)s", "runtime error: integer divide by zero", "3:43: value \"1 / 0\"");
  expect_panic(R"s(
chan { name: "c" cap: 1 }
func { name: "main"
  op { send { chan: "c" value: "-2" } }
  op { recv { chan: "c" var: "v" } }
  op { sleep { duration_expr: "v * 1us" } }
}
)s", "duration_expr is -2000: out of range", "6:16: duration_expr \"v * 1us\"");
  expect_panic(R"s(
chan { name: "c" cap: 1 }
func { name: "main"
  op { send { chan: "c" value: "9223372036854775807" } }
  op { loop { range: "c" var: "v" op { compute { duration_expr: "v * 1ns + 1" } } } }
}
)s", "runtime error: integer overflow", "5:50: duration_expr");
}

// Go evaluates a select's channel operands and sent values once, in source order: the first
// case's bad index panics before the second case's division by zero (laid out sends first, the
// division came first).
TEST_CASE("values: a select evaluates its cases in source order", "[sim][values]") {
  expect_panic(R"s(
chan { name: "a" count: 2 }
chan { name: "b" }
func { name: "main"
  op { select { case { recv { chan: "a" index: "5" } } case { send { chan: "b" value: "1 / 0" } } } }
}
)s", "runtime error: index out of range [5] with length 2", "5:");
}
