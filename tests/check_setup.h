// What the checker's tests share: a search's setup for a scenario at N Ps under the default
// profile, a shipped check scenario by name, and one execution in the default order.
#pragma once

#include <cstdint>
#include <string>

#include "model/execution.h"
#include "model/policies.h"
#include "model/schedule.h"
#include "model/search.h"
#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"

namespace gmp::checktest {

inline model::CheckSetup setup_for(const scenario::Scenario& sc, int32_t procs) {
  model::CheckSetup s;
  s.scenario = &sc;
  s.profile = &cost::default_profile();
  s.procs = procs;
  return s;
}

#ifdef GMP_SOURCE_DIR  // (a test binary that reads shipped files is given the source folder)
// sim/scenarios/check/NAME.textproto.
inline scenario::Scenario check_scenario(const std::string& name) {
  return scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/check/" + name + ".textproto");
}
#endif

// One execution in the default order (no departures), with the default properties.
inline model::Execution default_order(const model::CheckSetup& s) {
  model::ReplayPolicy p(model::Schedule{}, false);
  return model::execute(s, p, {});
}

}  // namespace gmp::checktest
