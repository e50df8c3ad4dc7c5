// A simulation's result (engine::SimResult) in the part file's line format (sim/cli/part_text.h):
// every field, a process's results nested once (a scenario of several processes), so that a
// result read back is the one written, field for field and bit for bit.
#pragma once

#include "sim/cli/part_text.h"
#include "sim/simulation/simulation.h"

namespace gmp::cli {

void write_result(PartWriter& w, const engine::SimResult& r);
// Throws PartError.
engine::SimResult read_result(PartReader& r);

}  // namespace gmp::cli
