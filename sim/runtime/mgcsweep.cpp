// Sweeping (mgcsweep.go) over a heap of pages without spans.
#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

void Runtime::gcPaceSweeper(uint64_t) {}
void Runtime::deductSweepCredit(uintptr_t, uintptr_t) {}
uintptr_t Runtime::sweepone() { return ~uintptr_t{0}; }
bool Runtime::isSweepDone() { return true; }
void Runtime::finishsweep_m() {}
void Runtime::sweepStartCycle() {}

}  // namespace gmp::rt
