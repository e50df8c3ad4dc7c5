// sudog (runtime2.go): a goroutine waiting on a channel, in a select, or on a semaphore; and its
// two-level cache, acquireSudog/releaseSudog (proc.go).
//
// Protocol. A sudog is owned by the goroutine that acquired it. While it is queued on a channel
// (hchan.sendq/recvq) its g, next, prev, elem, c, isSelect and success are guarded by that
// channel's lock; while it is queued on a semaphore every field is guarded by the semaRoot's lock.
// waitlink links g.waiting (touched only by the goroutine itself) or, for semaphores, the waiters
// on one word. The P-local cache p.sudogcache is touched only by the P's owner (acquirem pins it);
// the central cache sched.sudogcache is guarded by sched.sudoglock.
//
// Also here: the per-Runtime state of the sync ports that Go keeps in package variables (semtable)
// or leaves to its garbage collector (the sudogs, channels and sleep timers made with new), and
// Go's panic for the sync ports.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "sim/platform/arena.h"
#include "sim/runtime/runtime2.h"

namespace gmp::rt {

class Runtime;
struct hchan;
struct semTable;

struct sudog {
  // These four belong to the lock of the channel (or semaRoot) the sudog is queued on.
  guintptr g = nullptr;
  sudog* next = nullptr;
  sudog* prev = nullptr;
  void* elem = nullptr;  // data element (a channel's: an int64, chan.h); for a semaphore, its Sema

  // Never accessed concurrently (see the protocol above).
  int64_t acquiretime = 0;
  int64_t releasetime = 0;
  uint32_t ticket = 0;
  bool isSelect = false;    // part of a select: a waker must first win the CAS on g.selectDone
  bool success = false;     // woken by a delivered value (true) or by a close (false)
  uint16_t waiters = 0;     // semaRoot: waiters behind the head of this list, clamped
  sudog* parent = nullptr;  // semaRoot: the parent node in the treap
  sudog* waitlink = nullptr;  // next in g.waiting, or (semaRoot) the next waiter on the word
  sudog* waittail = nullptr;  // semaRoot: the last waiter on the word, kept by the head
  hchan* c = nullptr;         // the channel this sudog is queued on
};

// len(p.sudogbuf) (runtime2.go): the capacity of the P-local sudog cache.
inline constexpr size_t kSudogBufLen = 128;

sudog* acquireSudog();
void releaseSudog(sudog* s);

// Go's panic(plainError(msg)) on a goroutine. There is no recover in the simulator, so an
// unrecovered panic ends the program: it is raised as a fatal error carrying Go's message.
[[noreturn]] void panicPlain(const char* msg);

// The sync ports' per-Runtime state (Runtime::syncstate). Its mutex is a host lock outside the
// simulation, as Go's allocator is: taking it is not a scheduling point; it matters only on the
// real-thread platform.
struct SyncState {
  std::mutex mu;                               // guards objects, sudogs and nextId
  std::vector<std::shared_ptr<void>> objects;  // what the port allocated with Go's new()
  plat::Arena<sudog> sudogs;                   // the sudogs allocated (acquireSudog's new(sudog))
  uint64_t nextId = 1;                         // the next id newSyncId hands out
  std::once_flag semtableOnce;
  std::shared_ptr<semTable> semtable;          // sema.go's semtable, made on first use
};
SyncState& syncState(Runtime& r);

// Keeps obj alive as long as r.
void rtown(Runtime& r, std::shared_ptr<void> obj);

// Go's new(T) for objects the garbage collector would free: owned by r.
template <class T, class... Args>
T* rtnew(Runtime& r, Args&&... args) {
  auto sp = std::make_shared<T>(std::forward<Args>(args)...);
  T* raw = sp.get();
  rtown(r, std::move(sp));
  return raw;
}

// A fresh id, unique within r: the stable identity that orders and hashes channels and semaphores
// where Go uses their address. Ids follow allocation order, so a deterministic run gets the same ids.
uint64_t newSyncId(Runtime& r);

}  // namespace gmp::rt
