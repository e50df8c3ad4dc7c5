// The platform calls of the port other than atomics (see atomic.h): runtime locks, notes (the
// park/unpark of an M), sleeping and yielding an OS thread, the clock, signals and cost charges.
// Each goes to the installed driver, or to the real implementation when none is installed.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <string>

#include "sim/platform/driver.h"
#include "sim/platform/site.h"

namespace gmp::plat {

// A runtime mutex (Go's `mutex`). key: 0 unlocked, 1 locked, 2 locked with sleepers.
struct Mutex {
  std::atomic<uint32_t> key{0};
  // lock_spinbit.go's mutexPreferLowLatency: every waiter may spin (Go: sched.lock only).
  bool prefer_low_latency = false;
  // Driver scratch: the lock word's cache line (as Access::holders) and how many waiters spin.
  uint64_t holders = 0;
  uint32_t spinners = 0;
};

// A one-shot wake-up (Go's `note`). key: 0 clear, 1 woken.
struct Note {
  std::atomic<uint32_t> key{0};
};

void lock(Mutex& l, plat::Site site = plat::Site::current());
void unlock(Mutex& l, plat::Site site = plat::Site::current());
// Go's assertLockHeld, reduced to "someone holds it": the owner is not tracked.
bool lock_held(const Mutex& l);

void noteclear(Note& n, Site site = Site::current());
void notesleep(Note& n, plat::Site site = plat::Site::current());
bool notetsleep(Note& n, int64_t ns, plat::Site site = plat::Site::current());  // true if woken before ns elapsed
void notewakeup(Note& n, plat::Site site = plat::Site::current());

void usleep(uint32_t usec, plat::Site site = plat::Site::current());
void osyield(plat::Site site = plat::Site::current());
int64_t nanotime(plat::Site site = plat::Site::current());
// Threads and signals, as Go's os_linux.go uses them: an M records its thread id (m.procid) when it
// starts, and signalM(mp, sig) is tgkill(getpid(), mp.procid, sig). The handler installed with
// set_signal_handler runs on the receiving thread (the real platform installs it with sigaction;
// a driver calls it on the target's context when the signal is delivered).
uint64_t gettid();
void tgkill(uint64_t tid, int sig, plat::Site site = plat::Site::current());
using SignalHandler = void (*)(int sig);
void set_signal_handler(int sig, SignalHandler h);
SignalHandler signal_handler(int sig);
void charge(Cost c, plat::Site site = plat::Site::current());
// User computation and blocking system calls, for the workload (see Driver).
int64_t compute(int64_t work, plat::Site site = plat::Site::current());
int64_t compute(int64_t work, double memory_share, plat::Site site = plat::Site::current());
void block_for(int64_t ns, plat::Site site = plat::Site::current());
void kernel_work(int64_t ns, plat::Site site = plat::Site::current());
void timer_sleep(int64_t ns, plat::Site site = plat::Site::current());

// A spin-wait loop: one whose iterations, while the shared state they read stays the same, read
// the same values, decide the same and write nothing, so one more of them changes nothing but the
// time (a goroutine's busy-poll; casgstatus waiting for a _Gscan bit to clear). The loop marks
// where an iteration begins and where one that found nothing ends:
//
//   plat::SpinLoop spin(user);
//   for (;;) {
//     spin.begin();
//     ...            // read, and break when there is something new
//     spin.again();  // found nothing: the loop goes round
//   }
//
// (An iteration not opened by begin() is not judged: a loop may call begin() after again(), at the
// end of its body, so that its first try costs nothing.)
//
// A driver that collapses spins (the choice driver) may hold the thread after again() until
// another thread writes something the iteration read: the iterations in between would have read
// the same values and written nothing. A driver that does not (the timed driver, the real
// platform) never hears of the marks. `user`: the loop is a goroutine's own code, so a held thread
// counts as running user code.
class SpinLoop {
 public:
  explicit SpinLoop(bool user, Site site = Site::current()) : user_(user), site_(site) {}
  ~SpinLoop() {
    if (!began_) return;
    if (Driver* d = current_driver(); d != nullptr) d->spin_end();
  }
  SpinLoop(const SpinLoop&) = delete;
  SpinLoop& operator=(const SpinLoop&) = delete;
  void begin() {
    if (Driver* d = current_driver(); d != nullptr && d->collapses_spins) {
      began_ = true;
      d->spin_begin(user_, site_);
    }
  }
  void again() {
    if (!began_) return;
    if (Driver* d = current_driver(); d != nullptr) d->spin_again();
  }

 private:
  bool user_;
  bool began_ = false;  // a driver that collapses spins heard of the loop
  Site site_;
};

// The end of the program after a Go throw that no driver frame can catch (one raised on a
// goroutine's or g0's own stack): the driver stops the run, the real platform prints and aborts.
[[noreturn]] void crash_message(const char* msg);
// What an exception says: its what(), or "out of memory" for std::bad_alloc.
std::string exception_message(const std::exception_ptr& e);

// [[noreturn]] Go throw / fatal, raised as GoFatal.
[[noreturn]] void throw_(const char* msg);
[[noreturn]] void fatal(const char* msg);

// Go's getg(): the goroutine whose code is running on this execution context. Drivers that
// switch contexts set it on every switch.
namespace detail {
inline thread_local rt::g* tls_g = nullptr;
}
inline rt::g* getg() { return detail::tls_g; }
inline void setg(rt::g* gp) { detail::tls_g = gp; }

}  // namespace gmp::plat
