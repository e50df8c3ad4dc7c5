// Sweeping (mgcsweep.go) over a heap of pages without spans: the heap in use is
// mheap_.pagesInUse pages of 8 KiB; a cycle's sweep has mheap_.pagesToSweep of them to visit, one
// page per sweepone (a one-page span), each costing the profile's sweep_ns_per_page. The pages
// that held only garbage are freed in proportion as the sweep advances. The sweep generation, the
// activeSweep counter, the proportional-sweep line and bgsweep's loop are Go's.
#include <algorithm>

#include "sim/platform/platform.h"
#include "sim/runtime/chan.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

// activeSweep.begin (mgcsweep.go): joins the sweepers unless the sweep has drained.
activeSweep::sweepLocker activeSweep::begin(Runtime& rt) {
  for (;;) {
    const uint32_t s = state.Load();
    if ((s & sweepDrainedMask) != 0) return {rt.mheap_.sweepgen.Load(), false};
    if (state.CompareAndSwap(s, s + 1)) return {rt.mheap_.sweepgen.Load(), true};
  }
}

// activeSweep.end (mgcsweep.go): leaves the sweepers.
void activeSweep::end(Runtime& rt, sweepLocker sl) {
  if (sl.sweepGen != rt.mheap_.sweepgen.Load()) plat::throw_("sweeper left outstanding across sweep generations");
  for (;;) {
    const uint32_t s = state.Load();
    if ((s & ~sweepDrainedMask) - 1 >= sweepDrainedMask) plat::throw_("mismatched begin/end of activeSweep");
    if (state.CompareAndSwap(s, s - 1)) return;  // the last one out finds nothing more to do here
  }
}

// activeSweep.markDrained (mgcsweep.go): true for the one caller that sets the drained bit.
bool activeSweep::markDrained() {
  for (;;) {
    const uint32_t s = state.Load();
    if ((s & sweepDrainedMask) != 0) return false;
    if (state.CompareAndSwap(s, s | sweepDrainedMask)) return true;
  }
}

// activeSweep.sweepers (mgcsweep.go)
uint32_t activeSweep::sweepers() { return state.Load() & ~sweepDrainedMask; }

// activeSweep.isDone (mgcsweep.go): drained and nobody sweeping.
bool activeSweep::isDone() { return state.Load() == sweepDrainedMask; }

// activeSweep.reset (mgcsweep.go); the world is stopped.
void activeSweep::reset() { state.Store(0); }

// goschedIfBusy (proc.go): yields only if this goroutine was asked to, or no P is idle.
void Runtime::goschedIfBusy() {
  g* gp = plat::getg();
  if (!gp->preempt() && sched.npidle.Load() > 0) return;
  mcall(&Runtime::gosched_m);
}

// The sweep part of gcSweep (mgc.go), for the concurrent mode: a new sweep generation, the pages in
// use to sweep, and the background sweeper woken. Not in Go as one function: gcSweep calls it in
// place of its mheap_ bookkeeping, which here is page counts rather than span lists.
void Runtime::sweepStartCycle() {
  mheap_.sweepgen.Store(mheap_.sweepgen.Load() + 2);
  sweep.active.reset();
  mheap_.pagesSwept.Store(0);
  mheap_.pagesToSweep.Store(mheap_.pagesInUse.Load());
  // Pages holding only garbage: what the heap in use needs beyond the marked heap's pages.
  const uint64_t livePages = (gcController.heapMarked + pageSize - 1) / pageSize;
  const uint64_t inUse = mheap_.pagesInUse.Load();
  sweepFreeablePages_ = inUse > livePages ? inUse - livePages : 0;
  sweepFreedPages_ = 0;
  mheap_.reclaimCredit.Store(0);
  lock(&sweep.lock);
  if (sweep.parked) {
    sweep.parked = false;
    ready(sweep.gp, 0, true);
  }
  unlock(&sweep.lock);
}

// sweepone (mgcsweep.go): sweeps one page (a one-page span); the pages swept, or ~0 when nothing
// is left, the caller that finds the sweep empty marking it drained.
uintptr_t Runtime::sweepone() {
  g* gp = plat::getg();
  if (gp != nullptr && gp->m != nullptr) gp->m->locks++;
  const activeSweep::sweepLocker sl = sweep.active.begin(*this);
  if (!sl.valid) {
    if (gp != nullptr && gp->m != nullptr) gp->m->locks--;
    return ~uintptr_t{0};
  }
  uintptr_t npages = ~uintptr_t{0};
  // mheap_.nextSpanForSweep and sweepLocker.tryAcquire: take a page off the unswept count.
  for (;;) {
    const uint64_t left = mheap_.pagesToSweep.Load();
    if (left == 0) {
      sweep.active.markDrained();
      break;
    }
    if (mheap_.pagesToSweep.CompareAndSwap(left, left - 1)) {
      npages = 1;
      break;
    }
  }
  if (npages != ~uintptr_t{0}) {
    // mspan.sweep: the page's cost, then its share of the garbage pages goes back to the heap.
    if (gccost.sweepNsPerPage > 0) {
      int64_t work = static_cast<int64_t>(gccost.sweepNsPerPage);
      gcstats.sweepCpu += work;
      while (work > 0) work = plat::compute(work);
    }
    const uint64_t swept = mheap_.pagesSwept.Add(npages);
    const uint64_t total = swept + mheap_.pagesToSweep.Load();
    const uint64_t due = total == 0 ? sweepFreeablePages_ : sweepFreeablePages_ * swept / total;
    if (due > sweepFreedPages_) {
      const uint64_t freed = due - sweepFreedPages_;
      sweepFreedPages_ = due;
      mheap_.pagesInUse.Add(~(freed) + 1);
      gcController.totalFree.Add(freed * pageSize);
      gcController.mappedReady.Add(~(freed * pageSize) + 1);
      mheap_.reclaimCredit.Add(freed);
    }
  }
  sweep.active.end(*this, sl);
  if (gp != nullptr && gp->m != nullptr) gp->m->locks--;
  return npages;
}

// isSweepDone (mgcsweep.go)
bool Runtime::isSweepDone() { return sweep.active.isDone(); }

// finishsweep_m (mgcsweep.go): sweep termination sweeps what is left; the world is stopped.
void Runtime::finishsweep_m() {
  while (sweepone() != ~uintptr_t{0}) {
  }
  if (sweep.active.sweepers() != 0) plat::throw_("active sweepers found at start of mark phase");
  // The unswept span lists' reset and the scavenger's wake-up have nothing to act on here.
}

// gcPaceSweeper (mgcsweep.go): the proportional-sweep line, so that the sweep finishes before the
// heap reaches the next trigger (less 1 MiB of slack).
void Runtime::gcPaceSweeper(uint64_t trigger) {
  if (isSweepDone()) {
    mheap_.sweepPagesPerByte = 0;
    return;
  }
  const uint64_t heapLiveBasis = gcController.heapLive.Load();
  int64_t heapDistance = static_cast<int64_t>(trigger) - static_cast<int64_t>(heapLiveBasis);
  heapDistance -= 1024 * 1024;
  if (heapDistance < static_cast<int64_t>(pageSize)) heapDistance = static_cast<int64_t>(pageSize);
  const uint64_t swept = mheap_.pagesSwept.Load();
  const uint64_t inUse = mheap_.pagesInUse.Load();
  const int64_t sweepDistancePages = static_cast<int64_t>(inUse) - static_cast<int64_t>(swept);
  if (sweepDistancePages <= 0) {
    mheap_.sweepPagesPerByte = 0;
  } else {
    mheap_.sweepPagesPerByte = static_cast<double>(sweepDistancePages) / static_cast<double>(heapDistance);
    mheap_.sweepHeapLiveBasis = heapLiveBasis;
    mheap_.pagesSweptBasis.Store(swept);
  }
}

// deductSweepCredit (mgcsweep.go): before a span of spanBytes is allocated, sweep enough pages to
// stay on the proportional line.
void Runtime::deductSweepCredit(uintptr_t spanBytes, uintptr_t callerSweepPages) {
  if (mheap_.sweepPagesPerByte == 0) return;
  uint64_t sweptHere = 0;
  bool sweeping = false;  // the GCSweepStart event is out
retry:
  const uint64_t sweptBasis = mheap_.pagesSweptBasis.Load();
  const uint64_t live = gcController.heapLive.Load();
  const uint64_t liveBasis = mheap_.sweepHeapLiveBasis;
  uint64_t newHeapLive = spanBytes;
  if (liveBasis < live) newHeapLive += live - liveBasis;
  const int64_t pagesTarget = static_cast<int64_t>(mheap_.sweepPagesPerByte * static_cast<double>(newHeapLive)) -
                              static_cast<int64_t>(callerSweepPages);
  while (pagesTarget > static_cast<int64_t>(mheap_.pagesSwept.Load() - sweptBasis)) {
    if (!sweeping) {
      ev(Ev::GCSweepStart, plat::getg(), nullptr, 0);
      sweeping = true;
    }
    const uintptr_t n = sweepone();
    if (n == ~uintptr_t{0}) {
      mheap_.sweepPagesPerByte = 0;
      break;
    }
    sweptHere += n;
    if (mheap_.pagesSweptBasis.Load() != sweptBasis) goto retry;
  }
  if (sweeping) ev(Ev::GCSweepDone, plat::getg(), nullptr, static_cast<int64_t>(sweptHere * pageSize));
}

// bgsweep (mgcsweep.go): parks until a cycle's sweep begins, sweeps in batches with a yield
// between them while others want the CPU, then parks again once the sweep is done.
void Runtime::bgsweep(hchan* c) {
  sweep.gp = plat::getg();
  lock(&sweep.lock);
  sweep.parked = true;
  chansend1(c, nullptr);
  goparkunlock(&sweep.lock, waitReason::waitReasonGCSweepWait, 1);
  for (;;) {
    constexpr int sweepBatchSize = 10;
    int nSwept = 0;
    while (sweepone() != ~uintptr_t{0}) {
      nSwept++;
      if (nSwept % sweepBatchSize == 0) goschedIfBusy();
    }
    // freeSomeWbufs and freeDeadSpanSPMCs: no work buffers or span queues exist here.
    lock(&sweep.lock);
    if (!isSweepDone()) {
      unlock(&sweep.lock);
      goschedIfBusy();
      continue;
    }
    sweep.parked = true;
    goparkunlock(&sweep.lock, waitReason::waitReasonGCSweepWait, 1);
  }
}

}  // namespace gmp::rt
