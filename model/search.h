// gmpsim check's search: runs executions of a scenario under one of the strategies (strategies.h),
// tests the properties on each, and returns the first violation found, shrunk, with its schedule.
//
// Splitting. An exhaustive search (DPOR, bounded, plain) is cut into shares: the first steps where
// more than one thread can run are expanded fully until there are kShares subtrees (or no more
// branching), and each share is searched on its own (policies.h's pinned prefix). A sampling
// search's executions (random, PCT) are numbered, execution i drawing from execution_seed(seed, i)
// (policy.h). --jobs runs shares or executions on threads of this process,
// --shard I/N takes every Nth of them (I, I+N, ...) across processes; the shares do not depend on
// either, so every split covers the same executions as one job, and the violation reported is the
// one of the lowest share or execution number, whatever the split.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/execution.h"
#include "model/strategies.h"

namespace gmp::model {

inline constexpr uint32_t kShares = 16;

struct CheckConfig {
  CheckSetup setup;
  // A row of strategies.h's table. gmpsim check's default is the table's first row, auto (the
  // portfolio, portfolio.h); a CheckConfig made in code searches with DPOR unless told otherwise.
  std::string strategy = "dpor";
  StrategyParams params;          // the strategy's parameters given; the rest take the row's defaults
  uint64_t search_seed = 1;       // the strategy's own randomness (random and PCT choices, DPOR's estimate)
  uint64_t max_executions = 0;    // 0: an exhaustive search until complete, a sampling one 10,000
  double time_limit = 0;          // seconds of wall time for the whole check, shrinking too; 0: none
  uint32_t jobs = 1;
  uint32_t shard = 0, shards = 1;
  bool shrink = true;
  bool states = true;  // count distinct states (and find livelocks)
  // Called about once a second from the searching threads (serialised), for a progress line:
  // `detail` says what the search has covered ("bounded K=1 done, K=2 31%"), or is empty.
  std::function<void(uint64_t executions, uint64_t states, double seconds, const std::string& detail)> progress;
};

struct Found {
  Violation violation;
  Schedule schedule;  // shrunk
  Schedule original;  // as found
  uint32_t preemptions = 0, original_preemptions = 0;
  uint64_t execution = 0;  // its number (sampling) or share (exhaustive)
  uint32_t shrink_runs = 0;
  // Shrinking stopped at the time limit (CheckConfig::time_limit bounds the whole check): the
  // schedule is as far as it was shrunk by then, perhaps not at all.
  bool shrink_cut = false;
  // The portfolio (--strategy auto): which member found it, at which of its executions ("bounded
  // search at 2 preemptions, its execution 312 (share 3)"); empty for one strategy.
  std::string found_by;
};

struct CheckReport {
  uint64_t executions = 0, pruned = 0, step_limited = 0;
  uint64_t time_cut = 0;    // executions cut at the time limit (ExecOptions::deadline)
  uint64_t quiescent = 0;  // quiescent points tested, over all executions
  std::string unbounded;   // the first execution at the step limit: where its goroutines were
  uint64_t states = 0;     // distinct fingerprints (union over the jobs of this process)
  bool states_truncated = false;
  double seconds = 0;  // the search, without shrinking
  double shrink_seconds = 0;
  bool complete = false;  // the whole space (of the strategy, within its bounds) was searched
  uint64_t max_steps_seen = 0;
  uint32_t max_threads = 0;
  std::string strategy_summary;  // the strategy's lines for the report (Strategy::summary)
  // What the search means, for the report: what a complete search proves ("every interleaving with
  // at most 2 preemptions was checked"), or how much of the tree an incomplete one covered against
  // Knuth's estimate of it; for the portfolio, a line per member. Empty when there is nothing to say.
  std::string meaning;
  std::optional<Found> found;
};

// Throws std::invalid_argument for an unknown strategy or a parameter it does not take.
CheckReport run_check(const CheckConfig& cfg);

// An exhaustive search's shares (kShares of them, or fewer where the tree stops branching): the
// pinned prefixes, in the order one search takes them. The same for every bound and every split.
std::vector<std::vector<uint32_t>> make_shares(const CheckSetup& setup);

// Knuth's estimate of the number of executions a DPOR search under `bound` preemptions (-1: none)
// would run to complete: the mean, over `runs` random walks of the tree (each execution i drawing
// from execution_seed(seed, i)), of the product of the backtrack sets met. 0 when runs is 0.
double estimate_tree(const CheckSetup& setup, int bound, uint32_t runs, uint64_t seed);

// What a complete search under `bound` preemptions (-1: none) proves, as the report says it.
std::string proof_text(int bound);

// Shrinks f's schedule (delta debugging over its departures; search.cpp says how) until no smaller
// one fails the same way, or the deadline passes (then f.shrink_cut). run_check calls it after a
// violation, with the check's time limit as the deadline.
void shrink(const CheckSetup& setup, Found& f, std::optional<std::chrono::steady_clock::time_point> deadline);

// Replays a schedule strictly (ScheduleError on divergence), logging every step; writes the trace
// if trace_path is set.
Execution replay(const CheckSetup& setup, const Schedule& s, const std::string& trace_path,
                 const std::vector<std::pair<std::string, std::string>>& metadata = {});

// The readable interleaving: one line per step, of the steps from `from` to `to` (exclusive); at
// most `max_lines` of them (0: all), the first and last halves with the count left out between.
std::string format_interleaving(const Execution& ex, size_t from, size_t to, size_t max_lines);

}  // namespace gmp::model
