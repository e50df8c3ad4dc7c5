#include "model/strategies.h"

#include <stdexcept>

namespace gmp::model {

// Each strategy's factory, in the file of its own that makes it.
std::unique_ptr<Strategy> make_dpor(const StrategyParams& p, uint64_t seed);     // strategy_dpor.cpp
std::unique_ptr<Strategy> make_bounded(const StrategyParams& p, uint64_t seed);  // strategy_dpor.cpp
std::unique_ptr<Strategy> make_plain(const StrategyParams& p, uint64_t seed);    // strategy_dpor.cpp
std::unique_ptr<Strategy> make_pct(const StrategyParams& p, uint64_t seed);      // strategy_pct.cpp
std::unique_ptr<Strategy> make_random(const StrategyParams& p, uint64_t seed);   // strategy_random.cpp
std::unique_ptr<Strategy> make_auto(const StrategyParams& p, uint64_t seed);     // portfolio.cpp

namespace {

constexpr StrategyParam kEstimate{"estimate", "N", 0, 100'000, 20,
                                  "random executions for Knuth's estimate of the search's size before it starts "
                                  "(0: none)"};
constexpr StrategyParam kPreemptions{"preemptions", "K", 0, 1000, 2,
                                     "the most switches away from a thread that could go on, along any execution "
                                     "(auto: its bounded member's last bound)"};

constexpr StrategyParam kDepth{"depth", "D", 1, 100, 3,
                               "the depth of the bugs to look for: the priority changes, plus one (auto: its PCT "
                               "members search at depths 2 to D)"};

StrategyParam with_fallback(StrategyParam p, int64_t fallback) {
  p.fallback = fallback;
  return p;
}

const std::vector<StrategyInfo>& table() {
  static const std::vector<StrategyInfo> rows{
      {"auto", false,
       "the portfolio: random, PCT at depths 2 to --depth, bounded search with the bound raised 0, 1, ... "
       "--preemptions (each bound to its end before the next) and DPOR, in turns of a number of executions "
       "each (32, doubling each round to 1024), until the first violation, the time limit, or DPOR completes; "
       "the report names the member that found it",
       {with_fallback(kPreemptions, 3), kDepth, kEstimate},
       make_auto},
      {"dpor", true,
       "Source-DPOR with sleep sets: every order of dependent steps; complete when it finishes",
       {kEstimate},
       make_dpor},
      {"bounded", true,
       "the same, taking no branch that needs more than --preemptions switches; complete up to the bound",
       {kPreemptions, kEstimate},
       make_bounded},
      {"pct", false,
       "PCT: random thread priorities changed at depth-1 random steps; prints the chance that one execution "
       "finds a given bug of that depth",
       {kDepth},
       make_pct},
      {"random", false, "uniform among the threads not in a timed wait, and one time in 16 among all", {},
       make_random},
      {"plain", true, "every enabled thread at every step, no reduction: the baseline DPOR is measured against",
       {with_fallback(kPreemptions, -1), with_fallback(kEstimate, 0)},
       make_plain},
  };
  return rows;
}

}  // namespace

std::span<const StrategyInfo> strategies() { return table(); }

const StrategyInfo* find_strategy(const std::string& name) {
  for (const StrategyInfo& s : table()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

std::string strategy_names(const char* separator, const char* last_separator) {
  std::string out;
  const auto rows = strategies();
  for (size_t i = 0; i < rows.size(); i++) {
    if (i > 0) out += i + 1 == rows.size() ? last_separator : separator;
    out += rows[i].name;
  }
  return out;
}

const StrategyParam* find_strategy_param(const std::string& name) {
  for (const StrategyInfo& s : table()) {
    for (const StrategyParam& p : s.params) {
      if (name == p.name) return &p;
    }
  }
  return nullptr;
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, const StrategyParams& given, uint64_t seed) {
  const StrategyInfo* s = find_strategy(name);
  if (s == nullptr) throw std::invalid_argument("unknown strategy '" + name + "' (known: " + strategy_names() + ")");
  StrategyParams all;
  for (const StrategyParam& p : s->params) all[p.name] = p.fallback;
  for (const auto& [key, value] : given) {
    const auto it = all.find(key);
    if (it == all.end()) throw std::invalid_argument("strategy " + name + " takes no parameter '" + key + "'");
    const StrategyParam* p = nullptr;
    for (const StrategyParam& q : s->params) {
      if (key == q.name) p = &q;
    }
    if (value < p->lo || value > p->hi) {
      throw std::invalid_argument("strategy " + name + ": " + key + " must be in [" + std::to_string(p->lo) + ", " +
                                  std::to_string(p->hi) + "], got " + std::to_string(value));
    }
    it->second = value;
  }
  return s->make(all, seed);
}

}  // namespace gmp::model
