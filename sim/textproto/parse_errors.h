// Protobuf text-format errors as diagnostics: 1-based positions; errors that protobuf places on
// the token after a field name (unknown field, oneof clash, repeated singular field) moved back
// onto the name; an unknown field reported with the fields allowed there, or, in the message type
// that holds a language's operations, as an unknown operation. Warnings count as errors.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>

#include <string>
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

  std::vector<Diagnostic> diagnostics;

 private:
  std::string explain(const std::string& message) const;

  std::string source_;
  std::vector<std::string> lines_;
  const google::protobuf::Descriptor* operations_;
};

}  // namespace gmp::textproto
