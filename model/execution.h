// One execution of a scenario under the checker: a Simulation in the engine's choice mode, whose
// chooser (recorder.h) asks a Policy for each step and writes down the schedule, while the
// scenario's monitor (execution.cpp) tests the properties at every quiescent point and feeds the
// state graph.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/policy.h"
#include "model/recorder.h"
#include "sim/cost/profile.h"
#include "sim/engine/chooser.h"
#include "sim/runtime/mgc.h"
#include "sim/runtime/runtime.h"
#include "sim/scenario/program.h"

namespace gmp::model {

// The properties the checker can test (a bit set).
enum Property : uint32_t {
  kThrow = 1,             // the runtime throws (a Go fatal error)
  kDeadlock = 2,          // every thread blocked for good, with no throw from checkdead
  kGConservation = 4,     // every G in exactly one place
  kWorkConservation = 8,  // no G runnable while a P idles and no M spins
  kLostWakeup = 16,       // a G runnable while every M is parked for good
  kLivelock = 32,         // a cycle of states the program can loop in forever
  kAssertions = 64,       // the scenario's own assertions
  kStwCompletes = 128,    // every stop-the-world completes (none waits with every other M parked)
  kStranding = 256,       // no G waits behind a running one past a bound while a P idles (every point)
  kStarvation = 512,      // no G stays runnable past a bound (strict time only)
  kLastProperty = kStarvation,  // the highest bit, for loops over the properties
  kDefaultProperties = kThrow | kDeadlock | kGConservation | kWorkConservation | kLostWakeup | kLivelock |
                       kAssertions | kStwCompletes | kStranding | kStarvation,
};
const char* property_name(Property p);
// "throw,g-conservation,..." -> bits; throws std::invalid_argument naming an unknown one.
uint32_t parse_properties(const std::string& list);

inline constexpr uint64_t kDefaultStrandingSteps = 400;
inline constexpr int64_t kDefaultStrandingNs = 100'000;
inline constexpr int64_t kDefaultStarvationNs = rt::forcePreemptNS + int64_t{rt::sysmonMaxDelayUS} * 1000;

// What every execution of one check shares.
struct CheckSetup {
  // The check's time limit (run_check sets it from CheckConfig::time_limit): an execution still
  // running then, whether the search's, an estimate's, a probe's or a shrink's, is cut
  // (End::TimeLimit). The clock is read every 1024 steps, so a cut comes within that many steps.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  const scenario::Scenario* scenario = nullptr;
  const cost::Profile* profile = nullptr;
  int32_t procs = 1;
  uint64_t seed = 1;  // the runtime's own randomness (cheaprand, steal order)
  rt::GCSettings gc;  // GOGC and GOMEMLIMIT (--gogc, --memlimit)
  // --procs auto, --godebug and the cgroup flags, as engine::SimConfig has them.
  bool procs_auto = false;
  int32_t containermaxprocs = 1, updatemaxprocs = 1;
  scenario::Cgroup cgroup;
  uint64_t max_steps = 200'000;
  uint32_t daemon_rounds = 2;  // sysmon's waits per execution that may end by choice (free time)
  // Strict time (engine::EngineConfig::strict_time): waits end in deadline order, sysmon runs
  // unbounded, and max_time (virtual ns) bounds each execution instead.
  bool strict_time = false;
  int64_t max_time = 1'000'000'000;
  uint32_t properties = kDefaultProperties;
  // kStranding's bounds (model/properties.h's StrandingMonitor): under free time, steps of the M
  // that holds the stranded work (--stranding-steps); under strict time, virtual ns
  // (--stranding-time). docs/checker.md "Properties" says how the defaults were chosen.
  uint64_t stranding_steps = kDefaultStrandingSteps;
  int64_t stranding_ns = kDefaultStrandingNs;
  // kStarvation's bound, virtual ns under strict time (--starvation-time): one time slice
  // (forcePreemptNS) and sysmon's longest pause, the most a goroutine queued behind a running one
  // waits in go1.27rc2 before sysmon's retake preempts it.
  int64_t starvation_ns = kDefaultStarvationNs;
  // Several processes (Scenario::processes, ids in declaration order): the process whose steps are
  // choices and whose runtime the properties and fingerprints are about; kAllProcesses: every
  // process's (recorder.h). A scenario of one process has only process 0.
  uint32_t process = 0;
  // Fingerprints modulo the permutation of interchangeable goroutines (fingerprint.h); false: each
  // goroutine by its goid, as before (to measure what symmetry saves).
  bool symmetric_states = true;
};

// `--process NAME|all` for a scenario: the process's id (its index in Scenario::processes), or
// kAllProcesses; throws std::invalid_argument naming the processes when NAME is none of them.
uint32_t resolve_process(const scenario::Scenario& sc, const std::string& name);
// The name `--process` takes for `process` ("all" for kAllProcesses; "" for a scenario of one
// process, which has no names).
std::string process_label(const scenario::Scenario& sc, uint32_t process);

// The distinct states seen by the executions of a search (their fingerprints). Capped: past
// max_states new states are no longer stored or counted, and truncated says so.
//
// Every step of every execution looks its state up here, so the set is an open-addressing table of
// fingerprints (linear probing, at most half full): one cache line per lookup, where a node-based
// map took two or three misses and half of a search's time.
struct StateSet {
  std::vector<uint64_t> fingerprints;  // in the order they were first seen
  size_t max_states = 2'000'000;
  bool truncated = false;
  void add(uint64_t fp);

 private:
  std::vector<uint64_t> table_;  // 0: empty (a fingerprint of 0 is stored as kZero)
  void grow();
};

// One step of a logged execution, for the readable interleaving.
struct LoggedStep {
  engine::Step step;
  int64_t m = -1, p = -1, g = -1;  // ids when the step was taken; -1: none
  bool has_post = false;           // post: the cell's value after an access
  uint64_t post = 0;
  int64_t now = 0;       // the clock (ns since the start) when it was taken
  uint32_t enabled = 0;  // how many steps were enabled
  uint64_t forced = 0;   // steps of other processes taken without a choice before it, in the run
};

struct Violation {
  Property property = kThrow;
  std::string message;
  uint64_t step = 0;  // the step at which it was seen
};

// An execution of a scenario: what the Recorder wrote down (policy.h), and what came of it.
struct Execution : Recorded {
  enum class End { Completed, Violation, StepLimit, Pruned, TimeLimit };  // TimeLimit: CheckSetup::deadline
  End end = End::Completed;
  Violation violation;
  std::string how;  // how the program ended (engine stop and message)
  uint64_t quiescent = 0;       // quiescent points, where the state properties were tested
  uint64_t unfair_cycles = 0;   // cycles the run was let out of as unfair (livelock's fairness)
  std::string unbounded;        // at the step limit: where the program's goroutines were
  std::vector<LoggedStep> log;  // with ExecOptions::log
};

struct ExecOptions {
  StateSet* states = nullptr;    // count distinct states; nullptr: do not
  bool log = false;              // keep a LoggedStep per step
  std::string trace_path;        // write the execution's trace here
  std::vector<std::pair<std::string, std::string>> trace_metadata;
};

// Runs one execution under `policy` (ending with policy.finish).
Execution execute(const CheckSetup& setup, Policy& policy, const ExecOptions& opt);

}  // namespace gmp::model
