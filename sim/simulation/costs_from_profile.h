// The engine's charges, read from a cost profile.
#pragma once

#include "sim/cost/profile.h"
#include "sim/engine/costs.h"
#include "sim/runtime/mgcpacer.h"

namespace gmp::engine {

Costs costs_from_profile(const cost::Profile& prof);

// The runtime's GC costs (the profile's gc section and machine.memory_bytes); the defaults of
// rt::gcCostModel where the profile has none.
rt::gcCostModel gc_costs_from_profile(const cost::Profile& prof);

}  // namespace gmp::engine
