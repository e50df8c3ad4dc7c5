// Timers (time.go), as far as time.Sleep and time.AfterFunc need them: the per-P timer heap, the
// timer state machine of a goroutine's sleep timer, running expired timers, timeSleep and
// afterFunc.
//
// Protocol. Each P has a timers set: a 4-ary min-heap of (timer, when) guarded by ts.mu, plus
// atomics that other Ps read without the lock: len (here the P's p.timersLen, stored only at
// unlock so it never shows an ephemeral length), zombies, minWhenHeap (= heap[0].when) and
// minWhenModified (a lower bound of the when of timers modified since they were heaped).
// wakeTime() = the smaller non-zero of the two mins. A timer's fields are guarded by t.mu, with
// a snapshot of its state bits published in t.astate at unlock for lock-free fast paths. Lock
// order: ts.mu before t.mu; a timer is added to a heap only without holding its own lock
// (maybeAdd). A timer modified while heaped is only marked (timerModified, or timerZombie when
// stopped); the heap's owner fixes heap[i].when when it next cleans or adjusts the heap.
//
// timeSleep parks the goroutine with resetForSleep as gopark's unlock function, so the timer is
// armed (on the current P's heap) only once the goroutine is parked; when it fires, its function
// goroutineReady readies the goroutine. Adding a timer earlier than the P's wake time wakes the
// netpoller (wakeNetPoller), so a sleeping M notices the new deadline.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/platform/atomic.h"
#include "sim/platform/platform.h"
#include "sim/runtime/runtime2.h"

namespace gmp::rt {

// Timer state bits (time.go).
inline constexpr uint8_t timerHeaped = 1;    // stored in some P's heap
inline constexpr uint8_t timerModified = 2;  // t.when changed; the heap's copy is stale
inline constexpr uint8_t timerZombie = 4;    // stopped, still in some P's heap

inline constexpr int64_t maxWhen = INT64_MAX;
inline constexpr int timerHeapN = 4;

using timerFunc = void (*)(void* arg, uintptr_t seq, int64_t delay);

// timer (time.go), without the channel (isChan) and synctest (isFake) parts.
struct timer {
  plat::Mutex mu;          // protects the fields below, except as noted
  Atomic<uint32_t> astate;  // state as published by the last unlock (Go: atomic.Uint8)
  uint8_t state = 0;        // state bits
  uint32_t rand = 0;        // orders timers at the same instant; only set for fake time (never here)

  // The timer fires at when and, if period > 0, every period after that. Each firing calls f
  // with arg, seq and the delay (how late it fired), on the P that runs the timer: f must not
  // block.
  int64_t when = 0;
  int64_t period = 0;
  timerFunc f = nullptr;
  void* arg = nullptr;
  uintptr_t seq = 0;

  struct timers* ts = nullptr;  // the timers containing t, if any

  void init(timerFunc f_, void* arg_);
  void lock();
  void unlock();
  bool updateHeap();
  bool modify(int64_t when_, int64_t period_, timerFunc f_, void* arg_, uintptr_t seq_);
  bool needsAdd();
  void maybeAdd();
  bool reset(int64_t when_, int64_t period_);
  void unlockAndRun(int64_t now);
};

// timerWhen (time.go)
struct timerWhen {
  timer* t = nullptr;  // Go's timerWhen.timer
  int64_t when = 0;
  bool less(const timerWhen& other) const;
};

// timers (time.go): a per-P set of timers.
struct timers {
  plat::Mutex mu;
  std::vector<timerWhen> heap;  // ordered by heap[i].when; guarded by mu
  // len(heap) read without mu (checkdead does): a plain read racing with the heap's owner, so it
  // is offered to the driver, as LockGuarded's unlocked reads are.
  size_t heapLenRacy() const {
    plat::offer_access(plat::Op::PlainLoad, sizeof(size_t), &heap, 0, 0, nullptr);
    return heap.size();
  }
  // Go's ts.len: the owning P's p.timersLen (runtime2.h), or ownLen for a set without a P.
  Atomic<uint32_t>* len = &ownLen;
  Atomic<int32_t> zombies;           // timers in the heap marked for removal
  Atomic<int64_t> minWhenHeap;       // heap[0].when; 0: empty heap
  Atomic<int64_t> minWhenModified;   // lower bound of when of timerModified timers; 0: none
  Atomic<uint32_t> ownLen;

  timers() = default;
  timers(const timers&) = delete;
  timers& operator=(const timers&) = delete;

  void lock();
  void unlock();
  // worldStopped: the caller has stopped the world instead of locking ts (Go's
  // assertWorldStoppedOrLockHeld).
  void addHeap(timer* t, bool worldStopped = false);
  void take(timers* src);
  void deleteMin();
  void cleanHead();
  void adjust(int64_t now, bool force);
  int64_t wakeTime();
  struct Checked {
    int64_t rnow;
    int64_t pollUntil;
    bool ran;
  };
  Checked check(int64_t now);
  int64_t run(int64_t now);
  void updateMinWhenHeap(bool worldStopped = false);  // Go: assertWorldStoppedOrLockHeld
  void updateMinWhenModified(int64_t when);
  void siftUp(int i);
  void siftDown(int i);
  void initHeap();
};

// The lead's interface.
void timersInit(p* pp);  // allocates pp->timers_, which pp owns until timersFree(pp)
void timersFree(p* pp);
struct TimersCheck {
  int64_t now;
  int64_t pollUntil;
  bool ran;
};
TimersCheck timersCheck(p* pp, int64_t now);  // pp.timers.check(now, nil)
int64_t timersWakeTime(p* pp);                // pp.timers.wakeTime()
void timersTake(p* dst, p* src);              // dst.timers.take(&src.timers), world stopped
int64_t timeSleepUntil();
void timeSleep(int64_t ns);
void afterFunc(int64_t ns, timerFunc f, void* arg);

// Used by timeSleep; exposed for tests.
bool resetForSleep(g* gp, void* unused);
void goroutineReady(void* arg, uintptr_t seq, int64_t delay);
[[noreturn]] void badTimer();

}  // namespace gmp::rt
