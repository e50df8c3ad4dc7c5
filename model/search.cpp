#include "model/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "model/policies.h"
#include "model/portfolio.h"

namespace gmp::model {

namespace {

using Clock = std::chrono::steady_clock;

// Follows a prefix, then the default rule until the first step where more than one thread can
// run, and stops there: the step's position and the threads that can take it.
class ProbePolicy final : public Policy {
 public:
  explicit ProbePolicy(const std::vector<uint32_t>& prefix) : prefix_(prefix) {}
  size_t pick(uint64_t step, std::span<const engine::Step> enabled, uint32_t current) override {
    if (step < prefix_.size()) {
      for (size_t i = 0; i < enabled.size(); i++) {
        if (enabled[i].tid == prefix_[step]) return i;
      }
      throw std::logic_error("check: a share's prefix does not fit the run");
    }
    if (enabled.size() > 1) {
      for (const engine::Step& e : enabled) branch.push_back(e.tid);
      return engine::kStopRun;
    }
    path.push_back(enabled[0].tid);
    (void)current;
    return 0;
  }
  std::vector<uint32_t> path;    // forced steps after the prefix
  std::vector<uint32_t> branch;  // the threads at the branching step; empty: none
 private:
  const std::vector<uint32_t>& prefix_;
};

}  // namespace

std::vector<std::vector<uint32_t>> make_shares(const CheckSetup& setup) {
  std::vector<std::vector<uint32_t>> shares{{}};
  std::vector<bool> leaf{false};
  while (shares.size() < kShares) {
    std::vector<std::vector<uint32_t>> next;
    std::vector<bool> next_leaf;
    bool grew = false;
    for (size_t i = 0; i < shares.size(); i++) {
      if (leaf[i]) {
        next.push_back(shares[i]);
        next_leaf.push_back(true);
        continue;
      }
      ProbePolicy probe(shares[i]);
      CheckSetup s = setup;
      s.properties = 0;
      execute(s, probe, ExecOptions{});
      if (probe.branch.empty()) {
        next.push_back(shares[i]);
        next_leaf.push_back(true);
        continue;
      }
      grew = true;
      for (uint32_t t : probe.branch) {
        std::vector<uint32_t> p = shares[i];
        p.insert(p.end(), probe.path.begin(), probe.path.end());
        p.push_back(t);
        next.push_back(std::move(p));
        next_leaf.push_back(false);
      }
    }
    shares = std::move(next);
    leaf = std::move(next_leaf);
    if (!grew) break;
  }
  return shares;
}

double estimate_tree(const CheckSetup& setup, int bound, uint32_t runs, uint64_t seed) {
  Dpor d(bound);
  d.set_random(seed);
  double sum = 0;
  uint32_t done = 0;
  for (uint32_t r = 0; r < runs; r++) {
    d.begin(r);
    const Execution ex = execute(setup, d, ExecOptions{});
    if (ex.end == Execution::End::TimeLimit) break;  // cut at the check's time limit: a partial walk
    sum += d.tree_estimate();
    done++;
  }
  return done == 0 ? 0 : sum / done;
}

std::string proof_text(int bound) {
  std::string what = bound < 0 ? "every order of the program's dependent steps was checked (DPOR, complete)"
                               : "every interleaving with at most " + std::to_string(bound) + " preemption" +
                                     (bound == 1 ? "" : "s") +
                                     " was checked (bounded DPOR, complete to its bound but for the gaps any "
                                     "bounded DPOR has)";
  return "what it proves: " + what +
         ": none of them throws, deadlocks, fails an assertion or ends otherwise than checked; the "
         "quiescent-state properties were tested at the quiescent points these executions passed, which "
         "need not be all of them (docs/checker.md, \"What the checker does not do\")\n";
}

std::string fmt_estimate(double v) {
  char buf[64];
  if (v < 1e6) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.2g", v);
  }
  return buf;
}

std::string coverage_percent(uint64_t executions, double estimate) {
  if (estimate <= 0) return "";
  const double pct = 100.0 * static_cast<double>(executions) / estimate;
  char buf[64];
  if (pct >= 100) return ">100% of the estimate (it was low)";
  if (pct >= 0.1) {
    std::snprintf(buf, sizeof buf, "%.1f%%", pct);
  } else {
    std::snprintf(buf, sizeof buf, "%.2g%%", pct);
  }
  return buf;
}

namespace {

// What the searching threads share.
struct Shared {
  const CheckConfig& cfg;
  Clock::time_point start;
  std::atomic<uint64_t> executions{0}, pruned{0}, step_limited{0}, time_cut{0}, max_steps{0}, quiescent{0};
  std::atomic<uint32_t> max_threads{0};
  std::atomic<uint64_t> best{UINT64_MAX};  // the lowest share or execution number with a violation
  std::atomic<bool> out_of_budget{false};
  std::mutex mu;  // guards found, states, progress
  std::optional<Found> found;
  std::string unbounded;
  std::exception_ptr failure;
  StateSet states;
  Clock::time_point last_progress;

  double estimate = 0;  // Knuth's estimate of the tree, for the progress line; 0: none

  explicit Shared(const CheckConfig& c) : cfg(c), start(Clock::now()), last_progress(start) {}

  double seconds() const { return std::chrono::duration<double>(Clock::now() - start).count(); }

  // Counts one execution; false when the search must stop (a budget is spent).
  bool count(const Execution& ex) {
    const uint64_t n = executions.fetch_add(1) + 1;
    if (ex.end == Execution::End::Pruned) pruned++;
    if (ex.end == Execution::End::TimeLimit) {
      time_cut++;
      out_of_budget = true;
    }
    if (ex.end == Execution::End::StepLimit && step_limited++ == 0) {
      std::lock_guard<std::mutex> l(mu);
      unbounded = ex.unbounded;
    }
    quiescent += ex.quiescent;
    uint64_t ms = max_steps.load();
    while (ex.steps > ms && !max_steps.compare_exchange_weak(ms, ex.steps)) {
    }
    uint32_t mt = max_threads.load();
    while (ex.threads > mt && !max_threads.compare_exchange_weak(mt, ex.threads)) {
    }
    if (cfg.progress && (n & 63) == 0) {
      std::lock_guard<std::mutex> l(mu);
      if (Clock::now() - last_progress > std::chrono::seconds(1)) {
        last_progress = Clock::now();
        const std::string pct = coverage_percent(n, estimate);
        cfg.progress(n, states.fingerprints.size(), seconds(),
                     pct.empty() ? "" : pct + " of about " + fmt_estimate(estimate) + " executions");
      }
    }
    if ((cfg.max_executions != 0 && n >= cfg.max_executions) || (cfg.time_limit > 0 && seconds() >= cfg.time_limit)) {
      out_of_budget = true;
    }
    return !out_of_budget;
  }

  void report(uint64_t number, const Execution& ex) {
    std::lock_guard<std::mutex> l(mu);
    if (number >= best.load()) return;
    best = number;
    Found f;
    f.violation = ex.violation;
    f.schedule = f.original = ex.schedule;
    f.preemptions = f.original_preemptions = ex.preemptions;
    f.execution = number;
    found = f;
  }
};

// Runs a searching thread's loop; an exception (a scenario with too many threads, a run that
// does not repeat itself) stops every thread and is rethrown by run_check once all have joined.
template <class F>
void guarded(Shared& sh, F&& f) {
  try {
    f();
  } catch (...) {
    std::lock_guard<std::mutex> l(sh.mu);
    if (!sh.failure) sh.failure = std::current_exception();
    sh.out_of_budget = true;
  }
}

// One execution with this thread's state graph (merged at the end), or none.
Execution run_one(Shared& sh, Policy& pol, StateSet* g) {
  ExecOptions opt;
  opt.states = g;
  return execute(sh.cfg.setup, pol, opt);
}

void merge_states(Shared& sh, const StateSet& g) {
  std::lock_guard<std::mutex> l(sh.mu);
  for (uint64_t fp : g.fingerprints) sh.states.add(fp);
  sh.states.truncated |= g.truncated;
}

// Searches share `k` of an exhaustive search to its end (its policy has no execution left), or to
// the first violation, or until told to stop. Returns whether the share was searched completely.
bool search_share(Shared& sh, uint64_t k, Policy& pol, StateSet* g) {
  for (uint64_t n = 0; pol.begin(n); n++) {
    if (sh.best.load() < k || sh.out_of_budget) return false;
    const Execution ex = run_one(sh, pol, g);
    const bool go_on = sh.count(ex);
    if (ex.end == Execution::End::Violation) {
      sh.report(k, ex);
      return false;
    }
    if (!go_on) return false;
  }
  return true;
}

// A random or PCT counterexample switches threads hundreds of times, and most of those switches
// cannot be dropped one by one without losing the bug (every later step moves). Iterative
// context bounding finds the fewest: a bounded DPOR search for the same property with 0, 1, 2,
// then 3 preemptions, each within a budget, takes the first schedule that fails the same way.
void fewer_preemptions(const CheckConfig& cfg, Found& f, std::optional<Clock::time_point> deadline) {
  constexpr int kMaxBound = 3;
  constexpr uint64_t kBudget = 20'000;  // executions per bound
  for (int k = 0; k <= kMaxBound && static_cast<uint32_t>(k) < f.preemptions; k++) {
    double left = 0;  // seconds to the deadline; 0: none
    if (deadline) {
      left = std::chrono::duration<double>(*deadline - Clock::now()).count();
      if (left <= 0) {
        f.shrink_cut = true;
        return;
      }
    }
    CheckConfig b;
    b.time_limit = left;
    b.setup = cfg.setup;
    b.strategy = "bounded";
    b.params = {{"preemptions", k}, {"estimate", 0}};
    b.max_executions = kBudget;
    b.shrink = false;
    b.states = false;
    const CheckReport r = run_check(b);
    f.shrink_runs += static_cast<uint32_t>(std::min<uint64_t>(r.executions, UINT32_MAX));
    if (!r.found || r.found->violation.property != f.violation.property || r.found->preemptions >= f.preemptions)
      continue;
    f.schedule = r.found->schedule;
    f.preemptions = r.found->preemptions;
    f.violation = r.found->violation;
    shrink(cfg.setup, f, deadline);
    return;
  }
}

}  // namespace

// Delta debugging (Zeller's ddmin) over the schedule's departures: drop a chunk of them, replay
// the rest leniently (a pick that no longer fits is skipped), and keep the run if the same
// property still fails with fewer departures, or as many and fewer steps; chunks halve down to
// single departures. The kept schedule is the one the replay recorded, so it replays strictly.
// `deadline`: the check's time limit, which bounds shrinking too; past it f.shrink_cut is set and
// the schedule stays as far as it got.
void shrink(const CheckSetup& setup, Found& f, std::optional<Clock::time_point> deadline) {
  constexpr uint32_t kMaxRuns = 400;
  const auto past = [&] {
    if (deadline && Clock::now() >= *deadline) f.shrink_cut = true;
    return f.shrink_cut;
  };
  auto attempt = [&](const Schedule& cand) {
    ReplayPolicy pol(cand, /*strict=*/false);
    f.shrink_runs++;
    const Execution ex = execute(setup, pol, ExecOptions{});
    if (ex.end != Execution::End::Violation || ex.violation.property != f.violation.property) return false;
    if (ex.schedule.picks.size() > f.schedule.picks.size()) return false;
    if (ex.schedule.picks.size() == f.schedule.picks.size() && ex.steps >= f.schedule.steps) return false;
    f.schedule = ex.schedule;
    f.preemptions = ex.preemptions;
    f.violation = ex.violation;
    return true;
  };
  size_t chunk = std::max<size_t>(f.schedule.picks.size() / 2, 1);
  while (!f.schedule.picks.empty() && f.shrink_runs < kMaxRuns && !past()) {
    bool better = false;
    for (size_t at = 0; at < f.schedule.picks.size() && f.shrink_runs < kMaxRuns && !past();) {
      Schedule cand = f.schedule;
      const size_t end = std::min(at + chunk, cand.picks.size());
      cand.picks.erase(cand.picks.begin() + static_cast<ptrdiff_t>(at),
                       cand.picks.begin() + static_cast<ptrdiff_t>(end));
      cand.steps = 0;
      if (attempt(cand)) {
        better = true;  // the same position now holds the next chunk
      } else {
        at += chunk;
      }
    }
    if (!better) {
      if (chunk == 1) break;
      chunk = std::max<size_t>(chunk / 2, 1);
    } else {
      chunk = std::min(chunk, std::max<size_t>(f.schedule.picks.size() / 2, 1));
    }
  }
}

CheckReport run_check(const CheckConfig& given) {
  // The time limit bounds every execution of the check (CheckSetup::deadline) as well as the
  // search between executions and the shrinking after it.
  CheckConfig cfg = given;
  if (cfg.time_limit > 0) {
    cfg.setup.deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(cfg.time_limit));
  }
  if (cfg.strategy == "auto") {
    CheckReport rep = run_portfolio(cfg);
    if (rep.found && cfg.shrink) {
      const auto before = Clock::now();
      shrink(cfg.setup, *rep.found, cfg.setup.deadline);
      fewer_preemptions(cfg, *rep.found, cfg.setup.deadline);
      rep.shrink_seconds = std::chrono::duration<double>(Clock::now() - before).count();
    }
    return rep;
  }
  const StrategyInfo* info = find_strategy(cfg.strategy);
  const std::unique_ptr<Strategy> strategy = make_strategy(cfg.strategy, cfg.params, cfg.search_seed);
  CheckReport rep;
  Shared sh(cfg);
  // An exhaustive search with a reduction (dpor, bounded) measures its tree first, so that an
  // incomplete one can say how much of it it covered (a bounded one, its own bounded tree).
  const auto param = [&](const char* name) {
    const auto it = cfg.params.find(name);
    if (it != cfg.params.end()) return it->second;
    for (const StrategyParam& p : info->params) {
      if (name == std::string(p.name)) return p.fallback;
    }
    return int64_t{-1};
  };
  const int bound = info->exhaustive ? static_cast<int>(param("preemptions")) : -1;
  if (info->exhaustive && cfg.strategy != "plain" && param("estimate") > 0) {
    sh.estimate = estimate_tree(cfg.setup, bound, static_cast<uint32_t>(param("estimate")), cfg.search_seed);
  }
  const uint32_t jobs = std::max<uint32_t>(cfg.jobs, 1);
  const bool keep_states = cfg.states;
  std::vector<StateSet> graphs(jobs);
  bool complete = true;
  strategy->prepare(cfg.setup, rep);

  if (info->exhaustive) {
    const std::vector<std::vector<uint32_t>> shares = make_shares(cfg.setup);
    std::vector<uint64_t> mine;
    for (uint64_t k = cfg.shard; k < shares.size(); k += std::max<uint32_t>(cfg.shards, 1)) mine.push_back(k);
    std::atomic<size_t> next{0};
    std::atomic<bool> all_complete{true};
    auto worker = [&](uint32_t j) {
      guarded(sh, [&] {
        for (;;) {
          const size_t i = next.fetch_add(1);
          if (i >= mine.size()) return;
          const std::unique_ptr<Policy> pol = strategy->policy(shares[mine[i]]);
          if (!search_share(sh, mine[i], *pol, keep_states ? &graphs[j] : nullptr)) all_complete = false;
        }
      });
    };
    std::vector<std::thread> ts;
    for (uint32_t j = 1; j < jobs; j++) ts.emplace_back(worker, j);
    worker(0);
    for (auto& t : ts) t.join();
    complete = all_complete && !sh.found;
  } else {
    const uint64_t total = cfg.max_executions != 0 ? cfg.max_executions : 10'000;
    std::atomic<uint64_t> next{cfg.shard};
    const uint64_t stride = std::max<uint32_t>(cfg.shards, 1);
    auto worker = [&](uint32_t j) {
      guarded(sh, [&] {
        const std::unique_ptr<Policy> pol = strategy->policy({});
        for (;;) {
          const uint64_t i = next.fetch_add(stride);
          if (i >= total || i >= sh.best.load() || sh.out_of_budget) return;
          if (!pol->begin(i)) return;
          const Execution ex = run_one(sh, *pol, keep_states ? &graphs[j] : nullptr);
          sh.count(ex);
          if (ex.end == Execution::End::Violation) sh.report(i, ex);
        }
      });
    };
    std::vector<std::thread> ts;
    for (uint32_t j = 1; j < jobs; j++) ts.emplace_back(worker, j);
    worker(0);
    for (auto& t : ts) t.join();
    complete = false;  // sampling is never complete
  }

  if (sh.failure) std::rethrow_exception(sh.failure);
  if (keep_states) {
    for (const StateSet& g : graphs) merge_states(sh, g);
  }
  rep.executions = sh.executions;
  rep.pruned = sh.pruned;
  rep.step_limited = sh.step_limited;
  rep.time_cut = sh.time_cut;
  rep.quiescent = sh.quiescent;
  rep.unbounded = sh.unbounded;
  rep.max_steps_seen = std::max(rep.max_steps_seen, sh.max_steps.load());
  rep.max_threads = sh.max_threads;
  rep.states = sh.states.fingerprints.size();
  rep.states_truncated = sh.states.truncated;
  rep.complete = complete && !sh.out_of_budget && rep.step_limited == 0;
  rep.seconds = sh.seconds();
  if (sh.found) {
    rep.found = sh.found;
    if (cfg.shrink) {
      shrink(cfg.setup, *rep.found, cfg.setup.deadline);
      fewer_preemptions(cfg, *rep.found, cfg.setup.deadline);
    }
  }
  rep.shrink_seconds = sh.seconds() - rep.seconds;
  rep.strategy_summary = strategy->summary(rep);
  if (info->exhaustive && cfg.strategy != "plain") {
    if (rep.complete) {
      rep.meaning = proof_text(bound);
    } else if (!rep.found && sh.estimate > 0) {
      rep.meaning = "coverage: " + std::to_string(rep.executions) + " executions of about " +
                    fmt_estimate(sh.estimate) + " (Knuth's estimate of the " +
                    (bound < 0 ? std::string("DPOR") : "bounded") + " tree over " +
                    std::to_string(param("estimate")) + " random walks): " + coverage_percent(rep.executions, sh.estimate) +
                    (bound < 0 ? std::string()
                               : " at most (the bounded walk keeps mostly to the default order and runs low: on waitgroup at "
                                 "2 Ps and 1 preemption it estimated 71 executions of 2,671)") +
                    "\n";
    }
  }
  return rep;
}

Execution replay(const CheckSetup& setup, const Schedule& s, const std::string& trace_path,
                 const std::vector<std::pair<std::string, std::string>>& metadata) {
  ReplayPolicy pol(s, /*strict=*/true);
  ExecOptions opt;
  opt.log = true;
  opt.trace_path = trace_path;
  opt.trace_metadata = metadata;
  return execute(setup, pol, opt);
}

namespace {

// "void gmp::rt::Runtime::runqput(gmp::rt::p*, ...)" -> "runqput"; lambdas name their enclosing
// function.
std::string go_function(const plat::Site& site) {
  std::string f = site.function_name();
  const size_t paren = f.find('(');
  if (paren != std::string::npos) f.resize(paren);
  const size_t colon = f.rfind("::");
  if (colon != std::string::npos) f = f.substr(colon + 2);
  const size_t space = f.rfind(' ');
  if (space != std::string::npos) f = f.substr(space + 1);
  return f;
}

std::string base_name(const char* path) {
  std::string p = path;
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string hex_or_dec(uint64_t v) {
  char buf[32];
  if (v > 0xffffff) {
    std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  } else {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  }
  return buf;
}

std::string operation(const LoggedStep& l) {
  const engine::Step& s = l.step;
  const std::string post = l.has_post ? hex_or_dec(l.post) : "?";
  switch (s.kind) {
    case engine::StepKind::Start:
      return "thread starts";
    case engine::StepKind::Lock:
      return "lock";
    case engine::StepKind::Unlock:
      return "unlock";
    case engine::StepKind::NoteSleep:
      return "note check (notesleep)";
    case engine::StepKind::Timeout:
      return "timed wait ends";
    case engine::StepKind::Clock:
      return "nanotime";
    case engine::StepKind::Signal:
      return "tgkill thread " + std::to_string(s.target);
    case engine::StepKind::Yield:
      return "osyield";
    case engine::StepKind::Access:
      break;
  }
  const std::string name = plat::op_name(s.op);
  switch (s.op) {
    case plat::Op::Load:
    case plat::Op::LoadAcquire:
    case plat::Op::PlainLoad:
      return name + " -> " + post;
    case plat::Op::Store:
    case plat::Op::StoreRelease:
    case plat::Op::PlainStore:
      return name + " " + hex_or_dec(s.value);
    case plat::Op::Cas:
    case plat::Op::CasRelease:
      return name + " " + hex_or_dec(s.expected) + " -> " + hex_or_dec(s.value) +
             (l.has_post ? (l.post == s.value ? ": ok" : ": failed, is " + post) : "");
    case plat::Op::Add:
      return name + " " + std::to_string(static_cast<int64_t>(s.value)) + " -> " + post;
    case plat::Op::Swap:
      return name + " " + hex_or_dec(s.value);
    case plat::Op::Or:
    case plat::Op::And:
      return name + " " + hex_or_dec(s.value) + " -> " + post;
    case plat::Op::Count_:
      break;
  }
  return name;
}

}  // namespace

std::string format_interleaving(const Execution& ex, size_t from, size_t to, size_t max_lines) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%7s %6s %4s %4s %5s %10s  %-24s %-22s %s\n", "step", "thread", "M", "P", "G", "time",
                "function", "site", "operation");
  out += buf;
  to = std::min(to, ex.log.size());
  from = std::min(from, to);
  for (size_t i = from; i < to; i++) {
    if (max_lines != 0 && to - from > max_lines && i == from + max_lines / 2) {
      const size_t skip = (to - from) - max_lines;
      out += "    ... " + std::to_string(skip) + " steps left out (--show 0 prints them all)\n";
      i += skip - 1;
      continue;
    }
    const LoggedStep& l = ex.log[i];
    auto id = [](int64_t v, const char* pre) { return v < 0 ? std::string("-") : pre + std::to_string(v); };
    const std::string site = base_name(l.step.site.file_name()) + ":" + std::to_string(l.step.site.line());
    std::snprintf(buf, sizeof buf, "%7zu %6s %4s %4s %5s %8.3fus  %-24s %-22s %s%s\n", i,
                  ("t" + std::to_string(l.step.tid)).c_str(), id(l.m, "M").c_str(), id(l.p, "P").c_str(),
                  l.g == 0 ? "g0" : id(l.g, "G").c_str(), static_cast<double>(l.now) / 1e3,
                  l.step.site.line() != 0 ? go_function(l.step.site).c_str() : "-",
                  l.step.site.line() != 0 ? site.c_str() : "-", operation(l).c_str(),
                  l.enabled > 1 ? "" : "  (only choice)");
    // Several processes: the other processes' steps taken since the choice before are not listed.
    if (const uint64_t before = i > 0 ? ex.log[i - 1].forced : 0; l.forced > before) {
      out += "        ... " + std::to_string(l.forced - before) + " steps of other processes\n";
    }
    out += buf;
  }
  return out;
}

}  // namespace gmp::model
