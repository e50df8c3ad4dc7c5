// TEMPORARY (branch gccore, until the gcpacer and stw branches are merged): the minimal stand-ins
// for what those branches port, so that the cycle (mgc.cpp, mgcmark.cpp) builds on its own. Each
// name is Go's and the one the other branch defines; on merge this file and mgc_shim.cpp go.
// Nothing here ever starts a cycle: mallocgc does not call gcStart yet.
#pragma once

#include <cstdint>
#include <utility>

#include "sim/platform/atomic.h"
#include "sim/runtime/mgc.h"

namespace gmp::rt {

class Runtime;
struct g;
struct p;

// gcTrigger (mgc.go, gcpacer's part).
enum class gcTriggerKind { gcTriggerHeap, gcTriggerTime, gcTriggerCycle };
struct gcTrigger {
  gcTriggerKind kind = gcTriggerKind::gcTriggerHeap;
  int64_t now = 0;
  uint32_t n = 0;
  bool test(Runtime& r) const;
};

// atomic.Float64, as the pacer's fields use it.
struct Float64Shim {
  double v = 0;
  double Load() const { return v; }
};

// gcControllerState (mgcpacer.go, gcpacer's part): the fields and methods the cycle calls.
struct gcControllerState {
  Atomic<uint64_t> maxStackScan;
  Atomic<uint64_t> heapLive;
  Atomic<int64_t> heapScanWork, stackScanWork, globalsScanWork, bgScanCredit;
  Atomic<int64_t> assistTime, dedicatedMarkTime, fractionalMarkTime, idleMarkTime;
  Float64Shim assistWorkPerByte, assistBytesPerWork;
  uint64_t lastHeapGoal = 0;
  Atomic<uint64_t> lastStackScan, globalsScan;
  int64_t markStartTime = 0;
  double fractionalUtilizationGoal = 0;
  void startCycle(int64_t, int32_t, gcTrigger) {}
  void endCycle(int64_t, int32_t) {}
  void markWorkerStop(gcMarkWorkerMode, int64_t) {}
  std::pair<g*, int64_t> findRunnableGCWorker(p*, int64_t now) { return {nullptr, now}; }
  bool addIdleMarkWorker() { return false; }
  void removeIdleMarkWorker() {}
  bool needIdleMarkWorker() { return false; }
};

// gcCPULimiterState (mgclimit.go) and limiterEvent, gcpacer's part.
enum limiterEventType : uint8_t { limiterEventNone, limiterEventIdleMarkWork, limiterEventMarkAssist };
struct gcCPULimiterState {
  bool limiting() const { return false; }
  void startGCTransition(bool, int64_t) {}
  void finishGCTransition(int64_t) {}
  void update(int64_t) {}
};
struct limiterEventT {
  bool start(limiterEventType, int64_t) { return false; }
  void stop(limiterEventType, int64_t) {}
};

// mstats.go's fields the cycle writes.
struct mstatsShim {
  Atomic<uint64_t> last_gc_nanotime;
  uint64_t pause_total_ns = 0;
  uint32_t numgc = 0;
};

}  // namespace gmp::rt
