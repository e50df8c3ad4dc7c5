// See fd_mutex.h.
#include "sim/workload/fd_mutex.h"

#include "sim/runtime/sudog.h"

namespace gmp::workload {

namespace {
constexpr uint64_t kClosed = 1ULL << 0;
constexpr uint64_t kRLock = 1ULL << 1;
constexpr uint64_t kWLock = 1ULL << 2;
constexpr uint64_t kRef = 1ULL << 3;
constexpr uint64_t kRefMask = ((1ULL << 20) - 1) << 3;
constexpr uint64_t kRWait = 1ULL << 23;
constexpr uint64_t kRMask = ((1ULL << 20) - 1) << 23;
constexpr uint64_t kWWait = 1ULL << 43;
constexpr uint64_t kWMask = ((1ULL << 20) - 1) << 43;
constexpr const char* kOverflow = "too many concurrent operations on a single file or socket (max 1048575)";
}  // namespace

bool FdMutex::rwlock(bool read) {
  const uint64_t bit = read ? kRLock : kWLock;
  const uint64_t wait = read ? kRWait : kWWait;
  const uint64_t mask = read ? kRMask : kWMask;
  rt::Sema* sema = read ? &rsema_ : &wsema_;
  for (;;) {
    const uint64_t old = state_.Load();
    if ((old & kClosed) != 0) return false;
    uint64_t next;
    if ((old & bit) == 0) {
      next = (old | bit) + kRef;  // free: take it, with a reference
      if ((next & kRefMask) == 0) rt::panicPlain(kOverflow);
    } else {
      next = old + wait;  // held: count ourselves as a waiter
      if ((next & mask) == 0) rt::panicPlain(kOverflow);
    }
    if (state_.CompareAndSwap(old, next)) {
      if ((old & bit) == 0) return true;
      rt::semacquire(sema);
      // Whoever woke us took our waiter count off; try again.
    }
  }
}

bool FdMutex::rwunlock(bool read) {
  const uint64_t bit = read ? kRLock : kWLock;
  const uint64_t wait = read ? kRWait : kWWait;
  const uint64_t mask = read ? kRMask : kWMask;
  rt::Sema* sema = read ? &rsema_ : &wsema_;
  for (;;) {
    const uint64_t old = state_.Load();
    if ((old & bit) == 0 || (old & kRefMask) == 0) rt::panicPlain("inconsistent poll.fdMutex");
    uint64_t next = (old & ~bit) - kRef;
    if ((old & mask) != 0) next -= wait;  // one waiter will be woken
    if (state_.CompareAndSwap(old, next)) {
      if ((old & mask) != 0) rt::semrelease(sema);
      return (next & (kClosed | kRefMask)) == kClosed;
    }
  }
}

bool FdMutex::increfAndClose() {
  for (;;) {
    uint64_t old = state_.Load();
    if ((old & kClosed) != 0) return false;
    uint64_t next = (old | kClosed) + kRef;
    if ((next & kRefMask) == 0) rt::panicPlain(kOverflow);
    next &= ~(kRMask | kWMask);  // every waiter goes, to find the descriptor closed
    if (state_.CompareAndSwap(old, next)) {
      for (; (old & kRMask) != 0; old -= kRWait) rt::semrelease(&rsema_);
      for (; (old & kWMask) != 0; old -= kWWait) rt::semrelease(&wsema_);
      return true;
    }
  }
}

bool FdMutex::decref() {
  for (;;) {
    const uint64_t old = state_.Load();
    if ((old & kRefMask) == 0) rt::panicPlain("inconsistent poll.fdMutex");
    const uint64_t next = old - kRef;
    if (state_.CompareAndSwap(old, next)) return (next & (kClosed | kRefMask)) == kClosed;
  }
}

}  // namespace gmp::workload
