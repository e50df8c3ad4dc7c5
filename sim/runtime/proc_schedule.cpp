// The scheduling loop (proc.go): schedule finds a runnable goroutine with findRunnable and runs it
// with execute.
//
// findRunnable looks, in order: the global queue every 61st schedtick (so that a P busy with its
// own queue cannot starve the global one), the local queue, the global queue, the (emulated)
// network poller, then, if fewer than half the busy Ps already have a spinning M, it becomes
// spinning and steals (stealWork: four passes over the Ps in a random coprime order, timers and
// runnext only on the last). Failing all that it drops its P: under sched.lock it re-checks the
// global queue and sched.needspinning, releases the P to the idle list, and only then, if it was
// spinning, decrements nmspinning and re-checks every queue once more (the "delicate dance" that
// closes the race with wakep, see proc_mp.cpp). Finally it blocks in netpoll until the next timer,
// or parks the M with stopm until another M hands it a P.
#include <algorithm>

#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/runtime/mgcwork.h"
#include "sim/runtime/mutants.h"
#include "sim/runtime/runtime.h"
#include "sim/runtime/time.h"

namespace gmp::rt {

// schedule (proc.go): one round of the scheduler: find a runnable goroutine and execute it.
void Runtime::schedule() {
  m* mp = plat::getg()->m;
  if (mp->locks != 0) plat::throw_("schedule: holding locks");
  if (mp->lockedg != nullptr) {
    stoplockedm();
    execute(mp->lockedg, false);
    return;
  }
  if (mp->incgo) plat::throw_("schedule: in cgo");
  plat::charge(plat::Cost::SchedulePass);
  for (;;) {  // top
    p* pp = mp->p;
    pp->preempt.set(0);
    // A spinning M holds no local work (it would have run it rather than spin): Go's schedule
    // asserts this before calling findRunnable, and so does ours.
    if (mp->spinning) {
      // Go reads runnext, runqhead, runqtail in that order; C++ leaves != unordered.
      bool local = pp->runnext.get() != nullptr;
      if (!local) {
        const uint32_t head = pp->runqhead.get();
        local = head != pp->runqtail.get();
      }
      if (local) plat::throw_("schedule: spinning with local work");
    }
    const Found f = findRunnable();  // blocks until work is available
    // findRunnable may have collected an allp snapshot; dropping it is implicit here.
    // A mark worker assigned to this P but not chosen goes back for another P to run.
    gcController.releaseNextGCMarkWorker(mp->p);
    // An M that found work stops spinning here. resetspinning drops nmspinning and calls wakep:
    // the work this M found need not be the only work, so another M takes over the search.
    if (mp->spinning) resetspinning();
    // Scheduling of user goroutines is disabled only by the GC (schedEnableUser), never here.
    if (sched.disable.user.get() != 0) plat::throw_("schedule: user scheduling disabled (no GC here)");
    if (f.tryWakeP) wakep();
    if (f.gp->lockedm.get() != nullptr) {
      // gp runs only on its own M: pass this M's P to that M and wait here for a P of our own.
      startlockedm(f.gp);
      continue;
    }
    execute(f.gp, f.inheritTime);
    return;
  }
}

// execute (proc.go): runs gp on the current M. Unless inheritTime, it starts a new time slice
// (schedtick++), which is what sysmon watches to detect a goroutine running too long.
void Runtime::execute(g* gp, bool inheritTime) {
  m* mp = plat::getg()->m;
  // gp.m is set before the status becomes _Grunning: a goroutine seen running has its M.
  mp->curg.set(gp);
  gp->m = mp;
  casgstatus(gp, _Grunnable, _Grunning);
  gp->waitsince = 0;
  gp->setPreempt(false);
  gp->stackguard0.set(stackGuardNormal);
  if (!inheritTime) mp->p->schedtick.set(mp->p->schedtick.get() + 1);
  ev(Ev::GoStart, gp, mp->p, inheritTime ? 1 : 0);
  gogo(gp);
}

// findRunnable (proc.go): finds a runnable goroutine to execute, trying other Ps' queues, the
// global queue, timers and the poller. Blocks (parks the M) until there is one.
Runtime::Found Runtime::findRunnable() {
  m* mp = plat::getg()->m;
top:
  p* pp = mp->p;
  // A stop-the-world under way takes this P first; a safe-point function due on it runs next.
  if (sched.gcwaiting.Load() != 0) {
    gcstopm();
    goto top;
  }
  if (pp->runSafePointFn.get() != 0) runSafePointFn();

  auto [now, pollUntil, ran] = timersCheck(pp, 0);
  (void)ran;

  // The trace reader would run first: trace.enabled is a plain read of a flag that changes only
  // with the world stopped (not offered, see docs/fidelity.md), trace.shutdown an atomic load.
  if (trace.shutdown.Load() != 0) plat::throw_("findRunnable: trace shutting down (no tracer here)");

  // A GC mark worker, if the pacer wants one on this P. gcBlackenEnabled is a plain read in Go that
  // changes only with the world stopped while this M holds a P, so it is not offered (peek).
  if (gcBlackenEnabled.peek() != 0) {
    auto [gp, tnow] = gcController.findRunnableGCWorker(pp, now);
    if (gp != nullptr) return {gp, false, true};
    now = tnow;
  }

  // Fairness: every 61st schedtick the global queue is served before the local one. Without
  // this, two goroutines that keep readying each other would hold this P's local queue forever
  // and the global queue would starve.
  if (pp->schedtick.get() % 61 == 0 && !sched.runq.emptyRacy()) {
    lock(&sched.lock);
    g* gp = globrunqget();
    unlock(&sched.lock);
    if (gp != nullptr) {
      ev(Ev::GetGlobal, gp, pp, 1);
      return {gp, false, false};
    }
  }

  // A finalizer goroutine parked with finalizers queued for it would be readied here; there are
  // no finalizers.
  if ((fingStatus.Load() & (fingWait | fingWake)) == (fingWait | fingWake)) {
    plat::throw_("findRunnable: finalizers to run (none here)");
  }

  // Likewise cleanup goroutines (gcCleanups.needsWake, which stops at its first load when no
  // cleanup work is queued, as here).
  if (gcCleanups.workUnits.Load() > 0) plat::throw_("findRunnable: cleanups to run (none here)");

  // local runq
  if (auto [gp, inheritTime] = runqget(pp); gp != nullptr) return {gp, inheritTime, false};

  // global runq
  if (!sched.runq.emptyRacy()) {
    lock(&sched.lock);
    auto [gp, q] = globrunqgetbatch(static_cast<int32_t>(kRunqSize / 2));
    unlock(&sched.lock);
    if (gp != nullptr) {
      ev(Ev::GetGlobal, gp, pp, q.size + 1);
      runqputbatch(pp, &q);
      if (!q.empty()) plat::throw_("Couldn't put Gs into empty local runq");
      return {gp, false, false};
    }
  }

  // A non-blocking poll before stealing, made only when some goroutine waits on a file
  // descriptor, no M sleeps in the poller, and no other M is polling.
  if (netpollinited() && netpollAnyWaiters() && sched.lastpoll.Load() != 0 && sched.pollingNet.Swap(1) == 0) {
    auto [list, delta] = netpoll(0);
    sched.pollingNet.Store(0);
    if (!list.empty()) {  // non-blocking
      g* gp = list.pop();
      injectglist(&list);
      netpollAdjustWaiters(delta);
      casgstatus(gp, _Gwaiting, _Grunnable);
      ev(Ev::GoUnpark, gp, mp->p, 0);
      return {gp, false, false};
    }
  }

  // Steal from the other Ps as a spinning M. Spinning Ms are capped at half the busy Ps
  // (gomaxprocs - npidle): with many Ps and a program of little parallelism, an unbounded number
  // of Ms searching for work would only burn CPU.
  bool spin = mp->spinning;
  if (!spin) {
    const int32_t nmspinning = sched.nmspinning.Load();  // before npidle, as Go evaluates it
    spin = 2 * nmspinning < gomaxprocs - sched.npidle.Load();
  }
  if (spin) {
    if (!mp->spinning) becomeSpinning(mp);
    Stolen s = stealWork(now);
    if (s.gp != nullptr) return {s.gp, s.inheritTime, false};  // successfully stole
    if (s.newWork) goto top;  // a timer ran and may have readied goroutines: search again
    now = s.rnow;
    if (s.pollUntil != 0 && (pollUntil == 0 || s.pollUntil < pollUntil)) pollUntil = s.pollUntil;
  }

  // Nothing to run: with mark work to do, this P runs an idle mark worker rather than go idle.
  if (gcBlackenEnabled.peek() != 0 && gcShouldScheduleWorker(pp) && gcController.addIdleMarkWorker()) {
    if (auto* node = reinterpret_cast<gcBgMarkWorkerNode*>(gcBgMarkWorkerPool.pop()); node != nullptr) {
      pp->gcMarkWorkerMode_ = gcMarkWorkerMode::gcMarkWorkerIdleMode;
      g* gp = node->gp;
      casgstatus(gp, _Gwaiting, _Grunnable);
      ev(Ev::GoUnpark, gp, pp, 0);
      return {gp, false, false};
    }
    gcController.removeIdleMarkWorker();
  }
  // beforeIdle is wasm's.

  {
    // The snapshot of allp is taken while this M still holds its P: once the P is released this
    // M no longer holds off safe-points, and allp (procresize) could change under the checks
    // below. Go's mask "snapshots" copy slice headers, so their bits are read live later; only
    // their length is fixed. Ours are references to the live masks, which keep every array they
    // had (pMask), so the snapshot's ids stay readable after a resize; past the masks' capacity
    // Go's reader keeps the old array and ours sees the new one (docs/fidelity.md, 34).
    std::vector<p*>& allpSnapshot = mp->allpSnapshot;
    allpSnapshot = allp;  // snapshotAllp
    const pMask& idlepMaskSnapshot = idlepMask;
    const pMask& timerpMaskSnapshot = timerpMask;

    // Return P and block.
    lock(&sched.lock);
    if (sched.gcwaiting.Load() != 0 || pp->runSafePointFn.get() != 0) {
      // The stop or the safe-point function must be served before the P goes idle.
      unlock(&sched.lock);
      goto top;
    }
    if (!sched.runq.empty()) {
      auto [gp, q] = globrunqgetbatch(static_cast<int32_t>(kRunqSize / 2));
      unlock(&sched.lock);
      if (gp == nullptr) plat::throw_("global runq empty with non-zero runqsize");
      ev(Ev::GetGlobal, gp, pp, q.size + 1);
      runqputbatch(pp, &q);
      if (!q.empty()) plat::throw_("Couldn't put Gs into empty local runq");
      return {gp, false, false};
    }
    // Mutant no-needspinning: before 8cb350d69a no flag told this M that a spinning M had found
    // work and no idle P (this one, not yet released), so it dropped the P anyway.
    if (!mp->spinning && !mutant(Mutant::NoNeedspinning) && sched.needspinning.Load() == 1) {
      // See "Delicate dance" above.
      becomeSpinning(mp);
      unlock(&sched.lock);
      goto top;
    }
    if (releasep() != pp) plat::throw_("findRunnable: wrong p");
    now = pidleput(pp, now);
    unlock(&sched.lock);

    // The "delicate dance" (Go's name, findRunnable): this M leaves the spinning state while
    // other Ms may be submitting work. The order is what makes it safe: nmspinning is decremented
    // first and every source is checked after it (the atomic decrement is the #StoreLoad barrier
    // between the two). Checked the other way round, work submitted after the last check but
    // before the decrement would see nmspinning > 0, so its submitter's wakep would do nothing,
    // and this M would park as well: no M would be left to run that work.
    const bool wasSpinning = mp->spinning;
    if (mp->spinning) {
      mp->spinning = false;
      ev(Ev::SpinStop, nullptr, pp, mp->id);
      if (sched.nmspinning.Add(-1) < 0) plat::throw_("findRunnable: negative nmspinning");

      // Mutant no-recheck-after-spinning: park straight after the decrement, trusting the checks
      // made while still counted as spinning (the order fb6f8a96f2's comment warns against).
      if (mutant(Mutant::NoRecheckAfterSpinning)) goto recheckedQueues;

      // Check the global and P runqueues again.
      lock(&sched.lock);
      if (!sched.runq.empty()) {
        p* pp2 = pidlegetSpinning(0).first;
        if (pp2 != nullptr) {
          auto [gp, q] = globrunqgetbatch(static_cast<int32_t>(kRunqSize / 2));
          unlock(&sched.lock);
          if (gp == nullptr) plat::throw_("global runq empty with non-zero runqsize");
          ev(Ev::GetGlobal, gp, pp2, q.size + 1);
          runqputbatch(pp2, &q);
          if (!q.empty()) plat::throw_("Couldn't put Gs into empty local runq");
          acquirep(pp2);
          becomeSpinning(mp);
          return {gp, false, false};
        }
      }
      unlock(&sched.lock);

      if (p* pp2 = checkRunqsNoP(allpSnapshot, idlepMaskSnapshot); pp2 != nullptr) {
        acquirep(pp2);
        becomeSpinning(mp);
        goto top;
      }

    recheckedQueues:
      // Idle-priority GC work again, now without a P.
      if (auto [pp2, gp] = checkIdleGCNoP(); pp2 != nullptr) {
        acquirep(pp2);
        becomeSpinning(mp);
        pp2->gcMarkWorkerMode_ = gcMarkWorkerMode::gcMarkWorkerIdleMode;
        casgstatus(gp, _Gwaiting, _Grunnable);
        ev(Ev::GoUnpark, gp, pp2, 0);
        return {gp, false, false};
      }

      // Last come the timers: one added, or come due, while this M was leaving the spinning
      // state must still bound the poll below, so every P's earliest timer is read again.
      // (Mutant no-timer-recheck-after-spinning: before 8fdc79e18a nothing read the Ps' timers
      // again after the decrement, so a timer added since this M's last look in stealWork set no
      // poll deadline.)
      if (!mutant(Mutant::NoTimerRecheckAfterSpinning)) {
        pollUntil = checkTimersNoP(allpSnapshot, timerpMaskSnapshot, pollUntil);
      }
    }

    // Poll network until next timer.
    if (netpollinited() && (netpollAnyWaiters() || pollUntil != 0) && sched.lastpoll.Swap(0) != 0) {
      sched.pollUntil.Store(pollUntil);
      if (mp->p != nullptr) plat::throw_("findRunnable: netpoll with p");
      if (mp->spinning) plat::throw_("findRunnable: netpoll with spinning");
      int64_t delay = -1;
      if (pollUntil != 0) {
        if (now == 0) now = plat::nanotime();
        delay = std::max<int64_t>(pollUntil - now, 0);
      }
      auto [list, delta] = netpoll(delay);  // block until new work is available
      now = plat::nanotime();
      sched.pollUntil.Store(0);
      sched.lastpoll.Store(now);
      lock(&sched.lock);
      p* pp2 = pidleget(now).first;
      unlock(&sched.lock);
      if (pp2 == nullptr) {
        injectglist(&list);
        netpollAdjustWaiters(delta);
      } else {
        acquirep(pp2);
        if (!list.empty()) {
          g* gp = list.pop();
          injectglist(&list);
          netpollAdjustWaiters(delta);
          casgstatus(gp, _Gwaiting, _Grunnable);
          ev(Ev::GoUnpark, gp, mp->p, 0);
          return {gp, false, false};
        }
        if (wasSpinning) becomeSpinning(mp);
        goto top;
      }
    } else if (pollUntil != 0 && netpollinited()) {
      const int64_t pollerPollUntil = sched.pollUntil.Load();
      if (pollerPollUntil == 0 || pollerPollUntil > pollUntil) netpollBreak();
    }
    stopm();
  }
  goto top;
}

// stealWork (proc.go): up to four sweeps over the other Ps, each in a random order, for a
// goroutine to take; the last sweep also runs their due timers and may take their runnext.
Runtime::Stolen Runtime::stealWork(int64_t now) {
  p* pp = plat::getg()->m->p;
  bool ranTimer = false;
  int64_t pollUntil = 0;
  constexpr int stealTries = 4;
  for (int i = 0; i < stealTries; i++) {
    const bool stealTimersOrRunNextG = i == stealTries - 1;
    for (randomEnum e = stealOrder.start(cheaprand()); !e.done(); e.next()) {
      // A stop-the-world under way: back to findRunnable's top, which gives the P up to it. (Go's
      // atomic load, not offered to the driver, see docs/fidelity.md 13.)
      if (sched.gcwaiting.peek() != 0) return {nullptr, false, now, pollUntil, true};
      p* p2 = allp[e.position()];
      if (pp == p2) continue;

      // Last pass: run p2's due timers. Nowhere else does an M take the timer lock of a P that
      // is not its own.
      if (stealTimersOrRunNextG && timerpMask.read(e.position())) {
        const TimersCheck c = timersCheck(p2, now);
        now = c.now;
        if (c.pollUntil != 0 && (pollUntil == 0 || c.pollUntil < pollUntil)) pollUntil = c.pollUntil;
        if (c.ran) {
          // Whatever goroutines those timers readied went onto our own local queue (the running
          // P's), however many they were: look there first.
          if (auto [gp, inheritTime] = runqget(pp); gp != nullptr) return {gp, inheritTime, now, pollUntil, ranTimer};
          ranTimer = true;
        }
      }

      // An idle P has nothing to steal: skip it.
      if (!idlepMask.read(e.position())) {
        const uint32_t before = pp->runqtail.peek();
        // Mutant steal-runnext-every-pass: before c4fe503119 runnext could be taken on any pass.
        const bool stealRunNextG = stealTimersOrRunNextG || mutant(Mutant::StealRunnextEveryPass);
        if (g* gp = runqsteal(pp, p2, stealRunNextG); gp != nullptr) {
          ev(Ev::Steal, gp, p2, 1 + (pp->runqtail.peek() - before));
          return {gp, false, now, pollUntil, ranTimer};
        }
      }
    }
  }
  // Nothing stolen. A timer that ran may still have readied a goroutine the sweeps did not see
  // (ranTimer makes the caller search again), and pollUntil, the earliest timer found, bounds
  // the caller's poll.
  return {nullptr, false, now, pollUntil, ranTimer};
}

// checkRunqsNoP (proc.go): after dropping the P, looks for any P with work; takes an idle P to
// run it if one is left.
p* Runtime::checkRunqsNoP(const std::vector<p*>& allpSnapshot, const pMask& idlepMaskSnapshot) {
  for (size_t id = 0; id < allpSnapshot.size(); id++) {
    p* p2 = allpSnapshot[id];
    if (!idlepMaskSnapshot.read(static_cast<uint32_t>(id)) && !runqempty(p2)) {
      lock(&sched.lock);
      p* pp = pidlegetSpinning(0).first;
      if (pp == nullptr) {
        // No idle P to run that work with: the remaining Ps need not be looked at.
        unlock(&sched.lock);
        return nullptr;
      }
      unlock(&sched.lock);
      return pp;
    }
  }
  return nullptr;
}

// checkIdleGCNoP (proc.go): for an M without a P: if marking needs an idle worker and there is
// work, takes an idle P and a worker to run it. sched.lock is held until the P is kept, so that a
// P not kept goes back to the idle list without the idle transition's checks.
std::pair<p*, g*> Runtime::checkIdleGCNoP() {
  if (gcBlackenEnabled.Load() == 0 || !gcController.needIdleMarkWorker()) return {nullptr, nullptr};
  if (!gcShouldScheduleWorker(nullptr)) return {nullptr, nullptr};
  lock(&sched.lock);
  auto [pp, now] = pidlegetSpinning(0);
  if (pp == nullptr) {
    unlock(&sched.lock);
    return {nullptr, nullptr};
  }
  // Holding a P, gcBlackenEnabled cannot change under us (that needs a stop-the-world).
  if (gcBlackenEnabled.peek() == 0 || !gcController.addIdleMarkWorker()) {
    pidleput(pp, now);
    unlock(&sched.lock);
    return {nullptr, nullptr};
  }
  auto* node = reinterpret_cast<gcBgMarkWorkerNode*>(gcBgMarkWorkerPool.pop());
  if (node == nullptr) {
    pidleput(pp, now);
    unlock(&sched.lock);
    gcController.removeIdleMarkWorker();
    return {nullptr, nullptr};
  }
  unlock(&sched.lock);
  return {pp, node->gp};
}

// pollWork (proc.go): whether this P has other work than idle marking: the global or local queue,
// or goroutines the network poller would ready.
bool Runtime::pollWork() {
  if (!sched.runq.emptyRacy()) return true;
  p* pp = plat::getg()->m->p;
  if (!runqempty(pp)) return true;
  if (netpollinited() && netpollAnyWaiters() && sched.lastpoll.Load() != 0) {
    if (auto [list, delta] = netpoll(0); !list.empty()) {
      injectglist(&list);
      netpollAdjustWaiters(delta);
      return true;
    }
  }
  return false;
}

// checkTimersNoP (proc.go): the earliest timer of any P that may have one.
int64_t Runtime::checkTimersNoP(const std::vector<p*>& allpSnapshot, const pMask& timerpMaskSnapshot, int64_t pollUntil) {
  for (size_t id = 0; id < allpSnapshot.size(); id++) {
    if (timerpMaskSnapshot.read(static_cast<uint32_t>(id))) {
      const int64_t w = timersWakeTime(allpSnapshot[id]);
      if (w != 0 && (pollUntil == 0 || w < pollUntil)) pollUntil = w;
    }
  }
  return pollUntil;
}

// checkdead (proc.go): with no M left running, a program whose goroutines are all blocked (and
// with no timer to wake one) can never make progress: throw or fatal with Go's messages.
void Runtime::checkdead() {
  assertLockHeld(sched.lock);
  // A program already dying of a panic or fatal signal freezes its threads, which would look
  // like a deadlock; never the case here.
  if (panicking.Load() > 0) return;
  const int32_t run = mcount() - sched.nmidle - sched.nmidlelocked - sched.nmsys;
  if (run > 0) return;
  if (run < 0) {
    unlock(&sched.lock);
    plat::throw_("checkdead: inconsistent counts");
  }
  int grunning = 0;
  lock(&allglock);  // forEachG
  for (g* gp : allgs) {
    if (isSystemGoroutine(gp)) continue;
    const uint32_t s = readgstatus(gp) & ~_Gscan;
    if (s == _Gwaiting || s == _Gpreempted) {
      grunning++;
    } else if (s == _Grunnable || s == _Grunning || s == _Gsyscall) {
      // Go throws from inside forEachG, with allglock still held.
      unlock(&sched.lock);
      plat::throw_("checkdead: runnable g");
    }
  }
  unlock(&allglock);
  if (grunning == 0) {  // possible if main goroutine calls runtime·Goexit()
    unlock(&sched.lock);
    plat::fatal("no goroutines (main called runtime.Goexit) - deadlock!");
  }
  // No M runs, so the Ps' timer heaps hold still and can be read: a pending timer will wake
  // someone, which is not a deadlock (yet).
  for (p* pp : allp) {
    if (pp->timers_->heapLenRacy() > 0) return;
  }
  unlock(&sched.lock);
  plat::fatal("all goroutines are asleep - deadlock!");
}

}  // namespace gmp::rt
