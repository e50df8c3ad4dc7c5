// Protobuf text-format errors as scenario diagnostics: 1-based positions, messages in the
// language's terms ("unknown operation", with the allowed names), and errors that protobuf
// places on the token after a field name (unknown field, oneof clash, repeated singular field)
// moved back onto the name. Warnings count as errors.
#pragma once

#include <google/protobuf/io/tokenizer.h>

#include <string>
#include <vector>

#include "sim/scenario/error.h"

namespace gmp::scenario {

class ParseErrors : public google::protobuf::io::ErrorCollector {
 public:
  ParseErrors(std::string source, const std::string& text);

  void AddError(int line, int column, const std::string& message) override;
  void AddWarning(int line, int column, const std::string& message) override {
    AddError(line, column, message);
  }

  std::vector<Diagnostic> diagnostics;

 private:
  std::string source_;
  std::vector<std::string> lines_;
};

}  // namespace gmp::scenario
