// sync.Mutex (internal/sync/mutex.go) and the spinning it asks the runtime for (proc.go).
//
// Protocol. state packs mutexLocked, mutexWoken, mutexStarving and, above mutexWaiterShift, the
// number of goroutines blocked on sema. Lock takes an unlocked mutex with one CAS. Otherwise, in
// normal mode, a goroutine may spin a few times (sync_runtime_canSpin) while the mutex is locked,
// setting mutexWoken so that Unlock does not wake a sleeper, then CASes itself in as the owner or
// as one more waiter and sleeps on sema (FIFO on the first wait, at the front after that). A
// waiter that has waited more than 1ms switches the mutex to starvation mode, in which Unlock
// hands ownership directly to the first waiter (semrelease with handoff) and newcomers neither
// spin nor grab the mutex; the last waiter, or one that waited less than 1ms, switches back.
// Unlock drops mutexLocked with one add; with waiters and nobody woken it CASes in mutexWoken and
// one fewer waiter, and releases sema.
#pragma once

#include <cstdint>

#include "sim/platform/atomic.h"
#include "sim/runtime/sema.h"

namespace gmp::rt {

// internal/sync.Mutex. The semaphore's id orders and hashes it (see sema.h); it must be unique
// among the Runtime's semaphores, e.g. from newSyncId.
struct syncMutex {
 public:
  explicit syncMutex(uint64_t semaId) : sema_(semaId) {}
  syncMutex(const syncMutex&) = delete;
  syncMutex& operator=(const syncMutex&) = delete;

  void Lock();
  bool TryLock();
  void Unlock();

 private:
  void lockSlow();
  void unlockSlow(int32_t newState);

  Atomic<int32_t> state_;
  Sema sema_;
};

inline constexpr int32_t mutexLocked = 1;    // mutex is locked
inline constexpr int32_t mutexWoken = 2;     // a goroutine is awake and will try to take it
inline constexpr int32_t mutexStarving = 4;  // ownership passes directly to waiters
inline constexpr int32_t mutexWaiterShift = 3;
inline constexpr int64_t starvationThresholdNs = 1000000;  // 1ms

// active_spin and active_spin_cnt (lock_spinbit.go).
inline constexpr int active_spin = 4;
inline constexpr int active_spin_cnt = 30;

// internal_sync_runtime_canSpin / sync_runtime_canSpin (proc.go)
bool sync_runtime_canSpin(int i);
// internal_sync_runtime_doSpin / sync_runtime_doSpin (proc.go)
void sync_runtime_doSpin();

}  // namespace gmp::rt
