// gmpsim replay's derivation (traces/derive_scenario.h) against the simulator: a simulated run's
// trace, replayed at its own GOMAXPROCS, takes about as long as the run did.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include "sim/cost/profile.h"
#include "sim/engine/simulation.h"
#include "sim/scenario/scenario.h"
#include "traces/derive_scenario.h"
#include "traces/timeline.h"

using namespace gmp;

namespace {

// The run's end and its replay's, at `procs` Ps.
std::pair<int64_t, int64_t> run_and_replay(const std::string& name, int32_t procs) {
  const scenario::Scenario sc = scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/" + name);
  engine::SimConfig cfg;
  cfg.procs = procs;
  cfg.trace_path = std::string(GMP_BINARY_DIR) + "/replay_test.trace";
  const engine::SimResult r = engine::simulate(sc, cost::default_profile(), cfg);
  REQUIRE(r.stop == engine::Engine::Stop::Exit);
  const trace::DerivedScenario d = trace::derive_scenario(trace::build_timeline(cfg.trace_path), name);
  std::remove(cfg.trace_path.c_str());
  INFO(d.text.substr(0, 2000));
  const scenario::Scenario derived = scenario::parse_scenario(d.text, name + ".replay");
  engine::SimConfig again;
  again.procs = procs;
  const engine::SimResult rr = engine::simulate(derived, cost::default_profile(), again);
  REQUIRE(rr.stop == engine::Engine::Stop::Exit);
  return {r.end_time, rr.end_time};
}

double error_of(std::pair<int64_t, int64_t> x) {
  return std::abs(static_cast<double>(x.second - x.first)) / static_cast<double>(x.first);
}

}  // namespace

TEST_CASE("a replayed trace takes as long as its run, within 6%, where computation dominates", "[replay]") {
  for (int32_t procs : {1, 2, 4}) {
    INFO("GOMAXPROCS " << procs);
    CHECK(error_of(run_and_replay("cpu.textproto", procs)) < 0.01);
    CHECK(error_of(run_and_replay("chanshared.textproto", procs)) < 0.01);
    CHECK(error_of(run_and_replay("check/ready2.textproto", procs)) < 0.06);
    CHECK(error_of(run_and_replay("check/spawn2.textproto", procs)) < 0.06);
    CHECK(error_of(run_and_replay("check/syscall_sleep.textproto", procs)) < 0.02);
  }
}
