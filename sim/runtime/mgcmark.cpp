// Marking (mgcmark.go): root jobs, gcDrain and gcDrainN, mutator assists and the assist queue.
//
// Marking is a model (mgcwork.h): a root job costs its bytes (a goroutine's stack, the globals)
// times the profile's scan cost; heap work is taken from work.full in units of mark_unit_bytes,
// each a computation whose length comes from the profile. Between units gcDrain makes Go's
// checks: the preemption flag, the mode's exit test, and the flush of its scan work as credit for
// assists. Objects allocated during the mark phase are black, so work.full is fixed at mark start.
#include <algorithm>
#include <cmath>

#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/runtime/mgcwork.h"
#include "sim/runtime/mutants.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

namespace {
// The computation of ns of mark work on this thread, to its end: the marking code runs with
// preemption off, so a cut (a signal, the end of an OS slice) only resumes it.
void markCompute(int64_t ns) {
  while (ns > 0) ns = plat::compute(ns);
}
}  // namespace

// gcPrepareMarkRoots (mgcmark.go), with the world stopped: the root jobs of this cycle, the fixed
// ones, one job for all globals and one per goroutine; and, for the model, the heap scan work.
void Runtime::gcPrepareMarkRoots() {
  work.nDataRoots = gcCostGlobalsBytes() > 0 ? 1 : 0;
  work.nBSSRoots = 0;
  work.nSpanRoots = 0;  // no specials (finalizers, weak handles) to scan
  lock(&allglock);      // allGsSnapshot
  work.stackRoots = allgs;
  unlock(&allglock);
  work.nStackRoots = static_cast<int>(work.stackRoots.size());
  work.stackRootBytes.assign(work.stackRoots.size(), 0);
  for (size_t i = 0; i < work.stackRoots.size(); i++) {
    // A dead goroutine's stack holds nothing to scan; every live one has the starting size.
    if ((readgstatus(work.stackRoots[i]) & ~_Gscan) != _Gdead) work.stackRootBytes[i] = startingStackSize;
  }
  work.globalsBytes = gcCostGlobalsBytes();

  work.markrootNext.Store(0);
  work.markrootJobs.Store(fixedRootCount + static_cast<uint32_t>(work.nDataRoots + work.nBSSRoots + work.nSpanRoots +
                                                                 work.nStackRoots));
  work.baseData = fixedRootCount;
  work.baseBSS = work.baseData + static_cast<uint32_t>(work.nDataRoots);
  work.baseSpans = work.baseBSS + static_cast<uint32_t>(work.nBSSRoots);
  work.baseStacks = work.baseSpans + static_cast<uint32_t>(work.nSpanRoots);
  work.baseEnd = work.baseStacks + static_cast<uint32_t>(work.nStackRoots);

  // The heap to scan: what is reachable now (retained), all of which will be marked.
  work.full.Store(static_cast<int64_t>(liveHeap));
  work.heapObjectsPerByte = liveHeap > 0 ? static_cast<double>(liveObjects) / static_cast<double>(liveHeap) : 0;
}

// markroot (mgcmark.go): one root job; returns its scan work.
int64_t Runtime::markroot(gcWork* gcw, uint32_t i, bool flushBgCredit) {
  (void)gcw;
  int64_t workDone = 0;
  Atomic<int64_t>* workCounter = nullptr;
  if (work.baseData <= i && i < work.baseBSS) {
    workCounter = &gcController.globalsScanWork;
    workDone = static_cast<int64_t>(work.globalsBytes);
    markCompute(gcCostScanNs(workDone));
  } else if (i < fixedRootCount) {
    // The finalizer, free-stack and cleanup roots: nothing queued here.
  } else if (work.baseStacks <= i && i < work.baseEnd) {
    workCounter = &gcController.stackScanWork;
    workDone = work.stackRootBytes[i - work.baseStacks];
    markCompute(gcCostStackScanNs(workDone));
  } else {
    plat::throw_("markroot: bad index");
  }
  if (workCounter != nullptr && workDone != 0) {
    workCounter->Add(workDone);
    if (flushBgCredit) gcFlushBgCredit(workDone);
  }
  return workDone;
}

// gcNextMarkRoot (mgcmark.go), without goroutine-leak detection.
std::pair<uint32_t, bool> Runtime::gcNextMarkRoot() {
  const uint32_t job = work.markrootNext.Add(1) - 1;
  return {job, job < work.markrootJobs.Load()};
}

// The model's tryGetObj + scanobject: takes up to one unit of heap scan work from the global
// queue and scans it. Returns the scan work done, 0 if there was none.
int64_t Runtime::scanHeapUnit(gcWork* gcw) {
  const int64_t unit = std::max<int64_t>(gcCostMarkUnitBytes(), 1);
  int64_t take = 0;
  for (;;) {
    const int64_t left = work.full.Load();
    if (left <= 0) return 0;
    take = std::min(unit, left);
    if (work.full.CompareAndSwap(left, left - take)) break;
  }
  gcw->held = take;
  markCompute(gcCostHeapScanNs(take));
  gcw->held = 0;
  gcw->heapScanWork += take;
  work.bytesMarked.Add(static_cast<uint64_t>(take));
  return take;
}

// gcDrainMarkWorkerIdle (mgcmark.go)
void Runtime::gcDrainMarkWorkerIdle(gcWork* gcw) { gcDrain(gcw, gcDrainIdle | gcDrainUntilPreempt | gcDrainFlushBgCredit); }

// gcDrainMarkWorkerDedicated (mgcmark.go)
void Runtime::gcDrainMarkWorkerDedicated(gcWork* gcw, bool untilPreempt) {
  uint32_t flags = gcDrainFlushBgCredit;
  if (untilPreempt) flags |= gcDrainUntilPreempt;
  gcDrain(gcw, flags);
}

// gcDrainMarkWorkerFractional (mgcmark.go)
void Runtime::gcDrainMarkWorkerFractional(gcWork* gcw) {
  gcDrain(gcw, gcDrainFractional | gcDrainUntilPreempt | gcDrainFlushBgCredit);
}

// gcDrain (mgcmark.go): root jobs first, then heap work, until none is left or the worker is told
// to stop: preempted (when preemptible, or a stop-the-world or safe-point function waits), or the
// idle/fractional exit test says so every drainCheckThreshold of work.
void Runtime::gcDrain(gcWork* gcw, uint32_t flags) {
  if (!writeBarrierEnabled) plat::throw_("gcDrain phase incorrect");
  g* gp = plat::getg()->m->curg.get();
  p* pp = gp->m->p;
  const bool preemptible = (flags & gcDrainUntilPreempt) != 0;
  const bool flushBgCredit = (flags & gcDrainFlushBgCredit) != 0;
  const bool idle = (flags & gcDrainIdle) != 0;

  int64_t initScanWork = gcw->heapScanWork;
  int64_t checkWork = INT64_MAX;
  bool (Runtime::*check)() = nullptr;
  if ((flags & (gcDrainIdle | gcDrainFractional)) != 0) {
    checkWork = initScanWork + drainCheckThreshold;
    check = idle ? &Runtime::pollWork : &Runtime::pollFractionalWorkerExit;
  }
  auto stop = [&] {
    return gp->preempt() && (preemptible || sched.gcwaiting.Load() != 0 || pp->runSafePointFn.get() != 0);
  };

  if (work.markrootNext.Load() < work.markrootJobs.Load()) {
    while (!stop()) {
      auto [job, ok] = gcNextMarkRoot();
      if (!ok) break;
      markroot(gcw, job, flushBgCredit);
      if (check != nullptr && (this->*check)()) goto done;
    }
  }

  while (!stop()) {
    if (scanHeapUnit(gcw) == 0) break;
    if (gcw->heapScanWork >= gcCreditSlack) {
      gcController.heapScanWork.Add(gcw->heapScanWork);
      if (flushBgCredit) {
        gcFlushBgCredit(gcw->heapScanWork - initScanWork);
        initScanWork = 0;
      }
      checkWork -= gcw->heapScanWork;
      gcw->heapScanWork = 0;
      if (checkWork <= 0) {
        checkWork += drainCheckThreshold;
        if (check != nullptr && (this->*check)()) break;
      }
    }
  }

done:
  if (gcw->heapScanWork > 0) {
    gcController.heapScanWork.Add(gcw->heapScanWork);
    if (flushBgCredit) gcFlushBgCredit(gcw->heapScanWork - initScanWork);
    gcw->heapScanWork = 0;
  }
}

// gcDrainN (mgcmark.go): an assist's drain: at least scanWork of work unless it runs out, is
// preempted, or the CPU limiter turns assists off. Returns the work done.
int64_t Runtime::gcDrainN(gcWork* gcw, int64_t scanWork) {
  if (!writeBarrierEnabled) plat::throw_("gcDrainN phase incorrect");
  int64_t workFlushed = -gcw->heapScanWork;
  g* gp = plat::getg()->m->curg.get();
  while (!gp->preempt() && !gcCPULimiter.limiting() && workFlushed + gcw->heapScanWork < scanWork) {
    if (scanHeapUnit(gcw) == 0) {
      // No heap work: take a root job instead, as Go's drain does when its buffers are empty.
      if (work.markrootNext.Load() < work.markrootJobs.Load()) {
        auto [job, ok] = gcNextMarkRoot();
        if (ok) {
          workFlushed += markroot(gcw, job, false);
          continue;
        }
      }
      break;
    }
    if (gcw->heapScanWork >= gcCreditSlack) {
      gcController.heapScanWork.Add(gcw->heapScanWork);
      workFlushed += gcw->heapScanWork;
      gcw->heapScanWork = 0;
    }
  }
  return workFlushed + gcw->heapScanWork;
}

// gcAssistAlloc (mgcmark.go): a goroutine in allocation debt pays it: from the background
// workers' credit if there is some, otherwise with mark work of its own; if it is still in debt
// it parks on the assist queue until the workers' credit covers it.
void Runtime::gcAssistAlloc(g* gp) {
  // Mutant assist-holding-locks: without these two returns (4f188c2d1c), allocm's allocation on
  // a borrowed P assists too.
  if (!mutant(Mutant::AssistHoldingLocks)) {
    if (plat::getg() == gp->m->g0) return;
    if (m* mp = plat::getg()->m; mp->locks > 0) return;
  }

  bool enteredMarkAssistForTracing = false;
  const int64_t assistStart = plat::nanotime();
  auto leave = [&] {
    if (enteredMarkAssistForTracing) {
      ev(Ev::GCMarkAssistDone, gp, gp->m->p, 0);
      gp->inMarkAssist = false;
      gcstats.assistTime += plat::nanotime() - assistStart;
    }
  };
retry:
  if (gcCPULimiter.limiting()) {
    leave();
    return;
  }
  {
    const double assistWorkPerByte = gcController.assistWorkPerByte.Load();
    const double assistBytesPerWork = gcController.assistBytesPerWork.Load();
    int64_t debtBytes = -gp->gcAssistBytes;
    int64_t scanWork = static_cast<int64_t>(assistWorkPerByte * static_cast<double>(debtBytes));
    if (scanWork < gcOverAssistWork) {
      scanWork = gcOverAssistWork;
      debtBytes = static_cast<int64_t>(assistBytesPerWork * static_cast<double>(scanWork));
    }

    const int64_t bgScanCredit = gcController.bgScanCredit.Load();
    int64_t stolen = 0;
    if (bgScanCredit > 0) {
      if (bgScanCredit < scanWork) {
        stolen = bgScanCredit;
        gp->gcAssistBytes += 1 + static_cast<int64_t>(assistBytesPerWork * static_cast<double>(stolen));
      } else {
        stolen = scanWork;
        gp->gcAssistBytes += debtBytes;
      }
      gcController.bgScanCredit.Add(-stolen);
      scanWork -= stolen;
      if (scanWork == 0) {
        leave();
        return;
      }
    }
    if (!enteredMarkAssistForTracing) {
      ev(Ev::GCMarkAssistStart, gp, gp->m->p, 0);
      gp->inMarkAssist = true;
      enteredMarkAssistForTracing = true;
    }

    gcAssistAlloc1(gp, scanWork);  // on the system stack in Go

    const bool completed = gp->param != nullptr;
    gp->param = nullptr;
    if (completed) gcMarkDone();

    if (gp->gcAssistBytes < 0) {
      // Still in debt: yield if asked to, else wait for the workers' credit.
      if (gp->preempt()) {
        Gosched();
        goto retry;
      }
      if (!gcParkAssist()) goto retry;
    }
  }
  leave();
}

// gcAssistAlloc1 (mgcmark.go): the assist's mark work, with the goroutine waiting meanwhile; sets
// gp->param when it ended the mark work (the caller then runs gcMarkDone).
void Runtime::gcAssistAlloc1(g* gp, int64_t scanWork) {
  gp->param = nullptr;
  if (gcBlackenEnabled.Load() == 0) {
    // The cycle ended while this goroutine was getting here: the debt is forgiven.
    gp->gcAssistBytes = 0;
    return;
  }
  const int64_t startTime = plat::nanotime();
  const bool trackLimiterEvent = gp->m->p->limiterEvent_.start(limiterEventType::limiterEventMarkAssist, startTime);

  gcBeginWork();
  gp->waitreason = waitReason::waitReasonGCAssistMarking;
  casgstatus(gp, _Grunning, _Gwaiting);  // casGToWaitingForSuspendG
  gcWork* gcw = &plat::getg()->m->p->gcw;
  const int64_t workDone = gcDrainN(gcw, scanWork);
  casgstatus(gp, _Gwaiting, _Grunning);

  const double assistBytesPerWork = gcController.assistBytesPerWork.Load();
  gp->gcAssistBytes += 1 + static_cast<int64_t>(assistBytesPerWork * static_cast<double>(workDone));

  if (gcEndWork()) gp->param = gp;  // any non-nil value

  const int64_t now = plat::nanotime();
  const int64_t duration = now - startTime;
  p* pp = gp->m->p;
  pp->gcAssistTime += duration;
  if (trackLimiterEvent) pp->limiterEvent_.stop(*this, limiterEventType::limiterEventMarkAssist, now);
  if (pp->gcAssistTime > gcAssistTimeSlack) {
    gcController.assistTime.Add(pp->gcAssistTime);
    gcCPULimiter.update(now);
    pp->gcAssistTime = 0;
  }
}

// gcWakeAllAssists (mgcmark.go): at the end of marking, every parked assist runs again.
void Runtime::gcWakeAllAssists() {
  lock(&work.assistQueue.lock);
  gList list = work.assistQueue.q.popList();
  injectglist(&list);
  unlock(&work.assistQueue.lock);
}

// gcParkAssist (mgcmark.go): queues the goroutine for credit and parks; false if credit appeared
// meanwhile (the caller tries again), true once woken or if marking has ended.
bool Runtime::gcParkAssist() {
  lock(&work.assistQueue.lock);
  if (gcBlackenEnabled.Load() == 0) {
    unlock(&work.assistQueue.lock);
    return true;
  }
  g* gp = plat::getg();
  const gQueue oldList(work.assistQueue.q.head(), work.assistQueue.q.tail, work.assistQueue.q.size);
  work.assistQueue.q.pushBack(gp);
  // Credit may have been flushed between the caller's look and the queueing: check again.
  if (gcController.bgScanCredit.Load() > 0) {
    work.assistQueue.q.set_head(oldList.head());
    work.assistQueue.q.tail = oldList.tail;
    work.assistQueue.q.size = oldList.size;
    if (oldList.tail != nullptr) oldList.tail->schedlink = nullptr;
    unlock(&work.assistQueue.lock);
    return false;
  }
  goparkunlock(&work.assistQueue.lock, waitReason::waitReasonGCAssistWait, 2);
  return true;
}

// gcFlushBgCredit (mgcmark.go): background scan work pays the debts of parked assists first, in
// queue order; what is left becomes credit for later assists.
void Runtime::gcFlushBgCredit(int64_t scanWork) {
  if (work.assistQueue.q.emptyRacy()) {
    // Racy, as in Go: an assist queued just now finds the credit in gcParkAssist's re-check.
    gcController.bgScanCredit.Add(scanWork);
    return;
  }
  const double assistBytesPerWork = gcController.assistBytesPerWork.Load();
  int64_t scanBytes = static_cast<int64_t>(static_cast<double>(scanWork) * assistBytesPerWork);

  lock(&work.assistQueue.lock);
  while (!work.assistQueue.q.empty() && scanBytes > 0) {
    g* gp = work.assistQueue.q.pop();
    if (scanBytes + gp->gcAssistBytes >= 0) {
      scanBytes += gp->gcAssistBytes;
      gp->gcAssistBytes = 0;
      ready(gp, 0, false);
    } else {
      // Partly paid: it goes to the back of the queue with what is left of its debt.
      gp->gcAssistBytes += scanBytes;
      scanBytes = 0;
      work.assistQueue.q.pushBack(gp);
      break;
    }
  }
  if (scanBytes > 0) {
    const double assistWorkPerByte = gcController.assistWorkPerByte.Load();
    scanWork = static_cast<int64_t>(static_cast<double>(scanBytes) * assistWorkPerByte);
    gcController.bgScanCredit.Add(scanWork);
  }
  unlock(&work.assistQueue.lock);
}

}  // namespace gmp::rt
