// mallocgc's part that the garbage collector sees (malloc.go, mcache.go, mcentral.go), for a batch
// of count objects of size bytes without objects: assist credit (deductAssistCredit), the
// mcache's refills that grow heapLive a span at a time (mcache.refill, mcache.allocLarge), the
// proportional sweep charged at each refill (deductSweepCredit), the allocation's own cost from
// the profile, and the heap trigger test at the end of every call that refilled. A batch visits
// only the points where something happens (an assist, a trigger), so it behaves like count calls
// in heapLive, sweep credit, assists and triggers (tests/runtime/gc_pacer_test.cpp checks it).
//
// Spans: a small object's span is one 8 KiB page holding pageSize/size objects (no size classes;
// one over a page has a span of the pages it needs);
// a large object (over 32 KiB) has a span of its own of whole pages (docs/fidelity.md).
#include <algorithm>
#include <cstdio>
#include <string>

#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

namespace {
uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
}  // namespace

// The heap grows by a span: out of memory if the machine has no room (mheap.grow's sysAlloc).
void Runtime::heapGrow(uint64_t spanBytes) {
  const uint64_t inUse = mheap_.pagesInUse.Load() * pageSize;
  if (gccost.memoryBytes != 0 && inUse + spanBytes > gccost.memoryBytes) {
    std::fprintf(stderr, "runtime: out of memory: cannot allocate %llu-byte block (%llu in use)\n",
                 static_cast<unsigned long long>(spanBytes), static_cast<unsigned long long>(inUse));
    plat::fatal("out of memory");
  }
  mheap_.pagesInUse.Add(spanBytes / pageSize);
  gcController.totalAlloc.Add(spanBytes);
  gcController.mappedReady.Add(spanBytes);
  gcController.heapInUse.Add(spanBytes);
  if (const uint64_t h = mheap_.pagesInUse.Load() * pageSize; h > gcstats.peakHeap) gcstats.peakHeap = h;
}

// deductAssistCredit (malloc.go) for n objects of size bytes: the assisting goroutine pays for the
// bytes up front; each time its credit goes negative it assists, as the object that crossed would.
void Runtime::deductAssistCreditBatch(uint64_t size, uint64_t n) {
  if (gcBlackenEnabled.Load() == 0) return;
  g* assistG = plat::getg();
  if (assistG->m != nullptr && assistG->m->curg.Load() != nullptr) assistG = assistG->m->curg.Load();
  while (n > 0) {
    // Objects this credit covers, plus the one that takes it below zero.
    const uint64_t covered = assistG->gcAssistBytes < 0 ? 0 : static_cast<uint64_t>(assistG->gcAssistBytes) / size;
    if (covered >= n) {
      assistG->gcAssistBytes -= static_cast<int64_t>(n * size);
      return;
    }
    assistG->gcAssistBytes -= static_cast<int64_t>((covered + 1) * size);
    n -= covered + 1;
    gcAssistAlloc(assistG);
    if (gcBlackenEnabled.Load() == 0) return;  // the cycle ended during the assist
  }
}

// mallocgc (malloc.go) for count objects of size bytes each; retained bytes stay reachable.
void Runtime::mallocgc(uint64_t size, uint64_t count, bool retained) {
  if (count == 0) return;
  if (size == 0) {
    // zerobase: no memory, no GC work.
    gcstats.allocObjects += count;
    return;
  }
  gcstats.allocBytes += size * count;
  gcstats.allocObjects += count;
  if (retained) {
    liveHeap += size * count;
    liveObjects += count;
  }
  // gcmarknewobject: while marking, new objects are allocated black and count as marked.
  if (gcphase.Load() != _GCoff) work.bytesMarked.Add(size * count);
  const bool large = size > maxSmallSize;
  // A small object over a page (8 KiB to 32 KiB) gets a span of the pages it needs, as Go's size
  // classes of those sizes have multi-page spans.
  const uint64_t spanBytes = ceilDiv(size, pageSize) * pageSize;
  const uint64_t perSpan = large ? 1 : spanBytes / size;
  // Assists come first, as deductAssistCredit comes before the allocation in Go: they may park
  // the goroutine (it may come back on another P, and its M's schedule may have flushed the P's
  // cache in between), so the P and its cache are read afresh after each. What follows them up to
  // the end of a pass (refill, sweep credit, the allocation's time) does not give up the P.
  uint64_t left = count;
  uint64_t paid = 0;  // objects whose assist credit is already deducted
  while (left > 0) {
    // Objects served from the cached span: no refill, no trigger test.
    if (const uint64_t cached = large ? 0 : plat::getg()->m->p->mcache_.nfree[size]; cached > 0) {
      const uint64_t n = std::min(cached, left);
      if (n > paid) deductAssistCreditBatch(size, n - paid);
      paid = std::max(paid, n);
      mcache& c = plat::getg()->m->p->mcache_;
      const uint64_t take = std::min(c.nfree[size], n);  // less if a flush came during the assist
      allocCost(size, take);
      c.scanAlloc += take * size;
      c.nfree[size] -= take;
      left -= take;
      paid -= take;
      continue;
    }
    // A refill on the next object, then more refills: as many whole spans as take heapLive to the
    // trigger (the first call that reaches it tests and starts a cycle), at most what is left.
    uint64_t refills = 1;
    if (gcphase.Load() == _GCoff && memstats.enablegc) {
      const uint64_t trig = gcController.trigger().first;
      const uint64_t live = gcController.heapLive.Load();
      const uint64_t toTrigger = trig > live ? ceilDiv(trig - live, spanBytes) : 1;
      refills = std::max<uint64_t>(1, std::min(toTrigger, ceilDiv(left, perSpan)));
    }
    const uint64_t served = std::min(left, refills * perSpan);
    if (served > paid) deductAssistCreditBatch(size, served - paid);
    paid = 0;
    mcache& c = plat::getg()->m->p->mcache_;
    // mcentral.cacheSpan's deductSweepCredit for the refills taken together: the line is the same
    // at the last one as after each in turn.
    deductSweepCredit(static_cast<uintptr_t>(spanBytes * refills), large ? static_cast<uintptr_t>(spanBytes / pageSize) : 0);
    for (uint64_t i = 0; i < refills; i++) heapGrow(spanBytes);  // cheap: counters only
    gcController.update(static_cast<int64_t>(spanBytes * refills), static_cast<int64_t>(c.scanAlloc));
    c.scanAlloc = 0;
    allocCost(size, served);
    c.scanAlloc += served * size;
    left -= served;
    if (!large) c.nfree[size] += refills * perSpan - served;
    // shouldhelpgc: the heap trigger test at the end of the call that refilled.
    if (const gcTrigger t{gcTriggerKind::gcTriggerHeap, 0, 0}; t.test(*this)) gcStart(t);
  }
}

// mcache.releaseAll (mcache.go): the P's cached spans go back.
// After mark termination every cached span was cached before this cycle's sweep began: Go leaves
// heapLive alone for such stale spans, since resetLive recomputed it from the marked heap since
// (the unused slots are not in it). A destroyed P's (fresh) were cached since that flush, and
// their refills counted the whole span in heapLive: the unused slots come off again.
void mcache::releaseAll(Runtime& rt, bool fresh) {
  int64_t dHeapLive = 0;
  if (fresh) {
    for (const auto& [size, n] : nfree) dHeapLive -= static_cast<int64_t>(n * size);
  }
  nfree.clear();
  // What was allocated since mark termination cleared it goes to heapScan, as any refill's does.
  const auto scan = static_cast<int64_t>(scanAlloc);
  scanAlloc = 0;
  if (scan != 0 || dHeapLive != 0) rt.gcController.update(dHeapLive, scan);
}

// The allocation's own time: per object and per byte (zeroing), from the profile.
void Runtime::allocCost(uint64_t size, uint64_t n) {
  const double ns = static_cast<double>(n) * (gccost.allocNsPerObject + static_cast<double>(size) * gccost.allocNsPerByte);
  auto work = static_cast<int64_t>(ns);
  while (work > 0) work = plat::compute(work);
}

// Not in Go: bytes of retained allocations become unreachable (capped at what is retained).
// The objects go in proportion to the bytes (the release names bytes only).
void Runtime::releaseHeap(uint64_t bytes) {
  const uint64_t b = std::min(bytes, liveHeap);
  if (b == liveHeap) {
    liveObjects = 0;
  } else if (b > 0) {
    liveObjects -= static_cast<uint64_t>(static_cast<long double>(liveObjects) * b / liveHeap);
  }
  liveHeap -= b;
}

}  // namespace gmp::rt
