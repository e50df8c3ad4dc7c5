// Runtime construction and the small shared helpers: pMask (proc.go) and assertLockHeld.
#include "sim/runtime/runtime.h"

#include "sim/platform/throw.h"
#include "sim/runtime/sema.h"
#include "sim/runtime/sudog.h"
#include "sim/runtime/time.h"

namespace gmp::rt {

void assertLockHeld(const plat::Mutex& l) {
  if (!plat::lock_held(l)) plat::throw_("lock not held");
}

// lock (lock_spinbit.go's lock2): the M counts the lock before it tries to take it.
void lock(plat::Mutex* l, plat::Site site) {
  g* gp = plat::getg();
  if (gp->m->locks < 0) plat::throw_("runtime·lock: lock count");
  gp->m->locks += mutexMLocksDelta;
  plat::lock(*l, site);
}

// unlock (lock_spinbit.go's unlock2): the M uncounts the lock only once it is released; when it
// holds no lock and nothing else keeps it from being preempted, a pending preemption request
// gets its poisoned stackguard0 back.
void unlock(plat::Mutex* l, plat::Site site) {
  g* gp = plat::getg();
  // mutexSampleContention: with the mutex profile off (rate 0) no unlock is sampled, and no
  // cheaprand draw follows. Runtime::current() is null only in unit tests that run port code
  // without installing a Runtime; they skip the load.
  if (Runtime* r = Runtime::current(); r != nullptr && r->mutexprofilerate.Load(site) > 0) {
    plat::throw_("unlock: the mutex profile is not modelled");
  }
  plat::unlock(*l, site);
  gp->m->locks -= mutexMLocksDelta;
  if (gp->m->locks < 0) plat::throw_("runtime·unlock: lock count");
  if (gp->m->locks == 0 && gp->preempt()) gp->stackguard0.set(stackPreempt);
}

// pMask.resize (proc.go): within the capacity only the length changes (the words past it keep
// their bits, as a reslice does); past it a new array gets a plain copy of the words in use.
void pMask::resize(int32_t nprocs) {
  const int32_t words = (nprocs + 31) / 32;
  if (words <= cap_) {
    n_ = words;
    return;
  }
  auto fresh = std::make_unique<Atomic<uint32_t>[]>(static_cast<size_t>(words));
  for (int32_t i = 0; i < n_; i++) fresh[i].cell().store(words_[i].peek(), std::memory_order_relaxed);
  words_ = fresh.get();
  arrays_.push_back(std::move(fresh));
  n_ = cap_ = words;
}

// pMask.read (proc.go)
bool pMask::read(uint32_t id) const {
  const uint32_t mask = uint32_t{1} << (id % 32);
  return (words_[id / 32].Load() & mask) != 0;
}

// pMask.set (proc.go)
void pMask::set(int32_t id) { words_[id / 32].Or(uint32_t{1} << (id % 32)); }

// pMask.clear (proc.go)
void pMask::clear(int32_t id) { words_[id / 32].And(~(uint32_t{1} << (id % 32))); }

// pMask.any (proc.go)
bool pMask::any() const {
  for (int32_t i = 0; i < n_; i++) {
    if (words_[i].Load() != 0) return true;
  }
  return false;
}

Runtime::Runtime(int32_t nprocs) {
  gomaxprocs = nprocs;
  constructedProcs_ = nprocs;
  ncpu = nprocs;
  syncstate = std::make_unique<SyncState>();
  // m0 and its g0 exist before any code runs, as in Go (statically allocated there).
  mstore_.push_back(std::make_unique<m>());
  m0 = mstore_.back().get();
  g0 = gstore_.make();
  m0->g0 = g0;
  g0->m = m0;
  stealOrder.reset(static_cast<uint32_t>(nprocs));
  idlepMask.resize(nprocs);
  timerpMask.resize(nprocs);
  for (int32_t i = 0; i < nprocs; i++) allp.push_back(newP(i));
  // Go's worldsema and gcsema start at 1. Their ids sit far above newSyncId's, so making them
  // shifts no channel's or semaphore's id (nor its semtable bucket).
  worldsema = std::make_unique<Sema>(uint64_t{1} << 62, 1);
  gcsema = std::make_unique<Sema>((uint64_t{1} << 62) + 1, 1);
}

Runtime::~Runtime() {
  for (auto& pp : pstore_) timersFree(pp.get());
}

// new(p) and the part of p.init that is done once per P here: its id and its timer heap.
p* Runtime::newP(int32_t id) {
  if (id != static_cast<int32_t>(pstore_.size())) plat::throw_("newP: Ps are made in id order");
  pstore_.push_back(std::make_unique<p>());
  p* pp = pstore_.back().get();
  pp->id = id;
  timersInit(pp);
  return pp;
}

void Runtime::useStackPool(uint32_t slots) {
  if (!ctxstore_.empty()) plat::throw_("useStackPool: goroutines already have stacks");
  stackpool_ = std::make_unique<plat::StackPool>(slots);
}

}  // namespace gmp::rt
