// The collector's cycle state (mgc.go's `work`, gcphase, the mark worker pool) and the model of
// its mark work (mgcmark.go).
//
// No object graph exists here, so the grey-object queues (work.full, the gcWork buffers) are
// replaced by a count: work.full holds the bytes of heap scan work left in this cycle, taken in
// units of the profile's mark_unit_bytes. Root jobs keep Go's shape (markrootNext / markrootJobs):
// one job for the globals (the data and BSS roots folded into one) and one per goroutine stack
// in the allgs snapshot taken at mark start.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/platform/atomic.h"
#include "sim/platform/platform.h"
#include "sim/runtime/gqueue.h"
#include "sim/runtime/mgcpacer.h"
#include "sim/runtime/runtime2.h"
#include "sim/runtime/sema.h"

namespace gmp::rt {

// gcDrainFlags (mgcmark.go).
enum gcDrainFlags : uint32_t {
  gcDrainUntilPreempt = 1 << 0,
  gcDrainFlushBgCredit = 1 << 1,
  gcDrainIdle = 1 << 2,
  gcDrainFractional = 1 << 3,
};

// Go constants of the mark phase (mgcmark.go); the pacer's are in mgcpacer.h.
inline constexpr int64_t drainCheckThreshold = 100000;  // scan work between idle/fractional polls
inline constexpr uint32_t fixedRootCount = 3;           // finalizers, free g stacks, cleanups

// workType (mgc.go), with the fields the scheduling uses.
struct workType {
  // The bytes of heap scan work left in this cycle: stands for Go's list of full work buffers.
  Atomic<int64_t> full;
  Atomic<uint64_t> bytesMarked;

  Atomic<uint32_t> markrootNext;  // next root job
  Atomic<uint32_t> markrootJobs;  // number of root jobs

  Atomic<uint32_t> nproc;
  int64_t tstart = 0;
  Atomic<uint32_t> nwait;

  int nDataRoots = 0, nBSSRoots = 0, nSpanRoots = 0, nStackRoots = 0;
  uint32_t baseData = 0, baseBSS = 0, baseSpans = 0, baseStacks = 0, baseEnd = 0;
  std::vector<g*> stackRoots;  // allgs at mark start

  // Transition locks: startSema for off -> mark, markDoneSema for mark -> mark termination.
  // Their ids sit at the top of the id space, so the ids the program's objects get are unchanged.
  Sema startSema{~uint64_t{0} - 1, 1};
  Sema markDoneSema{~uint64_t{0} - 2, 1};

  bool userForced = false;
  uint64_t initialHeapLive = 0;

  // Assists parked for lack of credit (gcParkAssist), woken by gcFlushBgCredit.
  struct {
    plat::Mutex lock;
    gQueue q;
  } assistQueue;

  // Goroutines waiting for a mark phase to end (gcWaitOnMark).
  struct {
    plat::Mutex lock;
    gList list;
  } sweepWaiters;

  Atomic<uint32_t> cycles;  // mark phases started

  int32_t stwprocs = 0, maxprocs = 0;
  int64_t tSweepTerm = 0, tMark = 0, tMarkTerm = 0, tEnd = 0;  // nanotime at each phase start
  int64_t pauseNS = 0;                                         // total STW time this cycle
  uint64_t heap0 = 0, heap1 = 0, heap2 = 0;                    // heapLive at start, mark end; marked

  // Not in Go: scan bytes of the globals and each stack root, fixed at mark start, for gctrace
  // and markroot's cost.
  uint64_t globalsBytes = 0;
  // Not in Go: the reachable heap's objects per byte at mark start (liveObjects / liveHeap), which
  // turns the profile's mark_ns_per_object into a cost per byte of heap scan work.
  double heapObjectsPerByte = 0;
  std::vector<int64_t> stackRootBytes;
};

}  // namespace gmp::rt
