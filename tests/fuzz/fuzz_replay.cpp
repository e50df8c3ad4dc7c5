// Fuzzes `gmpsim steal --replay SCHEDULE` (sim/cli/cmd_steal.cpp): Schedule::parse on the input
// as text, then, if it parses, a strict replay of the run-queue check under the checker, bounded
// by a small configuration and step limit. A ScheduleError (bad text, a step that picks a thread
// that cannot run there, a run that ends at another step) is the expected answer to bad input. A
// replay that completes must find every G taken exactly once, and the port must not throw: either
// is a bug, and aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "model/policies.h"
#include "model/queue_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gmp::model::QueueCheckConfig cfg;
  cfg.procs = 3;
  cfg.gs = 12;
  cfg.max_steps = 20'000;  // a schedule's own length bounds a strict replay; this bounds the rest
  try {
    gmp::model::ReplayPolicy policy(gmp::model::Schedule::parse(text), /*strict=*/true);
    const gmp::model::QueueCheckResult r = gmp::model::run_queue_check(cfg, policy);
    using Outcome = gmp::model::ThreadRun::Outcome;
    if (r.run.outcome == Outcome::Failed || (r.run.outcome == Outcome::Completed && !r.ok())) {
      std::fprintf(stderr, "fuzz_replay: %s: %s%s\n", gmp::model::outcome_name(r.run.outcome),
                   r.run.message.c_str(), r.errors.empty() ? "" : r.errors.front().c_str());
      std::abort();
    }
  } catch (const gmp::model::ScheduleError&) {
  }
  return 0;
}
