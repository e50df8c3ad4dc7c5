// The checker's strategies, in one table (strategies.cpp): each row names a strategy, says whether
// it searches exhaustively, lists its parameters (gmpsim check's flags, with their ranges, defaults
// and help) and makes it. The search (search.cpp) and gmpsim check's flags and usage are driven
// from the table alone, so a new strategy is a file of its own and a row.
//
// An exhaustive strategy's search is cut into shares (search.h), each a pinned prefix of the
// search tree searched to its end by one policy; a sampling strategy's executions are numbered,
// and each searching thread runs its share of the numbers through one policy.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/execution.h"

namespace gmp::model {

struct CheckReport;

// A strategy's parameter: gmpsim check takes it as --NAME METAVAR.
struct StrategyParam {
  const char* name;     // "preemptions"
  const char* metavar;  // "K"
  int64_t lo, hi;       // the values accepted
  int64_t fallback;     // when not given; -1: none (the strategy says what none means)
  const char* help;
};

// Parameter values by name. A search fills in the ones not given from the strategy's row.
using StrategyParams = std::map<std::string, int64_t>;

// One search's strategy: made by its row's factory with the search's parameters and seed.
class Strategy {
 public:
  virtual ~Strategy() = default;
  // What the heading says after the strategy's name: " (depth 3)".
  virtual std::string heading() const { return ""; }
  // Before the search, on one thread: what the strategy measures or estimates first (PCT's
  // length of an execution, DPOR's estimate of the tree). It may set rep.max_steps_seen.
  virtual void prepare(const CheckSetup& /*setup*/, CheckReport& /*rep*/) {}
  // The policy for one share of an exhaustive search (its pinned prefix) or for one searching
  // thread of a sampling search (an empty prefix; the search begins it with each execution's number).
  virtual std::unique_ptr<Policy> policy(const std::vector<uint32_t>& prefix) const = 0;
  // Lines the report prints before its counts (an estimate, a probability); "" for none.
  virtual std::string summary(const CheckReport& /*rep*/) const { return ""; }
};

struct StrategyInfo {
  const char* name;
  bool exhaustive;  // complete when it finishes (within its bounds); else it samples
  const char* help;
  std::vector<StrategyParam> params;
  std::unique_ptr<Strategy> (*make)(const StrategyParams& params, uint64_t seed);
};

// The table, in the order gmpsim check lists it; the first row is the default.
std::span<const StrategyInfo> strategies();
// The row named `name`; nullptr if there is none.
const StrategyInfo* find_strategy(const std::string& name);
// The names in table order: "dpor, bounded, pct, random or plain".
std::string strategy_names(const char* separator = ", ", const char* last_separator = " or ");
// The first row's declaration of parameter `name`; nullptr if no strategy takes it.
const StrategyParam* find_strategy_param(const std::string& name);

// The strategy `name` with the parameters `given` and the row's defaults for the rest. Throws
// std::invalid_argument for an unknown strategy, a parameter the strategy does not take, or a value
// out of range.
std::unique_ptr<Strategy> make_strategy(const std::string& name, const StrategyParams& given, uint64_t seed);

}  // namespace gmp::model
