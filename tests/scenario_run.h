// Scenario text run under the simulator, for the language tests (lang, values, locals): one run
// at `procs` Ps with the default profile and 5 s of virtual time, and the check of a run that
// ends in a Go panic (exit status 2, its message, and the position in `name` it names).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation/simulation.h"

namespace gmp::test {

inline engine::SimResult run_scenario_text(const std::string& text, const std::string& name, int32_t procs) {
  const scenario::Scenario sc = scenario::parse_scenario(text, name);
  engine::SimConfig cfg;
  cfg.procs = procs;
  cfg.time_limit = 5LL * 1000 * 1000 * 1000;
  return engine::simulate(sc, cost::default_profile(), cfg);
}

inline void check_panic(const engine::SimResult& r, const std::string& name, const std::string& says,
                        const std::string& where) {
  REQUIRE(r.stop == engine::Engine::Stop::Fatal);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.message, Catch::StartsWith("panic: " + says));
  CHECK_THAT(r.message, Catch::Contains(name + ":" + where));
}

}  // namespace gmp::test
