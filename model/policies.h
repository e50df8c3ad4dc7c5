// The checker's search strategies at the level of one execution (Policy, policy.h): uniform
// random, PCT, replay of a schedule, and dynamic partial-order reduction. The strategies that
// drive them over a search are in strategies.h, the search loops in search.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/policy.h"
#include "model/schedule.h"
#include "sim/platform/splitmix64.h"

namespace gmp::model {

// The checker follows at most this many threads (Ms, sysmon) in one execution: DPOR keeps a
// thread set as a 64-bit mask.
inline constexpr uint32_t kMaxThreads = 64;

// Every step picked uniformly among the enabled ones. Unbegun, it draws from `seed`; execution i
// of a search draws from execution_seed(seed, i).
class RandomPolicy final : public Policy {
 public:
  explicit RandomPolicy(uint64_t seed) : seed_(seed), rng_(seed) {}
  bool begin(uint64_t index) override;
  size_t pick(uint64_t step, std::span<const engine::Step> enabled, uint32_t current) override;

 private:
  uint64_t seed_;
  SplitMix64 rng_;
};

// PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte, ASPLOS 2010): each thread gets a random
// priority when it is created, above depth-1 reserved low ones; the enabled thread of highest
// priority runs; at depth-1 change points, drawn uniformly among the first `steps` steps, the
// running thread drops to the next reserved priority. A bug of depth d is found by one
// execution with probability at least 1 / (n * k^(d-1)), n threads, k steps. Each osyield of the
// running thread first gives one step to the next thread in priority, as sched_yield lets
// another runnable thread go first. Seeded like RandomPolicy: execution i of a search draws its
// change points and priorities from execution_seed(seed, i).
class PctPolicy final : public Policy {
 public:
  PctPolicy(uint64_t seed, uint32_t depth, uint64_t steps);
  bool begin(uint64_t index) override;
  void thread_created(uint32_t tid, uint32_t parent, bool daemon) override;
  size_t pick(uint64_t step, std::span<const engine::Step> enabled, uint32_t current) override;
  static double bound(uint32_t depth, uint32_t threads, uint64_t steps);

 private:
  // The enabled thread of highest priority not in a timed wait (and not `except`); SIZE_MAX if
  // there is none.
  size_t highest(std::span<const engine::Step> enabled, uint32_t except = UINT32_MAX) const;
  void reset(uint64_t seed);  // a fresh execution drawing from seed

  uint64_t seed_;
  uint64_t steps_;
  SplitMix64 rng_;
  uint32_t depth_;
  std::vector<uint64_t> change_;    // the change points, ascending
  std::vector<uint64_t> priority_;  // by thread
  uint32_t yielding_ = UINT32_MAX;  // a thread whose yield gave another thread a step
};

// Follows a schedule (schedule.h). Strict: a pick whose thread is not enabled at its step, or an
// execution whose length differs from the schedule's, throws ScheduleError naming the step.
// Lenient (for shrinking): such picks are skipped.
class ReplayPolicy final : public Policy {
 public:
  // `recorded_with` completes the strict replay's errors: "the schedule was recorded with ...".
  ReplayPolicy(Schedule s, bool strict, std::string recorded_with = "another scenario, --procs, --seed or gmpsim")
      : s_(std::move(s)), strict_(strict), recorded_with_(std::move(recorded_with)) {}
  size_t pick(uint64_t step, std::span<const engine::Step> enabled, uint32_t current) override;
  // Throws ScheduleError if a strict replay ended at another step.
  void finish(const Recorded& run) override;

 private:
  Schedule s_;
  bool strict_;
  std::string recorded_with_;
  size_t next_ = 0;
};

// Stateless dynamic partial-order reduction with source sets and sleep sets (Abdulla, Aronis,
// Jonsson and Sagonas, "Optimal dynamic partial order reduction", POPL 2014, Algorithm 1; sleep
// sets after Godefroid), over the steps of chooser.h and its dependence relation. Each execution
// replays a prefix of the search tree's current path, takes one unexplored branch, then runs on by
// the default rule, avoiding sleeping threads. Every step is compared with each earlier step it
// depends on; when such a step is not ordered before it by happens-before (vector clocks), the two
// race, and a thread that can start the reversed order is added to the backtrack set of the node
// before the earlier step, unless one already is (add_race). The search is complete when no node
// has an unexplored thread in its backtrack set outside its sleep set.
//
// With a preemption bound, branches that would switch away from an enabled thread more than that
// many times are not taken (bounded search: complete only up to the bound, and, as with any bound
// on plain DPOR, not even that in general; Coons et al., CONCUR 2013).
//
// A fixed prefix (set_prefix) pins the first steps; the search then covers that subtree only.
// Estimation mode takes random steps instead of the default rule, and estimates the size of the
// tree that DPOR would explore from the backtrack sets one execution yields (Knuth's estimator);
// under a preemption bound, both the steps and the backtrack sets stay within it.
//
// Symmetry (set_symmetry). A runner may declare classes of interchangeable threads: threads that
// run the same code from the same initial state, and whose identity nothing they do observes
// (values that carry a thread's name are renamed with it). Then any execution, with the threads of
// each class renamed in the order of their first steps, is an execution too, with the same outcome
// up to that renaming. So the search takes only executions in which the threads of a class take
// their first steps in id order: a thread may take its first step only once every lower thread of
// its class has taken its own. This is the program in which each thread of a class is started by
// the first step of the one before it, and DPOR searches that program as it would any with thread
// creation: the later thread's clock starts from the earlier one's first step (happens-before),
// so no race between them is reversed. Three identical threads that each write one cell: 6
// executions without, 1 with. Every outcome is still reached up to the renaming (the DPOR test
// checks it against plain enumeration). Every thread of a class must exist before the run.
class Dpor final : public Policy {
 public:
  // reduce = false: plain enumeration (every enabled thread at every node, no sleep sets), the
  // baseline DPOR's reduction is measured against.
  explicit Dpor(int preemption_bound = -1, bool reduce = true);
  void set_prefix(const std::vector<uint32_t>& tids);
  // classes[tid]: the thread's class of interchangeable threads, kNoClass for none (see above).
  static constexpr uint32_t kNoClass = UINT32_MAX;
  void set_symmetry(std::vector<uint32_t> classes);
  // Branches symmetry left out: at each node first reached, the enabled threads that had to wait
  // for a lower thread of their class. Summed over the search.
  uint64_t symmetry_skipped() const { return sym_skipped_; }
  // Estimation mode: execution i takes random steps drawn from execution_seed(seed, i).
  void set_random(uint64_t seed);
  // Prepares the next execution; false when the search (of the subtree) is complete.
  bool next();
  bool begin(uint64_t index) override;
  // In estimation mode, after an execution: the product of the backtrack sets' sizes.
  double tree_estimate() const;

  void thread_created(uint32_t tid, uint32_t parent, bool daemon) override;
  size_t pick(uint64_t step, std::span<const engine::Step> enabled, uint32_t current) override;

 private:
  using Clock = std::array<uint32_t, kMaxThreads>;
  struct Node {
    std::vector<engine::Step> enabled;
    uint64_t enabled_mask = 0, backtrack = 0, done = 0, sleep = 0;
    uint32_t chosen = 0, current = 0;
    uint32_t preemptions = 0;  // before this node's step
    bool fixed = false;        // part of the pinned prefix: never backtracked
    Clock vc{};                // the clock of the step taken here
  };
  struct Obj {
    int64_t last_write = -1;
    std::vector<uint32_t> reads;      // nodes that read it since the last write
    std::vector<uint32_t> writes;     // every node that wrote it
    std::vector<uint32_t> all_reads;  // every node that read it
  };
  void analyse(size_t i, const engine::Step& s);
  void add_race(size_t j, size_t i, uint32_t p, const Clock& ci);
  uint64_t sleep_into(const Node& prev, std::span<const engine::Step> enabled) const;
  bool preempts(const Node& n, uint32_t t) const;
  // The enabled threads (mask) less those symmetry holds back: unstarted threads with a lower
  // unstarted thread in their class.
  uint64_t symmetric_allowed(uint64_t mask) const;
  // The thread of p's class started just before p (the highest lower one), or kNoClass.
  uint32_t symmetric_predecessor(uint32_t p) const;
  // The threads that node n may take without passing the preemption bound (all with none).
  uint64_t within_bound(const Node& n) const;

  int bound_;
  bool reduce_;
  std::vector<Node> nodes_;
  size_t fixed_ = 0;
  bool random_ = false;
  uint64_t random_seed_ = 1;
  SplitMix64 rng_{1};
  bool started_ = false;
  // Per execution.
  std::vector<Clock> tvc_;
  std::vector<std::vector<uint32_t>> tev_;  // each thread's steps, as node indices
  std::vector<uint32_t> races_;             // scratch
  std::unordered_map<uint64_t, Obj> objs_;  // looked up, never iterated
  // Symmetry: each thread's class, and per execution the threads that have taken a step and the
  // node of each one's first step.
  std::vector<uint32_t> classes_;
  uint64_t started_mask_ = 0;
  std::vector<int64_t> first_;
  uint64_t sym_skipped_ = 0;
};

}  // namespace gmp::model
