// internal/poll's fdMutex (fd_mutex.go): the lock a Go descriptor takes around each Read, Write
// and Accept, and the reference count that Close waits out. It serializes the goroutines that use
// one descriptor the same way (two readers of a connection, the workers of a pool accepting on one
// listener), so that at most one of them waits in the poller per mode: netpollblock allows one.
//
// Protocol. state packs a closed bit, the read and write lock bits, a 20-bit reference count (one
// per lock held, one for Close) and two 20-bit counts of goroutines waiting for the read and the
// write lock. Taking a free lock is one CAS; a taken one adds a waiter and sleeps on that side's
// semaphore; the unlocker that finds waiters takes one off the count and releases the semaphore,
// and the woken goroutine tries again. Close sets the closed bit and releases every waiter, who
// then fail: a lock on a closed descriptor is refused.
#pragma once

#include <cstdint>

#include "sim/platform/atomic.h"
#include "sim/runtime/sema.h"

namespace gmp::workload {

class FdMutex {
 public:
  // The semaphores' ids must be unique among the Runtime's (sema.h).
  FdMutex(uint64_t rsema_id, uint64_t wsema_id) : rsema_(rsema_id), wsema_(wsema_id) {}
  FdMutex(const FdMutex&) = delete;
  FdMutex& operator=(const FdMutex&) = delete;

  // readLock/writeLock: false if the descriptor is closed (errClosing).
  bool rwlock(bool read);
  // readUnlock/writeUnlock: true when this dropped the last reference of a closed descriptor.
  bool rwunlock(bool read);
  // Close's first step: false if it was closed already.
  bool increfAndClose();
  // Drops a reference: true when it was the last one of a closed descriptor.
  bool decref();

 private:
  Atomic<uint64_t> state_;
  rt::Sema rsema_;
  rt::Sema wsema_;
};

}  // namespace gmp::workload
