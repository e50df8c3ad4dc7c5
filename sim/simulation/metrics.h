// What a run measures from the scheduler's events: counts, scheduling latency (runnable to
// running) and per-P utilisation (time running goroutines). The P count may change during the
// run (ProcsChange): the per-P figures grow with it, and each P's utilisation is over the time it
// existed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/runtime/events.h"

namespace gmp::rt {
struct g;
struct p;
}  // namespace gmp::rt

namespace gmp::engine {

// The nearest-rank q-quantile (0..1) of samples: the smallest sample with at least q of them at
// or below it; 0 when there are none. Reorders samples (a selection, not a full sort).
int64_t nearest_rank(std::vector<int64_t>& samples, double q);

class Metrics {
 public:
  explicit Metrics(int32_t procs);

  void on_event(rt::Ev e, rt::g* gp, rt::p* pp, int64_t arg, int64_t now);
  void finish(int64_t now);

  uint64_t count(rt::Ev e) const { return counts_[static_cast<size_t>(e)]; }
  // Goroutines the program created (runtime.NumGoroutine's kind: not the runtime's own).
  uint64_t user_goroutines() const { return user_goroutines_; }
  // The q-quantile (0..1) of scheduling latency in ns, over the program's goroutines (the
  // runtime's own are left out, as from the goroutine count); 0 with no samples.
  int64_t latency_quantile(double q);
  size_t latency_samples() const { return latency_.size(); }
  // For each P that ever existed, by id: the fraction of the time it existed (up to the end)
  // that it spent running goroutines; [0, end] for the Ps that were there all along.
  std::vector<double> utilisation() const;

 private:
  void stop_running(size_t p, int64_t now);
  void set_procs(size_t n, int64_t now);  // the Ps [0, n) exist from now on
  void grow(size_t n);

  std::array<uint64_t, static_cast<size_t>(rt::Ev::Count_)> counts_{};
  uint64_t user_goroutines_ = 0;
  std::vector<int64_t> latency_;
  std::vector<int64_t> busy_;
  std::vector<int64_t> since_;          // when the P's current goroutine started
  std::vector<rt::g*> running_on_;      // the goroutine each P runs
  std::vector<int64_t> existed_;        // ns each P existed before alive_since_
  std::vector<int64_t> alive_since_;    // when the P last came to exist; -1: not now
  size_t procs_ = 0;                    // the Ps that exist now: [0, procs_)
  int64_t end_ = 0;
};

}  // namespace gmp::engine
