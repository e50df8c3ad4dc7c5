// The portfolio, gmpsim check's default strategy (auto). No one strategy finds every bug: on the
// mutants of docs/mutants.md, random and PCT find lost wake-ups that bounded search and DPOR miss
// in their time, and bounded search at 2 preemptions finds what bounded-1 and DPOR miss, and the
// reverse, because each goes depth first at one bound. So auto runs them all, one slice at a time.
//
// Members, in this order (the order breaks ties):
//   - random search;
//   - PCT at depths 2 to D (--depth, default 3);
//   - bounded DPOR at each bound 0, 1, ... K (--preemptions, default 3), each bound a member of its
//     own: CHESS's context bounding (Musuvathi and Qadeer, PLDI 2007), but with the bounds searched
//     side by side rather than one after another. Iterative bounding finishes bound K-1 before it
//     starts K; on a whole program bound 1 often does not finish in a minute, and a bug that needs
//     3 preemptions (runqempty-spurious on mutex_handoff) was never reached. Side by side, a bug
//     at bound K is found at bound K's own execution count (times the members), whatever the
//     bounds below it cost. A bound searched to its end (complete) also covers every lower bound,
//     whose members then stop;
//   - DPOR with no bound.
// Each member is the strategy of the same name and seed: the random member's execution i is
// `--strategy random`'s execution i, the bounded member's search at K is `--strategy bounded
// --preemptions K`'s on one job, so what auto finds, the member's own strategy finds too.
//
// Slicing is by executions, never by wall time, so which member finds a violation, and at which of
// its executions, is the same on every run and every machine. The search goes in rounds: in round
// r, every member that has something left runs up to kFirstSlice * 2^r executions (at most
// kMaxSlice), keeping its state for the next round (a sampler its execution numbers; an
// exhaustive member its bound, its share and its place in the share's tree). After each round, the
// lowest member that found a violation in it wins, at its first violating execution. With --jobs J
// the members of a round run on J threads; a member below the winner has run its whole slice
// either way, and the ones above it are left out of the counts, so the report is the same for any
// J. Only the time limit (wall time) can end a search at a different point.
#include "model/portfolio.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "model/policies.h"
#include "model/strategies.h"

namespace gmp::model {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kFirstSlice = 32;   // executions per member in round 0
constexpr uint64_t kMaxSlice = 1024;   // ... doubling each round up to this
constexpr int64_t kDefaultBound = 3;   // the bounded member's last bound
constexpr int64_t kDefaultDepth = 3;   // the deepest PCT member
constexpr int64_t kDefaultEstimate = 20;

std::string with_commas(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

// Counts over executions.
struct Tally {
  uint64_t executions = 0, pruned = 0, step_limited = 0, time_cut = 0, quiescent = 0, max_steps = 0;
  uint32_t max_threads = 0;
  std::string unbounded;  // the first execution at the step limit: where its goroutines were

  void add(const Execution& ex) {
    executions++;
    if (ex.end == Execution::End::Pruned) pruned++;
    if (ex.end == Execution::End::TimeLimit) time_cut++;
    if (ex.end == Execution::End::StepLimit && step_limited++ == 0) unbounded = ex.unbounded;
    quiescent += ex.quiescent;
    max_steps = std::max(max_steps, ex.steps);
    max_threads = std::max(max_threads, ex.threads);
  }
  void merge(const Tally& o) {
    executions += o.executions;
    pruned += o.pruned;
    step_limited += o.step_limited;
    time_cut += o.time_cut;
    quiescent += o.quiescent;
    max_steps = std::max(max_steps, o.max_steps);
    max_threads = std::max(max_threads, o.max_threads);
    if (unbounded.empty()) unbounded = o.unbounded;
  }
};

class Member;

// What the members' slices share during the search.
struct Search {
  const CheckConfig& cfg;
  const std::vector<std::unique_ptr<Member>>& members;
  Clock::time_point start = Clock::now();
  std::atomic<uint32_t> best{UINT32_MAX};  // the lowest member that found a violation this round
  std::atomic<bool> failed{false};
  std::atomic<uint64_t> states{0};  // distinct states merged so far (for the progress line)
  std::mutex mu;                    // guards the progress line and failure
  Clock::time_point last_progress = start;
  std::exception_ptr failure;

  Search(const CheckConfig& c, const std::vector<std::unique_ptr<Member>>& m) : cfg(c), members(m) {}

  bool past_deadline() const { return cfg.setup.deadline && Clock::now() >= *cfg.setup.deadline; }
  // Whether member `m` must end its slice now: a lower one found a violation this round, a member
  // failed, or the time is up.
  bool stop(uint32_t m) const { return best.load() < m || failed.load() || past_deadline(); }
  void tick();
};

class Member {
 public:
  Member(uint32_t index, std::string name) : index_(index), name_(std::move(name)) {}
  virtual ~Member() = default;
  Member(const Member&) = delete;
  Member& operator=(const Member&) = delete;

  // Runs up to `budget` executions, fewer when the member has none left, finds a violation, or
  // sr.stop says so.
  virtual void slice(Search& sr, uint64_t budget) = 0;
  // Nothing left to run (an exhaustive member whose last tree is searched).
  virtual bool finished() const { return false; }
  // Its part of the progress line, short ("bounded K=1 31%", "DPOR 1e-38%"); called from any thread.
  virtual std::string progress() const = 0;
  virtual bool sampling() const { return false; }
  // Its line in the report, after the search.
  virtual std::string coverage() const = 0;
  // A round begins; the round's end may leave this member's part of it out (it ran above the
  // winner beside it, with --jobs): then its report must read as if that part never ran.
  virtual void begin_round() {}
  virtual void leave_out_round() {}

  uint32_t index() const { return index_; }
  const std::string& name() const { return name_; }
  uint64_t executions() const { return executions_.load(); }

  // This round's counts and states, kept apart until the round's end decides whether they count.
  Tally round;
  StateSet round_states;
  Tally total;
  std::optional<Found> found;

 protected:
  // Its words for the execution numbered n: "random search, its execution 312".
  virtual std::string describe(uint64_t n) const = 0;
  // One execution numbered n under `pol`; its end (a violation is recorded in `found`).
  Execution::End run(Search& sr, Policy& pol, uint64_t n) {
    ExecOptions opt;
    opt.states = sr.cfg.states ? &round_states : nullptr;
    const Execution ex = execute(sr.cfg.setup, pol, opt);
    round.add(ex);
    executions_++;
    sr.tick();
    if (ex.end == Execution::End::Violation) {
      Found f;
      f.violation = ex.violation;
      f.schedule = f.original = ex.schedule;
      f.preemptions = f.original_preemptions = ex.preemptions;
      f.execution = n;
      f.found_by = describe(n);
      found = std::move(f);
      uint32_t b = sr.best.load();
      while (index_ < b && !sr.best.compare_exchange_weak(b, index_)) {
      }
    }
    return ex.end;
  }

 private:
  uint32_t index_;
  std::string name_;
  std::atomic<uint64_t> executions_{0};
};

void Search::tick() {
  if (!cfg.progress) return;
  std::unique_lock<std::mutex> l(mu, std::try_to_lock);
  if (!l.owns_lock() || Clock::now() - last_progress < std::chrono::seconds(1)) return;
  last_progress = Clock::now();
  // The exhaustive members first: their percentages say the most.
  // The bounds' members share one word: "bounded K=0 done, K=1 31%, K=2 3%".
  uint64_t n = 0;
  std::string exhaustive, sampling;
  bool after_bounded = false;
  for (const auto& m : members) {
    n += m->executions();
    std::string& part = m->sampling() ? sampling : exhaustive;
    std::string p = m->progress();
    const bool bounded = !m->sampling() && p.rfind("bounded ", 0) == 0;
    if (bounded && after_bounded) {
      part += ", " + p.substr(8);
    } else {
      part += (part.empty() ? "" : m->sampling() ? ", " : "; ") + p;
    }
    if (!m->sampling()) after_bounded = bounded;
  }
  const std::string detail = exhaustive + "; " + sampling;
  cfg.progress(n, states.load(), std::chrono::duration<double>(Clock::now() - start).count(), detail);
}

// A sampling member (random, PCT): numbered executions, each from its own seed.
class Sampler final : public Member {
 public:
  Sampler(uint32_t index, std::string name, std::unique_ptr<Strategy> s, uint32_t depth)
      : Member(index, std::move(name)), strategy_(std::move(s)), depth_(depth) {}

  void slice(Search& sr, uint64_t budget) override {
    if (!policy_) {
      CheckReport probe;  // PCT measures the length of an execution first
      strategy_->prepare(sr.cfg.setup, probe);
      steps_ = probe.max_steps_seen;
      policy_ = strategy_->policy({});
    }
    for (uint64_t b = 0; b < budget && !sr.stop(index()); b++) {
      policy_->begin(next_);
      const Execution::End end = run(sr, *policy_, next_++);
      if (end == Execution::End::Violation || end == Execution::End::TimeLimit) return;
    }
  }

  std::string progress() const override {
    return (depth_ == 0 ? std::string("random") : "PCT" + std::to_string(depth_)) + " " + std::to_string(executions());
  }
  bool sampling() const override { return true; }

  std::string coverage() const override {
    std::string s = name() + ": " + with_commas(total.executions) + " executions";
    if (depth_ != 0 && total.executions != 0) {
      // PCT's guarantee: one execution finds a given bug of depth d with probability at least p.
      const double p = PctPolicy::bound(depth_, std::max<uint32_t>(total.max_threads, 1), std::max<uint64_t>(steps_, 1));
      const double all = 1 - std::pow(1 - p, static_cast<double>(total.executions));
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "; each finds a given bug of depth %u with probability at least %.3g (n=%u threads, k=%llu "
                    "steps), so these executions would find it with probability at least %.3g",
                    depth_, p, total.max_threads, static_cast<unsigned long long>(steps_), all);
      s += buf;
    }
    return s;
  }

 protected:
  std::string describe(uint64_t n) const override { return name() + ", its execution " + std::to_string(n); }

 private:
  std::unique_ptr<Strategy> strategy_;
  uint32_t depth_;  // PCT's; 0 for random
  std::unique_ptr<Policy> policy_;
  uint64_t next_ = 0;
  uint64_t steps_ = 0;
};

// An exhaustive member: DPOR over the shares, under each of its bounds in turn (-1: none).
class Exhaustive final : public Member {
 public:
  Exhaustive(uint32_t index, std::string name, const std::vector<int>& bounds,
             const std::vector<std::vector<uint32_t>>& shares, uint32_t estimate_runs, uint64_t seed)
      : Member(index, std::move(name)), shares_(shares), estimate_runs_(estimate_runs), seed_(seed) {
    for (int k : bounds) bounds_.push_back(Bound{k});
  }

  void slice(Search& sr, uint64_t budget) override {
    uint64_t b = 0;
    while (b < budget && at_ < bounds_.size() && !sr.stop(index())) {
      Bound& bd = bounds_[at_];
      if (bd.estimate < 0) {
        bd.estimate = estimate_runs_ == 0 ? 0 : estimate_tree(sr.cfg.setup, bd.k, estimate_runs_, seed_);
        estimate_.store(bd.estimate);
        continue;
      }
      if (!policy_) {
        if (share_ == shares_.size()) {  // this bound's tree is searched
          bd.complete = bd.cut == 0;
          share_ = 0;
          at_++;
          at_shown_.store(at_);
          bound_executions_.store(0);
          continue;
        }
        policy_ = std::make_unique<Dpor>(bd.k);
        policy_->set_prefix(shares_[share_]);
        in_share_ = 0;
      }
      if (!policy_->begin(in_share_)) {
        policy_.reset();
        share_++;
        continue;
      }
      in_share_++;
      b++;
      const uint64_t n = bd.executions++;
      bound_executions_.store(bd.executions);
      const Execution::End end = run(sr, *policy_, n);
      if (end == Execution::End::StepLimit || end == Execution::End::TimeLimit) bd.cut++;
      if (end == Execution::End::Violation || end == Execution::End::TimeLimit) return;
    }
  }

  void begin_round() override {
    saved_bounds_ = bounds_;
    saved_at_ = at_;
  }
  // Only what coverage() reads goes back: the search ends with this round.
  void leave_out_round() override {
    bounds_ = saved_bounds_;
    at_ = saved_at_;
  }

  bool finished() const override { return at_ >= bounds_.size() || retired_ >= 0; }
  // A complete search at bound `k` (above this member's) covers this one's interleavings: stop.
  void retire(int k) {
    if (at_ < bounds_.size()) retired_ = k;
  }
  int bound() const { return bounds_.front().k; }

  // The highest bound searched completely, with every bound below it (-2: none; -1: DPOR's).
  int proved() const {
    int k = -2;
    for (const Bound& b : bounds_) {
      if (!b.complete) break;
      k = b.k;
    }
    return k;
  }
  int retired() const { return retired_; }

  std::string progress() const override {
    const size_t at = at_shown_.load();
    const bool bounded = bounds_.front().k >= 0;
    std::string s = bounded ? "bounded" : name();
    if (bounded && at > 0) {
      s += " K=" + std::to_string(bounds_.front().k) +
           (at > 1 ? "-" + std::to_string(bounds_[at - 1].k) : std::string()) + " done";
    }
    if (retired_ >= 0) return s + " K=" + std::to_string(bounds_.front().k) + " covered by K=" + std::to_string(retired_);
    if (at < bounds_.size()) {
      if (bounded) s += (at > 0 ? ", K=" : " K=") + std::to_string(bounds_[at].k);
      const uint64_t n = bound_executions_.load();
      std::string pct = coverage_percent(n, estimate_.load());
      if (pct.rfind(">100%", 0) == 0) pct = ">100%";  // the estimate was low
      s += " " + (pct.empty() ? std::to_string(n) + " executions" : pct);
    }
    return s;
  }

  std::string coverage() const override {
    std::string s = name() + ":";
    for (size_t i = 0; i < bounds_.size(); i++) {
      const Bound& b = bounds_[i];
      if (i > at_) break;
      if (i > 0) s += ";";
      if (b.k >= 0) s += " at " + std::to_string(b.k) + " preemption" + (b.k == 1 ? "" : "s");
      s += " " + with_commas(b.executions) + " executions";
      if (i < at_) {
        s += b.complete ? ", complete"
                        : ", searched to its end, but " + with_commas(b.cut) +
                              " executions stopped at the step limit (so not complete)";
      } else if (retired_ >= 0) {
        s += ", then stopped: the complete search at " + std::to_string(retired_) + " preemptions covers it";
      } else if (b.estimate > 0) {
        // The bounded estimate's walk keeps to the default order 7 steps in 8 and weighs every step
        // as a uniform choice, so it runs low (waitgroup, 2 Ps, 1 preemption: 71 against 2,671):
        // the share it gives is an upper bound, not a measure.
        s += " of about " + fmt_estimate(b.estimate) + " by a low estimate (" + coverage_percent(b.executions, b.estimate) +
             " at most)";
      }
    }
    return s;
  }

 protected:
  std::string describe(uint64_t n) const override {
    const Bound& b = bounds_[at_];
    std::string s = b.k < 0 ? name() : name() + " at " + std::to_string(b.k) + " preemption" + (b.k == 1 ? "" : "s");
    return s + ", its execution " + std::to_string(n) + " (share " + std::to_string(share_) + ")";
  }

 private:
  struct Bound {
    int k;
    double estimate = -1;  // Knuth's estimate of its tree; -1: not yet made, 0: none
    uint64_t executions = 0;
    uint64_t cut = 0;  // executions at the step limit or cut by the time limit
    bool complete = false;
  };
  const std::vector<std::vector<uint32_t>>& shares_;
  uint32_t estimate_runs_;
  uint64_t seed_;
  std::vector<Bound> bounds_;
  std::vector<Bound> saved_bounds_;  // at the round's start
  size_t saved_at_ = 0;
  int retired_ = -1;  // the complete higher bound that stopped this member (-1: none)
  size_t at_ = 0;     // the bound being searched
  size_t share_ = 0;  // the share being searched
  std::unique_ptr<Dpor> policy_;
  uint64_t in_share_ = 0;
  // For the progress line, read from other threads.
  std::atomic<size_t> at_shown_{0};
  std::atomic<uint64_t> bound_executions_{0};
  std::atomic<double> estimate_{0};
};

// The highest bound whose member searched its tree completely (-2: none). A complete bounded DPOR
// search at K takes every interleaving with at most K preemptions, so the bounds below it too.
int proved_bound(const std::vector<Exhaustive*>& bounded) {
  int k = -2;
  for (const Exhaustive* b : bounded) {
    if (b->retired() < 0) k = std::max(k, b->proved());
  }
  return k;
}

int64_t param_or(const StrategyParams& p, const char* name, int64_t fallback) {
  const auto it = p.find(name);
  return it == p.end() || it->second < 0 ? fallback : it->second;
}

std::vector<uint32_t> pct_depths(const StrategyParams& params) {
  const auto d = static_cast<uint32_t>(std::max<int64_t>(param_or(params, "depth", kDefaultDepth), 1));
  std::vector<uint32_t> out;
  for (uint32_t k = std::min<uint32_t>(2, d); k <= d; k++) out.push_back(k);
  return out;
}

// The table's row (strategies.cpp): it names the members for the heading; run_check runs the
// portfolio itself (run_portfolio), not through policies.
class AutoStrategy final : public Strategy {
 public:
  explicit AutoStrategy(StrategyParams p) : params_(std::move(p)) {}
  std::string heading() const override;
  std::unique_ptr<Policy> policy(const std::vector<uint32_t>&) const override {
    throw std::logic_error("check: the auto strategy runs through run_portfolio");
  }

 private:
  StrategyParams params_;
};

}  // namespace

std::unique_ptr<Strategy> make_auto(const StrategyParams& p, uint64_t) { return std::make_unique<AutoStrategy>(p); }

std::string AutoStrategy::heading() const { return " (" + portfolio_members(params_) + ")"; }

CheckConfig command_defaults() {
  CheckConfig c;
  c.strategy = strategies().front().name;  // auto
  c.time_limit = kDefaultTimeLimitS;
  return c;
}

std::string portfolio_members(const StrategyParams& params) {
  const std::vector<uint32_t> depths = pct_depths(params);
  std::string pct = "PCT at depth" + std::string(depths.size() > 1 ? "s " : " ");
  for (size_t i = 0; i < depths.size(); i++) {
    if (i > 0) pct += i + 1 == depths.size() ? " and " : ", ";
    pct += std::to_string(depths[i]);
  }
  const int64_t k = param_or(params, "preemptions", kDefaultBound);
  return "random, " + pct + ", bounded search at " +
         (k == 0 ? std::string("0 preemptions") : "0 to " + std::to_string(k) + " preemptions, each bound side by side") +
         ", DPOR; " + std::to_string(kFirstSlice) + " executions each per round, doubling to " +
         std::to_string(kMaxSlice);
}

CheckReport run_portfolio(const CheckConfig& cfg) {
  const StrategyParams& params = cfg.params;
  const auto estimate_runs = static_cast<uint32_t>(param_or(params, "estimate", kDefaultEstimate));
  const int64_t max_bound = param_or(params, "preemptions", kDefaultBound);
  const uint64_t seed = cfg.search_seed;
  const auto start = Clock::now();

  const std::vector<std::vector<uint32_t>> shares = make_shares(cfg.setup);
  std::vector<std::unique_ptr<Member>> members;
  auto index = [&] { return static_cast<uint32_t>(members.size()); };
  members.push_back(std::make_unique<Sampler>(index(), "random search", make_strategy("random", {}, seed), 0));
  for (uint32_t d : pct_depths(params)) {
    members.push_back(std::make_unique<Sampler>(index(), "PCT at depth " + std::to_string(d),
                                                make_strategy("pct", {{"depth", d}}, seed), d));
  }
  std::vector<Exhaustive*> bounded;  // one member a bound, 0 to max_bound
  for (int64_t k = 0; k <= max_bound; k++) {
    members.push_back(std::make_unique<Exhaustive>(index(), "bounded search", std::vector<int>{static_cast<int>(k)},
                                                   shares, estimate_runs, seed));
    bounded.push_back(static_cast<Exhaustive*>(members.back().get()));
  }
  members.push_back(std::make_unique<Exhaustive>(index(), "DPOR", std::vector<int>{-1}, shares, estimate_runs, seed));
  auto* dpor = static_cast<Exhaustive*>(members.back().get());

  Search sr(cfg, members);
  StateSet states;
  Tally total;
  std::optional<Found> found;
  const uint32_t jobs = std::max<uint32_t>(cfg.jobs, 1);

  for (uint32_t round = 0;; round++) {
    const uint64_t budget = std::min<uint64_t>(kFirstSlice << std::min<uint32_t>(round, 40), kMaxSlice);
    // The members that run this round and their slices (--max-executions shares out what is left).
    std::vector<std::pair<Member*, uint64_t>> slices;
    uint64_t left = cfg.max_executions == 0 ? UINT64_MAX : cfg.max_executions - std::min(cfg.max_executions, total.executions);
    for (const auto& m : members) {
      if (m->finished() || left == 0) continue;
      const uint64_t b = std::min(budget, left);
      if (left != UINT64_MAX) left -= b;
      slices.emplace_back(m.get(), b);
    }
    if (slices.empty()) break;
    for (auto& [m, b] : slices) m->begin_round();
    sr.best = UINT32_MAX;
    std::atomic<size_t> next{0};
    auto worker = [&] {
      for (;;) {
        const size_t i = next.fetch_add(1);
        if (i >= slices.size() || sr.stop(slices[i].first->index())) return;
        try {
          slices[i].first->slice(sr, slices[i].second);
        } catch (...) {
          std::lock_guard<std::mutex> l(sr.mu);
          if (!sr.failure) sr.failure = std::current_exception();
          sr.failed = true;
        }
      }
    };
    std::vector<std::thread> ts;
    for (uint32_t j = 1; j < std::min<uint32_t>(jobs, static_cast<uint32_t>(slices.size())); j++) ts.emplace_back(worker);
    worker();
    for (auto& t : ts) t.join();
    if (sr.failure) std::rethrow_exception(sr.failure);

    // The round's end: the lowest member with a violation wins; the members above it may have run
    // part of their slices (with --jobs), and are left out, so that every J counts the same.
    const uint32_t winner = sr.best.load();
    for (auto& [m, b] : slices) {
      if (m->index() <= winner) {
        total.merge(m->round);
        m->total.merge(m->round);
        for (uint64_t fp : m->round_states.fingerprints) states.add(fp);
        states.truncated |= m->round_states.truncated;
      } else {
        m->leave_out_round();
      }
      m->round = Tally{};
      const size_t cap = m->round_states.max_states;
      m->round_states = StateSet{};
      m->round_states.max_states = cap;
    }
    sr.states = states.fingerprints.size();
    if (winner != UINT32_MAX) {
      found = members[winner]->found;
      break;
    }
    if (sr.past_deadline() || dpor->finished()) break;
    // A bound searched to its end covers the bounds below it: their members stop.
    const int covered = proved_bound(bounded);
    for (Exhaustive* b : bounded) {
      if (b->bound() < covered) b->retire(covered);
    }
    if (cfg.max_executions != 0 && total.executions >= cfg.max_executions) break;
  }

  CheckReport rep;
  rep.executions = total.executions;
  rep.pruned = total.pruned;
  rep.step_limited = total.step_limited;
  rep.time_cut = total.time_cut;
  rep.quiescent = total.quiescent;
  rep.unbounded = total.unbounded;
  rep.max_steps_seen = total.max_steps;
  rep.max_threads = total.max_threads;
  rep.states = states.fingerprints.size();
  rep.states_truncated = states.truncated;
  rep.complete = !found && dpor->proved() == -1;
  rep.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  rep.found = found;
  rep.strategy_summary = "portfolio (executions of each member, and what each covered):\n";
  for (const auto& m : members) rep.strategy_summary += "  " + m->coverage() + "\n";
  if (!found) {
    if (rep.complete) {
      rep.meaning = proof_text(-1);
    } else if (const int k = proved_bound(bounded); k >= 0) {
      rep.meaning = proof_text(k);
    }
  }
  return rep;
}

}  // namespace gmp::model
