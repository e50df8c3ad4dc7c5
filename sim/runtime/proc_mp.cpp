// Ms and Ps (proc.go): parking and waking Ms, handing Ps between them, and the spinning protocol.
//
// The spinning protocol. An M is "spinning" when it has a P but no work and is looking for some
// (stealing from other Ps, checking the global queue and timers). sched.nmspinning counts them.
// Whoever makes work available (ready, newproc, injectglist) calls wakep, which starts a new
// spinning M only if none is spinning: the spinning M, once it finds work, calls resetspinning,
// which calls wakep again, so the chain of wake-ups continues as long as there is work, yet at
// most one M at a time is woken speculatively. The race to avoid: a spinning M gives up and drops
// its P just as work is submitted, and the submitter, seeing nmspinning > 0, does not wake anyone.
// Each side therefore re-checks after publishing its own state: the submitter publishes the work
// and then reads nmspinning; a spinning M first decrements nmspinning, then re-checks all queues
// (findRunnable's "delicate dance"). When a spinning M finds work but no idle P is left
// (pidlegetSpinning), it sets sched.needspinning so that an M about to drop its P becomes
// spinning instead.
#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/runtime/mutants.h"
#include "sim/runtime/runtime.h"
#include "sim/runtime/time.h"

namespace gmp::rt {

// stopm (proc.go): parks the current M on the idle list until startm hands it a P.
void Runtime::stopm() {
  g* gp = plat::getg();
  if (gp->m->locks != 0) plat::throw_("stopm holding locks");
  if (gp->m->p != nullptr) plat::throw_("stopm holding p");
  if (gp->m->spinning) plat::throw_("stopm spinning");
  ev(Ev::StopM, nullptr, nullptr, gp->m->id);
  lock(&sched.lock);
  mput(gp->m);
  unlock(&sched.lock);
  mPark();
  acquirep(gp->m->nextp);
  gp->m->nextp = nullptr;
}

// mspinning (proc.go)
void Runtime::mspinning() { plat::getg()->m->spinning = true; }

// startm (proc.go): runs pp (an idle P, or any idle P if nil) on an idle M, or a new one.
void Runtime::startm(p* pp, bool spinning, bool lockheld) {
  // Mutant startm-no-acquirem: before 370682ae98 startm ran preemptible; its entry was a safe
  // point (Go's function prologue; the port's runtime functions have none, so the mutant puts
  // back the check that prologue makes).
  const bool preemptible = mutant(Mutant::StartmNoAcquirem);
  if (preemptible) morestackPreemptCheck();
  m* mp = preemptible ? plat::getg()->m : acquirem();
  if (!lockheld) lock(&sched.lock);
  if (pp == nullptr) {
    if (spinning) plat::throw_("startm: P required for spinning=true");
    pp = pidleget(0).first;
    if (pp == nullptr) {
      if (!lockheld) unlock(&sched.lock);
      if (!preemptible) releasem(mp);
      return;
    }
  }
  m* nmp = mget();
  if (nmp == nullptr) {
    // Mutant startm-late-mreserveid: before 85afa2eb19 the new M got its ID (and so counted
    // for checkdead) only in mcommoninit, after sched.lock was dropped here.
    const int64_t id = mutant(Mutant::StartmLateMReserveID) ? -1 : mReserveID();
    unlock(&sched.lock);
    void (Runtime::*fn)() = nullptr;
    if (spinning) fn = &Runtime::mspinning;
    ev(Ev::StartM, nullptr, pp, -1);
    if (preemptible) morestackPreemptCheck();  // newm's prologue
    newm(fn, pp, id);
    if (lockheld) lock(&sched.lock);
    if (!preemptible) releasem(mp);
    return;
  }
  if (!lockheld) unlock(&sched.lock);
  if (nmp->spinning) plat::throw_("startm: m is spinning");
  if (nmp->nextp != nullptr) plat::throw_("startm: m has p");
  if (spinning && !runqempty(pp)) plat::throw_("startm: p has runnable gs");
  ev(Ev::StartM, nullptr, pp, nmp->id);
  if (preemptible) morestackPreemptCheck();  // notewakeup's prologue
  nmp->spinning = spinning;
  nmp->nextp = pp;
  plat::notewakeup(nmp->park);
  if (!preemptible) releasem(mp);
}

// handoffp (proc.go): hands off pp from a syscall or locked M: to an M if there is work for it,
// else to the idle list.
void Runtime::handoffp(p* pp) {
  ev(Ev::HandoffP, nullptr, pp, 0);
  // Work queued (on pp or globally): an M runs pp right away.
  if (!runqempty(pp) || !sched.runq.emptyRacy()) {
    startm(pp, false, false);
    return;
  }
  // The execution tracer's reader is not modelled. Mark work for pp: an M runs it right away
  // (gcBlackenEnabled is Go's plain read; it changes only with the world stopped).
  if (gcBlackenEnabled.peek() != 0 && gcShouldScheduleWorker(pp)) {
    startm(pp, false, false);
    return;
  }
  // No local work: if there are no spinning or idle Ps, this P must start spinning.
  // Go loads nmspinning, then npidle; C++ leaves the operands of + unordered, hence the name.
  const int32_t nmspinning = sched.nmspinning.Load();
  if (nmspinning + sched.npidle.Load() == 0 && sched.nmspinning.CompareAndSwap(0, 1)) {
    sched.needspinning.Store(0);
    startm(pp, true, false);
    return;
  }
  lock(&sched.lock);
  // A stop-the-world under way takes pp. (gcwaiting and runSafePointFn are read as Go does, under
  // sched.lock, but not offered to the driver, see docs/fidelity.md 13.)
  if (sched.gcwaiting.peek() != 0) {
    pp->status.set(_Pgcstop);
    pp->gcStopTime = plat::nanotime();
    sched.stopwait--;
    if (sched.stopwait == 0) plat::notewakeup(sched.stopnote);
    unlock(&sched.lock);
    return;
  }
  // A safe-point function due on pp runs here, for it, before pp goes idle.
  if (pp->runSafePointFn.peek() != 0 && pp->runSafePointFn.CompareAndSwap(1, 0)) {
    sched.safePointFn(pp);
    sched.safePointWait--;
    if (sched.safePointWait == 0) plat::notewakeup(sched.safePointNote);
  }
  if (!sched.runq.empty()) {
    unlock(&sched.lock);
    startm(pp, false, false);
    return;
  }
  // pp is the last P still running and no M is in the poller: give pp an M anyway, or nobody
  // would be left to wait for the timers and the network.
  if (sched.npidle.Load() == gomaxprocs - 1 && sched.lastpoll.Load() != 0) {
    unlock(&sched.lock);
    startm(pp, false, false);
    return;
  }
  const int64_t when = timersWakeTime(pp);
  pidleput(pp, 0);
  unlock(&sched.lock);
  // Mutant handoffp-no-timer-wake: before d80ab3e85a the P went idle with its timers and told
  // no poller about them.
  if (when != 0 && !mutant(Mutant::HandoffpNoTimerWake)) wakeNetPoller(when);
}

// wakep (proc.go): tries to add one more spinning M with an idle P.
void Runtime::wakep() {
  // Be conservative about spinning threads: only one at a time.
  if (sched.nmspinning.Load() != 0 || !sched.nmspinning.CompareAndSwap(0, 1)) {
    ev(Ev::WakepSpinning, nullptr, nullptr, 0);
    return;
  }
  // (Mutant startm-no-acquirem: no acquirem either, as before 370682ae98.)
  const bool preemptible = mutant(Mutant::StartmNoAcquirem);
  m* mp = preemptible ? plat::getg()->m : acquirem();
  lock(&sched.lock);
  p* pp = pidlegetSpinning(0).first;
  if (pp == nullptr) {
    ev(Ev::WakepNoP, nullptr, nullptr, 0);
    // Mutant wakep-keeps-nmspinning: the increment above is left standing with no M to own it
    // (8cb350d69a moved this undo here from startm's no-idle-P path).
    if (!mutant(Mutant::WakepKeepsNmspinning) && sched.nmspinning.Add(-1) < 0) {
      plat::throw_("wakep: negative nmspinning");
    }
    unlock(&sched.lock);
    if (!preemptible) releasem(mp);
    return;
  }
  unlock(&sched.lock);
  ev(Ev::Wakep, nullptr, pp, 0);
  startm(pp, true, false);
  if (!preemptible) releasem(mp);
}

// stoplockedm (proc.go): parks an M locked to a goroutine until that goroutine is runnable.
void Runtime::stoplockedm() {
  g* gp = plat::getg();
  if (gp->m->lockedg == nullptr || gp->m->lockedg->lockedm.get() != gp->m) {
    plat::throw_("stoplockedm: inconsistent locking");
  }
  if (gp->m->p != nullptr) {
    p* pp = releasep();
    handoffp(pp);
  }
  incidlelocked(1);
  mPark();
  const uint32_t status = readgstatus(gp->m->lockedg);
  if ((status & ~_Gscan) != _Grunnable) plat::throw_("stoplockedm: not runnable");
  acquirep(gp->m->nextp);
  gp->m->nextp = nullptr;
}

// startlockedm (proc.go): hands the current P to gp's locked M and parks this one.
void Runtime::startlockedm(g* gp) {
  m* mp = gp->lockedm.get();
  if (mp == plat::getg()->m) plat::throw_("startlockedm: locked to me");
  if (mp->nextp != nullptr) plat::throw_("startlockedm: m has p");
  incidlelocked(-1);
  p* pp = releasep();
  mp->nextp = pp;
  plat::notewakeup(mp->park);
  stopm();
}

// mPark (proc.go)
void Runtime::mPark() {
  g* gp = plat::getg();
  plat::notesleep(gp->m->park);
  plat::noteclear(gp->m->park);
}

// acquirep (proc.go)
void Runtime::acquirep(p* pp) {
  wirep(pp);
  ev(Ev::ProcStart, nullptr, pp, 0);
}

// wirep (proc.go)
void Runtime::wirep(p* pp) {
  g* gp = plat::getg();
  if (gp->m->p != nullptr) plat::throw_("wirep: already in go");
  if (pp->m.get() != nullptr || pp->status.get() != _Pidle) plat::throw_("wirep: invalid p state");
  gp->m->p = pp;
  pp->m.set(gp->m);
  pp->status.set(_Prunning);
  // acquirepNoTrace's next step (every caller of wirep here stands for acquirepNoTrace): this M
  // is the one procresize will prefer for pp after a stop-the-world.
  pp->oldm = gp->m;
}

// releasep (proc.go)
p* Runtime::releasep() {
  g* gp = plat::getg();
  if (gp->m->p == nullptr) plat::throw_("releasep: invalid arg");
  p* pp = gp->m->p;
  ev(Ev::ProcStop, nullptr, pp, 0);
  if (pp->m.get() != gp->m || pp->status.get() != _Prunning) plat::throw_("releasep: invalid p state");
  gcController.releaseNextGCMarkWorker(pp);  // a stopping P gives back its assigned worker
  gp->m->p = nullptr;
  pp->m.set(nullptr);
  pp->status.set(_Pidle);
  return pp;
}

// m.becomeSpinning (proc.go)
void Runtime::becomeSpinning(m* mp) {
  mp->spinning = true;
  sched.nmspinning.Add(1);
  sched.needspinning.Store(0);
  ev(Ev::SpinStart, nullptr, mp->p, mp->id);
}

// resetspinning (proc.go): the current M found work; stop spinning and maybe wake another.
void Runtime::resetspinning() {
  g* gp = plat::getg();
  if (!gp->m->spinning) plat::throw_("resetspinning: not a spinning m");
  gp->m->spinning = false;
  ev(Ev::SpinStop, nullptr, gp->m->p, gp->m->id);
  const int32_t nmspinning = sched.nmspinning.Add(-1);
  if (nmspinning < 0) plat::throw_("findRunnable: negative nmspinning");
  // Ms are woken sparingly (wakep starts one only while no M spins; see the spinning protocol
  // above), so the M that ends its search wakes the next one: the work it found may not be all
  // there is. (Mutant resetspinning-no-wakep: before 32fef9908a the M that found work woke
  // nobody, and only one readied goroutine got a new M.)
  if (!mutant(Mutant::ResetspinningNoWakep)) wakep();
}

// injectglist (proc.go): makes every G of glist runnable: onto the global queue for as many idle
// Ps as there are (starting Ms for them), the rest onto the current P.
void Runtime::injectglist(gList* glist) {
  if (glist->empty()) return;
  g* tail = nullptr;
  for (g* gp = glist->head(); gp != nullptr; gp = gp->schedlink) {
    tail = gp;
    casgstatus(gp, _Gwaiting, _Grunnable);
    ev(Ev::GoUnpark, gp, plat::getg()->m->p, 0);
  }
  gQueue q{glist->head(), tail, glist->size};
  *glist = gList{};

  auto startIdle = [this](int32_t n) {
    for (; n > 0; n--) {
      m* mp = acquirem();
      lock(&sched.lock);
      p* pp = pidlegetSpinning(0).first;
      if (pp == nullptr) {
        unlock(&sched.lock);
        releasem(mp);
        break;
      }
      startm(pp, false, true);
      unlock(&sched.lock);
      releasem(mp);
    }
  };

  p* pp = plat::getg()->m->p;
  if (pp == nullptr) {
    const int32_t n = q.size;
    lock(&sched.lock);
    globrunqputbatch(&q);
    unlock(&sched.lock);
    startIdle(n);
    return;
  }
  // Mutant injectglist-all-local: none to the global queue whatever npidle is, no M, no wakep.
  gQueue globq;
  int32_t npidle = mutant(Mutant::InjectglistAllLocal) ? 0 : sched.npidle.Load();
  for (; npidle > 0 && !q.empty(); npidle--) globq.pushBack(q.pop());
  if (!globq.empty()) {
    const int32_t n = globq.size;
    lock(&sched.lock);
    globrunqputbatch(&globq);
    unlock(&sched.lock);
    startIdle(n);
  }
  runqputbatch(pp, &q);
  if (!q.empty()) {
    lock(&sched.lock);
    globrunqputbatch(&q);
    unlock(&sched.lock);
  }
  // A P may have gone idle after the read of npidle above, before the goroutines were queued:
  // its M saw no work and stopped, and nobody would wake it while this P's goroutine runs. In the
  // common case wakep finds no idle P or an M already spinning and does nothing.
  // (Mutant injectglist-no-wakep: before 24070cf747, golang/go#63555, this call was missing.)
  if (!mutant(Mutant::InjectglistNoWakep) && !mutant(Mutant::InjectglistAllLocal)) wakep();
}

// incidlelocked (proc.go)
void Runtime::incidlelocked(int32_t v) {
  lock(&sched.lock);
  sched.nmidlelocked += v;
  if (v > 0) checkdead();
  unlock(&sched.lock);
}

}  // namespace gmp::rt
