// The GC's pacer (mgcpacer.go), its CPU limiter (mgclimit.go), the trigger test (mgc.go's
// gcTrigger), the mark-worker pool the pacer hands out (mgc.go's gcBgMarkWorkerNode, lfstack.go)
// and the sweeper's state (mgcsweep.go, mheap.go's sweep fields). The collector's cycle (gcStart,
// gcMarkDone, the workers' loop) calls these with Go's names; see mgc.cpp and mgcmark.cpp.
//
// The pacer and limiter are ported: their arithmetic and their order. The heap is a count of
// bytes and of 8 KiB pages; no spans or objects exist (docs/fidelity.md, "The garbage collector").
#pragma once

#include <bit>
#include <cstdint>
#include <map>
#include <utility>

#include "sim/platform/atomic.h"
#include "sim/runtime/mgc.h"

namespace gmp::rt {

class Runtime;
struct g;
struct p;
struct m;

// Go constants of the collector.
inline constexpr double gcBackgroundUtilization = 0.25;           // mgcpacer.go
inline constexpr double gcGoalUtilization = gcBackgroundUtilization;
inline constexpr int64_t gcCreditSlack = 2000;                     // mgcpacer.go
inline constexpr int64_t gcAssistTimeSlack = 5000;                 // mgcpacer.go
inline constexpr int64_t gcOverAssistWork = 64 << 10;              // mgcpacer.go
inline constexpr uint64_t defaultHeapMinimum = 4 << 20;            // mgcpacer.go (no HeapMinimum512KiB)
inline constexpr uint64_t memoryLimitMinHeapGoalHeadroom = 1 << 20;  // mgcpacer.go
inline constexpr uint64_t memoryLimitHeapGoalHeadroomPercent = 3;    // mgcpacer.go
inline constexpr uint64_t triggerRatioDen = 64;                    // mgcpacer.go
inline constexpr uint64_t minTriggerRatioNum = 45;
inline constexpr uint64_t maxTriggerRatioNum = 61;
inline constexpr int64_t forcegcperiod = 2LL * 60 * 1000 * 1000 * 1000;  // proc.go: 2 minutes
inline constexpr int64_t gcCPULimiterUpdatePeriod = 10'000'000;          // mgclimit.go: 10ms
inline constexpr uint64_t capacityPerProc = 1'000'000'000;               // mgclimit.go: 1s
inline constexpr uint64_t pageShift = 13;                          // malloc.go: _PageShift
inline constexpr uint64_t pageSize = uint64_t{1} << pageShift;     // malloc.go: 8 KiB
inline constexpr uint64_t maxSmallSize = 32768;                    // sizeclasses.go: _MaxSmallSize
inline constexpr uintptr_t funcGcBgMarkWorker = (uintptr_t{1} << 48) + 5;  // startpc of the workers

// The collector's costs and the machine's memory, from the profile's gc message and
// machine.memory_bytes (sim/cost/profile.proto); set by the embedding before boot. All 0 (and an
// unbounded memory) when the profile has none.
struct gcCostModel {
  double allocNsPerObject = 0, allocNsPerByte = 0, sweepNsPerPage = 0, markNsPerByte = 0, stackScanNsPerByte = 0;
  uint64_t globalsBytes = 0;
  uint64_t markUnitBytes = 100000;  // only used when the profile has a gc message
  double writeBarrierSlowdown = 0;
  // The work of the two pauses with the world stopped (gcStart's sweep termination, gcMark's mark
  // termination), in ns.
  double sweepTerminationNs = 0, markTerminationNs = 0;
  double markNsPerObject = 0;  // marking's cost per reachable object besides its bytes
  uint64_t memoryBytes = 0;  // 0: unbounded
};

// mcache (mcache.go), reduced to what the GC sees: per object size, the free slots left in the
// span this P has cached.
struct mcache {
  std::map<uint64_t, uint64_t> nfree;
  // Scannable bytes allocated since the last refill, which the next refill adds to heapScan
  // (mcache.scanAlloc). Every object here is taken to contain pointers.
  uint64_t scanAlloc = 0;
  // mcache.releaseAll: at mark termination, before the sweep, and when a P is destroyed
  // (freemcache; fresh: every cached span was cached since the last mark termination).
  void releaseAll(Runtime& rt, bool fresh = false);
};

// gcphase values (mgc.go).
enum : uint32_t { _GCoff = 0, _GCmark = 1, _GCmarktermination = 2 };

// atomic.Float64 (internal/runtime/atomic): a float64 kept as its bits in a 64-bit cell.
struct AtomicFloat64 {
  Atomic<uint64_t> u;
  double Load(plat::Site loc = plat::Site::current()) const { return std::bit_cast<double>(u.Load(loc)); }
  void Store(double v, plat::Site loc = plat::Site::current()) { u.Store(std::bit_cast<uint64_t>(v), loc); }
};

// lfnode and lfstack (lfstack.go): a lock-free stack of nodes; Go packs a push count beside the
// pointer against ABA, here the head is the node pointer (nodes are never freed).
struct lfnode {
  Atomic<lfnode*> next;
  uintptr_t pushcnt = 0;
};
struct lfstack {
  Atomic<lfnode*> head;
  void push(lfnode* node);  // lfstack.push
  lfnode* pop();            // lfstack.pop
  bool empty() const;       // lfstack.empty
};

// gcBgMarkWorkerNode (mgc.go): a parked background mark worker in gcBgMarkWorkerPool; node is
// first so that a popped lfnode* is the node.
struct gcBgMarkWorkerNode {
  lfnode node;
  g* gp = nullptr;  // guintptr: the worker goroutine
  m* m_ = nullptr;  // muintptr m: the M to release on park (gcBgMarkWorker's unlock function)
};

// gcTriggerKind and gcTrigger (mgc.go): why a cycle might start; test() says whether it should.
enum class gcTriggerKind : uint8_t { gcTriggerHeap, gcTriggerTime, gcTriggerCycle };
struct gcTrigger {
  gcTriggerKind kind = gcTriggerKind::gcTriggerHeap;
  int64_t now = 0;  // gcTriggerTime: the current time
  uint32_t n = 0;   // gcTriggerCycle: the cycle number to start
  bool test(Runtime& rt) const;  // gcTrigger.test
};

// The parts of memstats (mstats.go) the pacer and the trigger read.
struct mstats {
  bool enablegc = false;                // set by gcenable
  Atomic<uint64_t> last_gc_nanotime;    // read with atomic.Load64 in gcTrigger.test
  uint32_t numgc = 0;                   // completed cycles
  uint64_t lastHeapInUse = 0;
};

// gcControllerState (mgcpacer.go): the pacer. Fields as Go names them; atomics where Go's are.
struct gcControllerState {
  explicit gcControllerState(Runtime& rt) : rt_(rt) {}

  Atomic<int32_t> gcPercent;      // GOGC; negative: off
  Atomic<int64_t> memoryLimit;    // GOMEMLIMIT, bytes
  uint64_t heapMinimum = 0;       // the smallest goal at GOGC=100, scaled by GOGC
  Atomic<uint64_t> runway;        // bytes the mutator may allocate during a mark phase
  double consMark = 0;            // the cons/mark estimate
  double lastConsMark[4] = {0, 0, 0, 0};
  Atomic<uint64_t> gcPercentHeapGoal;
  Atomic<uint64_t> sweepDistMinTrigger;
  uint64_t triggered = ~uint64_t{0};  // heapLive when the cycle was triggered
  uint64_t lastHeapGoal = 0;
  Atomic<uint64_t> heapLive;      // bytes in spans cached by mcaches or in use, as of the refills
  Atomic<uint64_t> heapScan;      // scannable heap bytes, fixed during a cycle
  uint64_t lastHeapScan = 0;
  Atomic<uint64_t> lastStackScan;
  Atomic<uint64_t> maxStackScan;  // allocated goroutine stack space, bytes
  Atomic<uint64_t> globalsScan;
  uint64_t heapMarked = 0;        // bytes marked by the last cycle
  Atomic<int64_t> heapScanWork, stackScanWork, globalsScanWork;  // this cycle's scan work
  Atomic<int64_t> bgScanCredit;
  Atomic<int64_t> assistTime;            // ns in assists this cycle
  Atomic<int64_t> dedicatedMarkTime;     // ns in dedicated workers this cycle
  Atomic<int64_t> fractionalMarkTime;
  Atomic<int64_t> idleMarkTime;
  int64_t markStartTime = 0;
  Atomic<int64_t> dedicatedMarkWorkersNeeded;
  // idleMarkWorkers: count in the low 32 bits, limit in the high 32 bits.
  Atomic<uint64_t> idleMarkWorkers;
  AtomicFloat64 assistWorkPerByte;
  AtomicFloat64 assistBytesPerWork;
  double fractionalUtilizationGoal = 0;
  // The heap's size as the memory limit sees it (sysMemStat and atomics in Go).
  Atomic<uint64_t> heapInUse, heapReleased, heapFree, totalAlloc, totalFree, mappedReady;
  bool test = false;

  void init(int32_t gcPercent, int64_t memoryLimit);
  void startCycle(int64_t markStartTime, int procs, gcTrigger trigger);
  void revise();
  void endCycle(int64_t now, int procs);
  void enlistWorker();
  std::pair<bool, int64_t> assignWaitingGCWorker(p* pp, int64_t now);
  std::pair<g*, int64_t> findRunnableGCWorker(p* pp, int64_t now);
  void releaseNextGCMarkWorker(p* pp);
  void resetLive(uint64_t bytesMarked);
  void markWorkerStop(gcMarkWorkerMode mode, int64_t duration);
  void update(int64_t dHeapLive, int64_t dHeapScan);
  void addScannableStack(p* pp, int64_t amount);
  void addGlobals(int64_t amount);
  uint64_t heapGoal();
  std::pair<uint64_t, uint64_t> heapGoalInternal();  // goal, minTrigger
  uint64_t memoryLimitHeapGoal();
  std::pair<uint64_t, uint64_t> trigger();           // trigger, heapGoal
  void commit(bool isSweepDone);
  int32_t setGCPercent(int32_t in);
  int64_t setMemoryLimit(int64_t in);
  bool addIdleMarkWorker();
  bool needIdleMarkWorker();
  void removeIdleMarkWorker();
  void setMaxIdleMarkWorkers(int32_t max);

 private:
  Runtime& rt_;
};

// limiterEventType and limiterEvent (mgclimit.go): a P's current limiter-relevant activity,
// stamped with its start time.
enum class limiterEventType : uint8_t {
  limiterEventNone,
  limiterEventIdleMarkWork,
  limiterEventMarkAssist,
  limiterEventScavengeAssist,
  limiterEventIdle,
};
inline constexpr uint64_t limiterEventBits = 3;
inline constexpr uint64_t limiterEventTypeMask = ((uint64_t{1} << limiterEventBits) - 1) << (64 - limiterEventBits);
inline constexpr uint64_t limiterEventStampNone = 0;
uint64_t makeLimiterEventStamp(limiterEventType typ, int64_t now);  // makeLimiterEventStamp
int64_t limiterEventStampDuration(uint64_t s, int64_t now);         // limiterEventStamp.duration
limiterEventType limiterEventStampTyp(uint64_t s);                  // limiterEventStamp.typ
struct limiterEvent {
  Atomic<uint64_t> stamp;
  bool start(limiterEventType typ, int64_t now);                           // limiterEvent.start
  std::pair<limiterEventType, int64_t> consume(int64_t now);               // limiterEvent.consume
  void stop(Runtime& rt, limiterEventType typ, int64_t now);               // limiterEvent.stop
};

// gcCPULimiterState (mgclimit.go): a leaky bucket of GC CPU time that turns assists off when the
// GC would take more than half the CPU over about a second.
struct gcCPULimiterState {
  explicit gcCPULimiterState(Runtime& rt) : rt_(rt) {}

  Atomic<uint32_t> lock;
  Atomic<uint32_t> enabled;  // atomic.Bool
  bool gcEnabled = false;
  bool transitioning = false;
  bool test = false;
  struct {
    uint64_t fill = 0, capacity = 0;
  } bucket;
  uint64_t overflow = 0;
  Atomic<int64_t> assistTimePool;
  Atomic<int64_t> idleMarkTimePool;
  Atomic<int64_t> idleTimePool;
  Atomic<int64_t> lastUpdate;
  Atomic<uint32_t> lastEnabledCycle;
  int32_t nprocs = 0;

  bool limiting();
  void startGCTransition(bool enableGC, int64_t now);
  void finishGCTransition(int64_t now);
  bool needUpdate(int64_t now);
  void addAssistTime(int64_t t);
  void addIdleTime(int64_t t);
  void update(int64_t now);
  void updateLocked(int64_t now);
  void accumulate(int64_t mutatorTime, int64_t gcTime);
  bool tryLock();
  void unlock();
  void resetCapacity(int64_t now, int32_t nprocs);

 private:
  Runtime& rt_;
};

// The sweeper's part of mheap (mheap.go): the sweep generation and the proportional-sweep line.
// Spans do not exist: the heap in use is pagesInUse pages, of which pagesSwept are swept this cycle.
struct mheapSweep {
  Atomic<uint32_t> sweepgen;         // +2 per cycle; written during stop-the-world
  Atomic<uint32_t> sweepDrained;     // all spans are swept or being swept
  Atomic<uint64_t> pagesInUse;       // pages of in-use spans (atomic.Uintptr)
  Atomic<uint64_t> pagesSwept;       // pages swept this cycle
  Atomic<uint64_t> pagesSweptBasis;
  uint64_t sweepHeapLiveBasis = 0;   // heapLive at the basis point; written under the lock
  double sweepPagesPerByte = 0;      // the proportional sweep ratio; written under the lock
  Atomic<uint64_t> reclaimCredit;
  // Not in Go: pages still to sweep this cycle (Go walks its spans; here a count).
  Atomic<uint64_t> pagesToSweep;
};

inline constexpr uint32_t sweepDrainedMask = uint32_t{1} << 31;  // mgcsweep.go

// activeSweep (mgcsweep.go): counts sweepers at work; the high bit says the sweep is draining.
struct activeSweep {
  Atomic<uint32_t> state{sweepDrainedMask};  // gcinit: no sweep before the first cycle
  struct sweepLocker {
    uint32_t sweepGen = 0;
    bool valid = false;
  };
  sweepLocker begin(Runtime& rt);           // activeSweep.begin
  void end(Runtime& rt, sweepLocker sl);    // activeSweep.end
  bool markDrained();                       // activeSweep.markDrained
  uint32_t sweepers();                      // activeSweep.sweepers
  bool isDone();                            // activeSweep.isDone
  void reset();                             // activeSweep.reset
};

}  // namespace gmp::rt
