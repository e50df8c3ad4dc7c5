// Formatting of scenario diagnostics.
#include "sim/scenario/error.h"

#include <utility>

namespace gmp::scenario {

namespace {

std::string join(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const Diagnostic& d : ds) {
    if (!out.empty()) out += '\n';
    out += d.str();
  }
  return out;
}

}  // namespace

std::string Diagnostic::str() const {
  if (line <= 0) return source + ": " + message;
  return source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

ScenarioError::ScenarioError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join(diagnostics)), diagnostics_(std::move(diagnostics)) {}

}  // namespace gmp::scenario
