// Integer expressions (sim/scenario/expr.h): parsing, precedence, Go's integer semantics, and
// every way evaluation or parsing can fail, each an error and never undefined behaviour.
#include <catch2/catch.hpp>

#include <climits>
#include <string>
#include <vector>

#include "sim/scenario/expr.h"
#include "sim/scenario/limits.h"

using namespace gmp::scenario;

namespace {

// Names: i is slot 0, j slot 1, N is b.N.
std::optional<int32_t> names(const std::string& name) {
  if (name == "i") return 0;
  if (name == "j") return 1;
  if (name == "N") return kSlotN;
  return std::nullopt;
}

std::string unknown(const std::string& name) { return "unknown " + name; }

// The parse error of text, "" when it parses.
std::string parse_error(const std::string& text) {
  Expr e;
  return parse_expr(text, names, unknown, e);
}

// text's value with i = 7, j = -3, N = 1000; fails the test if it does not parse.
ExprValue eval(const std::string& text, int64_t i = 7, int64_t j = -3, int64_t n = 1000) {
  Expr e;
  const std::string err = parse_expr(text, names, unknown, e);
  INFO(text);
  REQUIRE(err.empty());
  const int64_t vars[] = {i, j};
  std::vector<int64_t> stack;
  return eval_expr(e, vars, n, stack);
}

int64_t value(const std::string& text, int64_t i = 7, int64_t j = -3, int64_t n = 1000) {
  const ExprValue v = eval(text, i, j, n);
  INFO(text << ": " << (v.error != nullptr ? v.error : ""));
  REQUIRE(v.error == nullptr);
  return v.value;
}

}  // namespace

TEST_CASE("expressions: literals, names and N") {
  CHECK(value("42") == 42);
  CHECK(value("  42 ") == 42);
  CHECK(value("i") == 7);
  CHECK(value("j") == -3);
  CHECK(value("N") == 1000);
  CHECK(value("9223372036854775807") == INT64_MAX);
}

TEST_CASE("expressions: precedence and associativity are Go's") {
  CHECK(value("1 + 2 * 3") == 7);        // * binds tighter than +
  CHECK(value("(1 + 2) * 3") == 9);
  CHECK(value("10 - 4 - 3") == 3);       // left-associative: (10-4)-3, not 10-(4-3) = 9
  CHECK(value("64 / 4 / 2") == 8);       // (64/4)/2, not 64/(4/2) = 32
  CHECK(value("2 * 3 % 4") == 2);        // (2*3)%4, not 2*(3%4) = 6
  CHECK(value("-2 * 3") == -6);
  CHECK(value("- -i") == 7);
  CHECK(value("-(i + 1)") == -8);
  CHECK(value("(i+1)%64", 63) == 0);     // the ring's successor of node 63
  CHECK(value("N/8") == 125);
  CHECK(value("(i+1)*100000", 3) == 400000);
}

TEST_CASE("expressions: / truncates toward zero and % takes the dividend's sign, as in Go") {
  CHECK(value("7 / 2") == 3);
  CHECK(value("-7 / 2") == -3);
  CHECK(value("7 % -3") == 1);
  CHECK(value("-7 % 3") == -1);
  CHECK(value("j % 2") == -1);
  CHECK(value("i % 1 - 9223372036854775807 - 1") == INT64_MIN);  // reachable, without overflow
}

TEST_CASE("expressions: overflow, division and modulo by zero are errors") {
  CHECK(std::string(eval("9223372036854775807 + 1").error) == "integer overflow");
  CHECK(std::string(eval("0 - 9223372036854775807 - 2").error) == "integer overflow");
  CHECK(std::string(eval("N * N * N * N * N * N * N").error) == "integer overflow");
  CHECK(std::string(eval("-(0 - 9223372036854775807 - 1)").error) == "integer overflow");
  CHECK(std::string(eval("(0 - 9223372036854775807 - 1) / -1").error) == "integer overflow");
  CHECK(eval("(0 - 9223372036854775807 - 1) % -1").error == nullptr);  // Go: 0
  CHECK(std::string(eval("i / (j + 3)").error) == "integer divide by zero");
  CHECK(std::string(eval("i % 0").error) == "integer divide by zero");
  CHECK(std::string(eval("1 / (i - i)").error) == "integer divide by zero");
}

TEST_CASE("expressions: malformed text is an error, never a crash") {
  CHECK_THAT(parse_error(""), Catch::Contains("empty expression"));
  CHECK_THAT(parse_error("   "), Catch::Contains("empty expression"));
  CHECK_THAT(parse_error("1 +"), Catch::Contains("missing operand"));
  CHECK_THAT(parse_error("(1 + 2"), Catch::Contains("missing ')'"));
  CHECK_THAT(parse_error("1 + 2)"), Catch::Contains("unexpected ')'"));
  CHECK_THAT(parse_error("()"), Catch::Contains("missing operand before ')'"));
  CHECK_THAT(parse_error("1 2"), Catch::Contains("unexpected '2'"));
  CHECK_THAT(parse_error("i $ 2"), Catch::Contains("unexpected '$'"));
  CHECK_THAT(parse_error("2i"), Catch::Contains("a number followed by a letter"));
  CHECK_THAT(parse_error("k + 1"), Catch::Contains("unknown k"));
  CHECK_THAT(parse_error("9223372036854775808"), Catch::Contains("too large for int64"));
  CHECK_THAT(parse_error("+1"), Catch::Contains("unexpected '+'"));  // Go has unary +; we do not
}

TEST_CASE("expressions: nesting and length are bounded") {
  const std::string deep_ok = std::string(kMaxExprNesting, '(') + "1" + std::string(kMaxExprNesting, ')');
  CHECK(parse_error(deep_ok).empty());
  const std::string deep = "(" + deep_ok + ")";
  CHECK_THAT(parse_error(deep), Catch::Contains("nested too deeply"));
  CHECK_THAT(parse_error(std::string(kMaxExprNesting + 1, '-') + "1"), Catch::Contains("nested too deeply"));
  CHECK(parse_error(std::string(kMaxExprNesting, '-') + "1").empty());
  // Far deeper than any stack could recurse: refused at the bound, not overflowed.
  CHECK_THAT(parse_error(std::string(900, '(')), Catch::Contains("nested too deeply"));
  std::string sum = "1";
  while (sum.size() + 2 <= static_cast<size_t>(kMaxExprLength)) sum += "+1";
  CHECK(value(sum) == static_cast<int64_t>(sum.size() / 2 + 1));
  CHECK_THAT(parse_error(sum + "+1"), Catch::Contains("expression too long"));
}

// Random strings over the expressions' alphabet (a fixed LCG, so the same ones each run): each
// parses or is refused, and each that parses evaluates to a value or an error.
TEST_CASE("expressions: random text parses or is refused, and evaluates without fault") {
  const std::string alphabet = "0123456789+-*/%() ijNkx";
  uint64_t state = 1;
  int parsed = 0;
  for (int round = 0; round < 20000; round++) {
    std::string text;
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const size_t len = (state >> 33) % 24 + 1;
    for (size_t k = 0; k < len; k++) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      text += alphabet[(state >> 33) % alphabet.size()];
    }
    Expr e;
    if (!parse_expr(text, names, unknown, e).empty()) continue;
    parsed++;
    const int64_t vars[] = {INT64_MAX, INT64_MIN};
    std::vector<int64_t> stack;
    const ExprValue v = eval_expr(e, vars, -1, stack);
    CHECK((v.error == nullptr || std::string(v.error).starts_with("integer ")));
  }
  CHECK(parsed > 100);  // enough of them parse to exercise evaluation
}

namespace {
// text's value with duration units allowed (duration_expr), i = 7; or its parse error.
std::pair<int64_t, std::string> duration_value(const std::string& text) {
  Expr e;
  const std::string err = parse_expr(text, names, unknown, e, true);
  if (!err.empty()) return {0, err};
  const int64_t vars[] = {7, -3};
  std::vector<int64_t> stack;
  const ExprValue v = eval_expr(e, vars, 1000, stack);
  return {v.value, v.error != nullptr ? v.error : ""};
}
}  // namespace

// duration_expr's literals: Go's duration syntax, in ns; plain integers still count ns.
TEST_CASE("expressions: duration units in duration_expr") {
  CHECK(duration_value("i * 1us") == std::pair<int64_t, std::string>{7'000, ""});
  CHECK(duration_value("1.5us") == std::pair<int64_t, std::string>{1'500, ""});
  CHECK(duration_value("2ms + 3") == std::pair<int64_t, std::string>{2'000'003, ""});
  CHECK(duration_value("1h30m") == std::pair<int64_t, std::string>{5'400'000'000'000, ""});
  CHECK(duration_value("(i - 5) * 1s") == std::pair<int64_t, std::string>{2'000'000'000, ""});
  CHECK(duration_value("10\u00b5s") == std::pair<int64_t, std::string>{10'000, ""});
  CHECK(duration_value("10ns/2") == std::pair<int64_t, std::string>{5, ""});
  CHECK(duration_value("2562047h * 2").second == "integer overflow");
  CHECK_THAT(duration_value("1.5ns").second, Catch::Contains("not a whole number of nanoseconds"));
  CHECK_THAT(duration_value("3x").second, Catch::Contains("unknown unit \"x\""));
  CHECK_THAT(duration_value("1.5").second, Catch::Contains("missing unit"));
  CHECK_THAT(duration_value("99999999999h").second, Catch::Contains("too large"));
  // Elsewhere a unit is refused, and says where it belongs.
  CHECK_THAT(parse_error("i * 1us"), Catch::Contains("duration units such as 1us are for duration_expr"));
  CHECK_THAT(parse_error("1.5"), Catch::Contains("expressions are integers"));
}
