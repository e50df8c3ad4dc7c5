// Atomic cells with the orderings of Go's internal/runtime/atomic. Every operation is offered to
// the installed driver first (see driver.h), then performed on a std::atomic.
//
// Go's orderings, as this layer maps them:
//   Load, Store, Cas, Xadd, Xchg, Or, And     -> seq_cst (Go documents them as sequentially
//                                                consistent)
//   LoadAcq                                  -> acquire
//   StoreRel                                 -> release
//   CasRel                                   -> release on success, relaxed on failure
//   plain read/write of a shared field       -> relaxed (get/set)
//
// The last line is the one difference from Go: Go reads some fields plainly while other threads
// write them (p.runq slots in runqgrab, p.runnext, p.status, m.curg). Those races are benign in
// Go's memory model but undefined in C++, so such fields are Atomic<T> here and their plain
// accesses are relaxed atomics: same instruction on x86-64 and arm64, defined behaviour, and
// clean under ThreadSanitizer. They are still offered to the driver as PlainLoad/PlainStore, so
// the model checker can interleave at them.
//
// Under a driver, a simulation's cells are touched by one OS thread only (driver.h's contract:
// the driver runs every context of a simulation on the thread it is installed on, and
// simulations share no cells). There the stores and read-modify-writes are done as relaxed loads
// and stores: the same values and results, without the bus-locked instructions (xchg, lock
// cmpxchg, lock xadd) that a seq_cst store or an RMW costs on x86-64. With no driver (the real
// platform, the threads: tests) every operation keeps its Go ordering.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "sim/platform/driver.h"
#include "sim/platform/site.h"

namespace gmp {

template <class T>
class Atomic {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "Go's atomics are 32 or 64 bits wide");
  static_assert(std::is_integral_v<T> || std::is_pointer_v<T>);

 public:
  constexpr Atomic() noexcept : v_{} {}
  constexpr explicit Atomic(T v) noexcept : v_(v) {}
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

  T Load(plat::Site loc = plat::Site::current()) const {
    offer(plat::Op::Load, 0, 0, loc);
    return v_.load(std::memory_order_seq_cst);
  }
  T LoadAcquire(plat::Site loc = plat::Site::current()) const {
    offer(plat::Op::LoadAcquire, 0, 0, loc);
    return v_.load(std::memory_order_acquire);
  }
  void Store(T v, plat::Site loc = plat::Site::current()) {
    if (offer(plat::Op::Store, bits(v), 0, loc)) {
      v_.store(v, std::memory_order_relaxed);
      return;
    }
    v_.store(v, std::memory_order_seq_cst);
  }
  void StoreRelease(T v, plat::Site loc = plat::Site::current()) {
    offer(plat::Op::StoreRelease, bits(v), 0, loc);
    v_.store(v, std::memory_order_release);
  }
  bool CompareAndSwap(T old, T nv, plat::Site loc = plat::Site::current()) {
    if (offer(plat::Op::Cas, bits(nv), bits(old), loc)) return cas_single(old, nv);
    return v_.compare_exchange_strong(old, nv, std::memory_order_seq_cst);
  }
  bool CompareAndSwapRelease(T old, T nv, plat::Site loc = plat::Site::current()) {
    if (offer(plat::Op::CasRelease, bits(nv), bits(old), loc)) return cas_single(old, nv);
    return v_.compare_exchange_strong(old, nv, std::memory_order_release,
                                      std::memory_order_relaxed);
  }
  // Go's Xadd: returns the new value.
  T Add(T delta, plat::Site loc = plat::Site::current())
    requires std::is_integral_v<T>
  {
    if (offer(plat::Op::Add, bits(delta), 0, loc)) {
      const T nv = static_cast<T>(v_.load(std::memory_order_relaxed) + delta);
      v_.store(nv, std::memory_order_relaxed);
      return nv;
    }
    return static_cast<T>(v_.fetch_add(delta, std::memory_order_seq_cst) + delta);
  }
  // Go's Xchg: returns the old value.
  T Swap(T v, plat::Site loc = plat::Site::current()) {
    if (offer(plat::Op::Swap, bits(v), 0, loc)) {
      const T prev = v_.load(std::memory_order_relaxed);
      v_.store(v, std::memory_order_relaxed);
      return prev;
    }
    return v_.exchange(v, std::memory_order_seq_cst);
  }
  void Or(T mask, plat::Site loc = plat::Site::current())
    requires std::is_unsigned_v<T>
  {
    if (offer(plat::Op::Or, bits(mask), 0, loc)) {
      v_.store(static_cast<T>(v_.load(std::memory_order_relaxed) | mask), std::memory_order_relaxed);
      return;
    }
    v_.fetch_or(mask, std::memory_order_seq_cst);
  }
  void And(T mask, plat::Site loc = plat::Site::current())
    requires std::is_unsigned_v<T>
  {
    if (offer(plat::Op::And, bits(mask), 0, loc)) {
      v_.store(static_cast<T>(v_.load(std::memory_order_relaxed) & mask), std::memory_order_relaxed);
      return;
    }
    v_.fetch_and(mask, std::memory_order_seq_cst);
  }

  // A Go plain read or write of a field that other threads also access.
  T get(plat::Site loc = plat::Site::current()) const {
    offer(plat::Op::PlainLoad, 0, 0, loc);
    return v_.load(std::memory_order_relaxed);
  }
  void set(T v, plat::Site loc = plat::Site::current()) {
    offer(plat::Op::PlainStore, bits(v), 0, loc);
    v_.store(v, std::memory_order_relaxed);
  }

  // The cell's value without offering the access to a driver. Only for code outside the port
  // (tests, invariant checks, trace snapshots) that must observe without becoming part of the
  // schedule.
  T peek() const { return v_.load(std::memory_order_relaxed); }

  // The cell itself, for the real platform's futex waits.
  std::atomic<T>& cell() { return v_; }

 private:
  static uint64_t bits(T v) {
    if constexpr (std::is_pointer_v<T>) {
      return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(v));
    } else {
      return static_cast<uint64_t>(v);
    }
  }
  // Offers the access to the driver; true if there is one (see the note at the top).
  bool offer(plat::Op op, uint64_t value, uint64_t expected, const plat::Site& loc) const {
    return plat::offer_access(op, sizeof(T), &v_, value, expected, &holders_, loc);
  }
  // A CAS on a cell that only this OS thread touches.
  bool cas_single(T old, T nv) {
    if (v_.load(std::memory_order_relaxed) != old) return false;
    v_.store(nv, std::memory_order_relaxed);
    return true;
  }

  mutable std::atomic<T> v_;
  mutable uint64_t holders_ = 0;  // driver scratch, see plat::Access::holders
};

// A field guarded by a lock that Go also reads, now and then, without taking it ("sched.pidle !=
// 0" in exitsyscallTryGetP, sched.runq's and sched.gFree's heads). Accesses under the lock are not
// scheduling points (the lock is), so load/store are not offered to the driver; the unlocked read
// is, as a PlainLoad. All of them are relaxed atomics, so the racy read is defined C++.
template <class T>
class LockGuarded {
  static_assert(std::is_pointer_v<T>);

 public:
  constexpr LockGuarded() noexcept = default;
  constexpr explicit LockGuarded(T v) noexcept : v_(v) {}
  LockGuarded(const LockGuarded& o) noexcept : v_(o.load()) {}
  LockGuarded& operator=(const LockGuarded& o) noexcept {
    store(o.load());
    return *this;
  }

  T load() const { return std::atomic_ref<T>(const_cast<T&>(v_)).load(std::memory_order_relaxed); }
  void store(T v) { std::atomic_ref<T>(v_).store(v, std::memory_order_relaxed); }
  // The read Go makes without the lock: an interleaving point.
  T loadRacy(plat::Site loc = plat::Site::current()) const {
    plat::offer_access(plat::Op::PlainLoad, sizeof(T), &v_, 0, 0, nullptr, loc);
    return load();
  }

 private:
  T v_ = nullptr;
};

}  // namespace gmp
