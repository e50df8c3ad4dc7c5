// Each kind of bad scenario is a ScenarioError whose first diagnostic names the offending line
// and column. Every test writes the bad text and finds the expected position in it: the
// `at` argument is the token the error belongs to, marked by its first occurrence after `after`.
#include <catch2/catch.hpp>
#include <string>

#include <sys/stat.h>

#include <fstream>

#include "sim/scenario/scenario.h"
#include "tests/temp_dir.h"
#include "tests/scenario/where.h"

using namespace gmp::scenario;

namespace {

const std::string kName = "bad.textproto";

using testing::find;
using testing::Where;

std::vector<Diagnostic> errors(const std::string& text) {
  try {
    parse_scenario(text, kName);
  } catch (const ScenarioError& e) {
    REQUIRE_FALSE(e.diagnostics().empty());
    return e.diagnostics();
  }
  FAIL("no ScenarioError for:\n" << text);
  return {};
}

// The first error of `text` is at `w` and its message contains `says`; what() reads
// path:line:column: message.
void expect(const std::string& text, Where w, const std::string& says) {
  INFO(text);
  Diagnostic d = errors(text).front();
  CHECK(d.source == kName);
  CHECK(d.line == w.line);
  CHECK(d.column == w.column);
  CHECK_THAT(d.message, Catch::Contains(says));
  std::string prefix = kName + ":" + std::to_string(w.line) + ":" + std::to_string(w.column) + ": ";
  try {
    parse_scenario(text, kName);
  } catch (const ScenarioError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith(prefix + d.message));
  }
}

// A main function around the given ops, with one declaration of each kind.
std::string program(const std::string& ops) {
  return "chan { name: \"c\" }\n"
         "mutex { name: \"mu\" }\n"
         "waitgroup { name: \"wg\" }\n"
         "func {\n"
         "  name: \"main\"\n" +
         ops + "}\n";
}

}  // namespace

// A device declaration, for the cases that need one.
const std::string kNic = "device { name: \"nic\" ns: 1000 }\n";

TEST_CASE("a correct program has no errors, so the cases below fail for their one fault") {
  CHECK_NOTHROW(parse_scenario(kNic + program("  op { send { chan: \"c\" } }\n"
                                       "  op { lock { mutex: \"mu\" } }\n"
                                       "  op { wait { wg: \"wg\" } }\n"
                                       "  op { sleep { ns: 5 } }\n"
                                       "  op { submit { device: \"nic\" } }\n"
                                       "  op { busy_poll { ns: 5 until_complete: \"nic\" } }\n"),
                               kName));
}

TEST_CASE("unknown field") {
  std::string text = program("  op { sleep { nanos: 5 } }\n");
  expect(text, find(text, "nanos"), "unknown field \"nanos\"");
}

TEST_CASE("unknown top-level field") {
  std::string text = "channel { name: \"c\" }\n" + program("");
  expect(text, find(text, "channel"), "unknown field \"channel\"");
}

TEST_CASE("unknown operation") {
  std::string text = program("  op { sleep { ns: 5 } }\n  op { spin { ns: 5 } }\n");
  expect(text, find(text, "spin"), "unknown operation \"spin\"");
}

TEST_CASE("two operations in one op") {
  std::string text = program("  op { gosched {} exit {} }\n");
  expect(text, find(text, "exit"), "oneof");
}

TEST_CASE("negative duration in ns") {
  std::string text = program("  op { compute { ns: 5 } }\n  op { sleep { ns: -5 } }\n");
  expect(text, find(text, "ns", "sleep"), "negative duration");
}

TEST_CASE("negative duration as a string") {
  std::string text = program("  op { syscall { duration: \"-1ms\" } }\n");
  expect(text, find(text, "duration"), "negative");
}

TEST_CASE("bad duration string") {
  std::string text = program("  op { compute { duration: \"1.5x\" } }\n");
  expect(text, find(text, "duration"), "unknown unit");
}

TEST_CASE("missing duration") {
  std::string text = program("  op { compute { ns: 5 } }\n  op { sleep {} }\n");
  expect(text, find(text, "sleep"), "sleep needs a duration");
}

TEST_CASE("missing compute amount") {
  std::string text = program("  op { compute { cgo: true } }\n");
  expect(text, find(text, "compute"), "or iterations");
}

TEST_CASE("negative loop count") {
  std::string text = program("  op { loop { count: -3 op { gosched {} } } }\n");
  expect(text, find(text, "count"), "negative count");
}

TEST_CASE("missing loop count") {
  std::string text = program("  op { loop { name: \"l\" op { gosched {} } } }\n");
  expect(text, find(text, "loop"), "count, range or forever");
}

TEST_CASE("missing parallel count") {
  std::string text = program("  op { parallel { op { compute { ns: 1 } } } }\n");
  expect(text, find(text, "parallel"), "parallel needs count");
}

TEST_CASE("negative waitgroup add") {
  std::string text = program("  op { add { wg: \"wg\" n: -1 } }\n");
  expect(text, find(text, "n: -1"), "negative n");
}

TEST_CASE("negative channel capacity") {
  std::string text = "chan { name: \"d\" cap: -1 }\n" + program("");
  expect(text, find(text, "cap"), "negative channel capacity");
}

TEST_CASE("undeclared channel") {
  std::string text = program("  op { send { chan: \"c\" } }\n  op { recv { chan: \"nope\" } }\n");
  expect(text, find(text, "chan", "recv"), "undeclared channel \"nope\"");
}

TEST_CASE("undeclared channel in a select case") {
  std::string text = program("  op { select { case { recv { chan: \"nope\" } } } }\n");
  expect(text, find(text, "chan", "recv"), "undeclared channel \"nope\"");
}

TEST_CASE("missing channel") {
  std::string text = program("  op { close {} }\n");
  expect(text, find(text, "close"), "close needs a channel");
}

TEST_CASE("undeclared mutex") {
  std::string text =
      program("  op { lock { mutex: \"mu\" } }\n  op { unlock { mutex: \"mx\" } }\n");
  expect(text, find(text, "mutex", "unlock"), "undeclared mutex \"mx\"");
}

TEST_CASE("undeclared waitgroup") {
  std::string text = program("  op { done { wg: \"group\" } }\n");
  expect(text, find(text, "wg", "done"), "undeclared waitgroup \"group\"");
}

TEST_CASE("undeclared device, in a submit and in a busy_poll") {
  std::string text = kNic + program("  op { submit { device: \"disk\" } }\n");
  expect(text, find(text, "device", "submit"), "undeclared device \"disk\"");
  text = kNic + program("  op { busy_poll { ns: 5 until_complete: \"disk\" } }\n");
  expect(text, find(text, "until_complete"), "undeclared device \"disk\"");
}

TEST_CASE("a device needs a positive service time") {
  std::string text = "device { name: \"d\" ns: 0 }\n" + program("");
  expect(text, find(text, "ns: 0"), "service time must be positive");
  text = "device { name: \"d\" }\n" + program("");
  expect(text, find(text, "device { name: \"d\""), "device needs a duration");
  text = "device { name: \"d\" duration: \"-2us\" }\n" + program("");
  expect(text, find(text, "duration", "name: \"d\""), "negative");
}

TEST_CASE("busy_poll waits for a channel or a device, not both") {
  std::string text = kNic + program("  op { busy_poll { ns: 5 until_recv: \"c\" until_complete: \"nic\" } }\n");
  expect(text, find(text, "until_complete"), "not both");
  text = program("  op { busy_poll { ns: 5 } }\n");
  expect(text, find(text, "busy_poll"), "until_recv, until_complete or count");
}

TEST_CASE("undeclared function") {
  std::string text = program("  op { go { func: \"worker\" } }\n");
  expect(text, find(text, "func", "go {"), "undeclared function \"worker\"");
}

TEST_CASE("duplicate channel") {
  std::string text = program("") + "chan { cap: 1 name: \"c\" }\n";
  Where first = find(text, "name");
  expect(text, find(text, "name", "cap"),
         "duplicate channel \"c\" (first declared at " + std::to_string(first.line) + ":" +
             std::to_string(first.column) + ")");
}

TEST_CASE("duplicate function") {
  std::string text = program("") + "# the second main\nfunc {\n  name: \"main\"\n}\n";
  expect(text, find(text, "name", "# the second main"), "duplicate function \"main\"");
}

TEST_CASE("duplicate loop name") {
  std::string text = program(
      "  op { loop { name: \"l\" count: 1 op { gosched {} } } }\n"
      "  op { loop { name: \"l\" count: 2 op { gosched {} } } }\n");
  expect(text, find(text, "name", "count: 1"), "duplicate loop name \"l\"");
}

TEST_CASE("missing entry function") {
  std::string text = "func {\n  name: \"helper\"\n}\n";
  expect(text, Where{1, 1}, "no function \"main\"");
}

TEST_CASE("benchmark loop that does not exist") {
  std::string text = program("  op { loop { name: \"l\" count: 1 op { gosched {} } } }\n") +
                     "benchmark {\n  name: \"BenchmarkX\"\n  loop: \"m\"\n}\n";
  expect(text, find(text, "loop", "benchmark"), "no loop named \"m\"");
}

TEST_CASE("benchmark over a loop without a count") {
  std::string text = program("  op { loop { name: \"l\" range: \"c\" } }\n") +
                     "benchmark { name: \"BenchmarkX\" loop: \"l\" }\n";
  expect(text, find(text, "loop", "benchmark"), "has no count");
}

TEST_CASE("break outside a loop, and to a loop that does not enclose it") {
  std::string outside = program("  op { break {} }\n");
  expect(outside, find(outside, "break"), "break outside a loop");
  std::string unknown = program(
      "  op { loop { name: \"a\" count: 1 op { gosched {} } } }\n"
      "  op { loop { count: 1 op { break { loop: \"a\" } } } }\n");
  expect(unknown, find(unknown, "loop", "break"), "no enclosing loop named \"a\"");
}

TEST_CASE("empty op") {
  std::string text = program("  op { gosched {} }\n  op {}\n");
  expect(text, find(text, "op {}"), "empty op");
}

TEST_CASE("syntax error: a missing colon") {
  std::string text = program("  op { sleep { ns 5 } }\n");
  expect(text, find(text, "5"), "Expected \":\"");
}

TEST_CASE("syntax error: a missing value") {
  std::string text = program("  op { sleep { ns: } }\n");
  expect(text, find(text, "}", "ns:"), "Expected integer");
}

TEST_CASE("syntax error: an unclosed brace ends at the end of the file") {
  std::string text = program("  op { sleep { ns: 5 }\n");
  int lines = 1;
  for (char c : text) lines += c == '\n';
  expect(text, Where{lines, 1}, "end of file");
}

TEST_CASE("tabs count to the next multiple of 8, as protobuf's tokenizer does") {
  std::string text = program("\top { sleep { ns: -5 } }\n");
  Where w = find(text, "ns:");
  expect(text, Where{w.line, w.column + 7}, "negative duration");
}

TEST_CASE("every problem of a file is reported, in source order") {
  std::string text = program(
      "  op { send { chan: \"x\" } }\n"
      "  op { sleep { ns: -1 } }\n"
      "  op { go { func: \"f\" } }\n");
  std::vector<Diagnostic> all = errors(text);
  REQUIRE(all.size() == 3);
  CHECK(all[0].line == find(text, "send").line);
  CHECK(all[1].line == find(text, "sleep").line);
  CHECK(all[2].line == find(text, "go {").line);
}

TEST_CASE("a file that cannot be read names its path") {
  const std::string path = "/nonexistent/dir/missing.textproto";
  CHECK_THROWS_WITH(load_scenario(path), Catch::StartsWith(path + ": "));
}

namespace {

// `depth` constructs inside one another around a compute: each level is `open` ... "}".
std::string nest(int depth, const std::string& open, const std::string& close) {
  std::string text = "chan { name: \"c\" }\nfunc { name: \"main\"\n";
  for (int i = 0; i < depth; i++) text += open;
  text += "op { compute { ns: 1 } }";
  for (int i = 0; i < depth; i++) text += close;
  return text + "\n}\n";
}

const std::string kLoopOpen = "op { loop { count: 1 ", kLoopClose = " } }";
const std::string kSelectOpen = "op { select { case { recv { chan: \"c\" } ", kSelectClose = " } } }";

// The position of the n-th (1-based) occurrence of `what`.
Where nth(const std::string& text, const std::string& what, int n) {
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    at = text.find(what, i == 0 ? 0 : at + 1);
    REQUIRE(at != std::string::npos);
  }
  int line = 1;
  for (size_t i = 0; i < at; i++) line += text[i] == '\n';
  const size_t line_start = text.rfind('\n', at) + 1;
  return {line, static_cast<int>(at - line_start) + 1};
}

}  // namespace

TEST_CASE("nesting: 100 loops or selects inside one another compile") {
  CHECK_NOTHROW(parse_scenario(nest(100, kLoopOpen, kLoopClose), kName));
  CHECK_NOTHROW(parse_scenario(nest(100, kSelectOpen, kSelectClose), kName));
}

TEST_CASE("nesting: the 101st nested loop is an error at its position") {
  const std::string text = nest(101, kLoopOpen, kLoopClose);
  expect(text, nth(text, "loop", 101), "nested too deeply: at most 100 loops, selects and parallels");
}

TEST_CASE("nesting: the 101st nested select is an error at its position") {
  const std::string text = nest(101, kSelectOpen, kSelectClose);
  expect(text, nth(text, "select", 101), "nested too deeply: at most 100 loops, selects and parallels");
}

// Thousands of levels overflowed the stack in protobuf's text parser (3,300 loops) and in the
// compiler (800 selects): the parser's recursion limit reports them instead.
TEST_CASE("nesting: thousands of levels are reported, not a stack overflow") {
  for (const auto& [open, close] : {std::pair(kLoopOpen, kLoopClose), std::pair(kSelectOpen, kSelectClose)}) {
    for (int depth : {150, 800, 5000}) {
      INFO(depth);
      const std::vector<Diagnostic> ds = errors(nest(depth, open, close));
      CHECK_THAT(ds.front().message, Catch::StartsWith("nested too deeply: at most 100 loops"));
      CHECK(ds.front().line == 3);
    }
  }
}

// Huge times overflowed the engine's int64 clocks (undefined behaviour; in a release build a
// compute of INT64_MAX ns took no time and a device finished before it started).
TEST_CASE("ranges: a duration is at most 10^15 ns") {
  CHECK_NOTHROW(parse_scenario(program("  op { compute { ns: 1000000000000000 } }\n"), kName));
  CHECK_NOTHROW(parse_scenario(program("  op { sleep { duration: \"277h46m40s\" } }\n"), kName));
  const std::string too_long = "is too long: at most 1000000000000000ns (1,000,000 s, about 11.6 days)";
  for (const char* op : {"compute", "sleep", "syscall"}) {
    const std::string text = program(std::string("  op { ") + op + " { ns: 9223372036854775807 } }\n");
    expect(text, find(text, "ns:"), "duration 9223372036854775807ns " + too_long);
  }
  std::string text = program("  op { compute { ns: 1000000000000001 } }\n");
  expect(text, find(text, "ns:"), too_long);
  text = program("  op { sleep { duration: \"277h46m41s\" } }\n");
  expect(text, find(text, "duration"), "duration 1000001000000000ns " + too_long);
  text = program("  op { busy_poll { ns: 4611686018427387904 count: 2 } }\n");
  expect(text, find(text, "ns:"), too_long);
  text = "device { name: \"d\" ns: 4611686018427387904 }\n" + program("");
  expect(text, find(text, "ns:"), too_long);
}

TEST_CASE("ranges: iterations, counts and a WaitGroup's n") {
  CHECK_NOTHROW(parse_scenario(program("  op { compute { iterations: 1000000000000 } }\n"
                                       "  op { loop { count: 1000000000000000 op { gosched {} } } }\n"
                                       "  op { add { wg: \"wg\" n: 2147483647 } }\n"),
                               kName));
  std::string text = program("  op { compute { iterations: 1000000000001 } }\n");
  expect(text, find(text, "iterations:"), "iterations 1000000000001 is too large: at most 1000000000000");
  text = program("  op { loop { count: 9223372036854775807 op { gosched {} } } }\n");
  expect(text, find(text, "count:"), "count 9223372036854775807 is too large: at most 1000000000000000");
  text = program("  op { parallel { count: 1000000000000001 op { gosched {} } } }\n");
  expect(text, find(text, "count:"), "is too large");
  text = program("  op { busy_poll { ns: 1 count: 1000000000000001 } }\n");
  expect(text, find(text, "count:"), "is too large");
  text = program("  op { add { wg: \"wg\" n: 4294967296 } }\n");
  expect(text, find(text, "n:"), "n 4294967296 is too large: at most 2147483647 (Go's WaitGroup counter is an int32)");
}

// Assertions (docs/scenarios.md, "Assertions"): every reference resolves, every limit is a
// duration within the bounds of all durations.
namespace {

// A program whose main starts one named goroutine, "w", running main's sibling "f", then the
// given assertions.
std::string asserting(const std::string& asserts) {
  return "chan { name: \"c\" }\n"
         "func { name: \"f\" }\n"
         "func {\n"
         "  name: \"main\"\n"
         "  op { go { func: \"f\" name: \"w\" } }\n"
         "}\n" +
         asserts;
}

}  // namespace

TEST_CASE("assertions: a correct set has no errors, so the cases below fail for their one fault") {
  const Scenario s = parse_scenario(asserting("assertion { start_latency { goroutine: \"w\" duration: \"1ms\" } }\n"
                                              "assertion { start_latency { func: \"main\" ns: 0 } }\n"
                                              "assertion { chan_empty_at_exit { chan: \"c\" } }\n"
                                              "assertion { finished_at_exit { goroutine: \"w\" } }\n"
                                              "assertion { finished_at_exit { func: \"f\" } }\n"
                                              "assertion { max_runnable_latency { ns: 1000000000000000 } }\n"),
                                    kName);
  CHECK(s.assertions.size() == 6);
}

TEST_CASE("assertions: a goroutine name that no go statement gives") {
  std::string text = asserting("assertion { start_latency { goroutine: \"v\" ns: 5 } }\n");
  expect(text, find(text, "goroutine", "assert"), "no go statement named \"v\"");
  text = asserting("assertion { finished_at_exit { goroutine: \"worker\" } }\n");
  expect(text, find(text, "goroutine", "assert"), "no go statement named \"worker\"");
  text = asserting("assertion { finished_at_exit { goroutine: \"\" } }\n");
  expect(text, find(text, "goroutine", "assert"), "goroutine needs the name of a go statement");
}

TEST_CASE("assertions: an undeclared function") {
  std::string text = asserting("assertion { start_latency { func: \"g\" ns: 5 } }\n");
  expect(text, find(text, "func", "assert"), "undeclared function \"g\"");
  text = asserting("assertion { finished_at_exit { func: \"w\" } }\n");  // a goroutine's name, not a function's
  expect(text, find(text, "func", "assert"), "undeclared function \"w\"");
}

TEST_CASE("assertions: an undeclared or missing channel") {
  std::string text = asserting("assertion { chan_empty_at_exit { chan: \"d\" } }\n");
  expect(text, find(text, "chan:", "chan_empty_at_exit"), "undeclared channel \"d\"");
  text = asserting("assertion { chan_empty_at_exit {} }\n");
  expect(text, find(text, "chan_empty_at_exit"), "chan_empty_at_exit needs a channel (chan)");
}

TEST_CASE("assertions: the goroutines are missing, or given twice") {
  std::string text = asserting("assertion { start_latency { ns: 5 } }\n");
  expect(text, find(text, "start_latency"), "start_latency needs the goroutines it is about");
  text = asserting("assertion { finished_at_exit {} }\n");
  expect(text, find(text, "finished_at_exit"), "finished_at_exit needs the goroutines it is about");
  text = asserting("assertion { finished_at_exit { goroutine: \"w\" func: \"f\" } }\n");
  expect(text, find(text, "func", "assert"), "oneof");
}

TEST_CASE("assertions: a missing, negative or malformed limit") {
  std::string text = asserting("assertion { start_latency { goroutine: \"w\" } }\n");
  expect(text, find(text, "start_latency"), "start_latency needs a duration: ns or duration");
  text = asserting("assertion { max_runnable_latency {} }\n");
  expect(text, find(text, "max_runnable_latency"), "max_runnable_latency needs a duration");
  text = asserting("assertion { start_latency { goroutine: \"w\" ns: -1 } }\n");
  expect(text, find(text, "ns:"), "negative duration -1ns");
  text = asserting("assertion { max_runnable_latency { duration: \"-5us\" } }\n");
  expect(text, find(text, "duration:"), "durations must not be negative");
  text = asserting("assertion { max_runnable_latency { duration: \"5 fortnights\" } }\n");
  expect(text, find(text, "duration:"), "bad duration");
  text = asserting("assertion { max_runnable_latency { ns: 5 duration: \"5ns\" } }\n");
  expect(text, find(text, "duration:"), "oneof");
}

TEST_CASE("assertions: a limit is at most 10^15 ns, as every duration") {
  std::string text = asserting("assertion { max_runnable_latency { ns: 1000000000000001 } }\n");
  expect(text, find(text, "ns:"), "duration 1000000000000001ns is too long: at most 1000000000000000ns");
  text = asserting("assertion { start_latency { func: \"f\" duration: \"277h46m41s\" } }\n");
  expect(text, find(text, "duration:"), "is too long");
  text = asserting("assertion { start_latency { func: \"f\" duration: \"3000000h\" } }\n");
  expect(text, find(text, "duration:"), "too large for int64 nanoseconds");
}

TEST_CASE("assertions: an empty assertion, and an unknown kind") {
  std::string text = asserting("assertion {}\n");
  expect(text, find(text, "assertion"), "empty assertion: it needs one kind");
  text = asserting("assertion { eventually_empty { chan: \"c\" } }\n");
  expect(text, find(text, "eventually_empty"), "unknown field \"eventually_empty\"");
  text = asserting("assertion { chan_empty_at_exit { chan: \"c\" } finished_at_exit { func: \"f\" } }\n");
  expect(text, find(text, "finished_at_exit"), "oneof");
}

TEST_CASE("assertions: go statements' names are unique") {
  std::string text = asserting("") + "func { name: \"g\" op { go { func: \"f\" name: \"w\" } } }\n";
  expect(text, find(text, "name: \"w\"", "name: \"g\""), "duplicate goroutine name \"w\" (first given at 5:");
}

TEST_CASE("assertions: every problem is reported, in source order, among the program's") {
  std::string text = asserting(
      "assertion { chan_empty_at_exit { chan: \"x\" } }\n"
      "assertion { start_latency { goroutine: \"y\" ns: -2 } }\n");
  text.replace(text.find("func: \"f\" name"), 9, "func: \"h\"");  // and an undeclared function
  std::vector<Diagnostic> all = errors(text);
  REQUIRE(all.size() == 4);
  CHECK(all[0].line == find(text, "go {").line);
  CHECK(all[1].line == find(text, "chan_empty_at_exit").line);
  CHECK(all[2].line == find(text, "start_latency").line);
  CHECK(all[2].column == find(text, "goroutine", "start_latency").column);
  CHECK(all[3].column == find(text, "ns:", "start_latency").column);
}

TEST_CASE("connections: undeclared ones, request counts and intervals out of range") {
  const std::string conn = "conn { name: \"k\" count: 10 ns: 1000 }\n";
  CHECK_NOTHROW(parse_scenario(conn + program("  op { read { conn: \"k\" } }\n  op { write { conn: \"k\" } }\n"), kName));
  std::string text = conn + program("  op { read { conn: \"x\" } }\n");
  expect(text, find(text, "conn", "read"), "undeclared connection \"x\"");
  text = conn + program("  op { write { conn: \"y\" } }\n");
  expect(text, find(text, "conn", "write"), "undeclared connection \"y\"");
  text = "conn { name: \"k\" count: 0 ns: 1000 }\n" + program("");
  expect(text, find(text, "count"), "request count 0 is out of range: from 1 to 10000000");
  text = "conn { name: \"k\" count: 10000001 ns: 1000 }\n" + program("");
  expect(text, find(text, "count"), "out of range");
  text = "conn { name: \"k\" count: 5 ns: -1000 }\n" + program("");
  expect(text, find(text, "ns"), "negative duration");
  text = "conn { name: \"k\" count: 5 duration: \"0s\" }\n" + program("");
  expect(text, find(text, "duration"), "interval between requests must be positive");
  text = "conn { name: \"k\" count: 5 }\n" + program("");
  expect(text, find(text, "conn {"), "conn needs a duration");
  text = conn + "conn { name: \"k\" count: 1 ns: 5 }\n" + program("");
  expect(text, find(text, "name: \"k\" count: 1 "), "duplicate connection");
}

TEST_CASE("connection arrays: lengths, starts, staggers and indexes") {
  const std::string arr = "conn { name: \"k\" conns: 4 count: 10 ns: 1000 start: \"1us\" stagger_ns: 250 }\n";
  CHECK_NOTHROW(parse_scenario(arr + program("  op { read { conn: \"k\" index: \"3\" } }\n"
                                             "  op { write { conn: \"k\" index: \"3\" } }\n"),
                               kName));
  std::string text = "conn { name: \"k\" conns: 0 count: 10 ns: 1000 }\n" + program("");
  expect(text, find(text, "conns"), "array's length 0 is out of range: from 1 to 100000");
  text = "conn { name: \"k\" conns: 100001 count: 1 ns: 1000 }\n" + program("");
  expect(text, find(text, "conns"), "out of range");
  text = "conn { name: \"k\" count: 10 ns: 1000 start_ns: -5 }\n" + program("");
  expect(text, find(text, "start_ns"), "negative start -5ns");
  text = "conn { name: \"k\" count: 10 ns: 1000 start: \"-5us\" }\n" + program("");
  expect(text, find(text, "start:"), "negative");
  text = "conn { name: \"k\" conns: 2 count: 10 ns: 1000 stagger: \"-1ms\" }\n" + program("");
  expect(text, find(text, "stagger"), "negative");
  text = "conn { name: \"k\" conns: 2 count: 10 ns: 1000 stagger: \"1x\" }\n" + program("");
  expect(text, find(text, "stagger"), "unknown unit");
  text = "conn { name: \"k\" count: 10 ns: 1000 stagger_ns: 5 }\n" + program("");
  expect(text, find(text, "stagger_ns"), "a single connection has none");
  text = "conn { name: \"k\" conns: 100 count: 10 ns: 1000 stagger: \"100h\" }\n" + program("");
  expect(text, find(text, "stagger"), "the array's last connection would begin 99 staggers");
  // The bounds hold for all declarations together, and the first one past them is told.
  text = "conn { name: \"a\" conns: 1000 count: 5000 ns: 1000 }\n"
         "conn { name: \"b\" conns: 1000 count: 5001 ns: 1000 }\n" + program("");
  expect(text, find(text, "count", "name: \"b\""), "more than 10000000 requests on all connections together");
  text = "conn { name: \"a\" conns: 100000 count: 1 ns: 1000 }\n"
         "conn { name: \"b\" count: 1 ns: 1000 }\n" + program("");
  expect(text, find(text, "name", "name: \"b\""), "more than 100000 connections");
  // An array's operations name an element; a single connection's name none.
  text = arr + program("  op { read { conn: \"k\" } }\n");
  expect(text, find(text, "conn", "read"), "connection array \"k\" needs the connection's index");
  text = "conn { name: \"k\" count: 10 ns: 1000 }\n" + program("  op { write { conn: \"k\" index: \"0\" } }\n");
  expect(text, find(text, "index", "write"), "connection \"k\" is not an array");
  text = arr + program("  op { write { conn: \"k\" index: \"j\" } }\n");
  expect(text, find(text, "index", "write"), "unknown name \"j\"");
}

TEST_CASE("bursts: at least one request at a time") {
  CHECK_NOTHROW(parse_scenario("conn { name: \"k\" count: 10 ns: 1000 burst: 4 }\n" + program(""), kName));
  std::string text = "conn { name: \"k\" count: 10 ns: 1000 burst: 0 }\n" + program("");
  expect(text, find(text, "burst"), "burst 0 is out of range: from 1 to 10000000");
  text = "conn { name: \"k\" count: 10 ns: 1000 burst: -3 }\n" + program("");
  expect(text, find(text, "burst"), "burst -3 is out of range");
}

namespace {

// A scenario in dir whose connection declaration `conn` names an arrival file; the first
// diagnostic of loading it.
Diagnostic first_error(const TempDir& dir, const std::string& conn) {
  const std::string path = dir.file("server.textproto");
  std::ofstream(path) << conn << "\nfunc { name: \"main\" }\n";
  try {
    load_scenario(path);
  } catch (const ScenarioError& e) {
    return e.diagnostics().front();
  }
  FAIL("no ScenarioError for " << conn);
  return {};
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

// Problems with the file as a whole are the scenario's, at the `arrivals` field; a bad line is
// the arrival file's, at its own line and column.
TEST_CASE("arrival files: unreadable ones at the scenario's field, bad lines at their own position") {
  const TempDir dir("gmp_arrivals");
  const std::string scenario = dir.file("server.textproto");
  write_file(dir.file("ok.txt"), "# time  conn\n0 0\n1500 1\n\n2us 0   # a comment\n3ms\n");
  const Scenario ok = [&] {
    write_file(scenario, "conn { name: \"c\" conns: 2 arrivals: \"ok.txt\" }\nfunc { name: \"main\" }\n");
    return load_scenario(scenario);
  }();
  REQUIRE(ok.conns.size() == 1);
  CHECK(ok.conns[0].times == std::vector<int64_t>{0, 2000, 3000000, 1500, 3000000});
  CHECK(ok.conns[0].first == std::vector<int64_t>{0, 3, 5});
  CHECK(ok.conns[0].requests(0) == 3);

  // At the field: missing, a directory, a FIFO, a device.
  Diagnostic d = first_error(dir, "conn { name: \"c\" arrivals: \"none.txt\" }");
  CHECK(d.source == scenario);
  CHECK(d.line == 1);
  CHECK(d.column == 18);
  CHECK_THAT(d.message, Catch::Contains("none.txt\" cannot open: No such file"));
  std::filesystem::create_directory(dir.file("sub"));
  d = first_error(dir, "conn {\n  name: \"c\"\n  arrivals: \"sub\" }");
  CHECK(d.source == scenario);
  CHECK(d.line == 3);
  CHECK(d.column == 3);
  CHECK_THAT(d.message, Catch::Contains("is a directory"));
  REQUIRE(mkfifo(dir.file("fifo").c_str(), 0600) == 0);
  d = first_error(dir, "conn { name: \"c\" arrivals: \"fifo\" }");
  CHECK(d.source == scenario);
  CHECK_THAT(d.message, Catch::Contains("is not a regular file"));
  d = first_error(dir, "conn { name: \"c\" arrivals: \"/dev/zero\" }");
  CHECK_THAT(d.message, Catch::Contains("\"/dev/zero\" is not a regular file"));
  write_file(dir.file("empty.txt"), "# nothing\n");
  d = first_error(dir, "conn { name: \"c\" arrivals: \"empty.txt\" }");
  CHECK_THAT(d.message, Catch::Contains("gives no arrival times"));

  // In the file: each bad line at its position.
  struct Bad {
    std::string text;
    int line;
    int column;
    std::string says;
  };
  for (const Bad& b : std::vector<Bad>{
           {"10\n  1x\n", 2, 3, "unknown unit"},
           {"10\n5\n", 2, 1, "is earlier than connection 0's arrival before it (line 1)"},
           {"-5\n", 1, 1, "negative"},
           {"10 1\n", 1, 4, "an index needs an array"},
           {"99999999999999999999\n", 1, 1, "too long"},
       }) {
    INFO(b.text);
    write_file(dir.file("bad.txt"), b.text);
    d = first_error(dir, "conn { name: \"c\" arrivals: \"bad.txt\" }");
    CHECK(d.source == dir.file("bad.txt"));
    CHECK(d.line == b.line);
    CHECK(d.column == b.column);
    CHECK_THAT(d.message, Catch::Contains(b.says));
  }
  write_file(dir.file("bad.txt"), "0 0\n\t7 2\n");
  d = first_error(dir, "conn { name: \"c\" conns: 2 arrivals: \"bad.txt\" }");
  CHECK(d.source == dir.file("bad.txt"));
  CHECK(d.line == 2);
  CHECK(d.column == 4);
  CHECK_THAT(d.message, Catch::Contains("connection index 2 is not one of 0 to 1"));
  write_file(dir.file("bad.txt"), "0 0 0\n");
  d = first_error(dir, "conn { name: \"c\" conns: 2 arrivals: \"bad.txt\" }");
  CHECK(d.column == 5);
  CHECK_THAT(d.message, Catch::Contains("too many columns"));

  // The file gives the times: an interval, start or stagger beside it is an error; a count must
  // match what it gives.
  d = first_error(dir, "conn { name: \"c\" conns: 2 arrivals: \"ok.txt\" ns: 100 }");
  CHECK(d.column == 46);
  CHECK_THAT(d.message, Catch::Contains("with arrivals, the file gives the times"));
  d = first_error(dir, "conn { name: \"c\" conns: 2 arrivals: \"ok.txt\" count: 3 }");
  CHECK(d.column == 46);
  CHECK_THAT(d.message, Catch::Contains("gives connection 1 2 requests"));

  // A loader told to read no files (the fuzzer's) refuses the field.
  try {
    parse_scenario("conn { name: \"c\" arrivals: \"ok.txt\" }\nfunc { name: \"main\" }\n", scenario,
                   {.arrival_files = false});
    FAIL("no error");
  } catch (const ScenarioError& e) {
    CHECK(e.diagnostics().front().column == 18);
    CHECK_THAT(e.diagnostics().front().message, Catch::Contains("arrival files are not read here"));
  }
}

TEST_CASE("write service and send buffer: positive, and a buffer only beside a service") {
  CHECK_NOTHROW(parse_scenario("conn { name: \"k\" count: 1 ns: 10 write_service: \"1us\" send_buffer: 4 }\n" +
                               program(""), kName));
  std::string text = "conn { name: \"k\" count: 1 ns: 10 write_service_ns: -4 }\n" + program("");
  expect(text, find(text, "write_service_ns"), "negative write_service -4ns");
  text = "conn { name: \"k\" count: 1 ns: 10 write_service: \"0s\" }\n" + program("");
  expect(text, find(text, "write_service"), "a write_service must be positive");
  text = "conn { name: \"k\" count: 1 ns: 10 write_service: \"1us\" send_buffer: 0 }\n" + program("");
  expect(text, find(text, "send_buffer"), "send_buffer 0 is out of range");
  text = "conn { name: \"k\" count: 1 ns: 10 send_buffer: 2 }\n" + program("");
  expect(text, find(text, "send_buffer"), "send_buffer needs a write_service");
}

TEST_CASE("listeners, accept and close: what they name must exist and fit") {
  const std::string decl = "conn { name: \"k\" conns: 2 count: 1 ns: 10 }\n"
                           "listener { name: \"ln\" conn: \"k\" ns: 1000 }\n";
  CHECK_NOTHROW(parse_scenario(decl + program("  op { accept { listener: \"ln\" var: \"j\" } }\n"
                                              "  op { read { conn: \"k\" index: \"j\" } }\n"
                                              "  op { close { conn: \"k\" index: \"j\" } }\n"),
                               kName));
  std::string text = decl + program("  op { accept { listener: \"lx\" } }\n");
  expect(text, find(text, "listener", "accept"), "undeclared listener \"lx\"");
  text = "listener { name: \"ln\" conn: \"q\" ns: 5 }\n" + program("");
  expect(text, find(text, "conn"), "undeclared connection \"q\"");
  text = decl + "listener { name: \"l2\" conn: \"k\" ns: 5 }\n" + program("");
  expect(text, find(text, "conn", "l2"), "already has a listener, \"ln\"");
  text = "conn { name: \"k\" count: 1 ns: 10 }\nlistener { name: \"ln\" conn: \"k\" ns: -5 }\n" + program("");
  expect(text, find(text, "ns: -5"), "negative duration");
  text = "conn { name: \"k\" count: 1 ns: 10 }\nlistener { name: \"ln\" conn: \"k\" duration: \"0s\" }\n" + program("");
  expect(text, find(text, "duration", "listener"), "interval between connections must be positive");
  text = "conn { name: \"k\" conns: 2 count: 1 ns: 10 stagger_ns: 4 }\nlistener { name: \"ln\" conn: \"k\" ns: 5 }\n" +
         program("");
  expect(text, find(text, "conn", "listener"), "has a stagger");
  // The accept's var is a variable like a loop's: unique, and in scope only after it.
  text = decl +
         program("  op { read { conn: \"k\" index: \"j\" } }\n  op { accept { listener: \"ln\" var: \"j\" } }\n");
  expect(text, find(text, "index", "read"), "unknown name \"j\"");
  text = decl + "func { name: \"f\" param: \"j\" op { accept { listener: \"ln\" var: \"j\" } } }\n" + program("");
  expect(text, find(text, "var", "accept"), "duplicate variable \"j\"");
  text = decl + program("  op { close { chan: \"c\" conn: \"k\" index: \"0\" } }\n");
  expect(text, find(text, "conn", "close"), "close takes chan or conn, not both");
  text = decl + program("  op { close { conn: \"zz\" } }\n");
  expect(text, find(text, "conn", "close"), "undeclared connection \"zz\"");
}
