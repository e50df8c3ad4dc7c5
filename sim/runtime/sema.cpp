// Semaphores (sema.go). The protocol and the determinism rule are stated in sema.h.
//
// The block and mutex profiles are off (blockprofilerate = mutexprofilerate = 0), so the
// acquiretime/releasetime bookkeeping is never armed and the profile events are not ported.
#include "sim/runtime/sema.h"

#include "sim/runtime/mutants.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

semTable& semtableOf(Runtime& r) {
  SyncState& st = syncState(r);
  std::call_once(st.semtableOnce, [&] { st.semtable = std::make_shared<semTable>(); });
  return *st.semtable;
}

// sync_runtime_Semacquire (sema.go)
void sync_runtime_Semacquire(Sema* addr) {
  semacquire1(addr, false, 0, waitReason::waitReasonSemacquire);
}

// internal_sync_runtime_SemacquireMutex (sema.go)
void internal_sync_runtime_SemacquireMutex(Sema* addr, bool lifo, int skipframes) {
  semacquire1(addr, lifo, skipframes, waitReason::waitReasonSyncMutexLock);
}

// sync_runtime_SemacquireWaitGroup (sema.go), outside any synctest bubble.
void sync_runtime_SemacquireWaitGroup(Sema* addr) {
  semacquire1(addr, false, 0, waitReason::waitReasonSyncWaitGroupWait);
}

// sync_runtime_Semrelease (sema.go)
void sync_runtime_Semrelease(Sema* addr, bool handoff, int skipframes) {
  semrelease1(addr, handoff, skipframes);
}

// internal_sync_runtime_Semrelease (sema.go)
void internal_sync_runtime_Semrelease(Sema* addr, bool handoff, int skipframes) {
  semrelease1(addr, handoff, skipframes);
}

namespace {

// readyWithTime (sema.go)
void readyWithTime(Runtime& r, sudog* s, int traceskip) {
  if (s->releasetime != 0) s->releasetime = plat::nanotime();
  r.goready(s->g, traceskip);
}

}  // namespace

// semacquire (sema.go)
void semacquire(Sema* addr) { semacquire1(addr, false, 0, waitReason::waitReasonSemacquire); }

// semacquire1 (sema.go)
void semacquire1(Sema* addr, bool lifo, int skipframes, waitReason reason) {
  g* gp = plat::getg();
  if (gp != gp->m->curg.get()) plat::throw_("semacquire not on the G stack");

  // Easy case.
  if (cansemacquire(addr)) return;

  // Harder case: count ourselves as a waiter, try once more, then queue and sleep. The waker
  // dequeues our sudog.
  Runtime& r = *Runtime::current();
  sudog* s = acquireSudog();
  semaRoot* root = semtableOf(r).rootFor(addr);
  s->releasetime = 0;
  s->acquiretime = 0;
  s->ticket = 0;
  for (;;) {
    lock(&root->lock);
    // Counted in nwait first: from here on no semrelease can take its no-waiter shortcut.
    root->nwait.Add(1);
    // Then try once more: a release that came between the first try and the increment saw
    // nwait == 0 and woke nobody, so its unit is only found this way.
    // (Mutant semacquire-no-recheck: skip it, and that release is lost; the check is part of
    // 997c00f991's nwait protocol.)
    if (!mutant(Mutant::SemacquireNoRecheck) && cansemacquire(addr)) {
      root->nwait.Add(static_cast<uint32_t>(-1));
      unlock(&root->lock);
      break;
    }
    // Every semrelease from now on sees us in nwait and dequeues a waiter: sleeping is safe.
    root->queue(addr, s, lifo);
    r.goparkunlock(&root->lock, reason, 4 + skipframes);
    if (s->ticket != 0 || cansemacquire(addr)) break;
  }
  releaseSudog(s);
}

// semrelease (sema.go)
void semrelease(Sema* addr) { semrelease1(addr, false, 0); }

// semrelease1 (sema.go)
void semrelease1(Sema* addr, bool handoff, int skipframes) {
  Runtime& r = *Runtime::current();
  semaRoot* root = semtableOf(r).rootFor(addr);
  addr->word.Add(1);

  // Nobody counted in nwait: done. The unit was added before this load, so a waiter not yet
  // counted finds it on its re-check in semacquire1; loading first could lose a wakeup.
  if (root->nwait.Load() == 0) return;

  // Otherwise dequeue a waiter on addr under the root's lock, and ready it.
  lock(&root->lock);
  if (root->nwait.Load() == 0) {
    // Other releases dequeued every counted waiter since the load above: nobody to wake.
    unlock(&root->lock);
    return;
  }
  sudog* s = root->dequeue(addr).found;
  if (s != nullptr) root->nwait.Add(static_cast<uint32_t>(-1));
  unlock(&root->lock);
  if (s != nullptr) {  // readying can be slow, or yield: only after the unlock
    if (s->ticket != 0) plat::throw_("corrupted semaphore ticket");
    if (handoff && cansemacquire(addr)) s->ticket = 1;
    readyWithTime(r, s, 5 + skipframes);
    g* gp = plat::getg();
    if (s->ticket == 1 && gp->m->locks == 0 && gp != gp->m->g0) {
      // Direct G handoff: readyWithTime put the waiter in runnext; yield so that it runs now and
      // inherits our time slice. Only when starving (handoff), and never holding locks or on g0.
      r.goyield();
    }
  }
}

// cansemacquire (sema.go)
bool cansemacquire(Sema* addr) {
  for (;;) {
    const uint32_t v = addr->word.Load();
    if (v == 0) return false;
    if (addr->word.CompareAndSwap(v, v - 1)) return true;
  }
}

// semaRoot.queue (sema.go): adds s to the waiters on addr.
void semaRoot::queue(Sema* addr, sudog* s, bool lifo) {
  s->g = plat::getg();
  s->elem = addr;
  // Lets the blocked goroutine's semaphore be found from the goroutine.
  s->g->waiting = s;
  s->next = nullptr;
  s->prev = nullptr;
  s->waiters = 0;

  const uint64_t key = addr->id;
  sudog* last = nullptr;
  sudog** pt = &treap;
  for (sudog* t = *pt; t != nullptr; t = *pt) {
    if (key == semaKey(t)) {
      // addr already has waiters, headed by t.
      if (lifo) {
        // s takes t's node in the treap (links and ticket), and t becomes s's first waiter.
        *pt = s;
        s->ticket = t->ticket;
        s->acquiretime = t->acquiretime;  // the head keeps the oldest acquiretime
        s->parent = t->parent;
        s->prev = t->prev;
        s->next = t->next;
        if (s->prev != nullptr) s->prev->parent = s;
        if (s->next != nullptr) s->next->parent = s;
        s->waitlink = t;
        s->waittail = t->waittail;
        if (s->waittail == nullptr) s->waittail = t;
        s->waiters = t->waiters;
        if (static_cast<uint16_t>(s->waiters + 1) != 0) s->waiters++;
        t->parent = nullptr;
        t->prev = nullptr;
        t->next = nullptr;
        t->waittail = nullptr;
      } else {
        // FIFO: s goes last in t's wait list.
        if (t->waittail == nullptr) {
          t->waitlink = s;
        } else {
          t->waittail->waitlink = s;
        }
        t->waittail = s;
        s->waitlink = nullptr;
        if (static_cast<uint16_t>(t->waiters + 1) != 0) t->waiters++;
      }
      return;
    }
    last = t;
    if (key < semaKey(t)) {
      pt = &t->prev;
    } else {
      pt = &t->next;
    }
  }

  // Add s as a new leaf in the tree of unique keys, then rotate it up while its ticket (the random
  // heap priority) is smaller than its parent's. The lowest ticket bit is set because ticket 0
  // means "no ticket" elsewhere.
  s->ticket = cheaprand() | 1;
  s->parent = last;
  *pt = s;

  // Restore the heap order on tickets.
  while (s->parent != nullptr && s->parent->ticket > s->ticket) {
    if (s->parent->prev == s) {
      rotateRight(s->parent);
    } else {
      if (s->parent->next != s) plat::throw_("semaRoot queue");
      rotateLeft(s->parent);
    }
  }
}

// semaRoot.dequeue (sema.go): finds and removes the first goroutine blocked on addr. now is the
// time it was found if it was being profiled (else 0); tailtime is the last waiter's acquiretime.
semaRoot::Dequeued semaRoot::dequeue(Sema* addr) {
  const uint64_t key = addr->id;
  sudog** ps = &treap;
  sudog* s = *ps;
  for (; s != nullptr; s = *ps) {
    if (key == semaKey(s)) break;
    if (key < semaKey(s)) {
      ps = &s->prev;
    } else {
      ps = &s->next;
    }
  }
  if (s == nullptr) return {nullptr, 0, 0};

  // Found.
  int64_t now = 0;
  int64_t tailtime = 0;
  if (s->acquiretime != 0) now = plat::nanotime();
  if (sudog* t = s->waitlink; t != nullptr) {
    // t, the next waiter on addr, replaces s in the treap: it takes s's links, ticket and count.
    *ps = t;
    t->ticket = s->ticket;
    t->parent = s->parent;
    t->prev = s->prev;
    if (t->prev != nullptr) t->prev->parent = t;
    t->next = s->next;
    if (t->next != nullptr) t->next->parent = t;
    if (t->waitlink != nullptr) {
      t->waittail = s->waittail;
    } else {
      t->waittail = nullptr;
    }
    t->waiters = s->waiters;
    if (t->waiters > 1) t->waiters--;
    // Set head and tail acquire time to now: the caller charges the delays before now.
    t->acquiretime = now;
    tailtime = s->waittail->acquiretime;
    s->waittail->acquiretime = now;
    s->waitlink = nullptr;
    s->waittail = nullptr;
  } else {
    // s was the only waiter on addr: rotate it down, always lifting the child with the smaller
    // ticket so that the heap order holds, until it is a leaf that can be cut off.
    while (s->next != nullptr || s->prev != nullptr) {
      if (s->next == nullptr || (s->prev != nullptr && s->prev->ticket < s->next->ticket)) {
        rotateRight(s);
      } else {
        rotateLeft(s);
      }
    }
    // Remove s, now a leaf.
    if (s->parent != nullptr) {
      if (s->parent->prev == s) {
        s->parent->prev = nullptr;
      } else {
        s->parent->next = nullptr;
      }
    } else {
      treap = nullptr;
    }
    tailtime = s->acquiretime;
  }
  // s's goroutine leaves the semaphore: it waits on s no more.
  s->g->waiting = nullptr;
  s->parent = nullptr;
  s->elem = nullptr;
  s->next = nullptr;
  s->prev = nullptr;
  s->ticket = 0;
  return {s, now, tailtime};
}

// semaRoot.rotateLeft (sema.go): x's right child y takes x's place; x becomes y's left child and
// y's old left subtree b becomes x's right one. The in-order sequence a x b y c is unchanged.
void semaRoot::rotateLeft(sudog* x) {
  // p -> (x a (y b c))
  sudog* p = x->parent;
  sudog* y = x->next;
  sudog* b = y->prev;

  y->prev = x;
  x->parent = y;
  x->next = b;
  if (b != nullptr) b->parent = x;

  y->parent = p;
  if (p == nullptr) {
    treap = y;
  } else if (p->prev == x) {
    p->prev = y;
  } else {
    if (p->next != x) plat::throw_("semaRoot rotateLeft");
    p->next = y;
  }
}

// semaRoot.rotateRight (sema.go): the mirror of rotateLeft: y's left child x takes y's place; y
// becomes x's right child and x's old right subtree b becomes y's left one.
void semaRoot::rotateRight(sudog* y) {
  // p -> (y (x a b) c)
  sudog* p = y->parent;
  sudog* x = y->prev;
  sudog* b = x->next;

  x->next = y;
  y->parent = x;
  y->prev = b;
  if (b != nullptr) b->parent = y;

  x->parent = p;
  if (p == nullptr) {
    treap = x;
  } else if (p->prev == y) {
    p->prev = x;
  } else {
    if (p->next != y) plat::throw_("semaRoot rotateRight");
    p->next = x;
  }
}

}  // namespace gmp::rt
