// The garbage collector's types that the rest of gmpsim sees: the reasons for stopping the world,
// the mark workers' modes, a run's GC settings (GOGC, GOMEMLIMIT) and what each cycle did.
//
// The collector's scheduling is ported (mgc.go, mgcpacer.go, mgclimit.go and stop-the-world in
// proc.go); its marking and sweeping are costs from the profile, since no object graph exists here
// (docs/fidelity.md, "The garbage collector").
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace gmp::rt {

// stwReason (proc.go), in Go's order.
enum class stwReason : uint8_t {
  stwUnknown,
  stwGCMarkTerm,
  stwGCSweepTerm,
  stwWriteHeapDump,
  stwGoroutineProfile,
  stwGoroutineProfileCleanup,
  stwAllGoroutinesStack,
  stwReadMemStats,
  stwAllThreadsSyscall,
  stwGOMAXPROCS,
  stwStartTrace,
  stwStopTrace,
  stwForTestCountPagesInUse,
  stwForTestReadMetricsSlow,
  stwForTestReadMemStatsSlow,
  stwForTestPageCachePagesLeaked,
  stwForTestResetDebugLog,
};
const char* stwReasonString(stwReason r);  // Go's stwReasonStrings

// gcMarkWorkerMode (mgc.go).
enum class gcMarkWorkerMode : uint8_t {
  gcMarkWorkerNotWorker,
  gcMarkWorkerDedicatedMode,
  gcMarkWorkerFractionalMode,
  gcMarkWorkerIdleMode,
};

// gcWork (mgcwork.go): what a P's mark work has not yet published.
struct gcWork {
  int64_t heapScanWork = 0;   // scan work done but not yet added to gcController.heapScanWork
  bool flushedWork = false;   // work was handed to the global queue since the last ragged barrier
  // Not in Go: bytes of scan work taken from work.full but not yet scanned (a grey buffer).
  int64_t held = 0;
  bool empty() const { return held == 0; }
};

// A run's GC settings: GOGC (-1 is off) and GOMEMLIMIT in bytes (maxInt64 is no limit).
struct GCSettings {
  int32_t gcPercent = 100;
  int64_t memoryLimit = std::numeric_limits<int64_t>::max();
};

// One finished cycle, in the terms of GODEBUG=gctrace=1 (mgc.go gcMarkTermination's print): the
// wall times of sweep termination, concurrent mark and mark termination; the CPU time of the
// pauses, of assists, of background and idle marking; heap sizes at the start of the cycle, at the
// end of mark and the marked (live) heap, the goal; stacks and globals scanned; the P count.
struct GCCycleRecord {
  uint32_t n = 0;             // cycle number, from 1
  int64_t start = 0;          // virtual ns when gcStart began
  bool forced = false;        // runtime.GC or forcegc
  int64_t sweepTermWall = 0, markWall = 0, markTermWall = 0;  // ns
  int64_t sweepTermCpu = 0, assistCpu = 0, backgroundCpu = 0, idleCpu = 0, markTermCpu = 0;  // ns
  uint64_t heapStart = 0, heapEnd = 0, heapLive = 0, heapGoal = 0;  // bytes
  uint64_t stacks = 0, globals = 0;  // bytes scanned
  int32_t procs = 0;
};

// A run's totals, for the summary line `GC: N cycles, ...`.
struct GCStats {
  std::vector<GCCycleRecord> cycles;
  int64_t gcCpu = 0;          // ns of CPU the GC took: pauses, assists, workers (not idle ones)
  int64_t idleMarkCpu = 0;    // ns of idle-worker marking
  int64_t assistTime = 0;     // ns goroutines spent in assists (including parked on the queue)
  int64_t sweepCpu = 0;       // ns of sweeping
  uint64_t stwCount = 0;      // stop-the-world pauses of any reason
  int64_t stwTotal = 0, stwMax = 0;  // ns, from the stop's start to the world's restart
  uint64_t allocBytes = 0;    // bytes allocated by the program, all told
  uint64_t allocObjects = 0;
  uint64_t peakHeap = 0;      // the largest heapLive seen
  uint64_t lastHeapGoal = 0;
};

}  // namespace gmp::rt
