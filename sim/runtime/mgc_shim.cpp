// TEMPORARY (branch gccore): the stand-ins mgc_shim.h declares, until the gcpacer and stw branches
// are merged. The allocation entry points stay as the seam commit left them: counting only.
#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

// gcTrigger.test (mgc.go)
bool gcTrigger::test(Runtime& r) const {
  if (r.panicking.Load() != 0 || r.gcphase.Load() != _GCoff) return false;
  switch (kind) {
    case gcTriggerKind::gcTriggerHeap:
      return false;
    case gcTriggerKind::gcTriggerTime:
      return false;
    case gcTriggerKind::gcTriggerCycle:
      return static_cast<int32_t>(n - r.work.cycles.Load()) > 0;
  }
  return true;
}

void Runtime::mallocgc(uint64_t size, uint64_t count, bool) {
  gcstats.allocBytes += size * count;
  gcstats.allocObjects += count;
}
void Runtime::releaseHeap(uint64_t) {}
void Runtime::forEachP(waitReason, const std::function<void(p*)>&) { plat::throw_("forEachP: not merged yet"); }
uintptr_t Runtime::sweepone() { return ~uintptr_t{0}; }
bool Runtime::isSweepDone() { return true; }
void Runtime::finishsweep_m() {}
void Runtime::gcSweep() {}
void Runtime::gcControllerCommit() {}
uint64_t Runtime::gcCostGlobalsBytes() { return 0; }
int64_t Runtime::gcCostMarkUnitBytes() { return 1; }
int64_t Runtime::gcCostScanNs(int64_t) { return 0; }
int64_t Runtime::gcCostStackScanNs(int64_t) { return 0; }
void Runtime::gcMarkTerminationWork() {}

}  // namespace gmp::rt
