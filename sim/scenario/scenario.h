// The scenario language's entry points: read a protobuf text-format scenario (schema:
// sim/scenario/scenario.proto; reference: docs/scenarios.md), check it, and compile it into the
// engine's form (sim/scenario/program.h). Any problem throws ScenarioError (error.h), whose
// what() lists every diagnostic as `path:line:column: message`.
#pragma once

#include <string>

#include "sim/scenario/error.h"
#include "sim/scenario/program.h"

namespace gmp::scenario {

Scenario load_scenario(const std::string& path);

// The same for text in memory; `name` stands for the path in diagnostics.
Scenario parse_scenario(const std::string& text, const std::string& name);

}  // namespace gmp::scenario
