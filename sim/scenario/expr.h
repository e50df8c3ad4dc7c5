// Integer expressions of the scenario language (docs/scenarios.md, "Expressions"): `+ - * / %`,
// unary minus, parentheses, decimal literals and identifiers (a function's parameters, the
// variables in scope at the use: loops' vars, values received, accepted connections; and N, the
// benchmark's b.N). With units (duration_expr), a literal may be a Go duration ("1us", "1.5ms",
// "1h30m"), which stands for its ns.
//
// Protocol: the compiler parses an expression's text once, resolving each identifier to a variable
// slot of the goroutine's Task (or to N), into a postfix program; the interpreter evaluates it on
// int64 each time the operation runs. Evaluation never has undefined behaviour: an overflow, a
// division or modulo by zero is reported as an error, which the interpreter turns into a Go panic.
// Parsing recurses once per parenthesis or unary minus, at most kMaxExprNesting deep.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gmp::scenario {

enum class ExprOp : uint8_t {
  Const,  // push value
  Var,    // push vars[slot]
  N,      // push b.N
  Neg,    // a -> -a
  Add,    // a b -> a + b
  Sub,
  Mul,
  Div,    // truncated toward zero, as Go's /
  Mod,    // the sign of the dividend, as Go's %
};

struct ExprStep {
  ExprOp op = ExprOp::Const;
  int32_t slot = -1;  // Var
  int64_t value = 0;  // Const
};

// A compiled expression and where it was written, for run-time errors.
struct Expr {
  std::vector<ExprStep> code;  // postfix
  int32_t depth = 0;           // the most values on the stack at once
  std::string text;            // as written
  std::string field;           // the field that holds it: "count_expr", "index", "arg"...
  int32_t line = 0;            // the field's position, 1-based
  int32_t column = 0;
};

// What an identifier names: a variable slot, or N (slot kSlotN); nullopt when it names nothing.
inline constexpr int32_t kSlotN = -2;
using ExprScope = std::function<std::optional<int32_t>(const std::string&)>;

// Parses text into e.code and e.depth; returns "" or what is wrong with it (an unknown name: the
// scope's unknown(name) text). units: literals may carry duration units.
std::string parse_expr(const std::string& text, const ExprScope& scope,
                       const std::function<std::string(const std::string&)>& unknown, Expr& e, bool units = false);

struct ExprValue {
  int64_t value = 0;
  const char* error = nullptr;  // "integer overflow", "integer divide by zero"; null when fine
};

// Evaluates e with the goroutine's variables and b.N; stack is scratch space.
ExprValue eval_expr(const Expr& e, const int64_t* vars, int64_t n, std::vector<int64_t>& stack);

}  // namespace gmp::scenario
