// The select statement (select.go). The protocol is stated in select.h.
//
// Left out: synctest bubbles, timer channels, the race/msan/asan hooks and the block profile.
// Elements are int64 values, copied as chan.cpp copies them (chan.h).
#include "sim/runtime/select.h"

#include "sim/runtime/rand.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

// sellock (select.go): locks the cases' channels in lock order, each once.
void sellock(std::span<scase> scases, std::span<uint16_t> lockorder) {
  hchan* c = nullptr;
  for (uint16_t o : lockorder) {
    hchan* c0 = scases[o].c;
    if (c0 != c) {
      c = c0;
      lock(&c->lock);
    }
  }
}

// selunlock (select.go): unlocks in reverse lock order. Nothing of the select may be touched after
// the last unlock: the selecting goroutine may already be running again and gone.
void selunlock(std::span<scase> scases, std::span<uint16_t> lockorder) {
  for (int i = static_cast<int>(lockorder.size()) - 1; i >= 0; i--) {
    hchan* c = scases[lockorder[i]].c;
    if (i > 0 && c == scases[lockorder[i - 1]].c) continue;  // same c at i-1: unlock it there
    unlock(&c->lock);
  }
}

// selparkcommit (select.go): gopark's unlock function for a select. gp.waiting holds the sudogs
// in lock order; each channel is unlocked after its last sudog, since an unlocked channel's
// sudogs may change at once (c and waitlink included).
bool selparkcommit(g* gp, void* unused) {
  (void)unused;
  // Go sets gp.activeStackChans first (no stack shrinking here). Safe for stack shrinking now:
  gp->parkingOnChan.Store(0);
  hchan* lastc = nullptr;
  for (sudog* sg = gp->waiting; sg != nullptr; sg = sg->waitlink) {
    if (sg->c != lastc && lastc != nullptr) unlock(&lastc->lock);
    lastc = sg->c;
  }
  if (lastc != nullptr) unlock(&lastc->lock);
  return true;
}

// selectgo (select.go)
std::pair<int, bool> selectgo(scase* cas0, uint16_t* order0, int nsends, int nrecvs, bool block) {
  g* gp = plat::getg();
  plat::charge(plat::Cost::SelectOp);  // not in Go: selectgo's own bookkeeping (cost profile)

  const int ncases = nsends + nrecvs;
  std::span<scase> scases(cas0, static_cast<size_t>(ncases));
  std::span<uint16_t> pollorder(order0, static_cast<size_t>(ncases));
  std::span<uint16_t> lockorder(order0 + ncases, static_cast<size_t>(ncases));

  // pollorder: a random permutation (inside-out Fisher-Yates with cheaprandn) of the cases.
  int norder = 0;
  for (int i = 0; i < ncases; i++) {
    scase* cas = &scases[static_cast<size_t>(i)];
    // A case on a nil channel can never proceed: it is in neither order.
    if (cas->c == nullptr) {
      cas->elem = nullptr;
      continue;
    }
    const uint32_t j = cheaprandn(static_cast<uint32_t>(norder + 1));
    pollorder[static_cast<size_t>(norder)] = pollorder[j];
    pollorder[j] = static_cast<uint16_t>(i);
    norder++;
  }
  pollorder = pollorder.first(static_cast<size_t>(norder));
  lockorder = lockorder.first(static_cast<size_t>(norder));

  const waitReason reason = waitReason::waitReasonSelect;

  // Sort the cases by channel sort key to get the locking order: a heap sort, for n log n time and
  // constant stack.
  for (int i = 0; i < norder; i++) {
    int j = i;
    // Fed in poll order, so cases on one channel keep their random relative order.
    hchan* c = scases[pollorder[i]].c;
    while (j > 0 && scases[lockorder[(j - 1) / 2]].c->sortkey() < c->sortkey()) {
      const int k = (j - 1) / 2;
      lockorder[j] = lockorder[k];
      j = k;
    }
    lockorder[j] = pollorder[i];
  }
  for (int i = norder - 1; i >= 0; i--) {
    const uint16_t o = lockorder[i];
    hchan* c = scases[o].c;
    lockorder[i] = lockorder[0];
    int j = 0;
    for (;;) {
      int k = j * 2 + 1;
      if (k >= i) break;
      if (k + 1 < i && scases[lockorder[k]].c->sortkey() < scases[lockorder[k + 1]].c->sortkey()) k++;
      if (c->sortkey() < scases[lockorder[k]].c->sortkey()) {
        lockorder[j] = lockorder[k];
        j = k;
        continue;
      }
      break;
    }
    lockorder[j] = o;
  }

  // Every channel of the select, locked once each, in lock order.
  sellock(scases, lockorder);

  sudog* sg = nullptr;
  hchan* c = nullptr;
  scase* k = nullptr;
  sudog* sglist = nullptr;
  sudog* sgnext = nullptr;
  sudog** nextp = nullptr;
  int casi = 0;
  scase* cas = nullptr;
  bool caseSuccess = false;
  bool recvOK = false;

  // Pass 1, in poll order: the first case that can proceed now (a waiting peer, the buffer, or a
  // closed channel) is taken.
  for (uint16_t casei : pollorder) {
    casi = casei;
    cas = &scases[casi];
    c = cas->c;

    if (casi >= nsends) {
      sg = c->sendq.dequeue();
      if (sg != nullptr) goto recv;
      if (c->qcount.get() > 0) goto bufrecv;
      if (c->closed.get() != 0) goto rclose;
    } else {
      if (c->closed.get() != 0) goto sclose;
      sg = c->recvq.dequeue();
      if (sg != nullptr) goto send;
      if (c->qcount.get() < c->dataqsiz) goto bufsend;
    }
  }

  if (!block) {
    selunlock(scases, lockorder);
    casi = -1;
    goto retc;
  }

  // Pass 2: nothing ready, so a sudog goes on every channel's queue, linked from gp.waiting in
  // lock order (selparkcommit unlocks along that list).
  if (gp->waiting != nullptr) plat::throw_("gp.waiting != nil");
  nextp = &gp->waiting;
  for (uint16_t casei : lockorder) {
    casi = casei;
    cas = &scases[casi];
    c = cas->c;
    sudog* sgi = acquireSudog();
    sgi->g = gp;
    sgi->isSelect = true;
    sgi->elem = cas->elem;
    sgi->releasetime = 0;
    sgi->c = c;
    *nextp = sgi;
    nextp = &sgi->waitlink;

    if (casi < nsends) {
      c->sendq.enqueue(sgi);
    } else {
      c->recvq.enqueue(sgi);
    }
  }

  // Park until one case's peer (or a close) wakes us; gp.param will be that case's sudog.
  gp->param = nullptr;
  // No stack shrinking until selparkcommit, as in chansend.
  gp->parkingOnChan.Store(1);
  Runtime::current()->gopark(&selparkcommit, nullptr, reason, 1);

  sellock(scases, lockorder);

  gp->selectDone.Store(0);
  sg = static_cast<sudog*>(gp->param);
  gp->param = nullptr;

  // Pass 3: the winning case is the one whose sudog the waker dequeued (gp.param). Every other
  // sudog is still queued and must be unlinked now, or sudogs of finished selects would pile up
  // on channels that see no traffic. The sudogs are singly linked in lock order.
  casi = -1;
  cas = nullptr;
  caseSuccess = false;
  sglist = gp->waiting;
  // The sudogs' elem, c and isSelect are cleared before gp.waiting lets go of them.
  for (sudog* sg1 = gp->waiting; sg1 != nullptr; sg1 = sg1->waitlink) {
    sg1->isSelect = false;
    sg1->elem = nullptr;
    sg1->c = nullptr;
  }
  gp->waiting = nullptr;

  for (uint16_t casei : lockorder) {
    k = &scases[casei];
    if (sg == sglist) {
      // The winner: its waker already took it off the queue.
      casi = casei;
      cas = k;
      caseSuccess = sglist->success;
    } else {
      c = k->c;
      if (casei < nsends) {
        c->sendq.dequeueSudoG(sglist);
      } else {
        c->recvq.dequeueSudoG(sglist);
      }
    }
    sgnext = sglist->waitlink;
    sglist->waitlink = nullptr;
    releaseSudog(sglist);
    sglist = sgnext;
  }

  if (cas == nullptr) plat::throw_("selectgo: bad wakeup");

  c = cas->c;

  if (casi < nsends) {
    if (!caseSuccess) goto sclose;
  } else {
    recvOK = caseSuccess;
  }

  selunlock(scases, lockorder);
  goto retc;

bufrecv:
  // Receive a buffered value.
  recvOK = true;
  if (cas->elem != nullptr) *static_cast<int64_t*>(cas->elem) = chanbufload(c, c->recvx);
  chanbufclr(c, c->recvx);
  c->recvx++;
  if (c->recvx == c->dataqsiz) c->recvx = 0;
  c->qcount.set(c->qcount.get() - 1);
  selunlock(scases, lockorder);
  goto retc;

bufsend:
  // Room in the buffer: send into it.
  chanbufstore(c, c->sendx, cas->elem);
  c->sendx++;
  if (c->sendx == c->dataqsiz) c->sendx = 0;
  c->qcount.set(c->qcount.get() + 1);
  selunlock(scases, lockorder);
  goto retc;

recv:
  // A sender is parked on c (sg): take its value and ready it.
  recv(c, sg, cas->elem, [&] { selunlock(scases, lockorder); }, 2);
  recvOK = true;
  goto retc;

rclose:
  // Closed and drained: the zero value, recvOK false.
  selunlock(scases, lockorder);
  recvOK = false;
  if (cas->elem != nullptr) *static_cast<int64_t*>(cas->elem) = 0;
  goto retc;

send:
  // A receiver is parked on c (sg): hand it the value and ready it.
  send(c, sg, cas->elem, [&] { selunlock(scases, lockorder); }, 2);
  goto retc;

retc:
  return {casi, recvOK};

sclose:
  // A send case on a closed channel panics, as chansend does.
  selunlock(scases, lockorder);
  panicPlain("send on closed channel");
}

// waitq.dequeueSudoG (select.go): unlinks sgp, if still queued, from q.
void waitq::dequeueSudoG(sudog* sgp) {
  sudog* x = sgp->prev;
  sudog* y = sgp->next;
  if (x != nullptr) {
    if (y != nullptr) {
      // Between two others.
      x->next = y;
      y->prev = x;
      sgp->next = nullptr;
      sgp->prev = nullptr;
      return;
    }
    // The last.
    x->next = nullptr;
    last = x;
    sgp->prev = nullptr;
    return;
  }
  if (y != nullptr) {
    // The first.
    y->prev = nullptr;
    first.set(y);
    sgp->next = nullptr;
    return;
  }

  // No neighbours: sgp is either the queue's only element or already off the queue (dequeue
  // leaves both links nil). Only q.first can tell which.
  if (first.get() == sgp) {
    first.set(nullptr);
    last = nullptr;
  }
}

}  // namespace gmp::rt
