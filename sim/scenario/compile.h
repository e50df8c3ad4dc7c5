// The scenario compiler: checks a parsed ScenarioFile against the rules protobuf cannot express
// (names resolve and are unique, durations and counts are present and non-negative, "main"
// exists, the benchmark's loop exists and is counted, expressions parse and name variables in
// scope, calls pass one argument per parameter) and turns it into the engine's flat form
// (program.h). It reports every problem it finds, each at the position of the offending field,
// in one ScenarioError.
#pragma once

#include <set>
#include <string>

#include "sim/scenario/locate.h"
#include "sim/scenario/program.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario.pb.h"

namespace gmp::scenario {

// A file that declares processes (ScenarioFile.process) compiles each one's program as a
// scenario of its own and fills Scenario::processes (sim/scenario/processes.cpp).
Scenario compile(const ScenarioFile& file, const Node::Tree& tree, const std::string& source,
                 const LoadOptions& options = {});

// What compiling one process's program needs from the file around it.
struct ProgramContext {
  bool processes = false;                  // the file has processes: a conn may dial
  std::set<std::string> dialled_listeners;  // listeners other processes dial: their conns are fed
  int64_t conns = 0;                       // connections and requests of the programs compiled
  int64_t requests = 0;                    // before (updated: the bounds are the file's)
};

// The program rooted at `root` (a ScenarioFile message: the file, or a process's program), its
// diagnostics at their positions in the whole text. Throws ScenarioError.
Scenario compile_program(const ScenarioFile& file, const Node& root, const std::string& source,
                         const LoadOptions& options, ProgramContext& context);

// The processes of a file that declares some (compile's part for them).
Scenario compile_processes(const ScenarioFile& file, const Node& root, const std::string& source,
                           const LoadOptions& options);

}  // namespace gmp::scenario
