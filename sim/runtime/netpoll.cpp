// The network poller (netpoll.go, netpoll_epoll.go). A goroutine that waits for a descriptor parks
// on its pollDesc (netpollblock); netpoll asks the kernel (here Runtime::net, the simulated
// network) which descriptors became ready and returns the goroutines parked on them. netpoll is
// also the place an idle M sleeps until the next timer: findRunnable's blocking netpoll(delay),
// and netpollBreak (Go writes an eventfd; here a note) to wake it early.
#include <climits>

#include "sim/platform/platform.h"
#include "sim/runtime/mutants.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

// netpoll (netpoll_epoll.go): delay < 0 blocks until broken, 0 polls, > 0 blocks for a while.
// epoll_wait takes its timeout in whole milliseconds, so a positive delay becomes waitms: under
// 1 ms it rounds up to 1 ms, below 1e15 ns it is truncated to whole ms, and longer ones are capped
// at 1e9 ms. An idle M waiting for a timer 100 us away sleeps 1 ms (and then finds the timer
// overdue); one 2.7 ms away sleeps 2 ms and comes back to sleep 1 ms more.
// The wait ends early at the network's next event, as epoll_wait returns when a descriptor becomes
// ready. Each ready descriptor's parked reader or writer, as its event bits say, is unblocked
// (netpollready); the second result is
// the change to netpollWaiters that the caller applies once the goroutines are injected.
std::pair<gList, int32_t> Runtime::netpoll(int64_t delay) {
  int32_t waitms;
  if (delay < 0) {
    waitms = -1;
  } else if (delay == 0) {
    waitms = 0;
  } else if (delay < 1000000) {
    waitms = 1;
  } else if (delay < 1000000000000000) {
    waitms = static_cast<int32_t>(delay / 1000000);
  } else {
    waitms = 1000000000;  // Go's cap on a timer wait: 1e9 ms, about 11.5 days
  }
  if (waitms == 0) {
    // The non-blocking poll is one epoll_wait system call (a blocking one is the note's sleep, whose
    // cost stands for it).
    plat::charge(plat::Cost::NetpollCheck);
  } else {
    // Until the timeout, or the network's next event if that comes first.
    int64_t sleep = waitms < 0 ? -1 : static_cast<int64_t>(waitms) * 1000000;
    if (net != nullptr) {
      const int64_t next = net->nextEvent();
      if (next != INT64_MAX) {
        const int64_t until = std::max<int64_t>(next - net->now(), 0);
        if (sleep < 0 || until < sleep) sleep = until;
      }
    }
    bool broken = true;
    if (sleep < 0) {
      plat::notesleep(netpollNote_);
    } else {
      broken = plat::notetsleep(netpollNote_, sleep);
    }
    // Like reading the eventfd when epoll reports it: a break is consumed only once its wake-up has
    // landed. netpollBreak sets netpollWakeSig before it wakes the note, so a poller that timed out
    // in between must leave both alone; clearing the flag then would let the next break wake a note
    // that is still set (the checker found that order: "notewakeup - double wakeup").
    if (broken) {
      plat::noteclear(netpollNote_);
      netpollWakeSig_.Store(0);
    }
  }
  gList toRun;
  int32_t delta = 0;
  if (net != nullptr && net->nextEvent() != INT64_MAX) {
    std::vector<NetEvent> ready;
    net->takeEvents(net->now(), &ready);
    for (const NetEvent& ev : ready) {
      // A hang-up or an error readies both sides; a peer's shutdown (RDHUP) the reader.
      int32_t mode = 0;
      if ((ev.events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) mode += 'r';
      if ((ev.events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0) mode += 'w';
      if (mode != 0) delta += netpollready(&toRun, ev.pd, mode);
    }
  }
  return {toRun, delta};
}

// netpollready (netpoll.go): the descriptor is ready for mode ('r', 'w' or both); the goroutines
// parked on it join toRun. Returns the change to netpollWaiters for those goroutines.
int32_t Runtime::netpollready(gList* toRun, pollDesc* pd, int32_t mode) {
  int32_t delta = 0;
  g* rg = nullptr;
  g* wg = nullptr;
  if (mode == 'r' || mode == 'r' + 'w') rg = netpollunblock(pd, 'r', true, &delta);
  if (mode == 'w' || mode == 'r' + 'w') wg = netpollunblock(pd, 'w', true, &delta);
  if (rg != nullptr) toRun->push(rg);
  if (wg != nullptr) toRun->push(wg);
  return delta;
}

// netpollblockcommit (netpoll.go): gopark's unlock function. The park goes ahead only if the
// semaphore still says pdWait (no notification came meanwhile); the goroutine then counts as a
// poller waiter.
static bool netpollblockcommit(g* gp, void* gpp) {
  const bool r = static_cast<Atomic<uintptr_t>*>(gpp)->CompareAndSwap(pdWait, reinterpret_cast<uintptr_t>(gp));
  if (r) Runtime::current()->netpollAdjustWaiters(1);
  return r;
}

// netpollblock (netpoll.go): waits for the descriptor to be ready for mode. The semaphore goes
// pdNil -> pdWait -> the goroutine (parked) -> pdReady or pdNil; a notification that comes first
// (pdReady) is consumed without parking. Returns whether the wait ended in readiness.
bool Runtime::netpollblock(pollDesc* pd, int32_t mode, bool waitio) {
  Atomic<uintptr_t>* gpp = mode == 'w' ? &pd->wg : &pd->rg;
  // Set the semaphore to pdWait.
  for (;;) {
    // Consume a notification that is already there.
    if (gpp->CompareAndSwap(pdReady, pdNil)) return true;
    if (gpp->CompareAndSwap(pdNil, pdWait)) break;
    // A goroutine is already waiting: two waiters on one mode would loop here forever.
    const uintptr_t v = gpp->Load();
    if (v != pdReady && v != pdNil) plat::throw_("runtime: double wait");
  }
  // Look at the descriptor's state again now that pdWait is published: a Close that came in
  // between stored closing before it looked at rg/wg, so one of the two sides sees the other.
  // (The simulated descriptors have no deadlines: closing is their only error.)
  if (waitio || pd->closing.Load() == 0) gopark(netpollblockcommit, gpp, waitReason::waitReasonIOWait, 5);
  // Do not lose a pdReady notification that came meanwhile.
  const uintptr_t old = gpp->Swap(pdNil);
  if (old > pdWait) plat::throw_("runtime: corrupted polldesc");
  return old == pdReady;
}

// netpollunblock (netpoll.go): ioready sets the semaphore to pdReady (a notification), otherwise
// to pdNil; returns the goroutine parked on it, if any, for the caller to make runnable. A
// goroutine taken from the semaphore was a counted waiter: *delta goes down by one.
g* Runtime::netpollunblock(pollDesc* pd, int32_t mode, bool ioready, int32_t* delta) {
  Atomic<uintptr_t>* gpp = mode == 'w' ? &pd->wg : &pd->rg;
  for (;;) {
    uintptr_t old = gpp->Load();
    if (old == pdReady) return nullptr;
    // Only ioready sets pdReady; a waiter checks for timeouts and cancels before it waits.
    if (old == pdNil && !ioready) return nullptr;
    const uintptr_t next = ioready ? pdReady : pdNil;
    if (gpp->CompareAndSwap(old, next)) {
      if (old == pdWait) {
        old = pdNil;
      } else if (old != pdNil) {
        *delta -= 1;
      }
      return reinterpret_cast<g*>(old);
    }
  }
}

// poll_runtime_pollReset (netpoll.go): before its first system call a read (write) forgets a
// readiness notification left from before (pdReady from an event that came while nobody waited),
// so that an EAGAIN then parks at once instead of consuming it and trying again.
bool Runtime::pollReset(pollDesc* pd, int32_t mode) {
  if (pd->closing.Load() != 0) return false;
  if (mode == 'r') {
    pd->rg.Store(pdNil);
  } else if (mode == 'w') {
    pd->wg.Store(pdNil);
  }
  return true;
}

// poll_runtime_pollWait (netpoll.go): a closed descriptor fails at once; otherwise park until a
// notification, failing if a Close woke us instead. (Go also retries a wake-up by a deadline that
// was since reset; there are no deadlines here.)
bool Runtime::pollWait(pollDesc* pd, int32_t mode) {
  if (pd->closing.Load() != 0) return false;
  while (!netpollblock(pd, mode, false)) {
    if (pd->closing.Load() != 0) return false;
  }
  return true;
}

// poll_runtime_pollUnblock (netpoll.go): Close's eviction of the descriptor from the poller. It
// publishes closing, then takes any parked reader and writer off the semaphores without a
// notification and readies them; they find the descriptor closed.
void Runtime::pollUnblock(pollDesc* pd) {
  if (pd->closing.Load() != 0) plat::throw_("runtime: unblock on closing polldesc");
  pd->closing.Store(1);
  int32_t delta = 0;
  g* rg = netpollunblock(pd, 'r', false, &delta);
  g* wg = netpollunblock(pd, 'w', false, &delta);
  if (rg != nullptr) goready(rg, 4);
  if (wg != nullptr) goready(wg, 4);
  netpollAdjustWaiters(delta);
}

// netpollBreak (netpoll_epoll.go): interrupts a blocking netpoll.
void Runtime::netpollBreak() {
  // A failed CAS means a wakeup is already on its way: one is enough.
  if (!netpollWakeSig_.CompareAndSwap(0, 1)) return;
  plat::notewakeup(netpollNote_);
}

// netpollGenericInit (netpoll.go): the first timer starts the poller. Double-checked under
// netpollInitLock; netpollinit itself (epoll_create, the eventfd) has nothing to do here.
void Runtime::netpollGenericInit() {
  if (netpollInited.Load() == 0) {
    lock(&netpollInitLock);
    if (netpollInited.Load() == 0) netpollInited.Store(1);
    unlock(&netpollInitLock);
  }
}

// netpollAdjustWaiters (netpoll.go): delta is what netpoll reported for goroutines it readied
// that had been counted as waiters (negative), or +1 when a goroutine parks on a descriptor.
void Runtime::netpollAdjustWaiters(int32_t delta) {
  if (delta != 0) netpollWaiters.Add(static_cast<uint32_t>(delta));
}

// wakeNetPoller (proc.go): wakes the thread sleeping in the poller if it sleeps past `when`, or
// wakes an idle P to take care of the new timer if none is polling.
void Runtime::wakeNetPoller(int64_t when) {
  if (sched.lastpoll.Load() == 0) {
    // An M blocks in the poller (lastpoll 0). findRunnable keeps sched.pollUntil at the end of
    // that poll (0 for none), so the poller is woken only if it would sleep past when.
    const int64_t pollerPollUntil = sched.pollUntil.Load();
    if (pollerPollUntil == 0 || pollerPollUntil > when) netpollBreak();
  } else if (!mutant(Mutant::TimerAddNoWakep)) {
    // No M is in the poller to notice the new timer: wake an idle P (wakep), whose M will take
    // the timer into account. (Mutant timer-add-no-wakep: before 8fdc79e18a nobody was woken
    // here.)
    wakep();
  }
}

}  // namespace gmp::rt
