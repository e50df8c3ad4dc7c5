// The replay's fit of per-operation overhead: see replay_fit.h.
#include "sim/simulation/replay_fit.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "sim/scenario/scenario.h"

namespace gmp::engine {

FittedScenario derive_fitted(const trace::Timeline& tl, const std::string& source, const cost::Profile& prof,
                             SimConfig cfg, const std::string& scratch_trace, trace::ReplayMode mode) {
  FittedScenario f;
  trace::DeriveOptions opt;
  opt.mode = mode;
  f.derived = trace::derive_scenario(tl, source, opt);
  if (f.derived.procs <= 0 || f.derived.sync_ops == 0) return f;
  const scenario::Scenario sc = scenario::parse_scenario(f.derived.text, source + ".replay");
  cfg.procs = static_cast<int32_t>(f.derived.procs);
  cfg.trace_path = scratch_trace;
  SimResult r;
  try {
    r = simulate(sc, prof, cfg);
  } catch (...) {
    std::remove(scratch_trace.c_str());
    throw;
  }
  const trace::DerivedScenario again = trace::derive_scenario(trace::build_timeline(scratch_trace), "");
  std::remove(scratch_trace.c_str());
  f.replay_running_ns = again.running_ns;
  const int64_t extra = again.running_ns - f.derived.running_ns;
  if (r.stop != Engine::Stop::Exit) {
    const char* how = r.stop == Engine::Stop::Deadlock    ? "every thread blocked"
                      : r.stop == Engine::Stop::TimeLimit  ? "it reached the virtual-time limit"
                      : r.stop == Engine::Stop::EventLimit ? "it reached the event limit"
                      : r.stop == Engine::Stop::Fatal      ? "a fatal error"
                                                           : "it stopped before main returned";
    f.not_fitted = "the fit's run at GOMAXPROCS " + std::to_string(cfg.procs) + " did not exit (" + how +
                   "): nothing taken out next to the operations";
    return f;
  }
  if (extra <= 0) return f;
  opt.op_overhead_ns = std::min(kMaxOverheadNs, extra / static_cast<int64_t>(f.derived.sync_ops));
  f.derived = trace::derive_scenario(tl, source, opt);
  f.fitted = true;
  f.overhead_ns = opt.op_overhead_ns;
  const auto ops = static_cast<int64_t>(f.derived.sync_ops);
  if (extra > kMaxOverheadNs * ops && f.derived.running_ns > 0) {
    f.at_cap = true;
    f.over_pct = 100.0 * static_cast<double>(extra - kMaxOverheadNs * ops) / static_cast<double>(f.derived.running_ns);
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "the fit reached its cap of %lld ns an operation: the replay still runs %.1f%% over the trace",
                  static_cast<long long>(kMaxOverheadNs), f.over_pct);
    f.derived.warnings.push_back(buf);
  }
  return f;
}

}  // namespace gmp::engine
