// The runtime's own start-up goroutines: proc.go's init (forcegchelper), mgc.go's gcenable
// (bgsweep, bgscavenge) and proc.go's GOMAXPROCS updater. With no garbage collector and a fixed
// GOMAXPROCS they park once and stay parked, but starting them is scheduling work Go does before
// main.main: four newprocs and wakeps, and, because runtime.main holds lockOSThread during init, a
// hand-off of m0's P to a new M while gcenable waits. Running them keeps the simulated program's
// Ms and schedtick where Go's are.
#include "sim/runtime/chan.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

// doInit(runtime_inittasks), the part that schedules: proc.go's `func init() { go forcegchelper() }`.
void Runtime::runtimeInit() { newproc(funcForcegchelper, nullptr); }

// gcenable (mgc.go): starts the background sweeper and scavenger and waits until both run.
void Runtime::gcenable() {
  hchan* c = makechan(*this, 2);
  newproc(funcBgsweep, c);
  newproc(funcBgscavenge, c);
  chanrecv1(c, nullptr);
  chanrecv1(c, nullptr);
  memstats.enablegc = true;  // the runtime is up: cycles may start
}

// The loop both of Go's sysmon-resumed helpers run (updateMaxProcsGoroutine is modelled on
// forcegchelper): under the helper's lock, mark it idle and park until sysmon resumes it.
void Runtime::idleHelperLoop(HelperState& h, waitReason reason, const char* phaseError) {
  h.gp = plat::getg();
  for (;;) {
    lock(&h.lock);
    if (h.idle.Load() != 0) plat::throw_(phaseError);
    h.idle.Store(1);
    goparkunlock(&h.lock, reason, 1);
  }
}

// forcegchelper (proc.go): parks until sysmon resumes it (no cycle for forcegcperiod), then starts
// a time-triggered cycle.
void Runtime::forcegchelper() {
  forcegc.gp = plat::getg();
  for (;;) {
    lock(&forcegc.lock);
    if (forcegc.idle.Load() != 0) plat::throw_("forcegc: phase error");
    forcegc.idle.Store(1);
    goparkunlock(&forcegc.lock, waitReason::waitReasonForceGCIdle, 1);
    gcStart(gcTrigger{gcTriggerKind::gcTriggerTime, plat::nanotime(), 0});
  }
}

// defaultGOMAXPROCSUpdateEnable (proc.go): GODEBUG updatemaxprocs defaults to 1, so the helper starts.
void Runtime::defaultGOMAXPROCSUpdateEnable() { newproc(funcUpdateMaxProcsGoroutine, nullptr); }

// updateMaxProcsGoroutine (proc.go), up to its park: sysmon would resume it when the CPU limit
// changes, which a simulated machine's does not (docs/fidelity.md, 20).
void Runtime::updateMaxProcsGoroutine() {
  idleHelperLoop(updateMaxProcsG, waitReason::waitReasonUpdateGOMAXPROCSIdle, "updateMaxProcsGoroutine: phase error");
}

// bgscavenge (mgcscavenge.go), up to scavenger.park: the scavenger waits for work.
void Runtime::bgscavenge(hchan* c) {
  scavenger.gp = plat::getg();  // scavenger.init
  chansend1(c, nullptr);
  for (;;) {
    lock(&scavenger.lock);  // scavengerState.park
    scavenger.parked = true;
    goparkunlock(&scavenger.lock, waitReason::waitReasonGCScavengeWait, 2);
  }
}

void Runtime::runSystemGoroutine(g* gp) {
  switch (gp->startpc) {
    case funcForcegchelper:
      forcegchelper();
      break;
    case funcBgsweep:
      bgsweep(static_cast<hchan*>(gp->task));
      break;
    case funcBgscavenge:
      bgscavenge(static_cast<hchan*>(gp->task));
      break;
    case funcUpdateMaxProcsGoroutine:
      updateMaxProcsGoroutine();
      break;
    case funcGcBgMarkWorker:
      gcBgMarkWorker(static_cast<hchan*>(gp->task));
      break;
    default:
      plat::throw_("runtime: unknown runtime function");
  }
}

}  // namespace gmp::rt
