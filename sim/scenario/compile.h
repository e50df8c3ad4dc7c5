// The scenario compiler: checks a parsed ScenarioFile against the rules protobuf cannot express
// (names resolve and are unique, durations and counts are present and non-negative, "main"
// exists, the benchmark's loop exists and is counted, expressions parse and name variables in
// scope, calls pass one argument per parameter) and turns it into the engine's flat form
// (program.h). It reports every problem it finds, each at the position of the offending field,
// in one ScenarioError.
#pragma once

#include <string>

#include "sim/scenario/locate.h"
#include "sim/scenario/program.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario.pb.h"

namespace gmp::scenario {

Scenario compile(const ScenarioFile& file, const Node::Tree& tree, const std::string& source,
                 const LoadOptions& options = {});

}  // namespace gmp::scenario
