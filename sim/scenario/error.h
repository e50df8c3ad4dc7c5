// Errors in a scenario file: a ScenarioError carries every problem found in one load, in source
// order, and its what() is their text (textproto::join).
#pragma once

#include <stdexcept>
#include <vector>

#include "sim/textproto/diagnostic.h"

namespace gmp::scenario {

using textproto::Diagnostic;

class ScenarioError : public std::runtime_error {
 public:
  explicit ScenarioError(std::vector<Diagnostic> diagnostics)
      : std::runtime_error(textproto::join(diagnostics)), diagnostics_(std::move(diagnostics)) {}
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace gmp::scenario
