// sync.WaitGroup (sync/waitgroup.go). The protocol is stated in waitgroup.h.
#include "sim/runtime/waitgroup.h"

#include "sim/runtime/sudog.h"

namespace gmp::rt {

// WaitGroup.Add (sync/waitgroup.go)
void WaitGroup::Add(int delta) {
  const uint64_t state = state_.Add(static_cast<uint64_t>(static_cast<int64_t>(delta)) << 32);
  const int32_t v = static_cast<int32_t>(state >> 32);
  uint32_t w = static_cast<uint32_t>(state & 0x7fffffff);
  if (v < 0) panicPlain("sync: negative WaitGroup counter");
  if (w != 0 && delta > 0 && v == delta) panicPlain("sync: WaitGroup misuse: Add called concurrently with Wait");
  if (v > 0 || w == 0) return;
  // This Add brought the counter to 0 with waiters registered. From here the state cannot
  // legitimately change: Add may not run concurrently with Wait, and Wait registers no waiter
  // once it sees a zero counter. One reload catches the usual misuse cheaply.
  if (state_.Load() != state) panicPlain("sync: WaitGroup misuse: Add called concurrently with Wait");
  // Clear the waiter count, then release each waiter once.
  state_.Store(0);
  for (; w != 0; w--) sync_runtime_Semrelease(&sema_, false, 0);
}

// WaitGroup.Done (sync/waitgroup.go)
void WaitGroup::Done() { Add(-1); }

// WaitGroup.Wait (sync/waitgroup.go)
void WaitGroup::Wait() {
  for (;;) {
    const uint64_t state = state_.Load();
    const int32_t v = static_cast<int32_t>(state >> 32);
    if (v == 0) {
      // Nothing outstanding: return at once.
      return;
    }
    // Register as a waiter (the low 32 bits) and sleep on the semaphore.
    if (state_.CompareAndSwap(state, state + 1)) {
      sync_runtime_SemacquireWaitGroup(&sema_);
      const bool isReset = state_.Load() != 0;
      if (isReset) panicPlain("sync: WaitGroup is reused before previous Wait has returned");
      return;
    }
  }
}

}  // namespace gmp::rt
