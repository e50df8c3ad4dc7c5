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

// The members, as the heading names them: "random, PCT at depths 2 and 3, ...".
std::string portfolio_members(const StrategyParams& params);

// Formatting shared with search.cpp: a count as "1234" or "1.2e+26"; `executions` as a percentage
// of `estimate` ("" when there is no estimate).
std::string fmt_estimate(double v);
std::string coverage_percent(uint64_t executions, double estimate);

}  // namespace gmp::model
