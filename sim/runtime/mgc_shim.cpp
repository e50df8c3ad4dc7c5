// TEMPORARY (branch gccore): stand-ins until the stw branch (forEachP) is merged, and for the
// profile's GC costs until the gcpacer branch's cost fields reach the runtime.
#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

void Runtime::forEachP(waitReason, const std::function<void(p*)>&) { plat::throw_("forEachP: not merged yet"); }
uint64_t Runtime::gcCostGlobalsBytes() { return 0; }
int64_t Runtime::gcCostMarkUnitBytes() { return 1; }
int64_t Runtime::gcCostScanNs(int64_t) { return 0; }
int64_t Runtime::gcCostStackScanNs(int64_t) { return 0; }
void Runtime::gcMarkTerminationWork() {}

}  // namespace gmp::rt
