// The scenario language's entry points: read a protobuf text-format scenario (schema:
// sim/scenario/scenario.proto; reference: docs/scenarios.md), check it, and compile it into the
// engine's form (sim/scenario/program.h). Any problem throws ScenarioError (error.h), whose
// what() lists every diagnostic as `path:line:column: message`.
#pragma once

#include <string>

#include "sim/scenario/error.h"
#include "sim/scenario/program.h"

namespace gmp::scenario {

// What loading may do beyond reading the scenario's own text.
struct LoadOptions {
  // Read the arrival files that connections name (conn's `arrivals`, resolved against the folder of
  // the scenario's path or name). Off, such a field is an error: the fuzzer turns it off, so that
  // no input it makes up can read a file.
  bool arrival_files = true;
};

Scenario load_scenario(const std::string& path, const LoadOptions& options = {});

// The same for text in memory; `name` stands for the path in diagnostics.
Scenario parse_scenario(const std::string& text, const std::string& name, const LoadOptions& options = {});

}  // namespace gmp::scenario
