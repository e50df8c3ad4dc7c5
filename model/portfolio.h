// gmpsim check's default strategy, auto: a portfolio of the other strategies, time-sliced by
// executions (portfolio.cpp says how), so that one command finds what any of them would.
#pragma once

#include <cstdint>
#include <string>

#include "model/search.h"

namespace gmp::model {

// The portfolio's search: the counts, the first violation found (not shrunk; run_check shrinks it)
// with Found::found_by, the members' lines in strategy_summary and what the search means. cfg's
// params: "preemptions" (the bounded member's last bound), "depth" (the PCT members' deepest) and
// "estimate" (random walks for each exhaustive tree's estimate).
CheckReport run_portfolio(const CheckConfig& cfg);

// gmpsim check's time limit when --time-limit is not given (seconds, for the search and its
// shrinking; 0: none).
inline constexpr double kDefaultTimeLimitS = 60;

// gmpsim check's defaults, the one place the command and the mutation self-test take them from:
// the strategy table's first row (auto, this portfolio), the default properties (CheckSetup's),
// the default time limit. A CheckConfig made in code otherwise searches with DPOR and no limit.
CheckConfig command_defaults();

// The members, as the heading names them: "random, PCT at depths 2 and 3, ...".
std::string portfolio_members(const StrategyParams& params);

// Formatting shared with search.cpp: a count as "1234" or "1.2e+26"; `executions` as a percentage
// of `estimate` ("" when there is no estimate).
std::string fmt_estimate(double v);
std::string coverage_percent(uint64_t executions, double estimate);

}  // namespace gmp::model
