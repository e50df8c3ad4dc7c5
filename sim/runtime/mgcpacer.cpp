// The GC pacer (mgcpacer.go), the CPU limiter (mgclimit.go), the trigger test and the mark-worker
// pool (mgc.go, lfstack.go). Ported with Go's arithmetic and order; the differences are in
// docs/fidelity.md, "The garbage collector".
#include <algorithm>

#include "sim/platform/platform.h"
#include "sim/runtime/rand.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

inline constexpr uint64_t sweepMinHeapDistance = 1024 * 1024;  // mgc.go

// lfstack.push (lfstack.go)
void lfstack::push(lfnode* node) {
  node->pushcnt++;
  for (;;) {
    lfnode* old = head.Load();
    node->next.Store(old);
    if (head.CompareAndSwap(old, node)) break;
  }
}

// lfstack.pop (lfstack.go)
lfnode* lfstack::pop() {
  for (;;) {
    lfnode* old = head.Load();
    if (old == nullptr) return nullptr;
    lfnode* next = old->next.Load();
    if (head.CompareAndSwap(old, next)) return old;
  }
}

// lfstack.empty (lfstack.go)
bool lfstack::empty() const { return head.Load() == nullptr; }

// gcTrigger.test (mgc.go): whether the condition for a new cycle holds.
//
// Only the heap trigger's load of heapLive is offered to the driver. The rest read what changes only
// with the world stopped (gcphase, gcPercent, last_gc_nanotime) or never here (panicking), which
// docs/fidelity.md 13 leaves unoffered: sysmon makes this test on every tick of every program, and
// offering it would reorder programs that never allocate.
bool gcTrigger::test(Runtime& rt) const {
  if (!rt.memstats.enablegc || rt.panicking.peek() != 0 || rt.gcphase.peek() != _GCoff) return false;
  switch (kind) {
    case gcTriggerKind::gcTriggerHeap: {
      const auto [trig, goal] = rt.gcController.trigger();
      (void)goal;
      return rt.gcController.heapLive.Load() >= trig;
    }
    case gcTriggerKind::gcTriggerTime: {
      if (rt.gcController.gcPercent.peek() < 0) return false;
      const auto lastgc = static_cast<int64_t>(rt.memstats.last_gc_nanotime.peek());
      return lastgc != 0 && now - lastgc > forcegcperiod;
    }
    case gcTriggerKind::gcTriggerCycle:
      // n ahead of work.cycles, with wrap-around.
      return static_cast<int32_t>(n - rt.work.cycles.Load()) > 0;
  }
  return true;
}

// gcControllerState.init (mgcpacer.go)
void gcControllerState::init(int32_t gcPercentIn, int64_t memoryLimitIn) {
  heapMinimum = defaultHeapMinimum;
  triggered = ~uint64_t{0};
  setGCPercent(gcPercentIn);
  setMemoryLimit(memoryLimitIn);
  commit(true);  // the first cycle has no sweep before it
}

// gcControllerState.startCycle (mgcpacer.go): resets the cycle's counters and sizes the workers.
void gcControllerState::startCycle(int64_t markStartTimeIn, int procs, gcTrigger trig) {
  heapScanWork.Store(0);
  stackScanWork.Store(0);
  globalsScanWork.Store(0);
  bgScanCredit.Store(0);
  assistTime.Store(0);
  dedicatedMarkTime.Store(0);
  fractionalMarkTime.Store(0);
  idleMarkTime.Store(0);
  markStartTime = markStartTimeIn;
  triggered = heapLive.Load();

  // A quarter of the Ps, rounded; when rounding is off by more than 30%, one fewer dedicated
  // worker and a fractional goal for the rest.
  const double totalUtilizationGoal = static_cast<double>(procs) * gcBackgroundUtilization;
  auto needed = static_cast<int64_t>(totalUtilizationGoal + 0.5);
  const double utilError = static_cast<double>(needed) / totalUtilizationGoal - 1;
  constexpr double maxUtilError = 0.3;
  if (utilError < -maxUtilError || utilError > maxUtilError) {
    if (static_cast<double>(needed) > totalUtilizationGoal) needed--;
    fractionalUtilizationGoal = (totalUtilizationGoal - static_cast<double>(needed)) / static_cast<double>(procs);
  } else {
    fractionalUtilizationGoal = 0;
  }
  // debug.gcstoptheworld is 0 here.
  for (p* pp : rt_.allp) {
    pp->gcAssistTime = 0;
    pp->gcFractionalMarkTime.Store(0);
  }
  if (trig.kind == gcTriggerKind::gcTriggerTime) {
    setMaxIdleMarkWorkers(needed > 0 ? 0 : 1);
  } else {
    setMaxIdleMarkWorkers(static_cast<int32_t>(procs) - static_cast<int32_t>(needed));
  }
  dedicatedMarkWorkersNeeded.Store(needed);
  revise();
}

// gcControllerState.revise (mgcpacer.go): the assist ratio from the work left and the runway left.
void gcControllerState::revise() {
  int32_t pct = gcPercent.Load();
  if (pct < 0) pct = 100000;
  const uint64_t live = heapLive.Load();
  const uint64_t scan = heapScan.Load();
  const int64_t work = heapScanWork.Load() + stackScanWork.Load() + globalsScanWork.Load();
  auto goal = static_cast<int64_t>(heapGoal());
  auto scanWorkExpected = static_cast<int64_t>(lastHeapScan + lastStackScan.Load() + globalsScan.Load());
  const uint64_t maxStack = maxStackScan.Load();
  const auto maxScanWork = static_cast<int64_t>(scan + maxStack + globalsScan.Load());
  if (work > scanWorkExpected) {
    // More work than expected: stretch the goal in proportion, up to the hard goal.
    auto extHeapGoal = static_cast<int64_t>(static_cast<double>(goal - static_cast<int64_t>(triggered)) /
                                            static_cast<double>(scanWorkExpected) * static_cast<double>(maxScanWork)) +
                       static_cast<int64_t>(triggered);
    scanWorkExpected = maxScanWork;
    const auto hardGoal = static_cast<int64_t>((1.0 + static_cast<double>(pct) / 100.0) * static_cast<double>(goal));
    if (extHeapGoal > hardGoal) extHeapGoal = hardGoal;
    goal = extHeapGoal;
  }
  if (static_cast<int64_t>(live) > goal) {
    constexpr double maxOvershoot = 1.1;
    goal = static_cast<int64_t>(static_cast<double>(goal) * maxOvershoot);
    scanWorkExpected = maxScanWork;
  }
  int64_t scanWorkRemaining = scanWorkExpected - work;
  if (scanWorkRemaining < 1000) scanWorkRemaining = 1000;
  int64_t heapRemaining = goal - static_cast<int64_t>(live);
  if (heapRemaining <= 0) heapRemaining = 1;
  assistWorkPerByte.Store(static_cast<double>(scanWorkRemaining) / static_cast<double>(heapRemaining));
  assistBytesPerWork.Store(static_cast<double>(heapRemaining) / static_cast<double>(scanWorkRemaining));
}

// gcControllerState.endCycle (mgcpacer.go): updates the cons/mark estimate from this cycle.
void gcControllerState::endCycle(int64_t now, int procs) {
  lastHeapGoal = heapGoal();
  const int64_t assistDuration = now - markStartTime;
  double utilization = gcBackgroundUtilization;
  if (assistDuration > 0) {
    utilization += static_cast<double>(assistTime.Load()) / static_cast<double>(assistDuration * procs);
  }
  if (heapLive.Load() <= triggered) return;
  double idleUtilization = 0.0;
  if (assistDuration > 0) {
    idleUtilization = static_cast<double>(idleMarkTime.Load()) / static_cast<double>(assistDuration * procs);
  }
  const int64_t scanWork = heapScanWork.Load() + stackScanWork.Load() + globalsScanWork.Load();
  const double currentConsMark = (static_cast<double>(heapLive.Load() - triggered) * (utilization + idleUtilization)) /
                                 (static_cast<double>(scanWork) * (1 - utilization));
  consMark = currentConsMark;
  for (double v : lastConsMark) {
    if (v > consMark) consMark = v;
  }
  std::copy(lastConsMark + 1, lastConsMark + 4, lastConsMark);
  lastConsMark[3] = currentConsMark;
}

// gcControllerState.enlistWorker (mgcpacer.go): with GreenTeaGC (on in go1.27), wakes an idle P
// for a worker, or else preempts a random other running P so that it picks up a dedicated worker.
void gcControllerState::enlistWorker() {
  const bool needDedicated = dedicatedMarkWorkersNeeded.Load() > 0;
  const bool needIdle = needIdleMarkWorker();
  if (!needDedicated && !needIdle) return;
  if (rt_.sched.npidle.Load() != 0 && rt_.sched.nmspinning.Load() == 0) {
    rt_.wakep();
    return;
  }
  if (!needDedicated) return;
  if (rt_.gomaxprocs <= 1) return;
  g* gp = plat::getg();
  if (gp == nullptr || gp->m == nullptr || gp->m->p == nullptr) return;
  const int32_t myID = gp->m->p->id;
  for (int tries = 0; tries < 5; tries++) {
    auto id = static_cast<int32_t>(cheaprandn(static_cast<uint32_t>(rt_.gomaxprocs - 1)));
    if (id >= myID) id++;
    p* pp = rt_.allp[static_cast<size_t>(id)];
    if (pp->status.Load() != _Prunning) continue;
    if (rt_.preemptone(pp)) return;
  }
}

// gcControllerState.assignWaitingGCWorker (mgcpacer.go): takes a parked worker for pp as a
// dedicated or fractional worker, if the pacer wants one.
std::pair<bool, int64_t> gcControllerState::assignWaitingGCWorker(p* pp, int64_t now) {
  if (rt_.gcBlackenEnabled.Load() == 0) plat::throw_("gcControllerState.findRunnable: blackening not enabled");
  if (now == 0) now = plat::nanotime();
  if (!rt_.gcShouldScheduleWorker(pp)) return {false, now};
  if (dedicatedMarkWorkersNeeded.Load() <= 0 && fractionalUtilizationGoal == 0) return {false, now};
  auto* node = reinterpret_cast<gcBgMarkWorkerNode*>(rt_.gcBgMarkWorkerPool.pop());
  if (node == nullptr) return {false, now};
  // decIfPositive
  auto decIfPositive = [](Atomic<int64_t>& val) {
    for (;;) {
      const int64_t v = val.Load();
      if (v <= 0) return false;
      if (val.CompareAndSwap(v, v - 1)) return true;
    }
  };
  if (decIfPositive(dedicatedMarkWorkersNeeded)) {
    pp->gcMarkWorkerMode_ = gcMarkWorkerMode::gcMarkWorkerDedicatedMode;
  } else if (fractionalUtilizationGoal == 0) {
    rt_.gcBgMarkWorkerPool.push(&node->node);
    return {false, now};
  } else {
    // Is this P behind its fractional goal? (Kept in step with pollFractionalWorkerExit.)
    const int64_t delta = now - markStartTime;
    if (delta > 0 && static_cast<double>(pp->gcFractionalMarkTime.Load()) / static_cast<double>(delta) >
                         fractionalUtilizationGoal) {
      rt_.gcBgMarkWorkerPool.push(&node->node);
      return {false, now};
    }
    pp->gcMarkWorkerMode_ = gcMarkWorkerMode::gcMarkWorkerFractionalMode;
  }
  pp->nextGCMarkWorker = node;
  return {true, now};
}

// gcControllerState.findRunnableGCWorker (mgcpacer.go): the worker pp should run now, if any.
std::pair<g*, int64_t> gcControllerState::findRunnableGCWorker(p* pp, int64_t now) {
  if (now == 0) now = plat::nanotime();
  if (rt_.gcCPULimiter.needUpdate(now)) rt_.gcCPULimiter.update(now);
  if (pp->nextGCMarkWorker == nullptr) {
    const auto [ok, tnow] = assignWaitingGCWorker(pp, now);
    now = tnow;
    if (!ok) return {nullptr, now};
  }
  gcBgMarkWorkerNode* node = pp->nextGCMarkWorker;
  pp->nextGCMarkWorker = nullptr;
  g* gp = node->gp;
  rt_.casgstatus(gp, _Gwaiting, _Grunnable);
  rt_.evUnpark(gp, pp);
  return {gp, now};
}

// gcControllerState.releaseNextGCMarkWorker (mgcpacer.go): returns an unused assigned worker.
void gcControllerState::releaseNextGCMarkWorker(p* pp) {
  gcBgMarkWorkerNode* node = pp->nextGCMarkWorker;
  if (node == nullptr) return;
  markWorkerStop(pp->gcMarkWorkerMode_, 0);
  rt_.gcBgMarkWorkerPool.push(&node->node);
  pp->nextGCMarkWorker = nullptr;
}

// gcControllerState.resetLive (mgcpacer.go): the marked heap becomes the live heap; world stopped.
void gcControllerState::resetLive(uint64_t bytesMarked) {
  heapMarked = bytesMarked;
  heapLive.Store(bytesMarked);
  heapScan.Store(static_cast<uint64_t>(heapScanWork.Load()));
  lastHeapScan = static_cast<uint64_t>(heapScanWork.Load());
  lastStackScan.Store(static_cast<uint64_t>(stackScanWork.Load()));
  triggered = ~uint64_t{0};
  rt_.evHeap(Ev::HeapAlloc, bytesMarked);
}

// gcControllerState.markWorkerStop (mgcpacer.go)
void gcControllerState::markWorkerStop(gcMarkWorkerMode mode, int64_t duration) {
  switch (mode) {
    case gcMarkWorkerMode::gcMarkWorkerDedicatedMode:
      dedicatedMarkTime.Add(duration);
      dedicatedMarkWorkersNeeded.Add(1);
      break;
    case gcMarkWorkerMode::gcMarkWorkerFractionalMode:
      fractionalMarkTime.Add(duration);
      break;
    case gcMarkWorkerMode::gcMarkWorkerIdleMode:
      idleMarkTime.Add(duration);
      removeIdleMarkWorker();
      break;
    default:
      plat::throw_("markWorkerStop: unknown mark worker mode");
  }
}

// gcControllerState.update (mgcpacer.go): heapLive and heapScan moved.
void gcControllerState::update(int64_t dHeapLive, int64_t dHeapScan) {
  if (dHeapLive != 0) {
    const uint64_t live = heapLive.Add(static_cast<uint64_t>(dHeapLive));
    rt_.evHeap(Ev::HeapAlloc, live);
  }
  if (rt_.gcBlackenEnabled.Load() == 0) {
    if (dHeapScan != 0) heapScan.Add(static_cast<uint64_t>(dHeapScan));
  } else {
    revise();
  }
}

// gcControllerState.addScannableStack (mgcpacer.go): stack space to scan, batched per P until it
// has moved by maxStackScanSlack.
void gcControllerState::addScannableStack(p* pp, int64_t amount) {
  if (pp == nullptr) {
    maxStackScan.Add(static_cast<uint64_t>(amount));
    return;
  }
  pp->maxStackScanDelta += amount;
  if (pp->maxStackScanDelta >= maxStackScanSlack || pp->maxStackScanDelta <= -maxStackScanSlack) {
    maxStackScan.Add(static_cast<uint64_t>(pp->maxStackScanDelta));
    pp->maxStackScanDelta = 0;
  }
}

// gcControllerState.addGlobals (mgcpacer.go)
void gcControllerState::addGlobals(int64_t amount) { globalsScan.Add(static_cast<uint64_t>(amount)); }

// gcControllerState.heapGoal (mgcpacer.go)
uint64_t gcControllerState::heapGoal() { return heapGoalInternal().first; }

// gcControllerState.heapGoalInternal (mgcpacer.go): the smaller of the GOGC and memory-limit
// goals, kept above the sweep distance and a minimum runway past the trigger point.
std::pair<uint64_t, uint64_t> gcControllerState::heapGoalInternal() {
  uint64_t goal = gcPercentHeapGoal.Load();
  uint64_t minTrigger = 0;
  if (const uint64_t newGoal = memoryLimitHeapGoal(); newGoal < goal) {
    goal = newGoal;
  } else {
    const uint64_t sweepDistTrigger = sweepDistMinTrigger.Load();
    if (sweepDistTrigger > goal) goal = sweepDistTrigger;
    minTrigger = sweepDistTrigger;
    constexpr uint64_t minRunway = 64 << 10;
    if (triggered != ~uint64_t{0} && goal < triggered + minRunway) goal = triggered + minRunway;
  }
  return {goal, minTrigger};
}

// gcControllerState.memoryLimitHeapGoal (mgcpacer.go): the heap size that keeps the process's
// memory under the limit, less a headroom of 3% (at least 1 MiB), never under the marked heap.
uint64_t gcControllerState::memoryLimitHeapGoal() {
  uint64_t hFree = 0, heapAlloc = 0, mapped = 0;
  for (;;) {
    hFree = heapFree.Load();
    heapAlloc = totalAlloc.Load() - totalFree.Load();
    mapped = mappedReady.Load();
    if (hFree + heapAlloc <= mapped) break;
  }
  const auto limit = static_cast<uint64_t>(memoryLimit.Load());
  const uint64_t nonHeapMemory = mapped - hFree - heapAlloc;
  uint64_t overage = 0;
  if (mapped > limit) overage = mapped - limit;
  if (nonHeapMemory + overage >= limit) return heapMarked;
  uint64_t goal = limit - (nonHeapMemory + overage);
  uint64_t headroom = goal / 100 * memoryLimitHeapGoalHeadroomPercent;
  if (headroom < memoryLimitMinHeapGoalHeadroom) headroom = memoryLimitMinHeapGoalHeadroom;
  if (goal < headroom || goal - headroom < headroom) {
    goal = headroom;
  } else {
    goal = goal - headroom;
  }
  if (goal < heapMarked) goal = heapMarked;
  return goal;
}

// gcControllerState.trigger (mgcpacer.go): the heapLive at which the next cycle starts, between
// 45/64 and 61/64 of the way from the marked heap to the goal, runway permitting.
std::pair<uint64_t, uint64_t> gcControllerState::trigger() {
  auto [goal, minTrigger] = heapGoalInternal();
  if (heapMarked >= goal) return {goal, goal};
  if (minTrigger < heapMarked) minTrigger = heapMarked;
  const uint64_t triggerLowerBound = ((goal - heapMarked) / triggerRatioDen) * minTriggerRatioNum + heapMarked;
  if (minTrigger < triggerLowerBound) minTrigger = triggerLowerBound;
  uint64_t maxTrigger = ((goal - heapMarked) / triggerRatioDen) * maxTriggerRatioNum + heapMarked;
  if (goal > defaultHeapMinimum && goal - defaultHeapMinimum > maxTrigger) maxTrigger = goal - defaultHeapMinimum;
  maxTrigger = std::max(maxTrigger, minTrigger);
  uint64_t trig = 0;
  const uint64_t rw = runway.Load();
  if (rw > goal) {
    trig = minTrigger;
  } else {
    trig = goal - rw;
  }
  trig = std::max(trig, minTrigger);
  trig = std::min(trig, maxTrigger);
  if (trig > goal) plat::throw_("produced a trigger greater than the heap goal");
  return {trig, goal};
}

// gcControllerState.commit (mgcpacer.go): recomputes the GOGC goal and the runway.
void gcControllerState::commit(bool isSweepDone) {
  if (isSweepDone) {
    sweepDistMinTrigger.Store(0);
  } else {
    sweepDistMinTrigger.Store(heapLive.Load() + sweepMinHeapDistance);
  }
  uint64_t goal = ~uint64_t{0};
  if (const int32_t pct = gcPercent.Load(); pct >= 0) {
    goal = heapMarked + (heapMarked + lastStackScan.Load() + globalsScan.Load()) * static_cast<uint64_t>(pct) / 100;
  }
  if (goal < heapMinimum) goal = heapMinimum;
  gcPercentHeapGoal.Store(goal);
  runway.Store(static_cast<uint64_t>((consMark * (1 - gcGoalUtilization) / gcGoalUtilization) *
                                     static_cast<double>(lastHeapScan + lastStackScan.Load() + globalsScan.Load())));
}

// gcControllerState.setGCPercent (mgcpacer.go)
int32_t gcControllerState::setGCPercent(int32_t in) {
  const int32_t out = gcPercent.Load();
  if (in < 0) in = -1;
  heapMinimum = defaultHeapMinimum * static_cast<uint64_t>(static_cast<int64_t>(in)) / 100;
  gcPercent.Store(in);
  return out;
}

// gcControllerState.setMemoryLimit (mgcpacer.go)
int64_t gcControllerState::setMemoryLimit(int64_t in) {
  const int64_t out = memoryLimit.Load();
  if (in >= 0) memoryLimit.Store(in);
  return out;
}

// gcControllerState.addIdleMarkWorker (mgcpacer.go): takes an idle-worker slot if one is free.
bool gcControllerState::addIdleMarkWorker() {
  for (;;) {
    const uint64_t old = idleMarkWorkers.Load();
    const auto n = static_cast<int32_t>(old & 0xffffffffu);
    const auto max = static_cast<int32_t>(old >> 32);
    if (n >= max) return false;
    if (n < 0) plat::throw_("negative idle mark workers");
    const uint64_t nv = uint64_t{static_cast<uint32_t>(n + 1)} | (static_cast<uint64_t>(static_cast<uint32_t>(max)) << 32);
    if (idleMarkWorkers.CompareAndSwap(old, nv)) return true;
  }
}

// gcControllerState.needIdleMarkWorker (mgcpacer.go)
bool gcControllerState::needIdleMarkWorker() {
  const uint64_t v = idleMarkWorkers.Load();
  return static_cast<int32_t>(v & 0xffffffffu) < static_cast<int32_t>(v >> 32);
}

// gcControllerState.removeIdleMarkWorker (mgcpacer.go)
void gcControllerState::removeIdleMarkWorker() {
  for (;;) {
    const uint64_t old = idleMarkWorkers.Load();
    const auto n = static_cast<int32_t>(old & 0xffffffffu);
    const auto max = static_cast<int32_t>(old >> 32);
    if (n - 1 < 0) plat::throw_("negative idle mark workers");
    const uint64_t nv = uint64_t{static_cast<uint32_t>(n - 1)} | (static_cast<uint64_t>(static_cast<uint32_t>(max)) << 32);
    if (idleMarkWorkers.CompareAndSwap(old, nv)) return;
  }
}

// gcControllerState.setMaxIdleMarkWorkers (mgcpacer.go)
void gcControllerState::setMaxIdleMarkWorkers(int32_t max) {
  for (;;) {
    const uint64_t old = idleMarkWorkers.Load();
    const auto n = static_cast<int32_t>(old & 0xffffffffu);
    if (n < 0) plat::throw_("negative idle mark workers");
    const uint64_t nv = uint64_t{static_cast<uint32_t>(n)} | (static_cast<uint64_t>(static_cast<uint32_t>(max)) << 32);
    if (idleMarkWorkers.CompareAndSwap(old, nv)) return;
  }
}

// gcControllerCommit (mgcpacer.go): commit, revise during a cycle, then pace the sweeper.
void Runtime::gcControllerCommit() {
  gcController.commit(isSweepDone());
  if (gcphase.Load() != _GCoff) gcController.revise();
  const auto [trig, goal] = gcController.trigger();
  evHeap(Ev::HeapGoal, goal);
  gcPaceSweeper(trig);
  // gcPaceScavenger: the scavenger is not modelled.
}

// pollFractionalWorkerExit (mgc.go): a fractional worker stops once its P is 20% over its share.
bool Runtime::pollFractionalWorkerExit() {
  const int64_t now = plat::nanotime();
  const int64_t delta = now - gcController.markStartTime;
  if (delta <= 0) return true;
  p* pp = plat::getg()->m->p;
  const int64_t selfTime = pp->gcFractionalMarkTime.Load() + (now - pp->gcMarkWorkerStartTime);
  return static_cast<double>(selfTime) / static_cast<double>(delta) > 1.2 * gcController.fractionalUtilizationGoal;
}

// --- The CPU limiter (mgclimit.go) ---

// makeLimiterEventStamp (mgclimit.go)
uint64_t makeLimiterEventStamp(limiterEventType typ, int64_t now) {
  return (static_cast<uint64_t>(typ) << (64 - limiterEventBits)) | (static_cast<uint64_t>(now) & ~limiterEventTypeMask);
}

// limiterEventStamp.duration (mgclimit.go): time since the stamp, on the low bits only.
int64_t limiterEventStampDuration(uint64_t s, int64_t now) {
  const auto start = static_cast<int64_t>((static_cast<uint64_t>(now) & limiterEventTypeMask) | (s & ~limiterEventTypeMask));
  if (now < start) return 0;
  return now - start;
}

// limiterEventStamp.typ (mgclimit.go)
limiterEventType limiterEventStampTyp(uint64_t s) {
  return static_cast<limiterEventType>(s >> (64 - limiterEventBits));
}

// limiterEvent.start (mgclimit.go)
bool limiterEvent::start(limiterEventType typ, int64_t now) {
  if (limiterEventStampTyp(stamp.Load()) != limiterEventType::limiterEventNone) return false;
  stamp.Store(makeLimiterEventStamp(typ, now));
  return true;
}

// limiterEvent.consume (mgclimit.go): takes the time accrued so far and restamps at now.
std::pair<limiterEventType, int64_t> limiterEvent::consume(int64_t now) {
  limiterEventType typ{};
  int64_t duration = 0;
  for (;;) {
    const uint64_t old = stamp.Load();
    typ = limiterEventStampTyp(old);
    if (typ == limiterEventType::limiterEventNone) return {typ, 0};
    duration = limiterEventStampDuration(old, now);
    if (duration == 0) return {limiterEventType::limiterEventNone, 0};
    if (stamp.CompareAndSwap(old, makeLimiterEventStamp(typ, now))) break;
  }
  return {typ, duration};
}

// limiterEvent.stop (mgclimit.go): ends the event and hands its time to the limiter's pools.
void limiterEvent::stop(Runtime& rt, limiterEventType typ, int64_t now) {
  uint64_t s = 0;
  for (;;) {
    s = stamp.Load();
    if (limiterEventStampTyp(s) != typ) plat::throw_("limiterEvent.stop: found wrong event in p's limiter event slot");
    if (stamp.CompareAndSwap(s, limiterEventStampNone)) break;
  }
  const int64_t duration = limiterEventStampDuration(s, now);
  if (duration == 0) return;
  switch (typ) {
    case limiterEventType::limiterEventIdle:
      rt.sched.idleTime.Add(duration);
      rt.gcCPULimiter.addIdleTime(duration);
      break;
    case limiterEventType::limiterEventIdleMarkWork:
      rt.gcCPULimiter.addIdleTime(duration);
      break;
    case limiterEventType::limiterEventMarkAssist:
    case limiterEventType::limiterEventScavengeAssist:
      rt.gcCPULimiter.addAssistTime(duration);
      break;
    default:
      plat::throw_("limiterEvent.stop: invalid limiter event type found");
  }
}

// gcCPULimiterState.limiting (mgclimit.go)
bool gcCPULimiterState::limiting() { return enabled.Load() != 0; }

// gcCPULimiterState.startGCTransition (mgclimit.go): the GC turns on or off; holds the lock until
// finishGCTransition.
void gcCPULimiterState::startGCTransition(bool enableGC, int64_t now) {
  if (!tryLock()) plat::throw_("failed to acquire lock to start a GC transition");
  if (gcEnabled == enableGC) plat::throw_("transitioning GC to the same state as before?");
  updateLocked(now);
  gcEnabled = enableGC;
  transitioning = true;
}

// gcCPULimiterState.finishGCTransition (mgclimit.go): the stop-the-world time counts as GC time.
void gcCPULimiterState::finishGCTransition(int64_t now) {
  if (!transitioning) plat::throw_("finishGCTransition called without starting one?");
  if (const int64_t last = lastUpdate.Load(); now >= last) accumulate(0, (now - last) * nprocs);
  lastUpdate.Store(now);
  transitioning = false;
  unlock();
}

// gcCPULimiterState.needUpdate (mgclimit.go)
bool gcCPULimiterState::needUpdate(int64_t now) { return now - lastUpdate.Load() > gcCPULimiterUpdatePeriod; }

// gcCPULimiterState.addAssistTime (mgclimit.go)
void gcCPULimiterState::addAssistTime(int64_t t) { assistTimePool.Add(t); }

// gcCPULimiterState.addIdleTime (mgclimit.go)
void gcCPULimiterState::addIdleTime(int64_t t) { idleTimePool.Add(t); }

// gcCPULimiterState.update (mgclimit.go)
void gcCPULimiterState::update(int64_t now) {
  if (!tryLock()) return;
  if (transitioning) plat::throw_("update during transition");
  updateLocked(now);
  unlock();
}

// gcCPULimiterState.updateLocked (mgclimit.go): folds the window since the last update into the
// bucket: GC time is assists plus a quarter of the window while the GC runs, less idle time.
void gcCPULimiterState::updateLocked(int64_t now) {
  const int64_t last = lastUpdate.Load();
  if (now < last) return;
  int64_t windowTotalTime = (now - last) * nprocs;
  lastUpdate.Store(now);
  int64_t assist = assistTimePool.Load();
  if (assist != 0) assistTimePool.Add(-assist);
  int64_t idle = idleTimePool.Load();
  if (idle != 0) idleTimePool.Add(-idle);
  if (!test) {
    m* mp = rt_.acquirem();
    for (p* pp : rt_.allp) {
      const auto [typ, duration] = pp->limiterEvent_.consume(now);
      switch (typ) {
        case limiterEventType::limiterEventIdle:
          rt_.sched.idleTime.Add(duration);
          idle += duration;
          break;
        case limiterEventType::limiterEventIdleMarkWork:
          idle += duration;
          break;
        case limiterEventType::limiterEventMarkAssist:
        case limiterEventType::limiterEventScavengeAssist:
          assist += duration;
          break;
        case limiterEventType::limiterEventNone:
          break;
        default:
          plat::throw_("invalid limiter event type found");
      }
    }
    rt_.releasem(mp);
  }
  int64_t windowGCTime = assist;
  if (gcEnabled) windowGCTime += static_cast<int64_t>(static_cast<double>(windowTotalTime) * gcBackgroundUtilization);
  windowTotalTime -= idle;
  accumulate(windowTotalTime - windowGCTime, windowGCTime);
}

// gcCPULimiterState.accumulate (mgclimit.go): the bucket fills with GC time and drains with
// mutator time; full means limiting.
void gcCPULimiterState::accumulate(int64_t mutatorTime, int64_t gcTime) {
  const uint64_t headroom = bucket.capacity - bucket.fill;
  const bool wasEnabled = headroom == 0;
  const int64_t change = gcTime - mutatorTime;
  if (change > 0 && headroom <= static_cast<uint64_t>(change)) {
    overflow += static_cast<uint64_t>(change) - headroom;
    bucket.fill = bucket.capacity;
    if (!wasEnabled) {
      enabled.Store(1);
      lastEnabledCycle.Store(rt_.memstats.numgc + 1);
    }
    return;
  }
  if (change < 0 && bucket.fill <= static_cast<uint64_t>(-change)) {
    bucket.fill = 0;
  } else {
    bucket.fill -= static_cast<uint64_t>(-change);
  }
  if (change != 0 && wasEnabled) enabled.Store(0);
}

// gcCPULimiterState.tryLock (mgclimit.go)
bool gcCPULimiterState::tryLock() { return lock.CompareAndSwap(0, 1); }

// gcCPULimiterState.unlock (mgclimit.go)
void gcCPULimiterState::unlock() {
  if (lock.Swap(0) != 1) plat::throw_("double unlock");
}

// gcCPULimiterState.resetCapacity (mgclimit.go): the bucket holds one second per P.
void gcCPULimiterState::resetCapacity(int64_t now, int32_t np) {
  if (!tryLock()) plat::throw_("failed to acquire lock to reset capacity");
  updateLocked(now);
  nprocs = np;
  bucket.capacity = static_cast<uint64_t>(np) * capacityPerProc;
  if (bucket.fill > bucket.capacity) {
    bucket.fill = bucket.capacity;
    enabled.Store(1);
    lastEnabledCycle.Store(rt_.memstats.numgc + 1);
  } else if (bucket.fill < bucket.capacity) {
    enabled.Store(0);
  }
  unlock();
}

}  // namespace gmp::rt
