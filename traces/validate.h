// Checks that a trace tells a consistent story (`gmpsim trace validate`). Every producer must
// pass it: the simulator, the checker's counterexamples, the Go trace importer.
//
// The model the events are checked against, one state machine per G, M and P, is the schema's:
// traces/state_machine.h states it, and StateMachine checks it; the validator numbers and keeps
// what it reports. A trace may begin in the middle of a run (an imported one does), unless it
// starts at the beginning of the run (Options::from_start, which the simulator's traces do: every
// G they show is created in them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/state_machine.h"
#include "traces/trace.pb.h"

namespace gmp::trace {

struct ValidationIssue {
  uint64_t index = 0;  // the event's position in the trace, from 0
  int64_t ts = 0;
  std::string what;
};

class Validator {
 public:
  struct Options {
    bool from_start = false;  // every G must be created in the trace before it does anything
    size_t max_issues = 20;   // issues kept in full; the rest are counted
  };
  explicit Validator(Options opt) : opt_(opt), sm_(StateMachine::Options{opt.from_start}) {}

  void on_event(const Event& e);

  uint64_t events() const { return index_; }
  const std::vector<ValidationIssue>& issues() const { return issues_; }
  uint64_t issue_count() const { return issue_count_; }
  size_t gs() const { return sm_.gs(); }
  size_t ms() const { return sm_.ms(); }
  size_t ps() const { return sm_.ps(); }

 private:
  Options opt_;
  StateMachine sm_;
  std::vector<ValidationIssue> issues_;
  uint64_t issue_count_ = 0;
  uint64_t index_ = 0;
};

// Reads and validates the trace at `path`; throws TraceFormatError on unreadable input.
Validator validate_file(const std::string& path, size_t max_issues = 20);

}  // namespace gmp::trace
