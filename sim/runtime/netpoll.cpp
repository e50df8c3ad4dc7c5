// The network poller, as far as timers need it (netpoll.go, netpoll_epoll.go). Programs here do no
// network I/O, so the poller never returns goroutines; what remains is its role as the place an
// idle M sleeps until the next timer: findRunnable's blocking netpoll(delay), and netpollBreak
// (Go writes an eventfd; here a note) to wake it early when an earlier timer appears.
#include "sim/platform/platform.h"
#include "sim/runtime/mutants.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

// netpoll (netpoll_epoll.go): delay < 0 blocks until broken, 0 polls, > 0 blocks for a while.
// epoll_wait takes its timeout in whole milliseconds, so a positive delay becomes waitms: under
// 1 ms it rounds up to 1 ms, below 1e15 ns it is truncated to whole ms, and longer ones are capped
// at 1e9 ms. An idle M waiting for a timer 100 us away sleeps 1 ms (and then finds the timer
// overdue); one 2.7 ms away sleeps 2 ms and comes back to sleep 1 ms more.
gList Runtime::netpoll(int64_t delay) {
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
  if (waitms == 0) return gList{};
  bool broken = true;
  if (waitms < 0) {
    plat::notesleep(netpollNote_);
  } else {
    broken = plat::notetsleep(netpollNote_, static_cast<int64_t>(waitms) * 1000000);
  }
  // Like reading the eventfd when epoll reports it: a break is consumed only once its wake-up has
  // landed. netpollBreak sets netpollWakeSig before it wakes the note, so a poller that timed out
  // in between must leave both alone; clearing the flag then would let the next break wake a note
  // that is still set (the checker found that order: "notewakeup - double wakeup").
  if (broken) {
    plat::noteclear(netpollNote_);
    netpollWakeSig_.Store(0);
  }
  return gList{};
}

// netpollBreak (netpoll_epoll.go): interrupts a blocking netpoll.
void Runtime::netpollBreak() {
  // Failing to cas indicates there is an in-flight wakeup, so we're done here.
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
// that had been counted as waiters; always 0 here.
void Runtime::netpollAdjustWaiters(int32_t delta) {
  if (delta != 0) netpollWaiters.Add(static_cast<uint32_t>(delta));
}

// wakeNetPoller (proc.go): wakes the thread sleeping in the poller if it sleeps past `when`, or
// wakes an idle P to take care of the new timer if none is polling.
void Runtime::wakeNetPoller(int64_t when) {
  if (sched.lastpoll.Load() == 0) {
    // In findRunnable we ensure that when polling the pollUntil field is either zero or the time
    // to which the current poll is expected to run.
    const int64_t pollerPollUntil = sched.pollUntil.Load();
    if (pollerPollUntil == 0 || pollerPollUntil > when) netpollBreak();
  } else if (!mutant(Mutant::TimerAddNoWakep)) {
    // There are no threads in the network poller, try to get one there so it can handle new
    // timers. (Mutant timer-add-no-wakep: before 8fdc79e18a nobody was woken here.)
    wakep();
  }
}

}  // namespace gmp::rt
