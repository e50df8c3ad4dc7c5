// A simulation: a scenario's goroutine program run on the ported scheduler under the virtual-time
// engine, on a machine and costs from a profile. The machine (simulation.cpp) holds the engine and
// the trace file and runs processes (process.h), one or the scenario's several; a process is its runtime's Host: it
// starts its Ms' threads in the engine, runs goroutines' code through the interpreter, and turns
// the scheduler's events into metrics and, optionally, the trace's events.
//
// A run is a pure function of (scenario, profile, config): the engine breaks every tie with the
// seed, the Ms' cheaprand states come from the seed, and nothing depends on addresses or the
// wall clock.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost/profile.h"
#include "sim/engine/engine.h"
#include "sim/runtime/mgc.h"
#include "sim/scenario/program.h"
#include "sim/workload/assertions.h"

namespace gmp::engine {

struct SimConfig {
  int32_t procs = 1;              // GOMAXPROCS
  int32_t cores = 0;              // 0: the profile machine's core count
  uint64_t seed = 1;
  int64_t time_limit = 60LL * 1000 * 1000 * 1000;  // virtual ns
  uint64_t event_limit = 2'000'000'000;
  int64_t schedtrace_ns = 0;      // GODEBUG=schedtrace period; 0: off
  bool asyncpreemptoff = false;   // GODEBUG=asyncpreemptoff=1
  rt::GCSettings gc;              // GOGC and GOMEMLIMIT (--gogc, --memlimit)
  // --procs auto: Go's default GOMAXPROCS (from the affinity and the cgroup's quota, and kept
  // current by sysmon) instead of `procs`; and GODEBUG containermaxprocs, updatemaxprocs.
  bool procs_auto = false;
  int32_t containermaxprocs = 1, updatemaxprocs = 1;
  // The process's cgroup (--cpu-quota, --cpu-period, --cpu-burst, --cpuset); a scenario with
  // several processes gives each its own instead (ProcessSpec::cgroup).
  scenario::Cgroup cgroup;
  int64_t jitter = 0;             // see EngineConfig::jitter
  std::string trace_path;         // write a trace here; empty: none
  std::vector<std::pair<std::string, std::string>> trace_metadata;  // more header metadata
  std::function<void(int64_t now, uint64_t events)> progress;  // see EngineConfig::progress
  // Choice mode (the model checker): the chooser orders every step; costs, cores, jitter and (but
  // under strict_time) the time limit play no part, and event_limit bounds the steps. See chooser.h.
  Chooser* chooser = nullptr;
  uint32_t daemon_rounds = 2;     // see EngineConfig::daemon_rounds
  bool strict_time = false;       // see EngineConfig::strict_time; time_limit then bounds the run
};

struct SimResult {
  Engine::Stop stop = Engine::Stop::AllExited;
  int exit_code = 0;
  std::string message;            // for a fatal error: Go's text and the goroutine list
  int64_t end_time = 0;           // virtual ns
  // The benchmark loop.
  std::string bench_name;
  int64_t ops = 0;
  double ns_per_op = 0;
  bool measured = false;
  // Scheduling latency, runnable to running, ns.
  int64_t lat_p50 = 0, lat_p90 = 0, lat_p99 = 0, lat_max = 0;
  uint64_t lat_samples = 0;
  std::vector<double> utilisation;  // per P
  // Counts.
  uint64_t steals = 0, wakeps = 0, handoffs = 0, preempt_signals = 0, preempt_requests = 0, ms_created = 0, goroutines = 0, global_puts = 0, os_preemptions = 0,
           line_transfers = 0;
  // What each wakep call found, and runqgrab's attempts on a running P's runnext.
  uint64_t wakep_spinning = 0, wakep_no_p = 0, runnext_backoffs = 0, runnext_cas_fails = 0;
  // A server scenario's requests (its connections): how many arrive in all and were answered, the
  // answered ones' latency from arrival to the answering write, and answers per virtual second.
  int64_t requests = 0, answered = 0;
  int64_t req_p50 = 0, req_p99 = 0, req_p999 = 0, req_max = 0;
  double req_per_s = 0;
  // Where the OS placed threads that became ready (EngineStats).
  uint64_t placed_on_prev = 0, woken_delayed = 0, queued_busy = 0, wake_preemptions = 0, placed_on_other = 0,
           balance_pulls = 0, newidle_pulls = 0;
  // The OS placement metrics of both placements (EngineStats; docs/placement.md, "Metrics").
  uint64_t wakeups = 0, wakeups_ran = 0, wake_on_prev = 0, migrations = 0;
  int64_t idle_wait_ns = 0;
  bool affine = false;             // the profile's placement is affine
  uint64_t events = 0;             // engine events (platform operations)
  std::vector<std::string> schedtrace;
  std::vector<std::pair<std::string, uint64_t>> event_counts;  // every scheduler event kind
  int32_t procs = 0, cores = 0;
  uint64_t seed = 0;
  // The scenario's assertions: how many it has, the violations found (workload/assertions.h), and
  // how many could not be checked (those about the state at exit, in a run that did not exit).
  int32_t assertions = 0;
  std::vector<workload::AssertionViolation> violations;
  int32_t assertions_unchecked = 0;
  // The garbage collector's run totals and cycles (Runtime::gcstats); allocBytes is 0 for a
  // program that does not allocate, whose report then says nothing about the GC.
  rt::GCStats gc;
  // The process's cgroup, as its cpu.stat says (all zero without a quota), and its GOMAXPROCS at
  // the end (procs is the start's) with how many times it changed.
  GroupStats cpu_stat;
  int32_t procs_end = 0;
  uint32_t procs_changes = 0;
  // The process's cgroup at the start: its quota (ns per period, -1: none) and period; whether its
  // GOMAXPROCS is Go's default (--procs auto).
  int64_t cpu_quota = -1, cpu_period = 0;
  bool procs_auto = false;
  // Several processes: whether it is a daemon, and whether (and when, with exit_code) it exited;
  // one that did not was still running when the run ended.
  bool daemon = false, exited = false;
  int64_t exit_time = 0;
  // Several processes: the process's name, and each process's own results in declaration order
  // (its requests, latencies, counts, GC, cpu_stat; the machine's figures stay in this result).
  // Empty for a scenario of one process, whose figures are this result's.
  std::string process;
  std::vector<SimResult> processes;
};

// The machine for `cores` cores: the profile's core groups in order, the last group's speed (and
// its clusters) repeated if more cores are asked for than it describes. Each core's cluster id
// numbers the groups' clusters (CoreGroup::cluster_size) in order.
std::vector<Core> machine_cores(const cost::Profile& prof, int32_t cores);

// A machine that cannot hold the run's cgroups: a cpuset naming a core the machine lacks, a quota
// above its cores. Known only once the core count is (a flag's or the profile's), so simulate
// reports it, before it writes anything.
class SimConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Throws SimConfigError if the scenario's processes' cgroups (or, for one process, cfg.cgroup) do
// not fit the machine cfg and prof make.
void check_machine(const scenario::Scenario& sc, const cost::Profile& prof, const SimConfig& cfg);

// Runs sc on the machine; with Scenario::processes, one process per declaration (ids 0..n-1 in
// order), each with its own results in SimResult::processes. Throws SimConfigError (check_machine).
SimResult simulate(const scenario::Scenario& sc, const cost::Profile& prof, const SimConfig& cfg);

}  // namespace gmp::engine
