// The engine's charges, read from a cost profile.
#pragma once

#include "sim/cost/profile.h"
#include "sim/engine/costs.h"

namespace gmp::engine {

Costs costs_from_profile(const cost::Profile& prof);

}  // namespace gmp::engine
