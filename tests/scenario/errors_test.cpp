// Each kind of bad scenario is a ScenarioError whose first diagnostic names the offending line
// and column. Every test writes the bad text and finds the expected position in it: the
// `at` argument is the token the error belongs to, marked by its first occurrence after `after`.
#include <catch2/catch.hpp>
#include <string>

#include "sim/scenario/scenario.h"

using namespace gmp::scenario;

namespace {

const std::string kName = "bad.textproto";

struct Where {
  int line;
  int column;
};

// The 1-based position of the first `at` after the first `after` (after "" is the start).
Where find(const std::string& text, const std::string& at, const std::string& after = "") {
  size_t from = after.empty() ? 0 : text.find(after);
  REQUIRE(from != std::string::npos);
  size_t offset = text.find(at, from);
  REQUIRE(offset != std::string::npos);
  size_t line_start = text.rfind('\n', offset);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  int line = 1;
  for (size_t i = 0; i < offset; i++) line += text[i] == '\n';
  return {line, static_cast<int>(offset - line_start) + 1};
}

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
