// The runtime's own start-up goroutines: proc.go's init (forcegchelper), mgc.go's gcenable
// (bgsweep, bgscavenge) and proc.go's GOMAXPROCS updater, and the container-aware default
// GOMAXPROCS (cgroup_linux.go) the updater applies. Until a collection or a change of the CPU
// limit they park once and stay parked, but starting them is scheduling work Go does before
// main.main: four newprocs and wakeps, and, because runtime.main holds lockOSThread during init, a
// hand-off of m0's P to a new M while gcenable waits. Running them keeps the simulated program's
// Ms and schedtick where Go's are.
#include <algorithm>
#include <cmath>

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

// defaultGOMAXPROCSUpdateEnable (proc.go): starts the updater unless GODEBUG updatemaxprocs=0
// (Go then counts the setting in a metric, which is not modelled).
void Runtime::defaultGOMAXPROCSUpdateEnable() {
  if (maxprocsSettings.updatemaxprocs == 0) return;
  newproc(funcUpdateMaxProcsGoroutine, nullptr);
}

// updateMaxProcsGoroutine (proc.go): parks until sysmon wakes it with a new default in
// updateMaxProcsG.procs, then applies it under stop-the-world, unless GOMAXPROCS was set by hand
// meanwhile (then it ends for good).
void Runtime::updateMaxProcsGoroutine() {
  updateMaxProcsG.gp = plat::getg();
  for (;;) {
    lock(&updateMaxProcsG.lock);
    if (updateMaxProcsG.idle.Load() != 0) plat::throw_("updateMaxProcsGoroutine: phase error");
    updateMaxProcsG.idle.Store(1);
    goparkunlock(&updateMaxProcsG.lock, waitReason::waitReasonUpdateGOMAXPROCSIdle, 1);
    // Woken by sysmon.
    const worldStop stw = stopTheWorldGC(stwReason::stwGOMAXPROCS);
    // A value set by hand since sysmon looked wins, and updates stay off.
    lock(&sched.lock);
    const bool custom = sched.customGOMAXPROCS;
    unlock(&sched.lock);
    if (custom) {
      startTheWorldGC(stw);
      return;
    }
    newprocs = updateMaxProcsG.procs;  // for startTheWorldWithSema's procresize
    lock(&sched.lock);
    sched.customGOMAXPROCS = false;
    unlock(&sched.lock);
    startTheWorldGC(stw);
  }
}

// sysmonUpdateGOMAXPROCS (proc.go): sysmon computes the default and, when it differs from the
// current value, hands it to the idle updater goroutine (sysmon cannot stop the world itself).
void Runtime::sysmonUpdateGOMAXPROCS() {
  lock(&computeMaxProcsLock);  // a runtime.GOMAXPROCS call waits for this computation
  lock(&sched.lock);
  const bool custom = sched.customGOMAXPROCS;
  const int32_t curr = gomaxprocs;
  unlock(&sched.lock);
  if (custom) {
    unlock(&computeMaxProcsLock);
    return;
  }
  const int32_t procs = defaultGOMAXPROCS(0);  // the affinity and the cgroup's limit, read now
  unlock(&computeMaxProcsLock);
  if (procs == curr) return;
  // A busy updater has an update pending already; this one waits for the next round.
  if (updateMaxProcsG.idle.Load() != 0) {
    lock(&updateMaxProcsG.lock);
    updateMaxProcsG.procs = procs;
    updateMaxProcsG.idle.Store(0);
    gList list;
    list.push(updateMaxProcsG.gp);
    injectglist(&list);
    unlock(&updateMaxProcsG.lock);
  }
}

// getCPUCount (os_linux.go): the CPUs the process's affinity allows (the host's answer; the
// machine's count when it has none), at least 1.
int32_t Runtime::getCPUCount() {
  int32_t n = host != nullptr ? host->getproccount() : 0;
  if (n <= 0) n = ncpu;
  return std::max(n, 1);
}

// defaultGOMAXPROCSInit (cgroup_linux.go): whether the default takes the cgroup's limit. Go opens
// the cgroup's limit files here, and without a CPU cgroup never reads a limit; a simulated
// process always has a cgroup to read (with no limit when it has no quota). With
// containermaxprocs=0 Go only counts, in a metric, whether the limit would have changed the
// default; that metric is not modelled.
void Runtime::defaultGOMAXPROCSInit() { cgroupOK = maxprocsSettings.containermaxprocs > 0; }

// defaultGOMAXPROCS (cgroup_linux.go): the CPU count (ncpu, or the affinity read now when 0),
// lowered to the cgroup's limit.
int32_t Runtime::defaultGOMAXPROCS(int32_t ncpu_) {
  int32_t procs = ncpu_;
  if (procs <= 0) procs = getCPUCount();
  if (!cgroupOK) return procs;
  return adjustCgroupGOMAXPROCS(procs, host != nullptr ? host->cgroupCPULimit() : CPULimit{});
}

// adjustCgroupGOMAXPROCS (cgroup_linux.go). Go converts the rounded limit to int32 before it
// compares; here the comparison is in double, which is the same for every limit that fits in an
// int32 and defined for those that do not.
int32_t adjustCgroupGOMAXPROCS(int32_t procs, CPULimit limit) {
  if (limit.ok) {
    double l = std::ceil(limit.limit);
    l = std::max(l, 2.0);
    if (l < static_cast<double>(procs)) procs = static_cast<int32_t>(l);
  }
  return procs;
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
