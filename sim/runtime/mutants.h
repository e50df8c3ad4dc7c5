// Mutants: old bugs of Go's scheduler, put back into the port one at a time, so that a checker
// can show it finds them (the mutation self-test of `gmpsim check`). docs/mutants.md lists them.
//
// Each mutant is a branch in the port, `if (mutant(Mutant::X)) { the old code } else { today's }`
// (or a condition that skips today's code). With the CMake option GMP_MUTANTS off, the default,
// mutant() is constexpr false: the compiler drops every such branch and the port is the same code
// as without them. With GMP_MUTANTS on, mutant() compares against one process-wide setting,
// chosen with setActiveMutant before any simulation starts and left alone while any runs; it is
// read with a relaxed atomic load that is not a platform operation, so it never adds a scheduling
// point or costs virtual time.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>
#include <string_view>

namespace gmp::rt {

enum class Mutant : int {
  None,
  GoschedNoWakep,               // gosched-no-wakep
  NoNeedspinning,               // no-needspinning
  WakepKeepsNmspinning,         // wakep-keeps-nmspinning
  NoRecheckAfterSpinning,       // no-recheck-after-spinning
  ResetspinningNoWakep,         // resetspinning-no-wakep
  RunqemptySpurious,            // runqempty-spurious
  NoTimerRecheckAfterSpinning,  // no-timer-recheck-after-spinning
  TimerAddNoWakep,              // timer-add-no-wakep
  HandoffpNoTimerWake,          // handoffp-no-timer-wake
  PidlegetNoTimerpMask,         // pidleget-no-timerpmask
  RetakeNoSysretake,            // retake-no-sysretake
  StartmLateMReserveID,         // startm-late-mreserveid
  ExitsyscallLockedmRace,       // exitsyscall-lockedm-race
  ExitsyscallNoSysmonWake,      // exitsyscall-no-sysmon-wake
  SemacquireNoRecheck,          // semacquire-no-recheck
  RunqgrabNoBackoff,            // runqgrab-no-backoff
  StealRunnextEveryPass,        // steal-runnext-every-pass
  RunqgrabBackoffInSyscall,     // runqgrab-backoff-in-syscall
  InjectglistNoWakep,           // injectglist-no-wakep
  StartmNoAcquirem,             // startm-no-acquirem
  AssistHoldingLocks,           // assist-holding-locks
  InjectglistAllLocal,          // injectglist-all-local
  Count_,
};

// One row of the table: what the mutant is, where it lives, which Go change it undoes.
struct MutantInfo {
  Mutant id;
  const char* name;     // kebab-case, what `gmpsim check --mutant` takes
  const char* go_ref;   // golang/go commit (first 10 hex digits), and its issue where it has one
  const char* where;    // file:function in sim/runtime
  const char* summary;  // the bug, in one line
  const char* symptom;  // what a run should show
};

// Every mutant but None, in enum order.
std::span<const MutantInfo> mutantTable();
// The row of m; m must be a mutant (not None, not Count_).
const MutantInfo& mutantInfo(Mutant m);
// "none" for None, the mutant's name otherwise.
const char* mutantName(Mutant m);
// The mutant of that name; "none" (or "") is None. Throws std::invalid_argument, listing the
// names, for anything else.
Mutant mutantFromName(std::string_view name);

// Whether this build has the mutants compiled in (CMake option GMP_MUTANTS).
#ifdef GMP_MUTANTS
inline constexpr bool kMutantsBuilt = true;
#else
inline constexpr bool kMutantsBuilt = false;
#endif

#ifdef GMP_MUTANTS
// The active mutant, as an int (Mutant::None when none). Set it before any simulation starts,
// with setActiveMutant, and not while one runs.
inline std::atomic<int> activeMutant{0};

inline bool mutant(Mutant m) { return activeMutant.load(std::memory_order_relaxed) == static_cast<int>(m); }
#else
constexpr bool mutant(Mutant) { return false; }
#endif

// Selects the mutant every later simulation runs with (None: the port as it is). Call it before
// any simulation starts. Without GMP_MUTANTS, any mutant but None throws std::logic_error.
void setActiveMutant(Mutant m);
// The mutant setActiveMutant selected (always None without GMP_MUTANTS).
Mutant activeMutantSetting();

}  // namespace gmp::rt
