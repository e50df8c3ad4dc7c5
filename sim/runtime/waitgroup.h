// sync.WaitGroup (sync/waitgroup.go), without the race detector and synctest parts.
//
// Protocol. state packs the counter (high 32 bits) and the number of waiters (low bits; bit 31
// would be synctest's bubble flag and is never set here). Add adds to the counter; the Add that
// brings it to zero with waiters present resets state to 0 and releases sema once per waiter.
// Wait returns at once on a zero counter, else CASes itself in as one more waiter and sleeps on
// sema. Adds that start from zero must happen before Wait; both misuses Go detects panic.
#pragma once

#include <cstdint>

#include "sim/platform/atomic.h"
#include "sim/runtime/sema.h"

namespace gmp::rt {

struct WaitGroup {
 public:
  // semaId: the semaphore's id, unique among the Runtime's semaphores (see sema.h).
  explicit WaitGroup(uint64_t semaId) : sema_(semaId) {}
  WaitGroup(const WaitGroup&) = delete;
  WaitGroup& operator=(const WaitGroup&) = delete;

  void Add(int delta);
  void Done();
  void Wait();

 private:
  Atomic<uint64_t> state_;
  Sema sema_;
};

}  // namespace gmp::rt
