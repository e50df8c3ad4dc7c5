// The compile-time errors of expressions, parameters, channel arrays, scoped loop names and
// benchmark funcs (docs/scenarios.md): each is reported at the line and column of its field.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario/scenario.h"

using namespace gmp::scenario;

namespace {

const std::string kName = "lang.textproto";

// The 1-based position of the first `at` after the first `after` (after "" is the start).
std::pair<int, int> find(const std::string& text, const std::string& at, const std::string& after = "") {
  const size_t from = after.empty() ? 0 : text.find(after);
  REQUIRE(from != std::string::npos);
  const size_t offset = text.find(at, from);
  REQUIRE(offset != std::string::npos);
  const size_t nl = text.rfind('\n', offset);
  const size_t line_start = nl == std::string::npos ? 0 : nl + 1;
  int line = 1;
  for (size_t i = 0; i < offset; i++) line += text[i] == '\n';
  return {line, static_cast<int>(offset - line_start) + 1};
}

// The first error of text is at `at` (after `after`) and says `says`.
void expect(const std::string& text, const std::string& at, const std::string& after, const std::string& says) {
  INFO(text);
  const std::pair<int, int> w = find(text, at, after);
  try {
    parse_scenario(text, kName);
  } catch (const ScenarioError& e) {
    REQUIRE_FALSE(e.diagnostics().empty());
    const Diagnostic& d = e.diagnostics().front();
    CHECK(d.line == w.first);
    CHECK(d.column == w.second);
    CHECK_THAT(d.message, Catch::Contains(says));
    return;
  }
  FAIL("no ScenarioError");
}

const std::string kDecls = "chan { name: \"c\" }\nchan { name: \"ring\" count: 4 }\nwaitgroup { name: \"wg\" }\n";

// main with the given ops, and worker(i, n).
std::string program(const std::string& ops) {
  return kDecls + "func {\n  name: \"main\"\n" + ops +
         "}\nfunc {\n  name: \"worker\"\n  param: \"i\"\n  param: \"n\"\n  op { compute { ns_expr: \"i*n\" } }\n}\n";
}

}  // namespace

TEST_CASE("lang: a correct program using every new construct has no errors") {
  CHECK_NOTHROW(parse_scenario(
      program("  op { loop { var: \"k\" count_expr: \"2+2\"\n"
              "    op { go { func: \"worker\" arg: \"k\" arg: \"(k+1)%4\" } }\n"
              "    op { send { chan: \"ring\" index: \"k\" } }\n"
              "    op { loop { var: \"m\" count: 3 op { sleep { ns_expr: \"k*m\" } } } }\n"
              "    op { add { wg: \"wg\" n_expr: \"k\" } }\n"
              "    op { select { case { recv { chan: \"ring\" index: \"k\" } } default {} } }\n"
              "    op { busy_poll { ns: 5 until_recv: \"ring\" index: \"3-k\" } }\n"
              "    op { parallel { count_expr: \"k*10\" op { compute { iterations_expr: \"k\" } } } }\n"
              "    op { syscall { ns_expr: \"k\" } }\n"
              "  } }\n"
              "  op { loop { range: \"ring\" index: \"1\" op { close { chan: \"ring\" index: \"2\" } } } }\n"),
      kName));
}

TEST_CASE("lang: an unknown name in an expression") {
  const std::string text = program("  op { compute { ns_expr: \"x + 1\" } }\n");
  expect(text, "ns_expr", "", "unknown name \"x\": not a parameter of main");
}

TEST_CASE("lang: a loop var is visible only inside its loop") {
  const std::string text = program("  op { loop { var: \"k\" count: 2 op { gosched {} } } }\n"
                                   "  op { sleep { ns_expr: \"k\" } }\n");
  expect(text, "ns_expr", "", "unknown name \"k\"");
}

TEST_CASE("lang: N is b.N only with a benchmark func") {
  const std::string text = program("  op { loop { count_expr: \"N/8\" op { gosched {} } } }\n");
  expect(text, "count_expr", "", "N (b.N) is defined only with a benchmark func");
}

TEST_CASE("lang: a syntax error in an expression") {
  const std::string text = program("  op { loop { count_expr: \"(1+\" op { gosched {} } } }\n");
  expect(text, "count_expr", "", "count_expr \"(1+\": missing operand");
}

TEST_CASE("lang: an expression too long") {
  std::string sum = "1";
  while (sum.size() <= 1000) sum += "+1";
  const std::string text = program("  op { sleep { ns_expr: \"" + sum + "\" } }\n");
  expect(text, "ns_expr", "", "expression too long");
}

TEST_CASE("lang: an expression nested too deeply") {
  const std::string text = program("  op { sleep { ns_expr: \"" + std::string(101, '(') + "1" +
                                   std::string(101, ')') + "\" } }\n");
  expect(text, "ns_expr", "", "nested too deeply");
}

TEST_CASE("lang: a channel array needs an index") {
  const std::string text = program("  op { send { chan: \"ring\" } }\n");
  expect(text, "chan: \"ring\"", "func", "channel array \"ring\" needs the element's index");
}

TEST_CASE("lang: a plain channel takes no index") {
  const std::string text = program("  op { select { case { recv { chan: \"c\" index: \"0\" } } } }\n");
  expect(text, "index", "select", "channel \"c\" is not an array");
}

TEST_CASE("lang: a range loop over an array needs an index") {
  const std::string text = program("  op { loop { range: \"ring\" op { gosched {} } } }\n");
  expect(text, "range", "func", "needs the element's index");
}

TEST_CASE("lang: a channel array's length is from 1 to 1,000,000") {
  expect("chan { name: \"r\" count: 1000001 }\nfunc { name: \"main\" }\n", "count", "", "out of range");
  expect("chan { name: \"r\" count: 0 }\nfunc { name: \"main\" }\n", "count", "", "out of range");
}

TEST_CASE("lang: a go statement passes one argument per parameter") {
  const std::string text = program("  op { go { func: \"worker\" arg: \"1\" } }\n");
  expect(text, "arg", "func", "worker takes 2 arguments, given 1");
  const std::string none = program("  op { go { func: \"worker\" } }\n");
  expect(none, "func: \"worker\"", "main", "worker takes 2 arguments, given 0");
}

TEST_CASE("lang: after_func passes arguments as go does") {
  const std::string text = program("  op { after_func { ns: 5 func: \"worker\" arg: \"1\" arg: \"2\" arg: \"3\" } }\n");
  expect(text, "arg", "after_func", "worker takes 2 arguments, given 3");
}

TEST_CASE("lang: a parameter name is unique and not N") {
  expect(kDecls + "func { name: \"main\" }\nfunc { name: \"f\" param: \"a\" param: \"a\" }\n", "param: \"a\" }",
         "", "duplicate variable \"a\"");
  expect(kDecls + "func { name: \"main\" }\nfunc { name: \"f\" param: \"N\" }\n", "param", "", "N is b.N");
  expect(kDecls + "func { name: \"main\" }\nfunc { name: \"f\" param: \"2x\" }\n", "param", "", "is not a name");
}

TEST_CASE("lang: at most 64 parameters") {
  std::string params;
  for (int k = 0; k < 65; k++) params += " param: \"p" + std::to_string(k) + "\"";
  expect("func { name: \"main\" }\nfunc { name: \"f\"" + params + " }\n", "param: \"p64\"", "", "too many parameters");
}

TEST_CASE("lang: a loop var may not hide a parameter or an enclosing loop's var") {
  const std::string text = kDecls + "func { name: \"main\" }\nfunc { name: \"f\" param: \"i\"\n"
                                    "  op { loop { var: \"i\" count: 2 op { gosched {} } } }\n}\n";
  expect(text, "var", "", "duplicate variable \"i\"");
  const std::string nested = program("  op { loop { var: \"k\" count: 2 op { loop { var: \"k\" count: 2 } } } }\n");
  expect(nested, "var: \"k\" count: 2 }", "", "duplicate variable \"k\"");
}

TEST_CASE("lang: var is for counted loops, index for range loops") {
  expect(program("  op { loop { var: \"k\" forever: true op { gosched {} } } }\n"), "var", "", "counted loop");
  expect(program("  op { loop { index: \"0\" count: 1 op { gosched {} } } }\n"), "index", "", "range loop");
}

// ---- values (docs/scenarios.md, "Values").

TEST_CASE("lang: values on channels compile to their binds and expressions") {
  const Scenario s = parse_scenario(
      program(
          "  op { send { chan: \"c\" value: \"2+3\" } }\n"
          "  op { recv { chan: \"c\" var: \"v\" ok: \"ok\" } }\n"
          "  op { compute { duration_expr: \"v * 1us + ok\" } }\n"
          "  op { loop { range: \"c\" var: \"w\" op { compute { duration_expr: \"w * 1ms\" } } } }\n"
          "  op { select { case { recv { chan: \"c\" var: \"x\" ok: \"xok\" } op { sleep { duration_expr: \"x\" } } }\n"
          "                case { send { chan: \"c\" value: \"v\" } } } }\n"),
      kName);
  const Function& main = s.funcs.at(0);
  REQUIRE(main.code.size() >= 7);
  CHECK(main.code[0].op == Opcode::Send);
  CHECK(s.exprs.at(static_cast<size_t>(main.code[0].value)).text == "2+3");
  CHECK(main.code[1].bind == 0);
  CHECK(main.code[1].bind_ok == 1);
  CHECK(main.code[2].expr >= 0);
  CHECK(main.code[3].op == Opcode::RangeRecv);
  CHECK(main.code[3].bind == 2);  // after v and ok
  REQUIRE(main.cases.size() == 2);
  CHECK(main.cases[0].bind == 2);  // the range loop's w is out of scope again
  CHECK(main.cases[0].bind_ok == 3);
  CHECK(s.exprs.at(static_cast<size_t>(main.cases[1].value)).text == "v");
  CHECK(main.num_vars == 4);
}

TEST_CASE("lang: a received value is in scope after its receive only") {
  expect(program("  op { compute { ns_expr: \"v\" } }\n  op { recv { chan: \"c\" var: \"v\" } }\n"), "ns_expr", "",
         "unknown name \"v\"");
  expect(program("  op { select { case { recv { chan: \"c\" var: \"v\" } } } }\n  op { compute { ns_expr: \"v\" } }\n"),
         "ns_expr", "", "unknown name \"v\"");
  expect(program("  op { loop { range: \"c\" var: \"v\" } }\n  op { compute { ns_expr: \"v\" } }\n"), "ns_expr", "",
         "unknown name \"v\"");
}

TEST_CASE("lang: a receive's names may not clash") {
  expect(program("  op { recv { chan: \"c\" var: \"v\" ok: \"v\" } }\n"), "ok:", "", "needs two names");
  expect(program("  op { recv { chan: \"c\" var: \"v\" } }\n  op { recv { chan: \"c\" ok: \"v\" } }\n"), "ok:", "",
         "duplicate variable \"v\"");
  expect(program("  op { loop { var: \"k\" count: 2 op { recv { chan: \"c\" var: \"k\" } } } }\n"), "var: \"k\" }", "",
         "duplicate variable \"k\"");
  expect(program("  op { loop { range: \"c\" var: \"N\" } }\n"), "var", "", "N is b.N");
  expect(program("  op { recv { chan: \"c\" ok: \"2x\" } }\n"), "ok:", "", "is not a name");
}

TEST_CASE("lang: a value or duration_expr that does not parse is reported at its field") {
  expect(program("  op { send { chan: \"c\" value: \"1 +\" } }\n"), "value", "", "missing operand");
  expect(program("  op { compute { duration_expr: \"2 * 1.5ns\" } }\n"), "duration_expr", "",
         "not a whole number of nanoseconds");
  expect(program("  op { sleep { ns_expr: \"3us\" } }\n"), "ns_expr", "", "are for duration_expr");
  expect(program("  op { select { case { send { chan: \"c\" value: \"w\" } } } }\n"), "value", "",
         "unknown name \"w\"");
}

TEST_CASE("lang: add takes n or n_expr") {
  expect(program("  op { add { wg: \"wg\" n: 1 n_expr: \"1\" } }\n"), "n_expr", "", "not both");
}

TEST_CASE("lang: loop names are unique within their function only") {
  const std::string two = "func { name: \"main\" op { loop { name: \"l\" count: 1 op { gosched {} } } } }\n"
                          "func { name: \"f\" op { loop { name: \"l\" count: 2 op { gosched {} } } } }\n";
  const Scenario s = parse_scenario(two + "benchmark { name: \"BenchmarkF\" loop: \"f.l\" }\n", kName);
  REQUIRE(s.benchmark);
  CHECK(s.loops.at(static_cast<size_t>(s.benchmark->loop)).func == 1);
  const Scenario m = parse_scenario(two + "benchmark { name: \"BenchmarkM\" loop: \"main.l\" }\n", kName);
  CHECK(m.loops.at(static_cast<size_t>(m.benchmark->loop)).func == 0);
  expect(two + "benchmark { name: \"BenchmarkL\" loop: \"l\" }\n", "loop: \"l\" }", "benchmark",
         "ambiguous loop name \"l\": main.l (1:33), f.l (2:30)");
  // A parallel body's loops share its declaring function's names.
  expect("func { name: \"main\" op { loop { name: \"l\" count: 1 op { gosched {} } } }\n"
         "  op { parallel { count: 1 op { loop { name: \"l\" count: 1 op { gosched {} } } } } } }\n",
         "name: \"l\"", "parallel", "duplicate loop name \"l\"");
}

TEST_CASE("lang: a benchmark func") {
  const std::string bench = "func { name: \"b\" op { loop { count_expr: \"N\" op { gosched {} } } } }\n";
  expect(bench + "func { name: \"main\" }\nbenchmark { name: \"BenchmarkB\" func: \"b\" n: 10 }\n", "func: \"b\"",
         "benchmark", "declare no function \"main\"");
  expect(bench + "benchmark { name: \"BenchmarkB\" func: \"b\" }\n", "benchmark", "", "needs n");
  expect(bench + "benchmark { name: \"BenchmarkB\" func: \"b\" n: 0 }\n", "n: 0", "", "n 0 is out of range");
  expect(bench + "benchmark { name: \"BenchmarkB\" func: \"b\" n: 1000000000001 }\n", "n: 1", "", "out of range");
  expect(bench + "benchmark { name: \"BenchmarkB\" func: \"b\" loop: \"x\" n: 1 }\n", "loop", "benchmark",
         "loop or func, not both");
  expect("func { name: \"f\" param: \"i\" }\nbenchmark { name: \"BenchmarkB\" func: \"f\" n: 1 }\n", "func: \"f\"",
         "benchmark", "takes no parameters");
  expect(program("  op { reset_timer {} }\n"), "reset_timer", "", "needs a benchmark func");
  // The synthesized main runs the function (Bench) and is the entry.
  const Scenario s = parse_scenario(bench + "benchmark { name: \"BenchmarkB\" func: \"b\" n: 10 }\n", kName);
  REQUIRE(s.entry >= 0);
  const Function& main = s.funcs.at(static_cast<size_t>(s.entry));
  CHECK(main.name == "main");
  REQUIRE(main.code.size() == 1);
  CHECK(main.code[0].op == Opcode::Bench);
  CHECK(main.code[0].obj == 0);
  CHECK(s.benchmark->n == 10);
  CHECK(s.benchmark->func == 0);
  CHECK(s.benchmark->loop == -1);
}

TEST_CASE("lang: chan_empty_at_exit takes a plain channel") {
  expect(program("") + "assertion { chan_empty_at_exit { chan: \"ring\" } }\n", "chan: \"ring\"", "assertion",
         "not an array");
}

TEST_CASE("lang: variables get slots, parameters first") {
  const Scenario s = parse_scenario(
      program("  op { loop { var: \"a\" count: 2 op { loop { var: \"b\" count: 2 op { gosched {} } } } } }\n"
              "  op { loop { var: \"c\" count: 2 op { parallel { count: 1 op { loop { var: \"d\" count: 1 op { "
              "compute { ns_expr: \"c+d\" } } } } } } } }\n"),
      kName);
  const Function& main = s.funcs.at(0);
  CHECK(main.num_params == 0);
  CHECK(main.num_vars == 2);  // a and b nest; c reuses a's slot
  const Function& worker = s.funcs.at(1);
  CHECK(worker.num_params == 2);
  CHECK(worker.num_vars == 2);
  const Function& body = s.funcs.at(2);  // main.func1 captures c (slot 0); d is slot 1
  CHECK(body.name == "main.func1");
  CHECK(body.num_params == 1);
  CHECK(body.num_vars == 2);
}

// ---- alloc, release and gc (docs/scenarios.md, "Allocation").

namespace {
// The compiled instructions of main with the given ops and a worker(n) that allocates n bytes.
std::vector<Instr> main_code(const std::string& ops) {
  const Scenario s = parse_scenario("func {\n  name: \"main\"\n" + ops + "}\n", kName);
  return s.funcs.at(static_cast<size_t>(s.entry)).code;
}
}  // namespace

TEST_CASE("lang: alloc, release and gc compile to their opcodes with their values") {
  const std::vector<Instr> code = main_code(
      "  op { alloc { bytes: 64 count: 1000 } }\n"
      "  op { alloc { bytes: 4096 retain: true } }\n"
      "  op { alloc { bytes: 1073741824 count: 1024 } }\n"
      "  op { loop { var: \"i\" count: 2 op { alloc { bytes_expr: \"i+1\" count_expr: \"i*3\" } } } }\n"
      "  op { release { bytes: 4096 } }\n"
      "  op { release { bytes: 0 } }\n"
      "  op { gc {} }\n");
  std::vector<Instr> alloc, release, gc;
  for (const Instr& in : code) {
    if (in.op == Opcode::Alloc) alloc.push_back(in);
    if (in.op == Opcode::Release) release.push_back(in);
    if (in.op == Opcode::GC) gc.push_back(in);
  }
  REQUIRE(alloc.size() == 4);
  CHECK(alloc[0].bytes == 64);
  CHECK(alloc[0].count == 1000);
  CHECK_FALSE(alloc[0].retain);
  CHECK(alloc[1].bytes == 4096);
  CHECK(alloc[1].count == 1);  // count's default
  CHECK(alloc[1].retain);
  CHECK(alloc[2].count * alloc[2].bytes == int64_t{1} << 40);  // exactly the bound is allowed
  CHECK(alloc[3].bytes_expr >= 0);
  CHECK(alloc[3].expr >= 0);
  CHECK(alloc[3].bytes_expr != alloc[3].expr);
  REQUIRE(release.size() == 2);
  CHECK(release[0].bytes == 4096);
  CHECK(release[0].bytes_expr < 0);
  CHECK(release[1].bytes == 0);
  CHECK(gc.size() == 1);
}

TEST_CASE("lang: alloc needs bytes") {
  expect(program("  op { alloc { count: 3 } }\n"), "alloc", "name: \"main\"", "alloc needs bytes (or bytes_expr)");
}

TEST_CASE("lang: an alloc's bytes is from 1 to 1 GiB per object") {
  expect(program("  op { alloc { bytes: 0 } }\n"), "bytes", "alloc", "bytes 0 is out of range: from 1 to 1073741824");
  expect(program("  op { alloc { bytes: 1073741825 } }\n"), "bytes", "alloc",
         "bytes 1073741825 is out of range: from 1 to 1073741824 (1 GiB) bytes per object");
  expect(program("  op { alloc { bytes: -8 } }\n"), "bytes", "alloc", "bytes -8 is out of range");
}

TEST_CASE("lang: an alloc's count is from 0 to 2^40, and bytes times count at most 1 TiB") {
  expect(program("  op { alloc { bytes: 8 count: -1 } }\n"), "count", "alloc", "count -1 is out of range: from 0 to 1099511627776");
  expect(program("  op { alloc { bytes: 1 count: 1099511627777 } }\n"), "count", "alloc", "count 1099511627777 is out of range");
  expect(program("  op { alloc { bytes: 1024 count: 1073741825 } }\n"), "count", "alloc",
         "count 1073741825 objects of 1024 bytes is more than 1099511627776 bytes (1 TiB) in one alloc");
  // int64's largest on both: refused without overflowing.
  expect(program("  op { alloc { bytes: 9223372036854775807 count: 9223372036854775807 } }\n"), "bytes", "alloc",
         "out of range");
}

TEST_CASE("lang: alloc and release take a literal or an expression, not both") {
  expect(program("  op { alloc { bytes: 8 bytes_expr: \"8\" } }\n"), "bytes_expr", "alloc",
         "alloc takes bytes or bytes_expr, not both");
  expect(program("  op { alloc { bytes: 8 count: 2 count_expr: \"2\" } }\n"), "count_expr", "alloc",
         "alloc takes count or count_expr, not both");
  expect(program("  op { release { bytes: 8 bytes_expr: \"8\" } }\n"), "bytes_expr", "release",
         "release takes bytes or bytes_expr, not both");
  expect(program("  op { alloc { bytes_expr: \"q\" } }\n"), "bytes_expr", "alloc", "unknown name \"q\"");
}

TEST_CASE("lang: release needs bytes, from 0 to 1 TiB") {
  expect(program("  op { release { } }\n"), "release", "name: \"main\"", "release needs bytes (or bytes_expr)");
  expect(program("  op { release { bytes: -1 } }\n"), "bytes", "release", "bytes -1 is out of range: from 0 to 1099511627776");
  expect(program("  op { release { bytes: 1099511627777 } }\n"), "bytes", "release", "out of range");
}
