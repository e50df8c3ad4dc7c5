// Protobuf text-format errors as diagnostics: 1-based positions; errors that protobuf places on
// the token after a field name (unknown field, oneof clash, repeated singular field) moved back
// onto the name; an unknown field reported with the fields allowed there, or, in the message type
// that holds a language's operations, as an unknown operation. Warnings count as errors.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/textproto/diagnostic.h"

namespace gmp::textproto {

class ParseErrors : public google::protobuf::io::ErrorCollector {
 public:
  // `operations`: the message type whose fields are operations (the scenario's Op), or nullptr.
  ParseErrors(std::string source, const std::string& text,
              const google::protobuf::Descriptor* operations = nullptr);

  void AddError(int line, int column, const std::string& message) override;
  void AddWarning(int line, int column, const std::string& message) override {
    AddError(line, column, message);
  }

  // The message that replaces protobuf's "Message is too deep" when the parser's recursion limit
  // (TextFormat::Parser::SetRecursionLimit) is reached.
  void set_too_deep(std::string message) { too_deep_ = std::move(message); }

  std::vector<Diagnostic> diagnostics;

 private:
  std::string explain(const std::string& message) const;

  std::string source_;
  std::vector<std::string> lines_;
  const google::protobuf::Descriptor* operations_;
  std::string too_deep_;
};

}  // namespace gmp::textproto
