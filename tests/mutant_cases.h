// The mutation self-test's table (docs/checker.md, "The mutation self-test"): for each mutant of
// docs/mutants.md, the scenario and Ps on which `gmpsim check SCENARIO --procs N` as it comes
// (model::command_defaults: strategy auto, the default properties) finds it, with the scenario
// flags it needs (--time strict, --sysmon-rounds), the budget of executions it is found within,
// what finds it and the property it breaks. tests/mutants_check_test.cpp asserts the table;
// gmp_check_bench prints each row's time to the first violation. Shared by both, so they search
// the same way.
#pragma once

#include <cstdint>
#include <string>

#include "model/execution.h"
#include "model/portfolio.h"
#include "model/search.h"
#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"
#include "tests/check_setup.h"

namespace gmp::selftest {

struct MutantCase {
  const char* mutant;
  const char* scenario;  // in sim/scenarios/check
  int32_t procs;
  // The executions of all the portfolio's members together within which it is found (what the
  // search took, with room to spare); for a performance mutant (found_by empty), the executions
  // that must find nothing.
  uint64_t budget;
  model::Property expect;  // (unused for a performance mutant)
  const char* found_by;    // the member that finds it, as Found::found_by begins; "": a performance mutant
  bool strict_time = false;    // --time strict: the mutants that need sysmon's clock
  uint32_t sysmon_rounds = 2;  // --sysmon-rounds
};

// Each budget is the executions the search took (gmp_check_bench --mutants) with room to spare.
inline constexpr MutantCase kMutantCases[] = {
    {"no-needspinning", "ready2", 2, 300, model::kWorkConservation, "random search"},
    {"no-recheck-after-spinning", "ready2", 2, 300, model::kWorkConservation, "random search"},
    {"resetspinning-no-wakep", "spawn2", 3, 300, model::kWorkConservation, "PCT at depth 2"},
    {"wakep-keeps-nmspinning", "syscall_sleep", 2, 300, model::kGConservation, "random search"},
    {"semacquire-no-recheck", "mutex", 2, 300, model::kThrow, "random search"},
    {"pidleget-no-timerpmask", "sleepers", 3, 300, model::kWorkConservation, "random search"},
    {"no-timer-recheck-after-spinning", "sleep_hog", 2, 300, model::kWorkConservation, "random search"},
    {"handoffp-no-timer-wake", "locked_sleep", 2, 1000, model::kWorkConservation, "random search"},
    {"timer-add-no-wakep", "locked_sleep", 2, 1000, model::kWorkConservation, "random search"},
    {"retake-no-sysretake", "syscall_loop", 2, 20, model::kStarvation, "random search", true},
    {"exitsyscall-no-sysmon-wake", "syscall_then_hogs", 2, 20, model::kStarvation, "random search", true},
    {"gosched-no-wakep", "gosched_spinner", 2, 20000, model::kWorkConservation, "random search"},
    {"runqempty-spurious", "mutex_handoff", 2, 100000, model::kWorkConservation, "bounded search at 3"},
    {"exitsyscall-lockedm-race", "syscall_lock", 2, 2000, model::kThrow, "bounded search at 1"},
    {"startm-late-mreserveid", "syscall_overdue", 1, 450000, model::kThrow, "bounded search at 2", false, 8},
    {"injectglist-no-wakep", "netpoll_inject", 2, 3000, model::kWorkConservation, "bounded search at 1"},
    {"startm-no-acquirem", "stw_ready", 3, 1000, model::kStwCompletes, "random search"},
    // The M spinning in casgstatus holds its P, so a goroutine in the global queue waits past
    // starvation's bound (60.7 ms at 2 Ps) before the spin's fair cycle shows (301 ms: sysmon's
    // timer, armed, keeps each spin round from counting as fruitless until then).
    {"assist-holding-locks", "assist_handoff", 2, 32, model::kStarvation, "random search", true},
    {"injectglist-all-local", "netpoll_strand", 2, 300, model::kWorkConservation, "random search"},
    // The performance mutants: old behaviour that breaks no safety property.
    // pingpong and ready_syscall have long executions (about 40 and 7 ms of CPU), hence their budgets.
    {"runqgrab-no-backoff", "pingpong", 2, 200, model::kThrow, ""},
    {"steal-runnext-every-pass", "spawn2", 2, 2000, model::kThrow, ""},
    {"runqgrab-backoff-in-syscall", "ready_syscall", 2, 500, model::kThrow, ""},
};

inline bool performance(const MutantCase& c) { return c.found_by[0] == '\0'; }

using checktest::check_scenario;

// `gmpsim check SCENARIO --procs N [the row's scenario flags]` as it comes, without shrinking,
// stopped after max_executions (0: none) or time_limit seconds (0: none).
inline model::CheckConfig default_search(const MutantCase& c, const scenario::Scenario& sc, uint64_t max_executions,
                                         double time_limit) {
  model::CheckConfig cfg = model::command_defaults();
  cfg.setup.scenario = &sc;
  cfg.setup.profile = &cost::default_profile();
  cfg.setup.procs = c.procs;
  cfg.setup.strict_time = c.strict_time;
  cfg.setup.daemon_rounds = c.sysmon_rounds;
  cfg.max_executions = max_executions;
  cfg.time_limit = time_limit;
  cfg.shrink = false;
  return cfg;
}

}  // namespace gmp::selftest
