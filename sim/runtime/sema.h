// Semaphores (sema.go): the sleep/wake-up primitive under sync.Mutex and sync.WaitGroup.
//
// Protocol. A semaphore is a counter word. semacquire takes a unit with a CAS loop when the count
// is positive; otherwise it adds itself to the waiter count root.nwait under root.lock, tries once
// more (a release between the first try and the nwait increment would otherwise be missed), and
// then queues a sudog and parks, releasing root.lock in the park. semrelease adds a unit and, only
// if nwait is non-zero, dequeues the first waiter on that word under root.lock and readies it.
// With handoff, the releaser takes the unit back for the waiter (s.ticket = 1) so that no newcomer
// can steal it, and yields its P to the waiter.
//
// Each semaRoot keeps a treap of the distinct words with waiters: a binary search tree by the
// word's key, heap-ordered by a random ticket (every node's ticket <= its children's). The waiters
// on one word form a list behind the tree node (waitlink/waittail), FIFO or, with lifo, at the front.
//
// Determinism. Go orders the treap and picks the semtable bucket by the word's address. Here a
// word is a Sema: the counter plus a 64-bit id given at construction, unique within a Runtime (use
// newSyncId, sudog.h); the id is the treap key and the bucket is id % semTabSize. No pointer value
// ever decides an order or a bucket, so a run does not depend on where the allocator put things.
#pragma once

#include <array>
#include <cstdint>

#include "sim/platform/atomic.h"
#include "sim/platform/platform.h"
#include "sim/runtime/runtime2.h"
#include "sim/runtime/sudog.h"

namespace gmp::rt {

// A semaphore word (Go's *uint32 semaphore address) and its stable identity.
struct Sema {
  Atomic<uint32_t> word;
  const uint64_t id;
  explicit Sema(uint64_t id_, uint32_t v = 0) : word(v), id(id_) {}
};

// semaRoot (sema.go)
struct semaRoot {
  plat::Mutex lock;
  sudog* treap = nullptr;  // the treap: one node per word that has waiters
  Atomic<uint32_t> nwait;  // how many goroutines wait in this root; loaded without the lock

  void queue(Sema* addr, sudog* s, bool lifo);
  struct Dequeued {
    sudog* found;
    int64_t now;
    int64_t tailtime;
  };
  Dequeued dequeue(Sema* addr);
  void rotateLeft(sudog* x);
  void rotateRight(sudog* y);
};

// semTabSize (sema.go): a prime, so that regular strides of keys still spread over the roots.
inline constexpr uint64_t semTabSize = 251;

// semTable (sema.go), one per Runtime (in its SyncState). Go pads each root to a cache line; the
// padding is irrelevant here.
struct semTable {
  std::array<semaRoot, semTabSize> roots;
  semaRoot* rootFor(const Sema* addr) { return &roots[addr->id % semTabSize]; }
};
semTable& semtableOf(Runtime& r);

// The key a treap node is ordered by: its word's id.
inline uint64_t semaKey(const sudog* s) { return static_cast<const Sema*>(s->elem)->id; }

// Entry points, named as Go's linknamed ones.
void sync_runtime_Semacquire(Sema* addr);
void internal_sync_runtime_SemacquireMutex(Sema* addr, bool lifo, int skipframes);
void sync_runtime_SemacquireWaitGroup(Sema* addr);
void sync_runtime_Semrelease(Sema* addr, bool handoff, int skipframes);
void internal_sync_runtime_Semrelease(Sema* addr, bool handoff, int skipframes);

void semacquire(Sema* addr);
void semacquire1(Sema* addr, bool lifo, int skipframes, waitReason reason);
void semrelease(Sema* addr);
void semrelease1(Sema* addr, bool handoff, int skipframes);
bool cansemacquire(Sema* addr);

}  // namespace gmp::rt
