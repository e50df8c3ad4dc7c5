// The fit of `gmpsim replay` (traces/derive_scenario.h): a trace's running times already hold
// what its runtime spent on each operation (a channel send, a go statement, a system call's entry
// and exit), and the replay spends its own cost for the operation again.
//
// Protocol: derive_fitted derives the scenario, runs it once under the simulator at the trace's
// GOMAXPROCS (cfg's other fields as given), sets the replay's running time R of the program's
// goroutines against the trace's T, and derives again with (R - T) / operations, at most
// kMaxOverheadNs, taken out next to each operation (DeriveOptions::op_overhead_ns). Nothing is
// taken out when the trace names no GOMAXPROCS, has no operations, the run does not exit (then
// FittedScenario::not_fitted says how it ended), or R <= T.
// The run's trace goes to `scratch_trace`, which is removed afterwards. When the fit reaches the
// cap, FittedScenario says so (at_cap, over_pct) and the derived scenario's warnings say it too.
// `mode`: how the scenario replays the goroutines' work (derive_scenario.h's ReplayMode), for
// both derivations.
#pragma once

#include <cstdint>
#include <string>

#include "sim/cost/profile.h"
#include "sim/simulation/simulation.h"
#include "traces/derive_scenario.h"
#include "traces/timeline.h"

namespace gmp::engine {

// At most this much an operation: more than any one operation costs the replay. A larger excess
// comes from elsewhere (the runtime's start, in a short trace) and is left alone.
inline constexpr int64_t kMaxOverheadNs = 2000;

struct FittedScenario {
  trace::DerivedScenario derived;
  bool fitted = false;
  int64_t replay_running_ns = 0;  // R of the fitting run
  int64_t overhead_ns = 0;        // taken out next to each operation
  // The fit reached kMaxOverheadNs: the excess was more than the cap takes out, and the replay
  // still runs about over_pct percent over the trace's running time ((R - T - cap x operations) / T).
  bool at_cap = false;
  double over_pct = 0;
  // Why nothing was fitted when that is worth a warning: the fitting run did not exit (it
  // deadlocked, reached a limit, or failed), so its running time says nothing. "" otherwise (fitted,
  // or nothing to fit: no GOMAXPROCS, no operations, R <= T).
  std::string not_fitted;
};

FittedScenario derive_fitted(const trace::Timeline& tl, const std::string& source, const cost::Profile& prof,
                             SimConfig cfg, const std::string& scratch_trace,
                             trace::ReplayMode mode = trace::ReplayMode::Shared);

}  // namespace gmp::engine
