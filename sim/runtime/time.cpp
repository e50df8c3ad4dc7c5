// Timers (time.go). The protocol is stated in time.h.
//
// Left out: channel timers (isChan, sendLock, isSending, timerchandrain), synctest fake time
// (isFake, bubbles), the race detector, time.Timer/Ticker (newTimer, stopTimer, resetTimer,
// timer.stop), timers.take (moving timers off a destroyed P), and the verifyTimers/timerDebug
// debugging aids. Nothing here calls them: a sleep timer is only ever reset, and it runs once.
#include "sim/runtime/time.h"

#include <algorithm>
#include <memory>

#include "sim/runtime/runtime.h"
#include "sim/runtime/sudog.h"

namespace gmp::rt {

// timersInit and timersFree bracket a P's life: the P owns its heap from one to the other.
void timersInit(p* pp) {
  auto* ts = new timers();
  ts->len = &pp->timersLen;
  pp->timers_ = ts;
}

void timersFree(p* pp) {
  delete pp->timers_;
  pp->timers_ = nullptr;
}

TimersCheck timersCheck(p* pp, int64_t now) {
  const timers::Checked c = pp->timers_->check(now);
  return {c.rnow, c.pollUntil, c.ran};
}

int64_t timersWakeTime(p* pp) { return pp->timers_->wakeTime(); }

void timersTake(p* dst, p* src) { dst->timers_->take(src->timers_); }

// timers.take (time.go): moves every timer of src into ts, dropping the zombies. The world is
// stopped, so neither set is locked.
void timers::take(timers* src) {
  if (src->heap.empty()) return;
  for (const timerWhen& tw : src->heap) {
    timer* t = tw.t;
    t->ts = nullptr;
    if ((t->state & timerZombie) != 0) {
      t->state &= static_cast<uint8_t>(~(timerHeaped | timerZombie | timerModified));
    } else {
      t->state &= static_cast<uint8_t>(~timerModified);
      addHeap(t, true);
    }
  }
  src->heap.clear();
  src->zombies.Store(0);
  src->minWhenHeap.Store(0);
  src->minWhenModified.Store(0);
  src->len->Store(0);
  len->Store(static_cast<uint32_t>(heap.size()));
}

// timer.init (time.go)
void timer::init(timerFunc f_, void* arg_) {
  f = f_;
  arg = arg_;
}

// timerWhen.less (time.go): by when, then by the per-timer random value.
bool timerWhen::less(const timerWhen& other) const {
  if (when < other.when) return true;
  if (when > other.when) return false;
  return t->rand < other.t->rand;
}

// timers.lock (time.go)
void timers::lock() { rt::lock(&mu); }

// timers.unlock (time.go): publishes len(heap) first, so len is always the last unlocked length.
void timers::unlock() {
  len->Store(static_cast<uint32_t>(heap.size()));
  rt::unlock(&mu);
}

// timer.lock (time.go)
void timer::lock() { rt::lock(&mu); }

// timer.unlock (time.go): publishes the state bits for the lock-free fast paths, then unlocks.
void timer::unlock() {
  astate.Store(state);
  rt::unlock(&mu);
}

// timer.updateHeap (time.go): brings ts.heap[0], which must be this timer (locked, in a locked
// ts), in line with its state bits: a zombie leaves the heap, a modified timer gets its new when
// and sinks to its place. Returns true if either happened, false if there was nothing to apply.
bool timer::updateHeap() {
  assertLockHeld(mu);
  if (ts == nullptr || ts->heap.empty() || this != ts->heap[0].t) badTimer();
  assertLockHeld(ts->mu);
  if ((state & timerZombie) != 0) {
    // Zombie (stopped): remove it.
    state &= static_cast<uint8_t>(~(timerHeaped | timerZombie | timerModified));
    ts->zombies.Add(-1);
    ts->deleteMin();
    return true;
  }

  if ((state & timerModified) != 0) {
    // Modified: copy the new when into the heap entry and sift it down.
    state &= static_cast<uint8_t>(~timerModified);
    ts->heap[0].when = when;
    ts->siftDown(0);
    ts->updateMinWhenHeap();
    return true;
  }

  return false;
}

// timeSleep (time.go): time.Sleep.
void timeSleep(int64_t ns) {
  if (ns <= 0) return;

  g* gp = plat::getg();
  timer* t = gp->timer_;
  Runtime& r = *Runtime::current();
  if (t == nullptr) {
    t = rtnew<timer>(r);
    t->init(&goroutineReady, gp);
    gp->timer_ = t;
  }
  const int64_t now = plat::nanotime();
  // Go: when := nanotime() + ns; if when < 0 { when = maxWhen } // check for overflow. Go's
  // addition wraps; in C++ signed overflow is undefined, so the same check comes first.
  const int64_t when = ns > maxWhen - now ? maxWhen : now + ns;
  gp->sleepWhen = when;
  r.gopark(&resetForSleep, nullptr, waitReason::waitReasonSleep, 1);
}

// time.AfterFunc (sleep.go), through newTimer (time.go): a timer of its own, armed on the current
// P, that calls f(arg) once when it fires. The caller goes on running.
void afterFunc(int64_t ns, timerFunc f, void* arg) {
  Runtime& r = *Runtime::current();
  // Go's when(d): nanotime() + d, or maxWhen where that overflows; now for d <= 0.
  const int64_t now = plat::nanotime();
  const int64_t when = ns <= 0 ? now : (ns > maxWhen - now ? maxWhen : now + ns);
  timer* t = rtnew<timer>(r);
  t->init(nullptr, nullptr);
  t->modify(when, 0, f, arg, 0);
}

// resetForSleep (time.go): arms the sleep timer once the goroutine is parked; arming it before
// could let the P run goroutineReady on a goroutine that is not parked yet.
bool resetForSleep(g* gp, void* unused) {
  (void)unused;
  gp->timer_->reset(gp->sleepWhen, 0);
  return true;
}

// goroutineReady (time.go): readies the goroutine arg.
void goroutineReady(void* arg, uintptr_t seq, int64_t delay) {
  (void)seq;
  (void)delay;
  Runtime::current()->goready(static_cast<g*>(arg), 0);
}

// timers.addHeap (time.go): adds t, which belongs in a heap, to ts; ts must be locked.
void timers::addHeap(timer* t, bool worldStopped) {
  if (!worldStopped) assertLockHeld(mu);
  // Timers rely on the network poller: start it with the first one.
  Runtime& r = *Runtime::current();
  if (r.netpollInited.Load() == 0) r.netpollGenericInit();
  if (t->ts != nullptr) plat::throw_("ts set in timer");
  t->ts = this;
  heap.push_back(timerWhen{t, t->when});
  siftUp(static_cast<int>(heap.size()) - 1);
  if (t == heap[0].t) updateMinWhenHeap(worldStopped);
}

// timers.deleteMin (time.go): removes heap[0]; ts must be locked.
void timers::deleteMin() {
  assertLockHeld(mu);
  timer* t = heap[0].t;
  if (t->ts != this) plat::throw_("wrong timers");
  t->ts = nullptr;
  const size_t last = heap.size() - 1;
  if (last > 0) heap[0] = heap[last];
  heap.pop_back();
  if (last > 0) siftDown(0);
  updateMinWhenHeap();
  if (last == 0) {
    // An empty heap holds no timerModified timer either.
    minWhenModified.Store(0);
  }
}

// timer.modify (time.go): sets when and period (and f, arg, seq if f is non-nil); reports whether
// the timer was pending. A heaped timer is only marked modified; an unheaped one is added to the
// current P's heap.
bool timer::modify(int64_t when_, int64_t period_, timerFunc f_, void* arg_, uintptr_t seq_) {
  if (when_ <= 0) plat::throw_("timer when must be positive");
  if (period_ < 0) plat::throw_("timer period must be non-negative");
  plat::charge(plat::Cost::TimerAdd);  // not in Go: the heap bookkeeping's cost (cost profile)

  lock();
  period = period_;
  if (f_ != nullptr) {
    f = f_;
    arg = arg_;
    seq = seq_;
  }

  bool wake = false;
  const bool pending = when > 0;
  when = when_;
  if ((state & timerHeaped) != 0) {
    state |= timerModified;
    if ((state & timerZombie) != 0) {
      // A zombie (stopped, still heaped) that is Reset becomes live again and leaves the count.
      ts->zombies.Add(-1);
      state &= static_cast<uint8_t>(~timerZombie);
    }
    // Only t.when changed: its heap entry keeps the old when until timers.adjust or
    // updateHeap catches up.
    if (const int64_t min = ts->minWhenModified.Load(); min == 0 || when_ < min) {
      wake = true;
      // Publish timerModified in astate before lowering minWhenModified, to synchronize with
      // timers.adjust.
      astate.Store(state);
      ts->updateMinWhenModified(when_);
    }
  }

  const bool add = needsAdd();

  unlock();

  if (add) maybeAdd();
  if (wake) Runtime::current()->wakeNetPoller(when_);

  return pending;
}

// timer.needsAdd (time.go): whether t must be added to a heap; t must be locked.
bool timer::needsAdd() {
  assertLockHeld(mu);
  return (state & timerHeaped) == 0 && when > 0;
}

// timer.maybeAdd (time.go): adds t to the current P's heap if it needs to be in one. No timer or
// heap lock may be held (ts.mu comes before t.mu). acquirem keeps the goroutine on this P between
// choosing the heap and locking it.
void timer::maybeAdd() {
  Runtime& r = *Runtime::current();
  m* mp = r.acquirem();
  timers* tsl = mp->p->timers_;
  tsl->lock();
  tsl->cleanHead();
  lock();
  int64_t whenAdded = 0;
  bool wake = false;
  if (needsAdd()) {
    state |= timerHeaped;
    whenAdded = when;
    const int64_t wakeTime = tsl->wakeTime();
    wake = wakeTime == 0 || whenAdded < wakeTime;
    tsl->addHeap(this);
  }
  unlock();
  tsl->unlock();
  r.releasem(mp);
  if (wake) r.wakeNetPoller(whenAdded);
}

// timer.reset (time.go)
bool timer::reset(int64_t when_, int64_t period_) { return modify(when_, period_, nullptr, nullptr, 0); }

// timers.cleanHead (time.go): removes zombies at the tail and fixes up the head until heap[0]
// needs no adjustment. ts must be locked.
void timers::cleanHead() {
  assertLockHeld(mu);
  g* gp = plat::getg();
  for (;;) {
    if (heap.empty()) return;

    // This loop runs under the timers lock, where no preemption can land: a goroutine asked to
    // stop (preemptStop) leaves the rest of the cleaning for later.
    if (gp->preemptStop) return;

    // Delete zombies from the tail first: no heap adjustment needed, and a zombie swapped out of
    // heap[0] is then more likely replaced by a live timer.
    const size_t n = heap.size();
    if (timer* t = heap[n - 1].t; (t->astate.Load() & timerZombie) != 0) {
      t->lock();
      if ((t->state & timerZombie) != 0) {
        t->state &= static_cast<uint8_t>(~(timerHeaped | timerZombie | timerModified));
        t->ts = nullptr;
        zombies.Add(-1);
        heap.pop_back();
      }
      t->unlock();
      continue;
    }

    timer* t = heap[0].t;
    if (t->ts != this) plat::throw_("bad ts");

    if ((t->astate.Load() & (timerModified | timerZombie)) == 0) {
      // Fast path: the head's published bits (astate) show nothing to apply.
      return;
    }

    t->lock();
    const bool updated = t->updateHeap();
    t->unlock();
    if (!updated) {
      // The head was already in order.
      return;
    }
  }
}

// timers.adjust (time.go): moves modified timers to their place and removes zombies, once the
// earliest modified timer is due (or when forced). ts must be locked.
//
// wakeTime stays exact throughout: minWhenHeap is first lowered to wakeTime(), then
// minWhenModified cleared (later modifications lower it again), then the heap scanned, then
// minWhenHeap set to heap[0].when. A modification racing with the clear is seen by the scan:
// modify publishes timerModified in astate before it lowers minWhenModified.
void timers::adjust(int64_t now, bool force) {
  assertLockHeld(mu);
  // Not yet time for the earliest modified timer: postpone the scan.
  if (!force) {
    const int64_t first = minWhenModified.Load();
    if (first == 0 || first > now) return;
  }

  minWhenHeap.Store(wakeTime());
  minWhenModified.Store(0);

  bool changed = false;
  for (int i = 0; i < static_cast<int>(heap.size()); i++) {
    timerWhen* tw = &heap[static_cast<size_t>(i)];
    timer* t = tw->t;
    if (t->ts != this) plat::throw_("bad ts");

    if ((t->astate.Load() & (timerModified | timerZombie)) == 0) {
      // Does not need adjustment.
      continue;
    }

    t->lock();
    if ((t->state & timerHeaped) == 0) {
      badTimer();
    } else if ((t->state & timerZombie) != 0) {
      zombies.Add(-1);
      t->state &= static_cast<uint8_t>(~(timerHeaped | timerZombie | timerModified));
      const size_t n = heap.size();
      heap[static_cast<size_t>(i)] = heap[n - 1];
      heap.pop_back();
      t->ts = nullptr;
      i--;
      changed = true;
    } else if ((t->state & timerModified) != 0) {
      tw->when = t->when;
      t->state &= static_cast<uint8_t>(~timerModified);
      changed = true;
    }
    t->unlock();
  }

  if (changed) initHeap();
  updateMinWhenHeap();
}

// timers.wakeTime (time.go): when the netpoller should wake for ts; 0 if no timers. Reads
// minWhenModified before minWhenHeap: if it sees the former cleared by adjust, it sees the
// latter already lowered.
int64_t timers::wakeTime() {
  const int64_t nextWhen = minWhenModified.Load();
  int64_t when = minWhenHeap.Load();
  if (when == 0 || (nextWhen != 0 && nextWhen < when)) when = nextWhen;
  return when;
}

// timers.check (time.go): runs the timers of ts that are due. now == 0 means "read the clock".
// Returns the time used, the time the next timer is due (0: none; else > rnow) and whether any
// timer ran.
timers::Checked timers::check(int64_t now) {
  // Nothing due yet, among heaped and modified timers: nothing to do.
  const int64_t next = wakeTime();
  if (next == 0) {
    // No timers to run or adjust.
    return {now, 0, false};
  }

  if (now == 0) now = plat::nanotime();

  // On the local P, clear out many deleted timers (local only, to reduce contention).
  const int32_t zombiesNow = zombies.Load();
  if (zombiesNow < 0) badTimer();
  p* lp = plat::getg()->m->p;
  bool force = lp != nullptr && this == lp->timers_ &&
               static_cast<int>(zombiesNow) > static_cast<int>(len->Load()) / 4;

  if (now < next && !force) {
    // Nothing due yet, and too few zombies to force a clean-up: done without the lock.
    return {now, next, false};
  }

  int64_t pollUntil = 0;
  bool ran = false;
  lock();
  if (!heap.empty()) {
    adjust(now, false);
    while (!heap.empty()) {
      // run drops ts's lock while the timer's f runs.
      if (const int64_t tw = run(now); tw != 0) {
        if (tw > 0) pollUntil = tw;
        break;
      }
      ran = true;
    }

    // The forced adjustment comes after run: faster under contention (Go's measurement).
    force = false;
    if (lp != nullptr && this == lp->timers_) {
      const int nzombies = static_cast<int>(zombies.Load());  // before len, as Go evaluates it
      force = nzombies > static_cast<int>(len->Load()) / 4;
    }
    if (force) adjust(now, true);
  }
  unlock();

  return {now, pollUntil, ran};
}

// timers.run (time.go): runs heap[0] if it is due. The result is 0 after running a timer, -1 for
// an empty heap, otherwise the time heap[0] is due. ts must be locked; running a timer unlocks it
// for a while.
int64_t timers::run(int64_t now) {
  assertLockHeld(mu);
  for (;;) {  // Redo
    if (heap.empty()) return -1;
    const timerWhen tw = heap[0];
    timer* t = tw.t;
    if (t->ts != this) plat::throw_("bad ts");

    if ((t->astate.Load() & (timerModified | timerZombie)) == 0 && tw.when > now) {
      // Fast path: not ready to run.
      return tw.when;
    }

    t->lock();
    if (t->updateHeap()) {
      t->unlock();
      continue;  // goto Redo
    }

    if ((t->state & timerHeaped) == 0 || (t->state & timerModified) != 0) badTimer();

    if (t->when > now) {
      // Not ready to run.
      t->unlock();
      return t->when;
    }

    t->unlockAndRun(now);
    assertLockHeld(mu);  // unlockAndRun relocked ts; t stays unlocked
    return 0;
  }
}

// timer.unlockAndRun (time.go): t is locked, and so is t.ts if set. Reschedules or removes t,
// unlocks t and t.ts, runs f, and relocks t.ts.
void timer::unlockAndRun(int64_t now) {
  assertLockHeld(mu);
  if (ts != nullptr) assertLockHeld(ts->mu);

  if ((state & (timerModified | timerZombie)) != 0) badTimer();

  const timerFunc fn = f;
  void* const a = arg;
  const uintptr_t sq = seq;
  int64_t next;
  const int64_t delay = now - when;
  if (period > 0) {
    // Periodic: t stays in the heap, due again at the first when + k*period after now (ticks
    // missed while late are skipped, not queued).
    next = when + period * (1 + delay / period);
    if (next < 0) next = maxWhen;  // saturate on overflow
  } else {
    next = 0;
  }
  timers* tsl = ts;
  when = next;
  if ((state & timerHeaped) != 0) {
    state |= timerModified;
    if (next == 0) {
      state |= timerZombie;
      ts->zombies.Add(1);
    }
    updateHeap();
  }

  unlock();

  if (tsl != nullptr) tsl->unlock();

  fn(a, sq, delay);

  if (tsl != nullptr) tsl->lock();
}

// timers.updateMinWhenHeap (time.go): minWhenHeap = heap[0].when; ts must be locked.
void timers::updateMinWhenHeap(bool worldStopped) {
  if (!worldStopped) assertLockHeld(mu);
  if (heap.empty()) {
    minWhenHeap.Store(0);
  } else {
    minWhenHeap.Store(heap[0].when);
  }
}

// timers.updateMinWhenModified (time.go): lowers minWhenModified to when if it is larger; ts need
// not be locked.
void timers::updateMinWhenModified(int64_t when) {
  for (;;) {
    const int64_t old = minWhenModified.Load();
    if (old != 0 && old < when) return;
    if (minWhenModified.CompareAndSwap(old, when)) return;
  }
}

// timeSleepUntil (time.go): when the next timer of any P is due; maxWhen if none. Only sysmon and
// checkdead call it.
int64_t timeSleepUntil() {
  Runtime& r = *Runtime::current();
  int64_t next = maxWhen;
  // Go holds allpLock here to keep allp from changing; the port takes none, and reads allp afresh
  // at each step instead (procresize may run between two of them).
  for (size_t i = 0; i < r.allp.size(); i++) {
    p* pp = r.allp[i];
    if (pp == nullptr || pp->timers_ == nullptr) continue;
    if (const int64_t w = pp->timers_->wakeTime(); w != 0) next = std::min(next, w);
  }
  return next;
}

// timers.siftUp (time.go): moves heap[i] up to its place.
void timers::siftUp(int i) {
  if (i >= static_cast<int>(heap.size())) badTimer();
  const timerWhen tw = heap[static_cast<size_t>(i)];
  if (tw.when <= 0) badTimer();
  while (i > 0) {
    const int pi = static_cast<int>(static_cast<unsigned>(i - 1) / timerHeapN);  // parent
    if (!tw.less(heap[static_cast<size_t>(pi)])) break;
    heap[static_cast<size_t>(i)] = heap[static_cast<size_t>(pi)];
    i = pi;
  }
  if (heap[static_cast<size_t>(i)].t != tw.t) heap[static_cast<size_t>(i)] = tw;
}

// timers.siftDown (time.go): moves heap[i] down to its place.
void timers::siftDown(int i) {
  const int n = static_cast<int>(heap.size());
  if (i >= n) badTimer();
  if (i * timerHeapN + 1 >= n) return;
  const timerWhen tw = heap[static_cast<size_t>(i)];
  if (tw.when <= 0) badTimer();
  for (;;) {
    const int leftChild = i * timerHeapN + 1;
    if (leftChild >= n) break;
    timerWhen w = tw;
    int c = -1;
    for (int j = leftChild; j < std::min(leftChild + timerHeapN, n); j++) {
      if (heap[static_cast<size_t>(j)].less(w)) {
        w = heap[static_cast<size_t>(j)];
        c = j;
      }
    }
    if (c < 0) break;
    heap[static_cast<size_t>(i)] = heap[static_cast<size_t>(c)];
    i = c;
  }
  if (heap[static_cast<size_t>(i)].t != tw.t) heap[static_cast<size_t>(i)] = tw;
}

// timers.initHeap (time.go): restores heap order in O(n).
void timers::initHeap() {
  if (heap.size() <= 1) return;
  for (int i = static_cast<int>(static_cast<unsigned>(heap.size() - 1 - 1) / timerHeapN); i >= 0; i--) {
    siftDown(i);
  }
}

// badTimer (time.go)
void badTimer() { plat::throw_("timer data corruption"); }

}  // namespace gmp::rt
