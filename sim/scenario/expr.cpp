// The expression parser (recursive descent, one frame per precedence level) and evaluator (a
// stack machine over the postfix program). See expr.h.
#include "sim/scenario/expr.h"

#include <algorithm>
#include <cctype>

#include "sim/scenario/duration.h"
#include "sim/scenario/limits.h"

namespace gmp::scenario {

namespace {

class Parser {
 public:
  Parser(const std::string& text, const ExprScope& scope, const std::function<std::string(const std::string&)>& unknown,
         Expr& e, bool units)
      : s_(text), scope_(scope), unknown_(unknown), e_(e), units_(units) {}

  std::string run() {
    skip();
    if (at_end()) return "empty expression";
    sum();
    if (error_.empty() && !at_end()) fail(std::string("unexpected '") + s_[pos_] + "'");
    return error_;
  }

 private:
  bool at_end() const { return pos_ >= s_.size(); }
  // What may follow a literal's digits as (part of) a unit: letters, '_', and the bytes of the
  // UTF-8 micro signs (µ, μ).
  static bool unit_char(char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalpha(u) != 0 || c == '_' || u >= 0x80;
  }
  void skip() {
    while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t')) pos_++;
  }
  void fail(std::string msg) {
    if (error_.empty()) error_ = std::move(msg) + " at offset " + std::to_string(pos_);
  }
  void push(ExprStep step) {
    e_.code.push_back(step);
    // Operands push one value; unary minus keeps the count; binary operators pop one net.
    if (step.op == ExprOp::Const || step.op == ExprOp::Var || step.op == ExprOp::N) {
      height_++;
    } else if (step.op != ExprOp::Neg) {
      height_--;
    }
    e_.depth = std::max(e_.depth, height_);
  }

  // sum := product (('+' | '-') product)*
  void sum() {
    product();
    while (error_.empty() && !at_end() && (s_[pos_] == '+' || s_[pos_] == '-')) {
      const ExprOp op = s_[pos_++] == '+' ? ExprOp::Add : ExprOp::Sub;
      skip();
      product();
      push({op});
    }
  }

  // product := unary (('*' | '/' | '%') unary)*
  void product() {
    unary();
    while (error_.empty() && !at_end() && (s_[pos_] == '*' || s_[pos_] == '/' || s_[pos_] == '%')) {
      const char c = s_[pos_++];
      skip();
      unary();
      push({c == '*' ? ExprOp::Mul : c == '/' ? ExprOp::Div : ExprOp::Mod});
    }
  }

  // unary := '-' unary | primary; each '-' and '(' is one level of nesting.
  void unary() {
    if (!error_.empty()) return;
    if (at_end()) return fail("missing operand");
    if (s_[pos_] == '-') {
      if (!enter()) return;
      pos_++;
      skip();
      unary();
      push({ExprOp::Neg});
      nesting_--;
      return;
    }
    primary();
  }

  bool enter() {
    if (nesting_ >= kMaxExprNesting) {
      fail("nested too deeply: at most " + std::to_string(kMaxExprNesting) +
           " parentheses and unary minuses inside one another");
      return false;
    }
    nesting_++;
    return true;
  }

  void primary() {
    const char c = s_[pos_];
    if (c == '(') {
      if (!enter()) return;
      pos_++;
      skip();
      sum();
      nesting_--;
      if (!error_.empty()) return;
      if (at_end() || s_[pos_] != ')') return fail("missing ')'");
      pos_++;
      skip();
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      const size_t start = pos_;
      int64_t v = 0;
      while (!at_end() && std::isdigit(static_cast<unsigned char>(s_[pos_])) != 0) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[pos_] - '0', &v)) {
          pos_ = start;
          return fail("integer literal too large for int64");
        }
        pos_++;
      }
      if (!at_end() && (s_[pos_] == '.' || unit_char(s_[pos_]))) {
        if (!units_) {
          return fail(s_[pos_] == '.' ? "a decimal point: expressions are integers"
                                      : "a number followed by a letter (duration units such as 1us are for "
                                        "duration_expr)");
        }
        // A Go duration literal ("1us", "1.5ms", "1h30m"): parse_duration's syntax, in ns.
        while (!at_end() &&
               (s_[pos_] == '.' || unit_char(s_[pos_]) || std::isdigit(static_cast<unsigned char>(s_[pos_])) != 0)) {
          pos_++;
        }
        const ParsedDuration d = parse_duration(std::string_view(s_).substr(start, pos_ - start));
        if (!d.error.empty()) {
          pos_ = start;
          return fail(d.error);
        }
        v = d.ns;
      }
      push({ExprOp::Const, -1, v});
      skip();
      return;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
      const size_t start = pos_;
      while (!at_end() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) != 0 || s_[pos_] == '_')) pos_++;
      const std::string name = s_.substr(start, pos_ - start);
      std::optional<int32_t> slot = scope_(name);
      if (!slot) {
        if (error_.empty()) error_ = unknown_(name);
        return;
      }
      push(*slot == kSlotN ? ExprStep{ExprOp::N} : ExprStep{ExprOp::Var, *slot, 0});
      skip();
      return;
    }
    if (c == ')') return fail("missing operand before ')'");
    fail(std::string("unexpected '") + c + "'");
  }

  const std::string& s_;
  const ExprScope& scope_;
  const std::function<std::string(const std::string&)>& unknown_;
  Expr& e_;
  size_t pos_ = 0;
  int nesting_ = 0;
  int32_t height_ = 0;
  bool units_ = false;
  std::string error_;
};

}  // namespace

std::string parse_expr(const std::string& text, const ExprScope& scope,
                       const std::function<std::string(const std::string&)>& unknown, Expr& e, bool units) {
  e.code.clear();
  e.depth = 0;
  if (text.size() > static_cast<size_t>(kMaxExprLength)) {
    return "expression too long: " + std::to_string(text.size()) + " characters, at most " +
           std::to_string(kMaxExprLength);
  }
  return Parser(text, scope, unknown, e, units).run();
}

ExprValue eval_expr(const Expr& e, const int64_t* vars, int64_t n, std::vector<int64_t>& stack) {
  stack.resize(static_cast<size_t>(e.depth));
  size_t top = 0;  // stack[0, top) holds the values
  for (const ExprStep& s : e.code) {
    switch (s.op) {
      case ExprOp::Const: stack[top++] = s.value; continue;
      case ExprOp::Var: stack[top++] = vars[s.slot]; continue;
      case ExprOp::N: stack[top++] = n; continue;
      case ExprOp::Neg:
        if (__builtin_sub_overflow(int64_t{0}, stack[top - 1], &stack[top - 1])) return {0, "integer overflow"};
        continue;
      default: break;
    }
    const int64_t b = stack[--top];
    int64_t& a = stack[top - 1];
    bool overflow = false;
    switch (s.op) {
      case ExprOp::Add: overflow = __builtin_add_overflow(a, b, &a); break;
      case ExprOp::Sub: overflow = __builtin_sub_overflow(a, b, &a); break;
      case ExprOp::Mul: overflow = __builtin_mul_overflow(a, b, &a); break;
      case ExprOp::Div:
      case ExprOp::Mod:
        if (b == 0) return {0, "integer divide by zero"};
        // INT64_MIN / -1 is the one quotient that does not fit.
        if (a == INT64_MIN && b == -1) {
          if (s.op == ExprOp::Div) return {0, "integer overflow"};
          a = 0;
        } else {
          a = s.op == ExprOp::Div ? a / b : a % b;
        }
        break;
      default: break;
    }
    if (overflow) return {0, "integer overflow"};
  }
  return {stack[0], nullptr};
}

}  // namespace gmp::scenario
