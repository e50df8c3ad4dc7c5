// Reading a scenario: protobuf's text-format parser, which rejects syntax errors and unknown
// fields (reported through textproto::ParseErrors), records the position of every field in a
// ParseInfoTree, and hands both to the compiler.
#include <google/protobuf/text_format.h>

#include "sim/scenario/compile.h"
#include "sim/scenario/limits.h"
#include "sim/scenario/scenario.h"
#include "sim/textproto/parse_errors.h"
#include "sim/textproto/read_file.h"

namespace gmp::scenario {

Scenario parse_scenario(const std::string& text, const std::string& name, const LoadOptions& options) {
  ScenarioFile file;
  Node::Tree tree;
  textproto::ParseErrors errors(name, text, Op::descriptor());
  google::protobuf::TextFormat::Parser parser;
  errors.set_too_deep(too_deep_message());
  parser.RecordErrorsTo(&errors);
  parser.SetRecursionLimit(kParserRecursionLimit);
  parser.WriteLocationsTo(&tree);
  bool parsed = parser.ParseFromString(text, &file);
  if (!parsed && errors.diagnostics.empty())
    errors.diagnostics.push_back({name, 0, 0, "cannot parse"});
  if (!errors.diagnostics.empty()) throw ScenarioError(std::move(errors.diagnostics));
  return compile(file, tree, name, options);
}

// An empty file is read as an empty scenario (whose checker reports the missing main).
Scenario load_scenario(const std::string& path, const LoadOptions& options) {
  textproto::FileText file = textproto::read_file(path);
  if (!file.error.empty()) throw ScenarioError({{path, 0, 0, file.error}});
  return parse_scenario(file.text, path, options);
}

}  // namespace gmp::scenario
