// The garbage collector's cycle (mgc.go): gcStart's sweep termination under a stop-the-world, the
// background mark workers, gcMarkDone's ragged barrier and gcMarkTermination's stop-the-world,
// runtime.GC and the cycle records gctrace prints.
//
// The phases, transition locks, worker pool and the nwait/nproc accounting are Go's; what marking
// itself does is a cost (mgcmark.cpp), so no object is ever scanned.
#include <cmath>
#include <algorithm>
#include <memory>

#include "sim/platform/platform.h"
#include "sim/runtime/chan.h"
#include "sim/runtime/events.h"
#include "sim/runtime/mgcwork.h"
#include "sim/runtime/runtime.h"
#include "sim/runtime/sema.h"

namespace gmp::rt {

const char* stwReasonString(stwReason r) {
  static const char* const names[] = {
      "unknown", "GC mark termination", "GC sweep termination", "write heap dump", "goroutine profile",
      "goroutine profile cleanup", "all goroutines stack trace", "read mem stats", "AllThreadsSyscall",
      "GOMAXPROCS", "start trace", "stop trace", "CountPagesInUse (test)", "ReadMetricsSlow (test)",
      "ReadMemStatsSlow (test)", "PageCachePagesLeaked (test)", "ResetDebugLog (test)",
  };
  const auto i = static_cast<size_t>(r);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "unknown";
}

// setGCPhase (mgc.go): the phase, stored atomically; write barriers are on while marking.
void Runtime::setGCPhase(uint32_t x) {
  gcphase.Store(x);
  writeBarrierEnabled = x == _GCmark || x == _GCmarktermination;
}

// GC (mgc.go): runs a whole cycle: waits out the mark phase under way, starts the next cycle,
// waits for its mark to end and helps its sweep finish.
void Runtime::GC() {
  const uint32_t n = work.cycles.Load();
  gcWaitOnMark(n);
  gcStart(gcTrigger{gcTriggerKind::gcTriggerCycle, 0, n + 1});
  gcWaitOnMark(n + 1);
  while (work.cycles.Load() == n + 1 && sweepone() != ~uintptr_t{0}) Gosched();
  while (work.cycles.Load() == n + 1 && !isSweepDone()) Gosched();
  // The heap profile is published here in Go (mProf_PostSweep); there is no profile.
  m* mp = acquirem();
  releasem(mp);
}

// gcWaitOnMark (mgc.go): parks until mark phase n has ended.
void Runtime::gcWaitOnMark(uint32_t n) {
  for (;;) {
    lock(&work.sweepWaiters.lock);
    uint32_t nMarks = work.cycles.Load();
    if (gcphase.Load() != _GCmark) nMarks++;  // this cycle's mark is already over
    if (nMarks > n) {
      unlock(&work.sweepWaiters.lock);
      return;
    }
    work.sweepWaiters.list.push(plat::getg());
    goparkunlock(&work.sweepWaiters.lock, waitReason::waitReasonWaitForGCCycle, 1);
  }
}

// gcStart (mgc.go): if the trigger still holds, sweep termination: start the workers, stop the
// world, finish the sweep, start the cycle in the pacer, enter the mark phase and restart the
// world with assists and workers enabled.
void Runtime::gcStart(gcTrigger trigger) {
  m* mp = acquirem();
  if (g* gp = plat::getg(); gp == mp->g0 || mp->locks > 1) {
    releasem(mp);
    return;
  }
  releasem(mp);
  mp = nullptr;

  // Sweep what the last cycle left, re-testing the trigger each time.
  while (trigger.test(*this) && sweepone() != ~uintptr_t{0}) {
  }

  semacquire(&work.startSema);
  if (!trigger.test(*this)) {
    semrelease(&work.startSema);
    return;
  }
  // debug.gcstoptheworld is 0: the cycle is concurrent (gcBackgroundMode).

  semacquire(gcsema.get());
  semacquire(worldsema.get());

  work.userForced = trigger.kind == gcTriggerKind::gcTriggerCycle;
  ev(Ev::GCStart, nullptr, plat::getg()->m->p, work.cycles.Load() + 1);

  gcBgMarkStartWorkers();
  gcResetMarkState();

  work.stwprocs = gomaxprocs;
  work.maxprocs = gomaxprocs;
  if (work.stwprocs > ncpu && ncpu > 0) work.stwprocs = ncpu;
  work.heap0 = gcController.heapLive.Load();
  work.pauseNS = 0;

  int64_t now = plat::nanotime();
  work.tSweepTerm = now;
  const worldStop stw = stopTheWorldWithSema(stwReason::stwGCSweepTerm);

  finishsweep_m();
  // clearpools: no sync.Pool here. What sweep termination does with the world stopped besides
  // (clearpools, the mark state's and the roots' preparation) is one cost from the profile.
  gcPauseWork(gccost.sweepTerminationNs);
  work.cycles.Add(1);

  gcController.startCycle(now, gomaxprocs, trigger);
  gcCPULimiter.startGCTransition(true, now);

  setGCPhase(_GCmark);
  gcBgMarkPrepare();
  gcPrepareMarkRoots();
  // gcMarkTinyAllocs: no tiny allocator blocks here.
  gcBlackenEnabled.Store(1);

  mp = acquirem();
  now = startTheWorldWithSema(0, stw);
  work.pauseNS += now - stw.startedStopping;
  work.tMark = now;
  gcCPULimiter.finishGCTransition(now);

  semrelease(worldsema.get());
  releasem(mp);
  semrelease(&work.startSema);
}

// gcMarkDone (mgc.go): the last worker or assist to run out of work tries to end the mark phase:
// a ragged barrier over every P flushes their local work; if none had any, the world stops for
// mark termination.
void Runtime::gcMarkDone() {
  semacquire(&work.markDoneSema);
top:
  if (!(gcphase.Load() == _GCmark && gcIsMarkDone())) {
    semrelease(&work.markDoneSema);
    return;
  }
  semacquire(worldsema.get());

  gcMarkDoneFlushed.Store(0);
  forEachP(waitReason::waitReasonGCMarkTermination, [this](p* pp) {
    // wbBufFlush1: no write-barrier buffers. gcw.dispose puts what the P holds back on the
    // global queue and notes that it did.
    if (pp->gcw.held > 0) {
      work.full.Add(pp->gcw.held);
      pp->gcw.held = 0;
      pp->gcw.flushedWork = true;
    }
    if (pp->gcw.heapScanWork > 0) {
      gcController.heapScanWork.Add(pp->gcw.heapScanWork);
      pp->gcw.heapScanWork = 0;
    }
    if (pp->gcw.flushedWork) {
      gcMarkDoneFlushed.Add(1);
      pp->gcw.flushedWork = false;
    }
  });
  if (gcMarkDoneFlushed.Load() != 0) {
    // Some P had work the barrier pushed out: marking goes on.
    semrelease(worldsema.get());
    goto top;
  }

  {
    const int64_t now = plat::nanotime();
    work.tMarkTerm = now;
    const worldStop stw = stopTheWorldWithSema(stwReason::stwGCMarkTerm);

    // Work that appeared after the barrier (Go's issue 27993) restarts the mark phase.
    bool restart = false;
    for (p* pp : allp) {
      if (!pp->gcw.empty()) {
        restart = true;
        break;
      }
    }
    if (restart) {
      const int64_t t = startTheWorldWithSema(0, stw);
      work.pauseNS += t - stw.startedStopping;
      semrelease(worldsema.get());
      goto top;
    }

    // gcComputeStartingStackSize: stacks never grow here, so the start size stays.
    gcBlackenEnabled.Store(0);
    gcCPULimiter.startGCTransition(false, now);
    gcWakeAllAssists();
    semrelease(&work.markDoneSema);
    // schedEnableUser(true): user goroutines were never disabled (background mode).
    gcController.endCycle(now, gomaxprocs);
    gcMarkTermination(stw);
  }
}

// gcinit (mgc.go), from schedinit: no sweep before the first cycle (the sweeper reads as done
// until then), and the pacer starts from the run's GOGC and GOMEMLIMIT, as Go's readGOGC and
// readGOMEMLIMIT give them. The transition semaphores start at 1 (mgcwork.h).
void Runtime::gcinit() {
  gcController.init(gcSettings.gcPercent, gcSettings.memoryLimit);
  // The data and BSS segments' scannable bytes (symtab.go's moduledataverify1 adds each module's).
  gcController.addGlobals(static_cast<int64_t>(gccost.globalsBytes));
}

// The profile's GC costs (Not in Go: the work marking does, as time).
uint64_t Runtime::gcCostGlobalsBytes() { return gccost.globalsBytes; }
int64_t Runtime::gcCostMarkUnitBytes() { return static_cast<int64_t>(gccost.markUnitBytes); }
int64_t Runtime::gcCostScanNs(int64_t bytes) {
  return std::llround(static_cast<double>(bytes) * gccost.markNsPerByte);
}
// Heap scan work: per byte, and per object at the reachable heap's objects per byte (Go's
// scanobject and greyobject cost per object besides the words scanned).
int64_t Runtime::gcCostHeapScanNs(int64_t bytes) {
  return std::llround(static_cast<double>(bytes) *
                      (gccost.markNsPerByte + gccost.markNsPerObject * work.heapObjectsPerByte));
}
int64_t Runtime::gcCostStackScanNs(int64_t bytes) {
  return std::llround(static_cast<double>(bytes) * gccost.stackScanNsPerByte);
}
// Mark termination's own work besides the checks (flushing caches, stack shrinking, the finalizer
// and special queues, the statistics): the profile's mark_termination_ns.
void Runtime::gcMarkTerminationWork() { gcPauseWork(gccost.markTerminationNs); }
// Not in Go: a pause's own work with the world stopped, as computation on this M.
void Runtime::gcPauseWork(double ns) {
  auto work = static_cast<int64_t>(ns);
  while (work > 0) work = plat::compute(work);
}

// gcMarkTermination (mgc.go): with the world stopped: the mark-termination work, the sweep's start,
// the pacer's commit for the next cycle, the statistics; then the world restarts.
void Runtime::gcMarkTermination(worldStop stw) {
  setGCPhase(_GCmarktermination);
  work.heap1 = gcController.heapLive.Load();
  const int64_t startTime = plat::nanotime();

  m* mp = acquirem();
  g* curgp = mp->curg.get();
  curgp->waitreason = waitReason::waitReasonGarbageCollection;
  casgstatus(curgp, _Grunning, _Gwaiting);  // casGToWaitingForSuspendG

  gcMark(startTime);

  work.heap2 = work.bytesMarked.Load();
  setGCPhase(_GCoff);
  sweepStartCycle();  // gcSweep: the background sweeper takes over

  casgstatus(curgp, _Gwaiting, _Grunning);
  ev(Ev::GCDone, nullptr, mp->p, work.cycles.Load());

  if (gcphase.Load() != _GCoff) plat::throw_("gc done but gcphase != _GCoff");

  gcControllerCommit();

  const int64_t now = plat::nanotime();
  work.pauseNS += now - stw.startedStopping;
  work.tEnd = now;
  memstats.last_gc_nanotime.Store(static_cast<uint64_t>(now));

  lock(&work.sweepWaiters.lock);
  memstats.numgc++;
  injectglist(&work.sweepWaiters.list);
  unlock(&work.sweepWaiters.lock);

  gcCPULimiter.finishGCTransition(now);

  // The cycle's record, as gctrace=1 prints it (mgc.go's print at the end of gcMarkTermination).
  GCCycleRecord rec;
  rec.n = memstats.numgc;
  rec.start = work.tSweepTerm - runtimeInitTime;
  rec.forced = work.userForced;
  rec.sweepTermWall = work.tMark - work.tSweepTerm;
  rec.markWall = work.tMarkTerm - work.tMark;
  rec.markTermWall = work.tEnd - work.tMarkTerm;
  rec.sweepTermCpu = int64_t{work.stwprocs} * (work.tMark - work.tSweepTerm);
  rec.assistCpu = gcController.assistTime.Load();
  rec.backgroundCpu = gcController.dedicatedMarkTime.Load() + gcController.fractionalMarkTime.Load();
  rec.idleCpu = gcController.idleMarkTime.Load();
  rec.markTermCpu = int64_t{work.stwprocs} * (work.tEnd - work.tMarkTerm);
  rec.heapStart = work.heap0;
  rec.heapEnd = work.heap1;
  rec.heapLive = work.heap2;
  rec.heapGoal = gcController.lastHeapGoal;
  rec.stacks = gcController.lastStackScan.Load();
  rec.globals = gcController.globalsScan.Load();
  rec.procs = work.maxprocs;
  gcstats.cycles.push_back(rec);
  gcstats.gcCpu += rec.sweepTermCpu + rec.assistCpu + rec.backgroundCpu + rec.markTermCpu;
  gcstats.idleMarkCpu += rec.idleCpu;
  gcstats.lastHeapGoal = rec.heapGoal;
  gcstats.peakHeap = std::max(gcstats.peakHeap, rec.heapEnd);

  startTheWorldWithSema(now, stw);

  // mProf_Flush, prepareFreeWorkbufs, freeStackSpans: nothing to flush here. The per-P caches'
  // flush before the next sweep is a safe-point function on every P.
  forEachP(waitReason::waitReasonFlushProcCaches, [this](p* pp) { pp->mcache_.releaseAll(*this); });

  semrelease(worldsema.get());
  semrelease(gcsema.get());
  releasem(mp);
}

// gcMark (mgc.go), with the world stopped: checks that no mark work is left and charges mark
// termination's own work.
void Runtime::gcMark(int64_t startTime) {
  if (gcphase.Load() != _GCmarktermination) plat::throw_("in gcMark expecting to see gcphase as _GCmarktermination");
  work.tstart = startTime;
  const uint32_t next = work.markrootNext.Load();
  if (work.full.Load() != 0 || next < work.markrootJobs.Load()) {
    plat::throw_("non-empty mark queue after concurrent mark");
  }
  work.stackRoots.clear();
  for (p* pp : allp) {
    if (!pp->gcw.empty()) plat::throw_("P has cached GC work at end of mark termination");
  }
  // What mark termination does besides (flushing mcaches, the finalizer and special queues, stack
  // shrinking) is one cost from the profile.
  gcMarkTerminationWork();
  for (p* pp : allp) pp->mcache_.scanAlloc = 0;  // this cycle's heapScan is its scan work
  gcController.resetLive(work.bytesMarked.Load());
}

// gcBgMarkStartWorkers (mgc.go): makes sure every P has a mark worker goroutine, starting them one
// at a time and waiting for each to be in the pool.
void Runtime::gcBgMarkStartWorkers() {
  if (gcBgMarkWorkerCount >= gomaxprocs) return;
  m* mp = acquirem();
  hchan* ready = makechan(*this, 1);
  releasem(mp);
  while (gcBgMarkWorkerCount < gomaxprocs) {
    mp = acquirem();
    newproc(funcGcBgMarkWorker, ready);
    releasem(mp);
    chanrecv1(ready, nullptr);
    gcBgMarkWorkerCount++;
  }
}

// gcBgMarkPrepare (mgc.go): nproc and nwait start equal and huge: each worker or assist takes one
// from nwait while it works.
void Runtime::gcBgMarkPrepare() {
  work.nproc.Store(~uint32_t{0});
  work.nwait.Store(~uint32_t{0});
}

namespace {
// The unlock function of a mark worker's park (gcBgMarkWorker's closure): the worker has left its
// stack, so its M may be released and it may go back to the pool.
bool gcBgMarkWorkerParked(g*, void* nodep) {
  Runtime& r = *Runtime::current();
  auto* node = static_cast<gcBgMarkWorkerNode*>(nodep);
  if (m* mp = node->m_; mp != nullptr) r.releasem(mp);
  r.gcBgMarkWorkerPool.push(&node->node);
  return true;
}
}  // namespace

// gcBgMarkWorker (mgc.go): a P's mark worker: parks in the pool until findRunnableGCWorker (or an
// idle P) picks it, drains mark work in the mode it was given, and ends the mark phase if it was
// the last one working with nothing left.
void Runtime::gcBgMarkWorker(hchan* ready) {
  g* gp = plat::getg();
  gcBgMarkWorkerNodes.push_back(std::make_unique<gcBgMarkWorkerNode>());
  gcBgMarkWorkerNode* node = gcBgMarkWorkerNodes.back().get();
  node->gp = gp;
  node->m_ = acquirem();
  chansend1(ready, nullptr);

  for (;;) {
    gopark(&gcBgMarkWorkerParked, node, waitReason::waitReasonGCWorkerIdle, 0);

    node->m_ = acquirem();
    p* pp = gp->m->p;
    if (gcBlackenEnabled.Load() == 0) plat::throw_("gcBgMarkWorker: blackening not enabled");
    if (pp->gcMarkWorkerMode_ == gcMarkWorkerMode::gcMarkWorkerNotWorker) plat::throw_("gcBgMarkWorker: mode not set");

    const int64_t startTime = plat::nanotime();
    pp->gcMarkWorkerStartTime = startTime;
    bool trackLimiterEvent = false;
    if (pp->gcMarkWorkerMode_ == gcMarkWorkerMode::gcMarkWorkerIdleMode) {
      trackLimiterEvent = pp->limiterEvent_.start(limiterEventType::limiterEventIdleMarkWork, startTime);
    }

    gcBeginWork();

    // The worker's goroutine waits while it marks, so that others may scan its stack.
    gp->waitreason = waitReason::waitReasonGCWorkerActive;
    casgstatus(gp, _Grunning, _Gwaiting);  // casGToWaitingForSuspendG
    switch (pp->gcMarkWorkerMode_) {
      case gcMarkWorkerMode::gcMarkWorkerDedicatedMode:
        gcDrainMarkWorkerDedicated(&pp->gcw, true);
        if (gp->preempt()) {
          // Preempted: whatever waits in this P's queue moves to the global queue, where other
          // Ps can run it while this one keeps marking.
          if (gQueue drainQ = runqdrain(pp); !drainQ.empty()) {
            lock(&sched.lock);
            globrunqputbatch(&drainQ);
            unlock(&sched.lock);
          }
        }
        gcDrainMarkWorkerDedicated(&pp->gcw, false);
        break;
      case gcMarkWorkerMode::gcMarkWorkerFractionalMode:
        gcDrainMarkWorkerFractional(&pp->gcw);
        break;
      case gcMarkWorkerMode::gcMarkWorkerIdleMode:
        gcDrainMarkWorkerIdle(&pp->gcw);
        break;
      default:
        plat::throw_("gcBgMarkWorker: unexpected gcMarkWorkerMode");
    }
    casgstatus(gp, _Gwaiting, _Grunning);

    const int64_t now = plat::nanotime();
    const int64_t duration = now - startTime;
    gcController.markWorkerStop(pp->gcMarkWorkerMode_, duration);
    if (trackLimiterEvent) pp->limiterEvent_.stop(*this, limiterEventType::limiterEventIdleMarkWork, now);
    if (pp->gcMarkWorkerMode_ == gcMarkWorkerMode::gcMarkWorkerFractionalMode) pp->gcFractionalMarkTime.Add(duration);
    pp->gcMarkWorkerMode_ = gcMarkWorkerMode::gcMarkWorkerNotWorker;

    if (gcEndWork()) {
      releasem(node->m_);
      node->m_ = nullptr;
      gcMarkDone();
    }
  }
}

// gcShouldScheduleWorker (mgc.go)
bool Runtime::gcShouldScheduleWorker(p* pp) {
  if (pp != nullptr && !pp->gcw.empty()) return true;
  return gcMarkWorkAvailable();
}

// gcMarkWorkAvailable (mgc.go, the non-Green-Tea form): global work or root jobs left.
bool Runtime::gcMarkWorkAvailable() {
  if (work.full.Load() != 0) return true;
  return work.markrootNext.Load() < work.markrootJobs.Load();
}

// gcIsMarkDone (mgc.go)
bool Runtime::gcIsMarkDone() { return work.nwait.Load() == work.nproc.Load() && !gcMarkWorkAvailable(); }

// gcBeginWork (mgc.go)
void Runtime::gcBeginWork() {
  const uint32_t decnwait = work.nwait.Add(static_cast<uint32_t>(-1));
  if (decnwait == work.nproc.Load()) plat::throw_("work.nwait was > work.nproc");
}

// gcEndWork (mgc.go): true when this was the last worker and no work is left.
bool Runtime::gcEndWork() {
  const uint32_t incnwait = work.nwait.Add(1);
  if (incnwait > work.nproc.Load()) plat::throw_("work.nwait > work.nproc");
  return incnwait == work.nproc.Load() && !gcMarkWorkAvailable();
}

// gcResetMarkState (mgc.go): clears every goroutine's assist credit and the marked count.
void Runtime::gcResetMarkState() {
  lock(&allglock);  // forEachG
  for (g* gp : allgs) gp->gcAssistBytes = 0;
  unlock(&allglock);
  work.bytesMarked.Store(0);
  work.initialHeapLive = gcController.heapLive.Load();
}

// pollFractionalWorkerExit (mgc.go) is in mgcpacer.cpp, beside findRunnableGCWorker's test.

}  // namespace gmp::rt
