// Errors in a scenario file. Every problem is a Diagnostic at a 1-based line and column of the
// source; a ScenarioError carries all problems found in one load, in source order, and its what()
// is their text, one `path:line:column: message` per line.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gmp::scenario {

struct Diagnostic {
  std::string source;
  int line = 0;  // 0 when the problem has no position (the file cannot be read)
  int column = 0;
  std::string message;

  std::string str() const;  // "path:line:column: message", or "path: message" without a position
};

class ScenarioError : public std::runtime_error {
 public:
  explicit ScenarioError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace gmp::scenario
