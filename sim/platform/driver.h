// The platform layer's seam. The ported scheduler touches shared memory and the outside world
// only through sim/platform. Each such operation is first offered to the Driver installed on the
// calling OS thread, if any; with no driver installed the operation runs on real hardware (the
// "real" platform: std::atomic, OS threads, futexes). With a driver installed (the "recording"
// platform) the driver sees the operation before it happens and decides when it proceeds: it may
// switch to another execution context inside `access`, advance virtual time, or block the caller.
//
// Contract for drivers:
//   - `access` is called before every atomic or plain shared-memory operation of the port. When
//     it returns, the operation is performed on the real memory cell; the driver must guarantee
//     that no other context of the same simulation runs until the next platform call.
//   - the blocking operations (lock, notesleep, usleep, ...) are fully implemented by the driver:
//     a driver must never block the OS thread; it switches contexts instead.
//   - a simulation runs on one OS thread, so the driver pointer is thread_local.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "sim/platform/site.h"

namespace gmp::rt {
struct g;
}  // namespace gmp::rt

namespace gmp::plat {

// The kinds of shared-memory operation, named after Go's internal/runtime/atomic.
enum class Op : uint8_t {
  Load,          // atomic.Load: sequentially consistent load
  LoadAcquire,   // atomic.LoadAcq
  Store,         // atomic.Store: sequentially consistent store
  StoreRelease,  // atomic.StoreRel
  Cas,           // atomic.Cas
  CasRelease,    // atomic.CasRel
  Add,           // atomic.Xadd
  Swap,          // atomic.Xchg
  Or,            // atomic.Or
  And,           // atomic.And
  PlainLoad,     // a Go plain read of a field that other threads access
  PlainStore,    // a Go plain write of a field that other threads access
  Count_,
};

const char* op_name(Op op);
// Whether op only reads its cell (every other operation writes it, or may).
inline bool is_load(Op op) {
  constexpr uint32_t kLoads = 1u << static_cast<int>(Op::Load) | 1u << static_cast<int>(Op::LoadAcquire) |
                              1u << static_cast<int>(Op::PlainLoad);
  return (kLoads >> static_cast<int>(op) & 1u) != 0;  // one shift, not three comparisons
}

// One shared-memory operation, offered to the driver before it happens.
struct Access {
  Op op;
  uint8_t size;        // 4 or 8 bytes
  const void* addr;    // the cell; identifies it, never used for ordering decisions
  uint64_t value;      // stored value, CAS new value, Add delta, Or/And mask; 0 for loads
  uint64_t expected;   // CAS expected value; 0 otherwise
  // Per-cell scratch a driver may use to model cache coherence (which threads hold a copy of the
  // cell's line); nullptr for cells that have none. The real platform never touches it.
  uint64_t* holders;
  // Where in the port the operation is (file, line, function), for counterexamples. Costs the
  // fast path nothing: drivers with fast_access never see it.
  plat::Site site;
};

struct Note;
struct Mutex;
class Context;

// What a code path costs, charged to the virtual clock by the engine. The amounts live in the
// cost profile (sim/cost), never in the port. Listed here so the port can name them.
enum class Cost : uint8_t {
  SchedulePass,   // the bookkeeping of one schedule() call outside shared-memory accesses
  Gogo,           // switching from g0 to a goroutine's stack
  Mcall,          // switching from a goroutine to g0
  NewProc,        // allocating and initialising a goroutine
  ProcYield,      // one procyield(1): a PAUSE instruction in a spin loop
  SignalHandler,  // running the runtime's signal handler
  GoExit,         // tearing down a finished goroutine
  ChanOp,         // a channel send/recv's own bookkeeping, outside its shared-memory accesses
  SelectOp,       // selectgo's own bookkeeping
  MutexFastPath,  // sync.Mutex's uncontended path
  TimerAdd,       // adding a timer to a P's heap
  SyscallEnterExit,  // the kernel entry and exit of a system call
  NetpollCheck,   // a non-blocking poll of the network poller
  Count_,
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual void access(const Access& a) = 0;
  // A driver whose access() reads only the operation and the holders word may set this; the
  // platform then calls it instead of access(), without building an Access (the hot path of a
  // simulation: one call per shared-memory operation of the port).
  using FastAccess = void (*)(Driver* self, Op op, uint64_t* holders);
  FastAccess fast_access = nullptr;
  virtual void lock(Mutex& l) = 0;
  virtual void unlock(Mutex& l) = 0;
  virtual void notesleep(Note& n) = 0;
  virtual bool notetsleep(Note& n, int64_t ns) = 0;  // true if woken, false on timeout
  virtual void notewakeup(Note& n) = 0;
  virtual void usleep(uint32_t usec) = 0;
  virtual void osyield() = 0;
  virtual int64_t nanotime() = 0;
  virtual uint64_t gettid() = 0;                      // the calling thread's id
  virtual void tgkill(uint64_t tid, int sig) = 0;     // send sig to thread tid
  virtual void charge(Cost c) = 0;
  // Spin-wait loops (plat::SpinLoop, platform.h). Only a driver that sets collapses_spins hears of
  // them: for the others (the timed driver) the loop's marks cost a flag test and nothing more.
  // spin_begin: an iteration starts (user: the loop is a goroutine's own code, not the
  // scheduler's); spin_again: it found nothing and the loop goes round; spin_end: the loop is left.
  bool collapses_spins = false;
  virtual void spin_begin(bool /*user*/, const Site& /*site*/) {}
  virtual void spin_again() {}
  virtual void spin_end() {}
  // CPU work of `work` ns on a reference core; returns the work left if it was cut short (by a
  // signal or the end of a time slice), 0 when done. memory_share (0 to 1): the fraction of it that
  // is memory traffic, which a driver may slow down as other cores get busy.
  virtual int64_t compute(int64_t work, double memory_share) = 0;
  // The calling thread blocks in the kernel for ns (a blocking system call).
  virtual void block_for(int64_t ns) = 0;
  // The calling thread works in the kernel for ns on its core (a system call that computes rather
  // than waits, such as a write to the page cache): it keeps its core, so no wake-up follows. A
  // driver that does not tell the two apart blocks.
  virtual void kernel_work(int64_t ns) { block_for(ns); }
  // The calling thread sleeps on a kernel timer for ns (nanosleep(2)): off its core, and woken late
  // by the OS (timer slack, the wake-up). A driver without an OS model blocks for ns.
  virtual void timer_sleep(int64_t ns) { block_for(ns); }
  virtual void switchto(Context& to) = 0;  // gogo / mcall stack switch
  // Ends the run after a Go throw on a stack with no driver frame below it. Must not return.
  virtual void crash(const char* msg) = 0;
  // Ends the run after a C++ exception other than a Go throw (std::bad_alloc, a failed trace write)
  // escaped a stack with no driver frame below it, where it cannot propagate. The default reports
  // it through crash(); a driver may instead rethrow it where its caller can catch it. Must not
  // return.
  virtual void fail(std::exception_ptr e);
};

namespace detail {
inline thread_local Driver* tls_driver = nullptr;
// The port's call site of the lock, unlock or note operation being handed to the driver (set just
// before the call, for drivers that report where an operation came from).
inline thread_local plat::Site tls_site;
}

// The call site of the runtime lock or note operation now in the driver.
inline const plat::Site& current_site() { return detail::tls_site; }

inline Driver* current_driver() { return detail::tls_driver; }

// Offers one shared-memory access to the driver installed on this thread, through its fast path
// when it has one; false when none is installed (the real platform).
inline bool offer_access(Op op, uint8_t size, const void* addr, uint64_t value, uint64_t expected,
                         uint64_t* holders, const plat::Site& site = plat::Site::current()) {
  Driver* d = current_driver();
  if (d == nullptr) return false;
  if (d->fast_access != nullptr) {
    d->fast_access(d, op, holders);
  } else {
    d->access(Access{op, size, addr, value, expected, holders, site});
  }
  return true;
}

// Installs a driver on this OS thread for the scope's lifetime.
class DriverScope {
 public:
  explicit DriverScope(Driver* d) : prev_(detail::tls_driver) { detail::tls_driver = d; }
  ~DriverScope() { detail::tls_driver = prev_; }
  DriverScope(const DriverScope&) = delete;
  DriverScope& operator=(const DriverScope&) = delete;

 private:
  Driver* prev_;
};

}  // namespace gmp::plat
