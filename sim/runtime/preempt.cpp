// Preemption (proc.go, preempt.go, signal_unix.go, stack.go).
//
// A goroutine that runs too long is asked to stop in two ways at once. Cooperatively: preemptone
// sets gp.preempt and poisons gp.stackguard0 with stackPreempt, so the next function-call safe
// point enters newstack, which yields (gopreempt_m). Asynchronously: preemptM sends the M a
// signal (SIGURG); the handler (doSigPreempt) checks that the goroutine still wants preempting and
// is stopped at an asynchronous safe point (user code, not runtime code or a cgo call), and if so
// injects a call to asyncPreempt, which yields the same way. A loop with no calls and no safe
// point (a tight loop in cgo, say) gets the signals but cannot be stopped by them.
#include <csignal>

#include "sim/platform/context.h"
#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

// preemptone (proc.go): asks the goroutine running on pp to stop.
bool Runtime::preemptone(p* pp) {
  m* mp = pp->m.get();
  if (mp == nullptr || mp == plat::getg()->m) return false;
  g* gp = mp->curg.get();
  if (gp == nullptr || gp == mp->g0) return false;
  if ((readgstatus(gp) & ~_Gscan) == _Gsyscall) return false;  // no point
  gp->setPreempt(true);
  // Cooperative preemption rides on the stack check of every function prologue: with
  // stackguard0 = stackPreempt the check fails at the goroutine's next call, which enters
  // newstack (morestackPreemptCheck here), and newstack sees the request and preempts.
  gp->stackguard0.set(stackPreempt);
  ev(Ev::PreemptRequest, gp, pp, mp->id);
  // Also ask for an asynchronous preemption (signal), for a goroutine that makes no calls.
  if (!asyncpreemptoff) {
    pp->preempt.set(1);
    preemptM(mp);
  }
  return true;
}

// preemptM (signal_unix.go): sends a preemption request to mp, unless one is already pending.
void Runtime::preemptM(m* mp) {
  if (mp->signalPending.CompareAndSwap(0, 1)) {
    ev(Ev::PreemptSignal, mp->curg.peek(), mp->p, mp->id);
    plat::tgkill(mp->procid, sigPreempt);  // signalM (os_linux.go)
  }
}

// canPreemptM (preempt.go), without the allocator's condition (m.mallocing: the M's own field,
// never set here). Go reads in this order and stops at the first false: m.locks, m.preemptoff
// (the M's own), the P's status, then m.curg and its status. Go names m.curg twice; only this M
// writes it, so one read gives both the same value. Go has no nil check on m.p: its callers have
// a P or hold m.locks (isAsyncSafePoint checks m.p first), so the check decides nothing.
bool Runtime::canPreemptM(m* mp) {
  if (mp->locks != 0 || mp->preemptoff[0] != '\0' || mp->p == nullptr || mp->p->status.get() != _Prunning) return false;
  g* curg = mp->curg.get();
  return curg != nullptr && (readgstatus(curg) & ~_Gscan) != _Gsyscall;
}

// isAsyncSafePoint (preempt.go): Go inspects the interrupted PC; here the goroutine's context says
// whether it was interrupted in preemptible user code (not runtime code, not a cgo call).
bool Runtime::isAsyncSafePoint(g* gp) {
  m* mp = gp->m;
  if (mp->curg.get() != gp) return false;
  if (mp->p == nullptr || !canPreemptM(mp)) return false;
  const plat::Context* c = plat::current_context();
  return c != nullptr && c->g == gp && c->async_safe && !mp->incgo;
}

// wantAsyncPreempt (preempt.go)
bool Runtime::wantAsyncPreempt(g* gp) {
  // A request on either the goroutine or its P counts.
  return (gp->preempt() || (gp->m->p != nullptr && gp->m->p->preempt.get() != 0)) &&
         (readgstatus(gp) & ~_Gscan) == _Grunning;
}

// doSigPreempt (signal_unix.go): handles a preemption signal on gp, the goroutine the signal
// interrupted. That may be the M's g0 (the signal landed in the scheduler): Go asks
// wantAsyncPreempt about it all the same, which reads g0's preempt flag, the P's and g0's status
// (never _Grunning), and so says no. Go's handler runs on gsignal with every signal blocked, so
// gp is never gsignal; the port has none.
void Runtime::doSigPreempt(g* gp) {
  bool injected = false;
  // Inject the preemption only if it is wanted and gp stopped at an async safe point.
  if (wantAsyncPreempt(gp) && isAsyncSafePoint(gp)) {
    gp->asyncPreemptInjected = true;  // ctxt.pushCall(asyncPreempt, newpc)
    injected = true;
  }
  plat::charge(plat::Cost::SignalHandler);
  ev(Ev::SigPreempt, gp, gp->m->p, injected ? 1 : 0);
  // The signal has been handled: count it and let the next one be sent.
  gp->m->preemptGen.Add(1);
  gp->m->signalPending.Store(0);
}

// asyncPreempt2 (preempt.go): what the injected asyncPreempt call does.
void Runtime::asyncPreempt2() {
  mcall(&Runtime::asyncPreempt2_m);
  plat::getg()->asyncSafePoint = false;
}

void Runtime::asyncPreempt2_m(g* gp) {
  gp->asyncSafePoint = true;
  if (gp->preemptStop) {
    preemptPark(gp);
  } else {
    gopreempt_m(gp);
  }
}

// morestack's check (stack.go's function prologue): a call with stackguard0 poisoned enters
// newstack on g0.
void Runtime::morestackPreemptCheck() {
  g* gp = plat::getg();
  if (gp->stackguard0.get() == stackPreempt) mcall(&Runtime::newstack);
}

// newstack (stack.go), the preemption path: stacks never need growing here.
void Runtime::newstack(g* gp) {
  m* thism = plat::getg()->m;
  // Read once: another thread may be about to preempt gp.
  const uintptr_t stackguard0 = gp->stackguard0.Load();
  if (stackguard0 != stackPreempt) plat::throw_("newstack: not a preemption (stacks never grow here)");
  if (!canPreemptM(thism)) {
    // Not preemptible now (the M holds locks, say): resume gp with a normal stackguard0. Its
    // preempt flag stays set, and releasem poisons stackguard0 again once the locks are gone.
    gp->stackguard0.set(stackGuardNormal);
    gogo(gp);
    return;
  }
  if (gp == thism->g0) plat::throw_("runtime: preempt g0");
  if (thism->p == nullptr && thism->locks == 0) plat::throw_("runtime: g is running but p is not");
  if (gp->preemptStop) {
    preemptPark(gp);
    return;
  }
  // Otherwise the goroutine yields as if it had called runtime.Gosched.
  gopreempt_m(gp);
}

}  // namespace gmp::rt
