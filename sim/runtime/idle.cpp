// The idle P list and the idle M list (proc.go, list_manual.go). Both are guarded by sched.lock;
// sched.npidle is also read without the lock (an atomic).
#include "sim/runtime/mutants.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

// listHeadManual.push (list_manual.go)
void mList::push(muintptr mp) {
  mp->idleNode.next = obj;
  if (obj != nullptr) obj->idleNode.prev = mp;
  obj = mp;
}

// listHeadManual.pop (list_manual.go)
muintptr mList::pop() {
  if (obj == nullptr) return nullptr;
  muintptr mp = obj;
  obj = mp->idleNode.next;
  mp->idleNode.next = nullptr;
  if (obj != nullptr) obj->idleNode.prev = nullptr;
  return mp;
}

// listHeadManual.remove (list_manual.go)
void mList::remove(muintptr mp) {
  if (obj == mp) {
    pop();
    return;
  }
  listNodeManual& node = mp->idleNode;
  if (node.prev != nullptr) node.prev->idleNode.next = node.next;
  if (node.next != nullptr) node.next->idleNode.prev = node.prev;
  node.prev = nullptr;
  node.next = nullptr;
}

// mput (proc.go): puts mp on the idle M list.
void Runtime::mput(m* mp) {
  assertLockHeld(sched.lock);
  sched.midle.push(mp);
  sched.nmidle++;
  checkdead();
}

// mget (proc.go): takes an M from the idle list, or nil.
m* Runtime::mget() {
  assertLockHeld(sched.lock);
  m* mp = sched.midle.pop();
  if (mp != nullptr) sched.nmidle--;
  return mp;
}

// mgetSpecific (proc.go): takes mp off the idle list; nil if it is not there. Ported as Go has it:
// a list's only element also has no links, so it reads as "not on the list" (see fidelity.md).
m* Runtime::mgetSpecific(m* mp) {
  assertLockHeld(sched.lock);
  if (mp->idleNode.prev == nullptr && mp->idleNode.next == nullptr) return nullptr;
  sched.midle.remove(mp);
  sched.nmidle--;
  return mp;
}

// mcount (proc.go)
int32_t Runtime::mcount() const { return static_cast<int32_t>(sched.mnext - sched.nmfreed); }

// pidleput (proc.go): puts pp, whose run queue must be empty, on the idle list; the caller owns
// it no more. The result is the time used: now, or the clock read here when now is 0.
int64_t Runtime::pidleput(p* pp, int64_t now) {
  assertLockHeld(sched.lock);
  if (!runqempty(pp)) plat::throw_("pidleput: P has non-empty run queue");
  if (now == 0) now = plat::nanotime();
  if (pp->timersLen.Load() == 0) timerpMask.clear(pp->id);
  idlepMask.set(pp->id);
  pp->link = sched.pidle.load();
  sched.pidle.store(pp);
  sched.npidle.Add(1);
  // The P's idle time starts counting for the GC CPU limiter. Not offered to the driver (docs/
  // fidelity.md, "The garbage collector"): every program makes these on every idle transition.
  {
    plat::DriverScope quiet(nullptr);
    if (!pp->limiterEvent_.start(limiterEventType::limiterEventIdle, now)) {
      plat::throw_("must be able to track idle limiter event");
    }
  }
  return now;
}

// pidleget (proc.go): takes a P from the idle list, acquiring ownership; nil if none.
std::pair<p*, int64_t> Runtime::pidleget(int64_t now) {
  assertLockHeld(sched.lock);
  p* pp = sched.pidle.load();
  if (pp != nullptr) {
    // Timers may be added to pp from now on.
    if (now == 0) now = plat::nanotime();
    // Mutant pidleget-no-timerpmask: the bit stays as pidleput left it (clear if pp had no
    // timers), hiding timers added from now on from other Ms (fc116b69e2's invariant).
    if (!mutant(Mutant::PidlegetNoTimerpMask)) timerpMask.set(pp->id);
    idlepMask.clear(pp->id);
    sched.pidle.store(pp->link);
    sched.npidle.Add(-1);
    plat::DriverScope quiet(nullptr);  // as in pidleput
    pp->limiterEvent_.stop(*this, limiterEventType::limiterEventIdle, now);
  }
  return {pp, now};
}

// pidlegetSpinning (proc.go): pidleget for an M that found work while spinning. With no idle P it
// sets sched.needspinning, so that an M about to drop its P re-checks for this work (the
// "delicate dance" of findRunnable).
std::pair<p*, int64_t> Runtime::pidlegetSpinning(int64_t now) {
  assertLockHeld(sched.lock);
  auto [pp, now2] = pidleget(now);
  if (pp == nullptr) {
    sched.needspinning.Store(1);
    return {nullptr, now2};
  }
  return {pp, now2};
}

}  // namespace gmp::rt
