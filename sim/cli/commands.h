// gmpsim's commands and what they share: the options every simulation takes, and loading the
// scenario and profile they name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/cli/flags.h"
#include "sim/cost/profile.h"
#include "sim/simulation/simulation.h"
#include "sim/scenario/program.h"

namespace gmp::cli {

int cmd_run(int argc, char** argv);
int cmd_sweep(int argc, char** argv);
int cmd_steal(int argc, char** argv);
int cmd_trace(int argc, char** argv);
int cmd_check(int argc, char** argv);
// gmpsim check's usage lines, with its strategies and their flags from model/strategies.h's table.
std::string check_usage();
int cmd_replay(int argc, char** argv);
int cmd_calibrate(int argc, char** argv);

struct RunOptions {
  std::string scenario_path;
  std::string profile;          // a path, or a builtin name; empty: the default profile
  std::vector<int64_t> procs{1};  // 0: auto (Go's default GOMAXPROCS, SimConfig::procs_auto)
  std::vector<int64_t> cores{0};  // 0: the profile machine's
  uint64_t seed = 1;
  uint64_t seeds = 1;           // sweep: seeds per point
  // --gogc and --memlimit: empty when not given (Go's defaults, GOGC=100 and no limit); a list
  // only makes sense to sweep, in the order given.
  std::vector<int32_t> gogc;
  std::vector<int64_t> memlimit;
  // --cpu-quota in CPUs (0: no limit), empty when not given; a list only makes sense to sweep.
  // sim_config makes it cgroup.quota, CPUs times sim.cgroup.period (--cpu-period).
  std::vector<double> cpu_quota;
  // The flags that go straight to each simulation (limits, schedtrace, jitter, trace); procs,
  // cores and seed are set per run by sim_config.
  engine::SimConfig sim;
};

// Handles a flag every simulating command takes; false if `a` holds another one. --procs, --cores,
// --gogc, --memlimit and --cpu-quota take a single value or a comma-separated list (a list only
// makes sense to sweep).
bool parse_common_flag(Args& a, RunOptions& o);
// The checks that need every flag: a quota against the period (at least 1 ms per period), a burst
// against the quota. Bad usage ends the program with status 2.
void finish_common_flags(RunOptions& o);
// The cgroup quota of `cpus` CPUs over o's period, in ns per period (-1: no limit).
int64_t quota_ns(const RunOptions& o, double cpus);

// Walks a simulating command's arguments: the one SCENARIO, the common flags, and the command's
// own flags, which `own` handles (returning false for a flag it does not know).
template <class OwnFlag>
void parse_sim_args(const char* cmd, int argc, char** argv, RunOptions& o, OwnFlag own) {
  Args a(argc, argv);
  while (!a.done()) {
    const std::string arg = a.next();
    if (!a.is_flag()) {
      if (!o.scenario_path.empty()) {
        usage_error(std::string(cmd) + ": one scenario only, got '" + o.scenario_path + "' and '" + arg + "'");
      }
      o.scenario_path = arg;
    } else if (!parse_common_flag(a, o) && !own(a)) {
      usage_error(std::string(cmd) + ": unknown flag '" + a.flag() + "'");
    }
  }
  if (o.scenario_path.empty()) usage_error(std::string(cmd) + ": missing SCENARIO");
  finish_common_flags(o);
}

struct Loaded {
  scenario::Scenario scenario;
  cost::Profile profile;
};
// Loads the scenario and the profile; on bad input prints the error (file:line:column) and exits 1.
Loaded load_inputs(const RunOptions& o);
// The profile alone, the same way.
cost::Profile load_profile_option(const RunOptions& o);

// The GC settings and the quota are the first --gogc, --memlimit and --cpu-quota given (sweep sets
// each point's own). procs 0 is --procs auto.
engine::SimConfig sim_config(const RunOptions& o, int64_t procs, int64_t cores, uint64_t seed);
// run and check take one --gogc, --memlimit and --cpu-quota: a list is refused, naming the command.
void single_gc_settings(const std::string& cmd, const RunOptions& o);

// 0 for a program that ended normally; 2 for a fatal error or a limit, as Go exits 2 on a throw;
// 4 for a program that ended normally but violated one of its scenario's assertions.
inline constexpr int kAssertionsViolated = 4;
int exit_status(const engine::SimResult& r);

bool files_equal(const std::string& a, const std::string& b);

// A progress callback that redraws one line on stderr when it is a terminal (and does nothing
// otherwise); the line is erased when the run ends.
std::function<void(int64_t, uint64_t)> terminal_progress(const std::string& what);
void end_progress();

}  // namespace gmp::cli
