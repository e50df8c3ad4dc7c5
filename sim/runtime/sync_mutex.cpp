// sync.Mutex (internal/sync/mutex.go) and sync_runtime_canSpin/doSpin (proc.go). The protocol is
// stated in sync_mutex.h. The race detector hooks are left out.
#include "sim/runtime/sync_mutex.h"

#include "sim/runtime/runtime.h"

namespace gmp::rt {

// internal_sync_runtime_canSpin (proc.go): spin only a few times, only on a multicore machine
// with GOMAXPROCS > 1, at least one other running P and an empty local run queue. No passive
// spinning: there may be work on the global queue or on other Ps.
bool sync_runtime_canSpin(int i) {
  Runtime& r = *Runtime::current();
  if (i >= active_spin || r.ncpu <= 1) return false;
  const int32_t npidle = r.sched.npidle.Load();  // before nmspinning, as Go evaluates it
  if (r.gomaxprocs <= npidle + r.sched.nmspinning.Load() + 1) return false;
  if (p* pp = plat::getg()->m->p; !r.runqempty(pp)) return false;
  return true;
}

// internal_sync_runtime_doSpin (proc.go): procyield(active_spin_cnt), one PAUSE charged per cycle.
void sync_runtime_doSpin() {
  for (int i = 0; i < active_spin_cnt; i++) plat::charge(plat::Cost::ProcYield);
}

// Mutex.Lock (internal/sync/mutex.go)
void syncMutex::Lock() {
  plat::charge(plat::Cost::MutexFastPath);  // not in Go: the call's own cost (cost profile)
  // Fast path: grab unlocked mutex.
  if (state_.CompareAndSwap(0, mutexLocked)) return;
  // Slow path (outlined so that the fast path can be inlined)
  lockSlow();
}

// Mutex.TryLock (internal/sync/mutex.go)
bool syncMutex::TryLock() {
  plat::charge(plat::Cost::MutexFastPath);  // not in Go: the call's own cost, as in Lock
  const int32_t old = state_.get();
  if ((old & (mutexLocked | mutexStarving)) != 0) return false;
  // There may be a goroutine waiting for the mutex, but we are running now and can try to grab
  // the mutex before that goroutine wakes up.
  return state_.CompareAndSwap(old, old | mutexLocked);
}

// Mutex.lockSlow (internal/sync/mutex.go)
void syncMutex::lockSlow() {
  int64_t waitStartTime = 0;
  bool starving = false;
  bool awoke = false;
  int iter = 0;
  int32_t old = state_.get();
  for (;;) {
    // Don't spin in starvation mode: ownership is handed off to waiters.
    if ((old & (mutexLocked | mutexStarving)) == mutexLocked && sync_runtime_canSpin(iter)) {
      // Active spinning makes sense. Try to set mutexWoken to tell Unlock not to wake other
      // blocked goroutines.
      if (!awoke && (old & mutexWoken) == 0 && (old >> mutexWaiterShift) != 0 &&
          state_.CompareAndSwap(old, old | mutexWoken)) {
        awoke = true;
      }
      sync_runtime_doSpin();
      iter++;
      old = state_.get();
      continue;
    }
    int32_t nw = old;
    // Don't try to acquire starving mutex, new arriving goroutines must queue.
    if ((old & mutexStarving) == 0) nw |= mutexLocked;
    if ((old & (mutexLocked | mutexStarving)) != 0) nw += 1 << mutexWaiterShift;
    // The current goroutine switches mutex to starvation mode. But if the mutex is currently
    // unlocked, don't do the switch: Unlock expects that a starving mutex has waiters.
    if (starving && (old & mutexLocked) != 0) nw |= mutexStarving;
    if (awoke) {
      // The goroutine has been woken from sleep, so we need to reset the flag in either case.
      if ((nw & mutexWoken) == 0) plat::throw_("sync: inconsistent mutex state");
      nw &= ~mutexWoken;
    }
    if (state_.CompareAndSwap(old, nw)) {
      if ((old & (mutexLocked | mutexStarving)) == 0) break;  // locked the mutex with CAS
      // If we were already waiting before, queue at the front of the queue.
      const bool queueLifo = waitStartTime != 0;
      if (waitStartTime == 0) waitStartTime = plat::nanotime();
      internal_sync_runtime_SemacquireMutex(&sema_, queueLifo, 2);
      starving = starving || plat::nanotime() - waitStartTime > starvationThresholdNs;
      old = state_.get();
      if ((old & mutexStarving) != 0) {
        // Woken in starvation mode: ownership was handed to us, but mutexLocked is not set and
        // we are still counted as a waiter. Fix that.
        if ((old & (mutexLocked | mutexWoken)) != 0 || (old >> mutexWaiterShift) == 0) {
          plat::throw_("sync: inconsistent mutex state");
        }
        int32_t delta = mutexLocked - (1 << mutexWaiterShift);
        if (!starving || (old >> mutexWaiterShift) == 1) {
          // Exit starvation mode, here where the wait time is known: two goroutines could
          // otherwise go lock-step in starvation mode forever.
          delta -= mutexStarving;
        }
        state_.Add(delta);
        break;
      }
      awoke = true;
      iter = 0;
    } else {
      old = state_.get();
    }
  }
}

// Mutex.Unlock (internal/sync/mutex.go)
void syncMutex::Unlock() {
  plat::charge(plat::Cost::MutexFastPath);  // not in Go: the call's own cost (cost profile)
  // Fast path: drop lock bit.
  const int32_t nw = state_.Add(-mutexLocked);
  if (nw != 0) {
    // Outlined slow path to allow inlining the fast path.
    unlockSlow(nw);
  }
}

// Mutex.unlockSlow (internal/sync/mutex.go)
void syncMutex::unlockSlow(int32_t nw) {
  if (((nw + mutexLocked) & mutexLocked) == 0) plat::fatal("sync: unlock of unlocked mutex");
  if ((nw & mutexStarving) == 0) {
    int32_t old = nw;
    for (;;) {
      // No waiters, or a goroutine already woken or holding the lock: nobody to wake. A starving
      // mutex seen only now is not ours to hand off: we did not see mutexStarving when unlocking.
      if ((old >> mutexWaiterShift) == 0 || (old & (mutexLocked | mutexWoken | mutexStarving)) != 0) {
        return;
      }
      // Grab the right to wake someone.
      nw = (old - (1 << mutexWaiterShift)) | mutexWoken;
      if (state_.CompareAndSwap(old, nw)) {
        internal_sync_runtime_Semrelease(&sema_, false, 2);
        return;
      }
      old = state_.get();
    }
  } else {
    // Starving mode: hand ownership to the next waiter and yield our time slice to it. mutexLocked
    // stays clear (the waiter sets it), but mutexStarving keeps newcomers out.
    internal_sync_runtime_Semrelease(&sema_, true, 2);
  }
}

}  // namespace gmp::rt
