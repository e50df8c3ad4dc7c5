// The per-P local run queue (proc.go): a 256-slot ring written only by its owner P and consumed
// by the owner and by stealing Ps, plus the runnext slot.
//
// Protocol. runqtail is written only by the owner, with store-release after the slot is filled,
// so a consumer that load-acquires runqtail sees the slots below it. runqhead is advanced by any
// consumer with CAS-release after it has copied the slots it takes, so a slot is reused by the
// owner only after every consumer that read it has either committed (the CAS succeeded) or will
// fail its CAS and retry. A consumer may read head and tail at different moments and see more
// than half a queue's worth (a stale head with a fresh tail): runqgrab and runqdrain detect this
// as an inconsistent read and retry. runnext is a single slot that the owner sets with CAS and
// that any consumer may clear with CAS; only the owner ever makes it non-nil.
#include <array>

#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/runtime/mutants.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

namespace {
constexpr uint32_t kQ = kRunqSize;
}

// runqempty (proc.go): true only if pp's local queue, ring and runnext, holds no goroutine; it
// never reports empty spuriously.
// Reading head, tail and runnext in sequence is not enough (a runqput can move runnext into the
// ring while a runqget empties runnext), so the read is retried until tail is unchanged.
bool Runtime::runqempty(p* pp) {
  if (mutant(Mutant::RunqemptySpurious)) {
    // Mutant runqempty-spurious, as before fcd7c02c70: one read of each, which can see an empty
    // ring and then an empty runnext though the queue was never empty (a runqput kicked runnext
    // into the ring in between and a runqget took the new runnext).
    const uint32_t head = pp->runqhead.Load();
    const uint32_t tail = pp->runqtail.Load();
    return head == tail && pp->runnext.Load() == nullptr;
  }
  for (;;) {
    const uint32_t head = pp->runqhead.Load();
    const uint32_t tail = pp->runqtail.Load();
    g* runnext = pp->runnext.Load();
    if (tail == pp->runqtail.Load()) return head == tail && runnext == nullptr;
  }
}

// runqput (proc.go): puts gp on pp's local queue; in runnext if next, kicking the old runnext to
// the tail; on the global queue (with half the local queue) if the ring is full. Owner only.
void Runtime::runqput(p* pp, g* gp, bool next) {
  if (!haveSysmon && next) next = false;
  if (randomizeScheduler && next && cheaprandn(2) == 0) next = false;

  bool kicked = false;
  if (next) {
    for (;;) {  // retryNext
      g* oldnext = pp->runnext.get();
      if (!pp->runnext.CompareAndSwap(oldnext, gp)) continue;
      ev(Ev::PutRunnext, gp, pp, 0);
      if (oldnext == nullptr) return;
      gp = oldnext;  // the previous runnext goes to the ring's tail instead
      kicked = true;
      break;
    }
  }

  for (;;) {  // retry
    const uint32_t h = pp->runqhead.LoadAcquire();  // synchronize with consumers
    const uint32_t t = pp->runqtail.get();
    if (t - h < kQ) {
      pp->runq[t % kQ].set(gp);
      pp->runqtail.StoreRelease(t + 1);  // makes the item available for consumption
      ev(Ev::PutLocal, gp, pp, kicked ? 1 : 0);
      return;
    }
    if (runqputslow(pp, gp, h, t)) return;
    // The queue is not full any more, so the put above will succeed.
  }
}

// runqputslow (proc.go): moves half of the full local queue plus gp to the global queue.
// Owner only.
bool Runtime::runqputslow(p* pp, g* gp, uint32_t h, uint32_t t) {
  std::array<g*, kQ / 2 + 1> batch{};

  // First, grab a batch from the local queue.
  uint32_t n = t - h;
  n = n / 2;
  if (n != kQ / 2) plat::throw_("runqputslow: queue is not full");
  for (uint32_t i = 0; i < n; i++) batch[i] = pp->runq[(h + i) % kQ].get();
  if (!pp->runqhead.CompareAndSwapRelease(h, h + n)) return false;  // commits consume
  batch[n] = gp;

  if (randomizeScheduler) {
    for (uint32_t i = 1; i <= n; i++) {
      const uint32_t j = cheaprandn(i + 1);
      std::swap(batch[i], batch[j]);
    }
  }

  // Link the goroutines.
  for (uint32_t i = 0; i < n; i++) batch[i]->schedlink = batch[i + 1];
  gQueue q{batch[0], batch[n], static_cast<int32_t>(n + 1)};

  // Now put the batch on the global queue.
  lock(&sched.lock);
  globrunqputbatch(&q);
  unlock(&sched.lock);
  return true;
}

// runqputbatch (proc.go): puts as many Gs of q as fit on the local queue; the rest stay in q.
// Owner only.
void Runtime::runqputbatch(p* pp, gQueue* q) {
  if (q->empty()) return;
  const uint32_t h = pp->runqhead.LoadAcquire();
  uint32_t t = pp->runqtail.get();
  uint32_t n = 0;
  while (!q->empty() && t - h < kQ) {
    g* gp = q->pop();
    pp->runq[t % kQ].set(gp);
    t++;
    n++;
  }

  if (randomizeScheduler) {
    auto off = [&](uint32_t o) { return (pp->runqtail.get() + o) % kQ; };
    for (uint32_t i = 1; i < n; i++) {
      const uint32_t j = cheaprandn(i + 1);
      g* a = pp->runq[off(i)].get();
      g* b = pp->runq[off(j)].get();
      pp->runq[off(i)].set(b);
      pp->runq[off(j)].set(a);
    }
  }

  pp->runqtail.StoreRelease(t);
}

// runqget (proc.go): gets a G from the local queue; runnext first, which inherits the time slice.
// Owner only.
std::pair<g*, bool> Runtime::runqget(p* pp) {
  // A failed CAS on a non-nil runnext can only mean another P stole it: only the owner makes
  // runnext non-nil, so there is nothing to retry.
  g* next = pp->runnext.get();
  if (next != nullptr && pp->runnext.CompareAndSwap(next, nullptr)) return {next, true};

  for (;;) {
    const uint32_t h = pp->runqhead.LoadAcquire();  // synchronize with other consumers
    const uint32_t t = pp->runqtail.get();
    if (t == h) return {nullptr, false};
    g* gp = pp->runq[h % kQ].get();
    if (pp->runqhead.CompareAndSwapRelease(h, h + 1)) return {gp, false};  // commits consume
  }
}

// runqdrain (proc.go): takes every G of the local queue, runnext first. Owner only.
gQueue Runtime::runqdrain(p* pp) {
  gQueue drainQ;
  g* oldNext = pp->runnext.get();
  if (oldNext != nullptr && pp->runnext.CompareAndSwap(oldNext, nullptr)) drainQ.pushBack(oldNext);

  for (;;) {  // retry
    const uint32_t h = pp->runqhead.LoadAcquire();  // synchronize with other consumers
    const uint32_t t = pp->runqtail.get();
    const uint32_t qn = t - h;
    if (qn == 0) return drainQ;
    if (qn > kQ) continue;  // read inconsistent h and t
    if (!pp->runqhead.CompareAndSwapRelease(h, h + qn)) continue;  // commits consume

    // The head is advanced before the Gs are linked into drainQ: once it moves, no stealer can
    // take these Gs, so rewriting their schedlink is safe.
    for (uint32_t i = 0; i < qn; i++) drainQ.pushBack(pp->runq[(h + i) % kQ].get());
    return drainQ;
  }
}

// runqgrab (proc.go): copies half (rounded up) of pp's queue into the ring `batch` from
// batchHead, and commits the take. With an empty ring and stealRunNextG it takes runnext, after
// backing off for 3us when pp's M is likely about to run it. Any P may call it.
uint32_t Runtime::runqgrab(p* pp, std::array<Atomic<g*>, kRunqSize>& batch, uint32_t batchHead,
                           bool stealRunNextG) {
  for (;;) {
    const uint32_t h = pp->runqhead.LoadAcquire();  // synchronize with other consumers
    const uint32_t t = pp->runqtail.LoadAcquire();  // synchronize with the producer
    uint32_t n = t - h;
    n = n - n / 2;
    if (n == 0) {
      if (stealRunNextG) {
        g* next = pp->runnext.get();
        if (next != nullptr) {
          // Mutant runqgrab-no-backoff: before c4fe503119 a thief took runnext at once.
          if (!mutant(Mutant::RunqgrabNoBackoff) && pp->status.get() == _Prunning) {
            if (m* mp = pp->m.get(); mp != nullptr) {
              // Mutant runqgrab-backoff-in-syscall: before d55ecea9e5 (once Go 1.26 kept a
              // syscalling goroutine's P _Prunning) the thief slept here even when pp's
              // goroutine was in a system call.
              if (g* gp = mp->curg.get(); gp == nullptr || mutant(Mutant::RunqgrabBackoffInSyscall) ||
                                          (readgstatus(gp) & ~_Gscan) != _Gsyscall) {
                // pp's G likely just readied `next` and is about to block or yield, so pp will
                // run it very soon: give it the chance instead of bouncing the G between Ps.
                ev(Ev::RunnextBackoff, next, pp, 0);
                plat::usleep(3);
              }
            }
          }
          if (!pp->runnext.CompareAndSwap(next, nullptr)) {
            ev(Ev::RunnextCasFail, next, pp, 0);
            continue;
          }
          batch[batchHead % kQ].set(next);
          return 1;
        }
      }
      return 0;
    }
    if (n > kQ / 2) continue;  // read inconsistent h and t
    for (uint32_t i = 0; i < n; i++) {
      g* gp = pp->runq[(h + i) % kQ].get();
      batch[(batchHead + i) % kQ].set(gp);
    }
    if (pp->runqhead.CompareAndSwapRelease(h, h + n)) return n;  // commits consume
  }
}

// runqsteal (proc.go): steals half of p2's local queue into pp's and returns one of the stolen
// Gs, or nil.
g* Runtime::runqsteal(p* pp, p* p2, bool stealRunNextG) {
  const uint32_t t = pp->runqtail.get();
  uint32_t n = runqgrab(p2, pp->runq, t, stealRunNextG);
  if (n == 0) return nullptr;
  n--;
  g* gp = pp->runq[(t + n) % kQ].get();
  if (n == 0) return gp;
  const uint32_t h = pp->runqhead.LoadAcquire();  // synchronize with consumers
  if (t - h + n >= kQ) plat::throw_("runqsteal: runq overflow");
  pp->runqtail.StoreRelease(t + n);  // makes the items available for consumption
  return gp;
}

}  // namespace gmp::rt
