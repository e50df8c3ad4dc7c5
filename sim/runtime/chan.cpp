// Channels (chan.go). The protocol is stated in chan.h.
//
// Left out with their callers: timer channels (c.timer, maybeRunChan, blockTimerChan), synctest
// bubbles, the race detector and the block profile. Elements are int64 values (chan.h).
#include "sim/runtime/chan.h"

#include <algorithm>

#include "sim/runtime/runtime.h"

namespace gmp::rt {

namespace {
// The value an element pointer holds; nil stands for the zero value (a send of 0).
int64_t elemval(const void* p) { return p == nullptr ? 0 : *static_cast<const int64_t*>(p); }
// typedmemclr (mbarrier.go) of one element.
void elemclr(void* p) { *static_cast<int64_t*>(p) = 0; }
}  // namespace

// chanbuf (chan.go), read through: the element in slot i.
int64_t chanbufload(const hchan* c, uint64_t i) { return i < c->buf.size() ? c->buf[i] : 0; }

// typedmemmove (mbarrier.go) into chanbuf (chan.go).
void chanbufstore(hchan* c, uint64_t i, const void* src) {
  const int64_t v = elemval(src);
  if (i >= c->buf.size()) {
    if (v == 0) return;  // the slot already reads 0
    // Grow by doubling, never past the capacity: a ring used up to slot i needs i+1 slots.
    c->buf.resize(static_cast<size_t>(std::min<uint64_t>(c->dataqsiz, std::max<uint64_t>(i + 1, 2 * c->buf.size()))));
  }
  c->buf[i] = v;
}

// typedmemclr (mbarrier.go) of chanbuf (chan.go).
void chanbufclr(hchan* c, uint64_t i) {
  if (i < c->buf.size()) c->buf[i] = 0;
}

// makechan (chan.go)
hchan* makechan(int64_t size) {
  Runtime* r = Runtime::current();
  if (r == nullptr) plat::throw_("makechan: no current Runtime (use makechan(r, size))");
  return makechan(*r, size);
}

// makechan (chan.go), for a given Runtime.
hchan* makechan(Runtime& r, int64_t size) {
  if (size < 0) panicPlain("makechan: size out of range");
  return rtnew<hchan>(r, static_cast<uint64_t>(size), newSyncId(r));
}

// full (chan.go): whether a send on c would block. One racy word-sized read.
bool full(hchan* c) {
  // dataqsiz never changes after makechan: reading it needs no lock.
  if (c->dataqsiz == 0) return c->recvq.first.get() == nullptr;
  return c->qcount.get() == c->dataqsiz;
}

// chansend1 (chan.go): c <- x.
void chansend1(hchan* c, void* elem) { chansend(c, elem, true); }

// chansend (chan.go): sends on c; reports whether it did. With !block it never sleeps. A sleep
// can end with the channel closed (sg.success false): that panics.
bool chansend(hchan* c, void* ep, bool block) {
  if (c == nullptr) {
    if (!block) return false;
    Runtime::current()->gopark(nullptr, nullptr, waitReason::waitReasonChanSendNilChan, 2);
    plat::throw_("unreachable");
  }
  plat::charge(plat::Cost::ChanOp);  // not in Go: the operation's own bookkeeping (cost profile)

  // Fast path: a failed non-blocking operation, decided without the lock. Observing "not closed"
  // and then "not ready" implies a moment when both held, since a closed channel never becomes
  // not ready for sending.
  if (!block && c->closed.get() == 0 && full(c)) return false;

  lock(&c->lock);

  if (c->closed.get() != 0) {
    unlock(&c->lock);
    panicPlain("send on closed channel");
  }

  if (sudog* sg = c->recvq.dequeue(); sg != nullptr) {
    // Found a waiting receiver: pass the value directly, bypassing the buffer.
    send(c, sg, ep, [c] { unlock(&c->lock); }, 3);
    return true;
  }

  if (c->qcount.get() < c->dataqsiz) {
    // Room in the buffer: the value goes into slot sendx.
    chanbufstore(c, c->sendx, ep);
    c->sendx++;
    if (c->sendx == c->dataqsiz) c->sendx = 0;
    c->qcount.set(c->qcount.get() + 1);
    unlock(&c->lock);
    return true;
  }

  if (!block) {
    unlock(&c->lock);
    return false;
  }

  // Nobody to take the value and no room: queue a sudog on sendq and park. The receiver that
  // dequeues it completes the send (or closechan fails it).
  g* gp = plat::getg();
  sudog* mysg = acquireSudog();
  mysg->releasetime = 0;
  mysg->elem = ep;
  mysg->waitlink = nullptr;
  mysg->g = gp;
  mysg->isSelect = false;
  mysg->c = c;
  gp->waiting = mysg;
  gp->param = nullptr;
  c->sendq.enqueue(mysg);
  // Set until chanparkcommit: between the status change and the unlock, the stack must not shrink.
  gp->parkingOnChan.Store(1);
  Runtime::current()->gopark(&chanparkcommit, &c->lock, waitReason::waitReasonChanSend, 2);

  // Woken by a receiver, or by closechan (success false).
  if (mysg != gp->waiting) plat::throw_("G waiting list is corrupted");
  gp->waiting = nullptr;
  const bool closed = !mysg->success;
  gp->param = nullptr;
  mysg->c = nullptr;
  releaseSudog(mysg);
  if (closed) {
    if (c->closed.get() == 0) plat::throw_("chansend: spurious wakeup");
    panicPlain("send on closed channel");
  }
  return true;
}

// send (chan.go): a send on an empty channel c to the dequeued receiver sg. c must be locked;
// send unlocks it with unlockf, then readies the receiver.
void send(hchan* c, sudog* sg, void* ep, const std::function<void()>& unlockf, int skip) {
  (void)c;
  if (sg->elem != nullptr) {
    // sendDirect: the value goes straight to where the parked receiver wants it.
    *static_cast<int64_t*>(sg->elem) = elemval(ep);
    sg->elem = nullptr;
  }
  g* gp = sg->g;
  unlockf();
  gp->param = sg;
  sg->success = true;
  if (sg->releasetime != 0) sg->releasetime = plat::nanotime();
  Runtime::current()->goready(gp, skip + 1);
}

// closechan (chan.go): closes c and readies every waiter, receivers first, after unlocking.
void closechan(hchan* c) {
  if (c == nullptr) panicPlain("close of nil channel");

  lock(&c->lock);
  if (c->closed.get() != 0) {
    unlock(&c->lock);
    panicPlain("close of closed channel");
  }

  c->closed.set(1);

  gList glist;

  // Every queued receiver is woken with success false (it receives the zero value).
  for (;;) {
    sudog* sg = c->recvq.dequeue();
    if (sg == nullptr) break;
    if (sg->elem != nullptr) {
      elemclr(sg->elem);  // the receiver gets the zero value
      sg->elem = nullptr;
    }
    if (sg->releasetime != 0) sg->releasetime = plat::nanotime();
    g* gp = sg->g;
    gp->param = sg;
    sg->success = false;
    glist.push(gp);
  }

  // Every queued sender is woken with success false, and panics on waking.
  for (;;) {
    sudog* sg = c->sendq.dequeue();
    if (sg == nullptr) break;
    sg->elem = nullptr;
    if (sg->releasetime != 0) sg->releasetime = plat::nanotime();
    g* gp = sg->g;
    gp->param = sg;
    sg->success = false;
    glist.push(gp);
  }
  unlock(&c->lock);

  // goready only after the unlock: a channel's lock is never held while readying a G.
  while (!glist.empty()) {
    g* gp = glist.pop();
    gp->schedlink = nullptr;
    Runtime::current()->goready(gp, 3);
  }
}

// empty (chan.go): whether a receive from c would block, at the moment of the atomic reads.
bool empty(hchan* c) {
  // dataqsiz never changes; the other two reads are atomic.
  if (c->dataqsiz == 0) return c->sendq.first.Load() == nullptr;
  return c->qcount.Load() == 0;
}

// chanrecv1 (chan.go): <-c.
void chanrecv1(hchan* c, void* elem) { chanrecv(c, elem, true); }


// chanrecv (chan.go): receives from c. With !block and nothing available: (false, false). From a
// closed, drained channel: (true, false). Otherwise (true, true).
std::pair<bool, bool> chanrecv(hchan* c, void* ep, bool block) {
  if (c == nullptr) {
    if (!block) return {false, false};
    Runtime::current()->gopark(nullptr, nullptr, waitReason::waitReasonChanReceiveNilChan, 2);
    plat::throw_("unreachable");
  }
  plat::charge(plat::Cost::ChanOp);  // not in Go: the operation's own bookkeeping (cost profile)

  // Fast path: a non-blocking receive that must fail is decided without the lock.
  if (!block && empty(c)) {
    // Seen empty; now read closed. Both reads are atomic so they are not reordered: emptying and
    // closing happen in separate critical sections of the same lock.
    if (c->closed.Load() == 0) {
      // Not closed now, so not closed at the moment it was seen empty: cannot proceed.
      return {false, false};
    }
    // Closed, and a closed channel stays closed. Data may have arrived between the two reads,
    // so look once more.
    if (empty(c)) {
      // Closed and drained: the zero value, not ok.
      if (ep != nullptr) elemclr(ep);
      return {true, false};
    }
  }

  lock(&c->lock);

  if (c->closed.get() != 0) {
    if (c->qcount.get() == 0) {
      unlock(&c->lock);
      if (ep != nullptr) elemclr(ep);
      return {true, false};
    }
    // Closed, but buffered values remain: they are received first, below.
  } else {
    // Open: a queued sender means an unbuffered channel, or a full buffer.
    if (sudog* sg = c->sendq.dequeue(); sg != nullptr) {
      // Found a waiting sender. Unbuffered: receive directly from it. Buffered (so full): take
      // the head of the queue and put the sender's value at the tail (the same slot).
      recv(c, sg, ep, [c] { unlock(&c->lock); }, 3);
      return {true, true};
    }
  }

  if (c->qcount.get() > 0) {
    // A buffered value: take slot recvx, and leave it zeroed.
    if (ep != nullptr) *static_cast<int64_t*>(ep) = chanbufload(c, c->recvx);
    chanbufclr(c, c->recvx);
    c->recvx++;
    if (c->recvx == c->dataqsiz) c->recvx = 0;
    c->qcount.set(c->qcount.get() - 1);
    unlock(&c->lock);
    return {true, true};
  }

  if (!block) {
    unlock(&c->lock);
    return {false, false};
  }

  // Nothing to receive: queue a sudog on recvq and park until a sender or closechan wakes us.
  g* gp = plat::getg();
  sudog* mysg = acquireSudog();
  mysg->releasetime = 0;
  mysg->elem = ep;
  mysg->waitlink = nullptr;
  gp->waiting = mysg;

  mysg->g = gp;
  mysg->isSelect = false;
  mysg->c = c;
  gp->param = nullptr;
  c->recvq.enqueue(mysg);

  // As in chansend: no stack shrinking until chanparkcommit.
  gp->parkingOnChan.Store(1);
  Runtime::current()->gopark(&chanparkcommit, &c->lock, waitReason::waitReasonChanReceive, 2);

  // Woken by a sender (success) or by closechan (no value).
  if (mysg != gp->waiting) plat::throw_("G waiting list is corrupted");
  gp->waiting = nullptr;
  const bool success = mysg->success;
  gp->param = nullptr;
  mysg->c = nullptr;
  releaseSudog(mysg);
  return {true, success};
}

// recv (chan.go): a receive on a full channel c from the dequeued sender sg. Unbuffered: the value
// comes from the sender. Buffered: the receiver takes the head of the queue and the sender's value
// goes to the tail, the same slot since the queue is full. c must be locked; recv unlocks it with
// unlockf, then readies the sender.
void recv(hchan* c, sudog* sg, void* ep, const std::function<void()>& unlockf, int skip) {
  if (c->dataqsiz == 0) {
    // recvDirect: straight from the parked sender's element, when the value is wanted.
    if (ep != nullptr) *static_cast<int64_t*>(ep) = elemval(sg->elem);
  } else {
    // Queue is full: the head moves to the receiver, the sender's value into the freed slot.
    if (ep != nullptr) *static_cast<int64_t*>(ep) = chanbufload(c, c->recvx);
    chanbufstore(c, c->recvx, sg->elem);
    c->recvx++;
    if (c->recvx == c->dataqsiz) c->recvx = 0;
    c->sendx = c->recvx;  // c.sendx = (c.sendx+1) % c.dataqsiz
  }
  sg->elem = nullptr;
  g* gp = sg->g;
  unlockf();
  gp->param = sg;
  sg->success = true;
  if (sg->releasetime != 0) sg->releasetime = plat::nanotime();
  Runtime::current()->goready(gp, skip + 1);
}

// chanparkcommit (chan.go): gopark's unlock function for a channel operation.
bool chanparkcommit(g* gp, void* chanLock) {
  // Go sets gp.activeStackChans first (no stack shrinking here). Safe for stack shrinking now:
  gp->parkingOnChan.Store(0);
  // Unlock only after the stores above: once unlocked, gp may be readied and run.
  unlock(static_cast<plat::Mutex*>(chanLock));
  return true;
}

// selectnbsend (chan.go): select { case c <- v: ... default: ... }.
bool selectnbsend(hchan* c, void* elem) { return chansend(c, elem, false); }

// selectnbrecv (chan.go): select { case v, ok = <-c: ... default: ... }.
std::pair<bool, bool> selectnbrecv(void* elem, hchan* c) { return chanrecv(c, elem, false); }

// chanlen (chan.go)
int64_t chanlen(hchan* c) {
  if (c == nullptr) return 0;
  return static_cast<int64_t>(c->qcount.get());
}

// chancap (chan.go)
int64_t chancap(hchan* c) {
  if (c == nullptr) return 0;
  return static_cast<int64_t>(c->dataqsiz);
}

// waitq.enqueue (chan.go)
void waitq::enqueue(sudog* sgp) {
  sgp->next = nullptr;
  sudog* x = last;
  if (x == nullptr) {
    sgp->prev = nullptr;
    first.set(sgp);
    last = sgp;
    return;
  }
  sgp->prev = x;
  x->next = sgp;
  last = sgp;
}

// waitq.dequeue (chan.go): the first sudog whose goroutine can be woken. A sudog of a select that
// another case already won (selectDone CAS fails) is dropped; the selecting goroutine unlinks its
// other sudogs itself once it holds the locks.
sudog* waitq::dequeue() {
  for (;;) {
    sudog* sgp = first.get();
    if (sgp == nullptr) return nullptr;
    sudog* y = sgp->next;
    if (y == nullptr) {
      first.set(nullptr);
      last = nullptr;
    } else {
      y->prev = nullptr;
      first.set(y);
      sgp->next = nullptr;  // both links nil: unlinked (dequeueSudoG relies on it)
    }

    if (sgp->isSelect) {
      if (!sgp->g->selectDone.CompareAndSwap(0, 1)) {
        // Another case of that select already won: its goroutine is being woken elsewhere and
        // will unlink this sudog itself. Skip it.
        continue;
      }
    }

    return sgp;
  }
}

}  // namespace gmp::rt
