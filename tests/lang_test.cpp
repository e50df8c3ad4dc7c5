// Runs of the scenario language's expressions, parameters, channel arrays and benchmark funcs
// (docs/scenarios.md): what each computes shows in the virtual times of the run, and a value that
// cannot be computed ends the run as a Go panic does.
#include <catch2/catch.hpp>

#include <string>

#include "sim/cost/profile.h"
#include "sim/simulation/simulation.h"
#include "sim/scenario/scenario.h"
#include "tests/scenario_run.h"

using namespace gmp;
using engine::Engine;
using engine::SimResult;

namespace {

constexpr int64_t kUs = 1000;

SimResult run(const std::string& text, int32_t procs) { return test::run_scenario_text(text, "lang.textproto", procs); }

// Four workers; worker i computes `work` (an expression of i), main waits for all of them.
std::string workers(const std::string& work) {
  return R"(
waitgroup { name: "wg" }
func { name: "main"
  op { add { wg: "wg" n: 4 } }
  op { loop { var: "i" count: 4 op { go { func: "worker" arg: "i" } } } }
  op { wait { wg: "wg" } }
}
func { name: "worker" param: "i" op { compute { ns_expr: ")" +
         work + R"(" } } op { done { wg: "wg" } } }
)";
}

// A run that ends in a panic: Go's exit status 2, its message and the expression's position.
void expect_panic(const std::string& text, const std::string& says, const std::string& where) {
  INFO(text);
  test::check_panic(run(text, 2), "lang.textproto", says, where);
}

}  // namespace

// Worker i computes (i+1)*100us. At 1 P they run one after another: 100+200+300+400 = 1000us past
// a run whose workers compute nothing; at 4 Ps side by side: the longest, 400us. Were every
// worker bound the same argument, the two would not differ by the same sums.
TEST_CASE("a worker's compute depends on its parameter", "[sim][lang]") {
  const int64_t base1 = run(workers("0*i"), 1).end_time;
  const int64_t base4 = run(workers("0*i"), 4).end_time;
  const SimResult one = run(workers("(i+1)*100000"), 1);
  const SimResult four = run(workers("(i+1)*100000"), 4);
  REQUIRE(one.stop == Engine::Stop::Exit);
  REQUIRE(four.stop == Engine::Stop::Exit);
  // The workers' own scheduling costs are the same in both runs, up to a few us of wake-ups.
  CHECK(one.end_time - base1 >= 1000 * kUs);
  CHECK(one.end_time - base1 < 1010 * kUs);
  CHECK(four.end_time - base4 >= 400 * kUs);
  CHECK(four.end_time - base4 < 420 * kUs);
}

// 64 goroutines of one function pass one token around ring[0..63]; each hop computes 10us, so one
// lap, the operation, takes 640us plus 64 hand-offs (well under 1us each at 1 P: runnext), and
// ns/op is the benchmark function's time over N laps. Had any node passed the token fewer than N
// times the laps would be fewer than N and ns/op below 640us; had one passed it more, the ring
// would deadlock.
TEST_CASE("a ring of 64 goroutines over a channel array passes its token N times", "[sim][lang]") {
  const std::string ring = R"(
chan { name: "ring" count: 64 cap: 1 }
waitgroup { name: "wg" }
func { name: "node" param: "i"
  op { loop { count_expr: "N"
    op { recv { chan: "ring" index: "i" } }
    op { compute { ns: 10000 } }
    op { send { chan: "ring" index: "(i+1)%64" } } } }
  op { done { wg: "wg" } }
}
func { name: "bench"
  op { add { wg: "wg" n: 64 } }
  op { loop { var: "i" count: 64 op { go { func: "node" arg: "i" } } } }
  op { send { chan: "ring" index: "0" } }
  op { wait { wg: "wg" } }
  op { recv { chan: "ring" index: "0" } }
}
benchmark { name: "BenchmarkRing" func: "bench" n: 20 }
)";
  const SimResult r = run(ring, 1);
  REQUIRE(r.stop == Engine::Stop::Exit);
  CHECK(r.exit_code == 0);
  CHECK(r.goroutines == 66);  // main, the benchmark goroutine and 64 nodes
  REQUIRE(r.measured);
  CHECK(r.bench_name == "BenchmarkRing");
  CHECK(r.ops == 20);
  CHECK(r.ns_per_op >= 640.0 * kUs);
  CHECK(r.ns_per_op < 640.0 * kUs + 64.0 * kUs);
  // The timed part is nearly the whole run: 20 laps.
  CHECK(static_cast<double>(r.end_time) >= 20 * r.ns_per_op);
}

// bench spends 1ms setting up, then N ops of 1us. Timed from the function's start, ns/op counts
// the setup: (1ms + N us) / N = 2us at N = 1000; reset_timer after the setup leaves 1us.
TEST_CASE("ns/op of a benchmark func is timed from its start or from reset_timer", "[sim][lang]") {
  auto bench = [](const std::string& reset) {
    return R"(
func { name: "bench"
  op { compute { duration: "1ms" } }
  )" + reset + R"(
  op { loop { count_expr: "N" op { compute { ns: 1000 } } } }
}
benchmark { name: "BenchmarkSetup" func: "bench" n: 1000 }
)";
  };
  const SimResult timed = run(bench(""), 1);
  const SimResult reset = run(bench("op { reset_timer {} }"), 1);
  REQUIRE(timed.measured);
  REQUIRE(reset.measured);
  CHECK(timed.ops == 1000);
  CHECK(reset.ops == 1000);
  CHECK(timed.ns_per_op >= 2000);
  CHECK(timed.ns_per_op < 2000 * 1.02);
  CHECK(reset.ns_per_op >= 1000);
  CHECK(reset.ns_per_op < 1000 * 1.02);
}

// b.N split over 8 workers, N/8 each: at 8 Ps they run side by side, so ns/op is an eighth of
// the 8us each op computes, plus the start and the wait.
TEST_CASE("b.N split over 8 workers takes an eighth of the time at 8 Ps", "[sim][lang]") {
  const std::string fanout = R"(
waitgroup { name: "wg" }
func { name: "bench"
  op { add { wg: "wg" n: 8 } }
  op { loop { count: 8 op { go { func: "worker" } } } }
  op { wait { wg: "wg" } }
}
func { name: "worker" op { loop { count_expr: "N/8" op { compute { ns: 8000 } } } } op { done { wg: "wg" } } }
benchmark { name: "BenchmarkFanout" func: "bench" n: 800 }
)";
  const SimResult one = run(fanout, 1);
  const SimResult eight = run(fanout, 8);
  REQUIRE(one.measured);
  REQUIRE(eight.measured);
  CHECK(one.ns_per_op >= 8000);
  CHECK(one.ns_per_op < 8000 * 1.02);
  CHECK(eight.ns_per_op >= 1000);
  CHECK(eight.ns_per_op < 1000 * 1.1);
}

// The same loop name in two functions: the benchmark names one of them as "func.loop".
TEST_CASE("a benchmark loop named func.loop is that function's loop", "[sim][lang]") {
  auto text = [](const std::string& which) {
    return R"(
chan { name: "done" }
func { name: "main"
  op { go { func: "f" } }
  op { loop { name: "l" count: 10 op { compute { ns: 1000 } } } }
  op { recv { chan: "done" } }
}
func { name: "f" op { loop { name: "l" count: 30 op { compute { ns: 3000 } } } } op { send { chan: "done" } } }
benchmark { name: "BenchmarkL" loop: ")" + which + R"(" }
)";
  };
  const SimResult m = run(text("main.l"), 2);
  const SimResult f = run(text("f.l"), 2);
  REQUIRE(m.measured);
  REQUIRE(f.measured);
  CHECK(m.ops == 10);
  CHECK(f.ops == 30);
  CHECK(m.ns_per_op >= 1000);
  CHECK(m.ns_per_op < 1100);
  CHECK(f.ns_per_op >= 3000);
  CHECK(f.ns_per_op < 3100);
}

TEST_CASE("an index out of range ends the run as Go's panic does", "[sim][lang]") {
  expect_panic(R"s(
chan { name: "ring" count: 64 cap: 1 }
func { name: "main"
  op { loop { var: "i" count: 65
    op { send { chan: "ring" index: "i" } } } }
}
)s", "runtime error: index out of range [64] with length 64", "5:30: index \"i\"");
  expect_panic(R"s(
chan { name: "ring" count: 4 cap: 1 }
func { name: "main" op { select { case { recv { chan: "ring" index: "-1" } } default {} } } }
)s", "runtime error: index out of range [-1] with length 4", "3:62: index \"-1\"");
}

TEST_CASE("a connection index out of range ends the run as Go's panic does", "[sim][lang][net]") {
  expect_panic(R"s(
conn { name: "c" conns: 4 count: 1 ns: 1000 }
func { name: "main"
  op { loop { var: "i" count: 5
    op { read { conn: "c" index: "i" } } } }
}
)s", "runtime error: index out of range [4] with length 4", "5:27: index \"i\"");
  expect_panic(R"s(
conn { name: "c" conns: 4 count: 1 ns: 1000 }
func { name: "main" op { write { conn: "c" index: "-1" } } }
)s", "runtime error: index out of range [-1] with length 4", "3:44: index \"-1\"");
}

TEST_CASE("an overflow or a division by zero ends the run as a panic", "[sim][lang]") {
  expect_panic(R"s(
func { name: "main" op { go { func: "f" arg: "3" } } op { sleep { ns: 1000000 } } }
func { name: "f" param: "k" op { loop { count: 1 op { compute { ns_expr: "1000 / (k - 3)" } } } } }
)s", "runtime error: integer divide by zero", "3:65: ns_expr");
  expect_panic(R"s(
func { name: "main" op { loop { var: "i" count: 2 op { sleep { ns_expr: "i % (1 - i)" } } } } }
)s", "runtime error: integer divide by zero", "2:64");
  expect_panic(R"s(
func { name: "f" op { loop { count_expr: "N * N * N" op { gosched {} } } } }
benchmark { name: "BenchmarkBig" func: "f" n: 10000000 }
)s", "runtime error: integer overflow", "2:30: count_expr");
}

TEST_CASE("a computed value outside the literal's bounds ends the run as a panic", "[sim][lang]") {
  expect_panic(R"s(
func { name: "main" op { loop { count_expr: "2 - 3" op { gosched {} } } } }
)s", "count_expr is -1: out of range, from 0 to 1000000000000000", "2:33");
  expect_panic(R"s(
waitgroup { name: "wg" }
func { name: "main" op { add { wg: "wg" n_expr: "2147483647 + 1" } } }
)s", "n_expr is 2147483648: out of range", "3:41");
}
