// The sudog caches (proc.go) and the sync ports' per-Runtime state.
//
// acquireSudog takes from the P-local cache, refilling it with up to half its capacity from the
// central cache under sched.sudoglock, and allocates when both are empty. releaseSudog returns a
// sudog to the P-local cache, first moving half of a full cache to the central one. Both pin the
// M with acquirem so the P cannot change underneath.
#include "sim/runtime/sudog.h"

#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

SyncState& syncState(Runtime& r) { return *r.syncstate; }

void rtown(Runtime& r, std::shared_ptr<void> obj) {
  SyncState& st = syncState(r);
  std::lock_guard<std::mutex> l(st.mu);
  st.objects.push_back(std::move(obj));
}

uint64_t newSyncId(Runtime& r) {
  SyncState& st = syncState(r);
  std::lock_guard<std::mutex> l(st.mu);
  return st.nextId++;
}

void panicPlain(const char* msg) { plat::fatal(msg); }

// acquireSudog (proc.go)
sudog* acquireSudog() {
  Runtime& r = *Runtime::current();
  m* mp = r.acquirem();
  p* pp = mp->p;
  if (pp->sudogcache.empty()) {
    lock(&r.sched.sudoglock);
    // Refill up to half the local cache from the central list, under sudoglock.
    while (pp->sudogcache.size() < kSudogBufLen / 2 && r.sched.sudogcache != nullptr) {
      sudog* s = r.sched.sudogcache;
      r.sched.sudogcache = s->next;
      s->next = nullptr;
      pp->sudogcache.push_back(s);
    }
    unlock(&r.sched.sudoglock);
    // The central list was empty too: allocate one.
    if (pp->sudogcache.empty()) {
      SyncState& st = syncState(r);
      std::lock_guard<std::mutex> l(st.mu);
      pp->sudogcache.push_back(st.sudogs.make());
    }
  }
  sudog* s = pp->sudogcache.back();
  pp->sudogcache.pop_back();
  if (s->elem != nullptr) plat::throw_("acquireSudog: found s.elem != nil in cache");
  r.releasem(mp);
  return s;
}

// releaseSudog (proc.go)
void releaseSudog(sudog* s) {
  if (s->elem != nullptr) plat::throw_("runtime: sudog with non-nil elem");
  if (s->isSelect) plat::throw_("runtime: sudog with non-false isSelect");
  if (s->next != nullptr) plat::throw_("runtime: sudog with non-nil next");
  if (s->prev != nullptr) plat::throw_("runtime: sudog with non-nil prev");
  if (s->waitlink != nullptr) plat::throw_("runtime: sudog with non-nil waitlink");
  if (s->c != nullptr) plat::throw_("runtime: sudog with non-nil c");
  g* gp = plat::getg();
  if (gp->param != nullptr) plat::throw_("runtime: releaseSudog with non-nil gp.param");
  Runtime& r = *Runtime::current();
  m* mp = r.acquirem();  // pp must stay ours until the push below
  p* pp = mp->p;
  if (pp->sudogcache.size() == kSudogBufLen) {
    // The local cache is full: move half of it to the central list in one locked splice.
    sudog* first = nullptr;
    sudog* last = nullptr;
    while (pp->sudogcache.size() > kSudogBufLen / 2) {
      sudog* q = pp->sudogcache.back();
      pp->sudogcache.pop_back();
      if (first == nullptr) {
        first = q;
      } else {
        last->next = q;
      }
      last = q;
    }
    lock(&r.sched.sudoglock);
    last->next = r.sched.sudogcache;
    r.sched.sudogcache = first;
    unlock(&r.sched.sudoglock);
  }
  pp->sudogcache.push_back(s);
  r.releasem(mp);
}

}  // namespace gmp::rt
