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
  // Fast path: an unlocked mutex with no waiters is taken with one CAS. Everything else is in
  // lockSlow, kept out of line in Go so that Lock stays small enough to inline.
  if (state_.CompareAndSwap(0, mutexLocked)) return;
  lockSlow();
}

// Mutex.TryLock (internal/sync/mutex.go)
bool syncMutex::TryLock() {
  plat::charge(plat::Cost::MutexFastPath);  // not in Go: the call's own cost, as in Lock
  const int32_t old = state_.get();
  if ((old & (mutexLocked | mutexStarving)) != 0) return false;
  // Waiters may be queued, but in normal mode a running goroutine is allowed to barge in ahead
  // of them (that is what normal mode means); only starvation mode refuses it, above.
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
    // Spin only on a mutex that is held in normal mode: in starvation mode Unlock hands the
    // mutex straight to the first waiter, so spinning could never win it.
    if ((old & (mutexLocked | mutexStarving)) == mutexLocked && sync_runtime_canSpin(iter)) {
      // Worth spinning. Setting mutexWoken (when there are waiters and nobody set it) tells
      // Unlock that a goroutine is already awake and contending, so it wakes no waiter.
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
    // A starving mutex belongs to its waiters: a newcomer never takes it, it queues.
    if ((old & mutexStarving) == 0) nw |= mutexLocked;
    if ((old & (mutexLocked | mutexStarving)) != 0) nw += 1 << mutexWaiterShift;
    // A goroutine that waited too long puts the mutex in starvation mode, but only while it is
    // held: Unlock relies on a starving mutex having a waiter to hand it to.
    if (starving && (old & mutexLocked) != 0) nw |= mutexStarving;
    if (awoke) {
      // This goroutine set mutexWoken (spinning) or was woken by Unlock, which set it: either
      // way the flag is ours to clear, whether this CAS takes the mutex or queues us again.
      if ((nw & mutexWoken) == 0) plat::throw_("sync: inconsistent mutex state");
      nw &= ~mutexWoken;
    }
    if (state_.CompareAndSwap(old, nw)) {
      if ((old & (mutexLocked | mutexStarving)) == 0) break;  // locked the mutex with CAS
      // A goroutine woken but beaten to the mutex waits again at the head of the queue (LIFO),
      // keeping its place ahead of the goroutines that arrived after it.
      const bool queueLifo = waitStartTime != 0;
      if (waitStartTime == 0) waitStartTime = plat::nanotime();
      internal_sync_runtime_SemacquireMutex(&sema_, queueLifo, 2);
      starving = starving || plat::nanotime() - waitStartTime > starvationThresholdNs;
      old = state_.get();
      if ((old & mutexStarving) != 0) {
        // Woken in starvation mode: the mutex is already ours, but the state still shows it
        // unlocked and counts us among the waiters. One add fixes both.
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
  // Fast path: clear mutexLocked; if nothing else is set there is nobody to wake. The rest is
  // in unlockSlow, out of line in Go for the same inlining reason as Lock's.
  const int32_t nw = state_.Add(-mutexLocked);
  if (nw != 0) {
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
    // Starvation mode: the mutex passes directly to the first waiter, and Semrelease with
    // handoff gives it the rest of our time slice. mutexLocked stays clear (the waiter sets it),
    // but mutexStarving keeps newcomers out.
    internal_sync_runtime_Semrelease(&sema_, true, 2);
  }
}

}  // namespace gmp::rt
