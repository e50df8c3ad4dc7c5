// Dispatch of the platform calls: to the installed driver, else to the real OS thread.
#include "sim/platform/platform.h"

#include <sched.h>
#include <cstdio>
#include <cstdlib>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "sim/platform/context.h"
#include "sim/platform/throw.h"

namespace gmp::plat {

const char* op_name(Op op) {
  switch (op) {
    case Op::Load: return "Load";
    case Op::LoadAcquire: return "LoadAcq";
    case Op::Store: return "Store";
    case Op::StoreRelease: return "StoreRel";
    case Op::Cas: return "Cas";
    case Op::CasRelease: return "CasRel";
    case Op::Add: return "Xadd";
    case Op::Swap: return "Xchg";
    case Op::Or: return "Or";
    case Op::And: return "And";
    case Op::PlainLoad: return "PlainLoad";
    case Op::PlainStore: return "PlainStore";
    case Op::Count_: break;
  }
  return "?";
}

// Real platform: a three-state futex mutex (Drepper, "Futexes Are Tricky", mutex2), on C++20
// atomic wait/notify, which are futexes on Linux.
void lock(Mutex& l, plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->lock(l);
  }
  uint32_t c = 0;
  if (l.key.compare_exchange_strong(c, 1, std::memory_order_acquire)) return;
  if (c != 2) c = l.key.exchange(2, std::memory_order_acquire);
  while (c != 0) {
    l.key.wait(2, std::memory_order_relaxed);
    c = l.key.exchange(2, std::memory_order_acquire);
  }
}

void unlock(Mutex& l, plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->unlock(l);
  }
  if (l.key.exchange(0, std::memory_order_release) == 2) l.key.notify_one();
}

bool lock_held(const Mutex& l) { return l.key.load(std::memory_order_relaxed) != 0; }

// Go's noteclear is a plain store of the key; under a driver it is offered as one.
void noteclear(Note& n, Site site) {
  offer_access(Op::Store, sizeof(uint32_t), &n.key, 0, 0, nullptr, site);
  n.key.store(0, std::memory_order_relaxed);
}

void notesleep(Note& n, plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->notesleep(n);
  }
  while (n.key.load(std::memory_order_acquire) == 0) n.key.wait(0, std::memory_order_acquire);
}

bool notetsleep(Note& n, int64_t ns, plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->notetsleep(n, ns);
  }
  if (ns < 0) {
    notesleep(n);
    return true;
  }
  // The real platform polls: notetsleep is only used by sysmon-like loops in stress runs.
  const int64_t deadline = nanotime() + ns;
  while (n.key.load(std::memory_order_acquire) == 0) {
    if (nanotime() >= deadline) return false;
    sched_yield();
  }
  return true;
}

// The key's exchange is Go's atomic.Xchg: under a driver it is offered as an access of its own
// first, so that the wake-up becomes visible at a scheduling point of its own, not together with
// whatever operation came before it. The driver's notewakeup is the futex wake that follows.
void notewakeup(Note& n, plat::Site site) {
  Driver* d = current_driver();
  if (d != nullptr) offer_access(Op::Swap, sizeof(uint32_t), &n.key, 1, 0, nullptr, site);
  if (n.key.exchange(1, std::memory_order_release) != 0) throw_("notewakeup - double wakeup");
  if (d != nullptr) {
    detail::tls_site = site;
    return d->notewakeup(n);
  }
  n.key.notify_all();
}

void usleep(uint32_t usec, plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->usleep(usec);
  }
  timespec ts{static_cast<time_t>(usec / 1000000), static_cast<long>(usec % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

void osyield(plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->osyield();
  }
  sched_yield();
}

int64_t nanotime(plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->nanotime();
  }
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

uint64_t gettid() {
  if (Driver* d = current_driver()) return d->gettid();
  return static_cast<uint64_t>(::gettid());
}

void tgkill(uint64_t tid, int sig, plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->tgkill(tid, sig);
  }
  if (::tgkill(::getpid(), static_cast<pid_t>(tid), sig) != 0) throw_("tgkill failed");
}

namespace {
constexpr int kMaxSignal = 65;
std::atomic<SignalHandler> handlers[kMaxSignal];
void dispatch_signal(int sig) {
  if (SignalHandler h = handlers[sig].load(std::memory_order_acquire)) h(sig);
}
}  // namespace

void set_signal_handler(int sig, SignalHandler h) {
  if (sig <= 0 || sig >= kMaxSignal) throw_("set_signal_handler: bad signal number");
  handlers[sig].store(h, std::memory_order_release);
  if (current_driver() != nullptr) return;  // drivers deliver signals themselves
  struct sigaction sa {};
  sa.sa_handler = h != nullptr ? &dispatch_signal : SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(sig, &sa, nullptr);
}

SignalHandler signal_handler(int sig) {
  if (sig <= 0 || sig >= kMaxSignal) return nullptr;
  return handlers[sig].load(std::memory_order_acquire);
}

int64_t compute(int64_t work, plat::Site site) { return compute(work, 0.0, site); }

int64_t compute(int64_t work, double memory_share, plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->compute(work, memory_share);
  }
  // Real hardware: burn the CPU for that long.
  const int64_t end = nanotime() + work;
  while (nanotime() < end) {
  }
  return 0;
}

namespace {

// Real hardware: a blocking call or a timed sleep is a nanosleep(2).
void real_sleep(int64_t ns) {
  if (ns <= 0) return;
  timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  nanosleep(&ts, nullptr);
}

}  // namespace

void block_for(int64_t ns, plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->block_for(ns);
  }
  real_sleep(ns);
}

void kernel_work(int64_t ns, plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->kernel_work(ns);
  }
  // Real hardware: the thread stays busy, as in compute.
  const int64_t end = nanotime() + ns;
  while (nanotime() < end) {
  }
}

void timer_sleep(int64_t ns, plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    return d->timer_sleep(ns);
  }
  real_sleep(ns);
}

void charge(Cost c, plat::Site site) {
  if (Driver* d = current_driver()) {
    detail::tls_site = site;
    d->charge(c);
  }
  // Real hardware charges itself.
}

void throw_(const char* msg) { throw GoFatal(GoFatal::Kind::Throw, msg); }
void fatal(const char* msg) { throw GoFatal(GoFatal::Kind::Fatal, msg); }

}  // namespace gmp::plat

namespace gmp::plat {

namespace {
thread_local Context* tls_context = nullptr;
}

// A context's bottom frame. This stack is abandoned after crash(), never unwound, so nothing
// that owns heap memory may be alive on it then: the message is copied out of the exception into
// a per-thread buffer and the exception is released before the crash; any other exception is moved
// out to the driver, which owns it from then on. The buffer is not on this frame because every
// goroutine's stack holds this frame, and a parked goroutine's frames are what it costs in memory.
void Context::main(void* self) {
  static thread_local char msg[1024];
  auto* c = static_cast<Context*>(self);
  std::exception_ptr err;
  try {
    c->entry_(c->arg_);
    std::snprintf(msg, sizeof msg, "fatal error: execution context returned");
  } catch (const GoFatal& f) {
    std::snprintf(msg, sizeof msg, "%s", f.what());
  } catch (...) {
    err = std::current_exception();
  }
  if (err) {
    std::snprintf(msg, sizeof msg, "fatal error: %s", exception_message(err).c_str());
    if (Driver* d = current_driver()) d->fail(std::move(err));
    err = nullptr;
  }
  crash_message(msg);
}

std::string exception_message(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return "out of memory";
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

void Driver::fail(std::exception_ptr e) {
  char msg[1024];  // crash() does not return: nothing owning memory may be alive on this frame
  std::snprintf(msg, sizeof msg, "fatal error: %s", exception_message(e).c_str());
  e = nullptr;
  crash(msg);
}

void crash_message(const char* msg) {
  if (Driver* d = current_driver()) d->crash(msg);
  std::fprintf(stderr, "%s\n", msg);
  std::abort();
}

Context* current_context() { return tls_context; }

void set_current_context(Context* ctx) {
  tls_context = ctx;
  setg(ctx != nullptr ? ctx->g : nullptr);
}

void switchto(Context& to) {
  if (Driver* d = current_driver()) return d->switchto(to);
  Context* from = tls_context;
  set_current_context(&to);
  Fiber::switch_to(from->fiber, to.fiber);
}

}  // namespace gmp::plat
