// The compiled form of small scenarios. Rather than comparing instruction layouts, the tests run
// the compiled code with a reference reading of program.h's control flow (`run` below) and
// compare what it does with what the text says: ids resolve back to the declared names, loops
// repeat as often as their counts say, breaks, returns and selects go where Go would go.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/scenario/scenario.h"

using namespace gmp::scenario;

namespace {

// How the scripted world answers: a RangeRecv receives `range_values` values before the channel
// reads as closed; a Select takes case `select_choice` (-1: its default); ParallelNext grants
// `parallel_share` iterations.
struct Script {
  int range_values = 0;
  int select_choice = -1;
  int parallel_share = 0;
};

// One line of trace for an operation that is not control flow, naming objects by their names
// (at() fails the test on an id out of range).
std::string describe(const Scenario& s, const Instr& in) {
  auto chan = [&](int32_t i) { return s.chans.at(i).name; };
  auto time = [&] {
    return std::to_string(in.ns) + "ns+" + std::to_string(in.iterations) + "it" +
           (in.cgo ? " cgo" : "");
  };
  switch (in.op) {
    case Opcode::Compute: return "compute " + time();
    case Opcode::Go:
      return "go " + s.funcs.at(in.obj).name + (in.spawn >= 0 ? " as " + s.spawns.at(in.spawn).name : "");
    case Opcode::Exit: return "exit";
    case Opcode::Gosched: return "gosched";
    case Opcode::Send: return "send " + chan(in.obj);
    case Opcode::Recv: return "recv " + chan(in.obj);
    case Opcode::Close: return "close " + chan(in.obj);
    case Opcode::Lock: return "lock " + s.mutexes.at(in.obj).name;
    case Opcode::Unlock: return "unlock " + s.mutexes.at(in.obj).name;
    case Opcode::WgAdd:
      return "add " + s.waitgroups.at(in.obj).name + " " + std::to_string(in.count);
    case Opcode::WgDone: return "done " + s.waitgroups.at(in.obj).name;
    case Opcode::WgWait: return "wait " + s.waitgroups.at(in.obj).name;
    case Opcode::Sleep: return "sleep " + std::to_string(in.ns) + "ns";
    case Opcode::AfterFunc:
      return "after_func " + std::to_string(in.ns) + "ns " + s.funcs.at(in.obj).name +
             (in.spawn >= 0 ? " as " + s.spawns.at(in.spawn).name : "");
    case Opcode::Syscall: return "syscall " + std::to_string(in.ns) + "ns";
    case Opcode::BusyPoll:
      return "busy_poll " + time() + (in.safe_point ? " safe_point" : "") + " until " +
             (in.obj >= 0 ? chan(in.obj) : "-") + " max " + std::to_string(in.count);
    case Opcode::LockOSThread: return "lock_os_thread";
    case Opcode::UnlockOSThread: return "unlock_os_thread";
    case Opcode::Parallel:
      return "parallel " + s.funcs.at(in.obj).name + " " + std::to_string(in.count);
    default: FAIL("control flow reached describe"); return "";
  }
}

const Function& func(const Scenario& s, const std::string& name) {
  const Function* found = nullptr;
  for (const Function& f : s.funcs) found = f.name == name ? &f : found;
  REQUIRE(found != nullptr);
  return *found;
}

// Runs the named function, following program.h's definition of each control-flow opcode.
std::vector<std::string> run(const Scenario& s, const std::string& name, Script script = {}) {
  const Function* fn = &func(s, name);
  std::vector<int64_t> counters(fn->num_counters);
  std::vector<std::string> trace;
  int ranged = 0, granted = 0;
  auto size = static_cast<int32_t>(fn->code.size());
  for (int32_t pc = 0, steps = 0; pc != size; steps++) {
    REQUIRE(steps < 100000);
    REQUIRE(pc >= 0);
    REQUIRE(pc < size);
    const Instr& in = fn->code[pc++];
    switch (in.op) {
      case Opcode::Jump: pc = in.target; break;
      case Opcode::LoopStart:
        REQUIRE(in.obj < fn->num_counters);
        counters.at(in.obj) = in.count;
        if (in.count == 0) pc = in.target;
        break;
      case Opcode::LoopNext:
        if (--counters.at(in.obj) > 0) pc = in.target;
        break;
      case Opcode::RangeRecv:
        if (ranged++ == script.range_values) {
          pc = in.target;
        } else {
          trace.push_back("recv " + s.chans.at(in.obj).name);
        }
        break;
      case Opcode::Select:
        if (script.select_choice < 0) {
          REQUIRE(in.has_default);
          trace.push_back("default");
          pc = in.target;
        } else {
          REQUIRE(script.select_choice < in.num_cases);
          const SelectCase& c = fn->cases.at(in.first_case + script.select_choice);
          trace.push_back(std::string("select ") + (c.send ? "send " : "recv ") +
                          s.chans.at(c.chan).name);
          pc = c.target;
        }
        break;
      case Opcode::ParallelNext:
        if (granted++ == script.parallel_share) pc = in.target;
        break;
      default: trace.push_back(describe(s, in));
    }
  }
  return trace;
}

// The 1-based line of the first occurrence of `needle`.
int line_of(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  int line = 1;
  for (size_t i = 0; i < at; i++) line += text[i] == '\n';
  return line;
}

std::vector<std::string> repeat(int n, const std::vector<std::string>& body) {
  std::vector<std::string> out;
  for (int i = 0; i < n; i++) out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("declarations become dense ids in declaration order, and every operation resolves") {
  const std::string text = R"(
chan { name: "ping" }
chan { name: "pong" cap: 3 }
mutex { name: "mu" }
waitgroup { name: "wg" }
func {
  name: "worker"
  op { done { wg: "wg" } }
}
func {
  name: "main"
  op { add { wg: "wg" n: 2 } }
  op { go { func: "worker" } }
  op { lock { mutex: "mu" } }
  op { unlock { mutex: "mu" } }
  op { send { chan: "pong" } }
  op { recv { chan: "ping" } }
  op { close { chan: "ping" } }
  op { sleep { duration: "1.5us" } }
  op { after_func { duration: "2us" func: "worker" } }
  op { syscall { ns: 20000 } }
  op { compute { iterations: 300 cgo: true } }
  op { gosched {} }
  op { lock_os_thread {} }
  op { unlock_os_thread {} }
  op { wait { wg: "wg" } }
  op { busy_poll { ns: 50 until_recv: "ping" cgo: true } }
  op { busy_poll { iterations: 7 count: 9 safe_point: true } }
  op { exit {} }
}
)";
  Scenario s = parse_scenario(text, "small");
  CHECK(s.source == "small");
  REQUIRE(s.chans.size() == 2);
  CHECK(s.chans[0].name == "ping");
  CHECK(s.chans[0].capacity == 0);
  CHECK(s.chans[1].name == "pong");
  CHECK(s.chans[1].capacity == 3);
  REQUIRE(s.mutexes.size() == 1);
  REQUIRE(s.waitgroups.size() == 1);
  REQUIRE(s.funcs.size() == 2);
  CHECK(s.funcs[0].name == "worker");
  CHECK(s.funcs.at(s.entry).name == "main");
  CHECK_FALSE(s.benchmark.has_value());

  CHECK(run(s, "main") == std::vector<std::string>{
                              "add wg 2",
                              "go worker",
                              "lock mu",
                              "unlock mu",
                              "send pong",
                              "recv ping",
                              "close ping",
                              "sleep 1500ns",
                              "after_func 2000ns worker",
                              "syscall 20000ns",
                              "compute 0ns+300it cgo",
                              "gosched",
                              "lock_os_thread",
                              "unlock_os_thread",
                              "wait wg",
                              "busy_poll 50ns+0it cgo until ping max -1",
                              "busy_poll 0ns+7it safe_point until - max 9",
                              "exit",
                          });
  CHECK(run(s, "worker") == std::vector<std::string>{"done wg"});

  // Each instruction remembers the line of its operation.
  const Function& main = func(s, "main");
  CHECK(main.code.front().line == line_of(text, "add {"));
  CHECK(main.code.back().line == line_of(text, "exit {"));
}

TEST_CASE("the two ways of writing a duration compile to the same nanoseconds") {
  Scenario s = parse_scenario(
      R"(func { name: "main" op { sleep { ns: 1500 } } op { sleep { duration: "1.5us" } } })", "d");
  const Function& main = func(s, "main");
  REQUIRE(main.code.size() == 2);
  CHECK(main.code[0].ns == main.code[1].ns);
}

TEST_CASE("counted loops repeat their bodies count times, nested loops included") {
  const int outer = 3, inner = 4;
  const std::string text =
      "func {\n  name: \"main\"\n"
      "  op { loop { name: \"outer\" count: " +
      std::to_string(outer) + "\n    op { loop { count: " + std::to_string(inner) +
      " op { compute { ns: 1 } } } }\n"
      "    op { compute { ns: 2 } } } }\n"
      "  op { loop { count: 0 op { compute { ns: 3 } } } }\n"
      "  op { compute { ns: 4 } }\n}\n";
  Scenario s = parse_scenario(text, "loops");
  CHECK(run(s, "main") == repeat(outer, repeat(inner, {"compute 1ns+0it"}) +
                                            std::vector<std::string>{"compute 2ns+0it"}) +
                              std::vector<std::string>{"compute 4ns+0it"});
  CHECK(func(s, "main").num_counters == 2);  // two counted loops are open at once
  REQUIRE(s.loops.size() == 3);
  CHECK(s.loops[0].name == "outer");
  CHECK(s.loops[0].kind == LoopKind::Count);
  CHECK(s.funcs.at(s.loops[0].func).name == "main");
}

TEST_CASE("break leaves the named or innermost loop, return leaves the function") {
  Scenario s = parse_scenario(R"(
func {
  name: "main"
  op { loop { name: "outer" count: 5
    op { loop { count: 5
      op { compute { ns: 1 } }
      op { break { loop: "outer" } } } }
    op { compute { ns: 2 } } } }
  op { loop { count: 3
    op { compute { ns: 3 } }
    op { break {} }
    op { compute { ns: 4 } } } }
  op { compute { ns: 5 } }
  op { return {} }
  op { compute { ns: 6 } }
}
)",
                              "break");
  CHECK(run(s, "main") ==
        std::vector<std::string>{"compute 1ns+0it", "compute 3ns+0it", "compute 5ns+0it"});
}

TEST_CASE("a range loop receives until the channel is closed") {
  Scenario s = parse_scenario(R"(
chan { name: "jobs" cap: 8 }
func {
  name: "main"
  op { loop { range: "jobs" op { compute { ns: 1 } } } }
  op { gosched {} }
}
)",
                              "range");
  const int values = 3;
  CHECK(run(s, "main", {.range_values = values}) ==
        repeat(values, {"recv jobs", "compute 1ns+0it"}) + std::vector<std::string>{"gosched"});
  CHECK(run(s, "main", {.range_values = 0}) == std::vector<std::string>{"gosched"});
  CHECK(s.loops.at(0).kind == LoopKind::Range);
}

TEST_CASE(
    "select runs the chosen case's body or the default, and a plain break leaves the select") {
  Scenario s = parse_scenario(R"(
chan { name: "a" }
chan { name: "b" }
func {
  name: "main"
  op { loop { count: 2
    op { select {
      case { recv { chan: "a" } op { compute { ns: 1 } } op { break {} } op { compute { ns: 9 } } }
      case { send { chan: "b" } }
      default { op { compute { ns: 3 } } }
    } }
    op { compute { ns: 4 } } } }
}
)",
                              "select");
  using V = std::vector<std::string>;
  CHECK(run(s, "main", {.select_choice = 0}) ==
        repeat(2, {"select recv a", "compute 1ns+0it", "compute 4ns+0it"}));
  CHECK(run(s, "main", {.select_choice = 1}) == repeat(2, {"select send b", "compute 4ns+0it"}));
  CHECK(run(s, "main", {.select_choice = -1}) ==
        repeat(2, V{"default", "compute 3ns+0it", "compute 4ns+0it"}));
}

TEST_CASE("parallel runs its body as a function of its own, which the benchmark can measure") {
  const int total = 1000, share = 4;
  const std::string text =
      "func {\n  name: \"main\"\n"
      "  op { parallel { name: \"work\" count: " +
      std::to_string(total) +
      " op { compute { iterations: 20 } } } }\n}\n"
      "benchmark { name: \"BenchmarkWork\" loop: \"work\" }\n";
  Scenario s = parse_scenario(text, "parallel");
  CHECK(run(s, "main") == std::vector<std::string>{"parallel main.func1 " + std::to_string(total)});
  CHECK(run(s, "main.func1", {.parallel_share = share}) == repeat(share, {"compute 0ns+20it"}));
  CHECK(s.funcs.at(s.entry).name == "main");  // the body comes after the declared functions

  REQUIRE(s.benchmark.has_value());
  CHECK(s.benchmark->name == "BenchmarkWork");
  const Loop& l = s.loops.at(s.benchmark->loop);
  CHECK(l.name == "work");
  CHECK(l.kind == LoopKind::Parallel);
  const Function& main = s.funcs.at(l.func);
  CHECK(main.name == "main");
  CHECK(main.code.at(l.begin).op == Opcode::Parallel);
  CHECK(main.code.at(l.begin).loop == s.benchmark->loop);
  CHECK(l.end == l.begin + 1);
}

TEST_CASE("a benchmark over a counted loop spans the loop from its start to the code after it") {
  const int n = 50;
  const std::string text = R"(
chan { name: "ping" }
func {
  name: "main"
  op { loop { name: "rt" count: )" +
                           std::to_string(n) + R"( op { send { chan: "ping" } } } }
  op { close { chan: "ping" } }
}
benchmark { name: "BenchmarkRT" loop: "rt" }
)";
  Scenario s = parse_scenario(text, "bench");
  REQUIRE(s.benchmark.has_value());
  const Loop& l = s.loops.at(s.benchmark->loop);
  const Function& main = s.funcs.at(l.func);
  CHECK(main.code.at(l.begin).op == Opcode::LoopStart);
  CHECK(main.code.at(l.begin).count == n);
  CHECK(main.code.at(l.begin).loop == s.benchmark->loop);
  CHECK(main.code.at(l.end).op == Opcode::Close);
  CHECK(run(s, "main") == repeat(n, {"send ping"}) + std::vector<std::string>{"close ping"});
}

TEST_CASE("named go statements and assertions resolve to ids, with their text and position") {
  const std::string text = R"(chan { name: "a" }
chan { name: "b" }
func { name: "w" }
func {
  name: "main"
  op { go { func: "w" } }
  op { loop { count: 2 op { go { func: "w" name: "second" } } } }
  op { go { func: "w" name: "first" } }
}
assertion { start_latency { goroutine: "first" duration: "1.5us" } }   # a comment
assertion {
  finished_at_exit { func: "w" }
}
assertion { chan_empty_at_exit { chan: "b" } }
assertion { max_runnable_latency { ns: 7 } }
)";
  const Scenario s = parse_scenario(text, "t.textproto");
  // Spawns in source order; each go statement carries its own, or none.
  REQUIRE(s.spawns.size() == 2);
  CHECK(s.spawns[0].name == "second");
  CHECK(s.spawns[1].name == "first");
  for (const Spawn& sp : s.spawns) CHECK(s.funcs.at(sp.func).name == "w");
  CHECK(run(s, "main") == std::vector<std::string>{"go w", "go w as second", "go w as second", "go w as first"});
  REQUIRE(s.assertions.size() == 4);
  const Assertion& start = s.assertions[0];
  CHECK(start.kind == AssertKind::StartLatency);
  CHECK(start.spawn == 1);
  CHECK(start.func == s.spawns[1].func);
  CHECK(start.limit == 1500);
  CHECK(start.line == line_of(text, "assertion { start_latency"));
  CHECK(start.column == 1);
  CHECK(start.text == "start_latency { goroutine: \"first\" duration: \"1.5us\" }");
  const Assertion& finished = s.assertions[1];
  CHECK(finished.kind == AssertKind::FinishedAtExit);
  CHECK(finished.spawn == -1);
  CHECK(s.funcs.at(finished.func).name == "w");
  CHECK(finished.line == line_of(text, "assertion {\n"));
  CHECK(finished.text == "finished_at_exit { func: \"w\" }");
  CHECK(s.assertions[2].kind == AssertKind::ChanEmptyAtExit);
  CHECK(s.chans.at(s.assertions[2].chan).name == "b");
  CHECK(s.assertions[3].kind == AssertKind::MaxRunnableLatency);
  CHECK(s.assertions[3].limit == 7);
  CHECK(s.assertions[3].text == "max_runnable_latency { ns: 7 }");
}

TEST_CASE("a scenario without assertions compiles as before: no spawns, no assertions") {
  const Scenario s = parse_scenario("func { name: \"main\" op { go { func: \"main\" } } }", "t.textproto");
  CHECK(s.spawns.empty());
  CHECK(s.assertions.empty());
  CHECK(s.funcs.at(s.entry).code.at(0).spawn == -1);
}
