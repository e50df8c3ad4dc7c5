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
  // This goroutine has set counter to 0 when waiters > 0. Now there can't be concurrent mutations
  // of state: Adds must not happen concurrently with Wait, and Wait does not add a waiter if it
  // sees counter == 0. Still do a cheap sanity check to detect misuse.
  if (state_.Load() != state) panicPlain("sync: WaitGroup misuse: Add called concurrently with Wait");
  // Reset waiters count to 0.
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
      // Counter is 0, no need to wait.
      return;
    }
    // Increment waiters count.
    if (state_.CompareAndSwap(state, state + 1)) {
      sync_runtime_SemacquireWaitGroup(&sema_);
      const bool isReset = state_.Load() != 0;
      if (isReset) panicPlain("sync: WaitGroup is reused before previous Wait has returned");
      return;
    }
  }
}

}  // namespace gmp::rt
