// Names and the GODEBUG=schedtrace line (proc.go, runtime2.go).
#include <string>

#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

// waitReason.String (runtime2.go)
const char* waitReasonString(waitReason r) {
  switch (r) {
    case waitReason::waitReasonZero: return "";
    case waitReason::waitReasonSemacquire: return "semacquire";
    case waitReason::waitReasonSleep: return "sleep";
    case waitReason::waitReasonChanReceiveNilChan: return "chan receive (nil chan)";
    case waitReason::waitReasonChanSendNilChan: return "chan send (nil chan)";
    case waitReason::waitReasonSelectNoCases: return "select (no cases)";
    case waitReason::waitReasonSelect: return "select";
    case waitReason::waitReasonChanReceive: return "chan receive";
    case waitReason::waitReasonChanSend: return "chan send";
    case waitReason::waitReasonSyncMutexLock: return "sync.Mutex.Lock";
    case waitReason::waitReasonSyncWaitGroupWait: return "sync.WaitGroup.Wait";
    case waitReason::waitReasonPreempted: return "preempted";
    case waitReason::waitReasonForceGCIdle: return "force gc (idle)";
    case waitReason::waitReasonUpdateGOMAXPROCSIdle: return "GOMAXPROCS updater (idle)";
    case waitReason::waitReasonGCSweepWait: return "GC sweep wait";
    case waitReason::waitReasonGCScavengeWait: return "GC scavenge wait";
    case waitReason::waitReasonIOWait: return "IO wait";
    case waitReason::waitReasonGCAssistMarking: return "GC assist marking";
    case waitReason::waitReasonGCAssistWait: return "GC assist wait";
    case waitReason::waitReasonGCWorkerIdle: return "GC worker (idle)";
    case waitReason::waitReasonGCWorkerActive: return "GC worker (active)";
    case waitReason::waitReasonGarbageCollection: return "garbage collection";
    case waitReason::waitReasonWaitForGCCycle: return "wait for GC cycle";
    case waitReason::waitReasonStoppingTheWorld: return "stopping the world";
    case waitReason::waitReasonGCMarkTermination: return "GC mark termination";
    case waitReason::waitReasonFlushProcCaches: return "flushing proc caches";
  }
  return "?";
}

const char* evName(Ev e) {
  static const char* const names[] = {
      "GoCreate", "GoStart", "GoEnd", "GoPark", "GoUnpark", "GoSched", "GoPreempt", "GoSyscall",
      "GoSysExit", "PutRunnext", "PutLocal", "PutGlobal", "GetGlobal", "Steal", "ProcStart",
      "ProcStop", "ProcSteal", "Wakep", "StartM", "StopM", "HandoffP", "SpinStart", "SpinStop",
      "PreemptRequest", "PreemptSignal", "SigPreempt", "MCreate", "WakepSpinning", "WakepNoP",
      "RunnextBackoff", "RunnextCasFail", "GCStart", "GCDone", "STWStart", "STWDone",
      "GCMarkAssistStart", "GCMarkAssistDone", "GCSweepStart", "GCSweepDone", "HeapAlloc", "HeapGoal", "ProcsChange",
  };
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<size_t>(Ev::Count_));
  return names[static_cast<int>(e)];
}

// schedtrace (proc.go), the summary form, returned instead of printed.
std::string Runtime::schedtrace() {
  const int64_t now = plat::nanotime();
  if (starttime == 0) starttime = now;
  lock(&sched.lock);
  std::string s = "SCHED " + std::to_string((now - starttime) / 1000000) + "ms: gomaxprocs=" +
                  std::to_string(gomaxprocs) + " idleprocs=" + std::to_string(sched.npidle.Load()) +
                  " threads=" + std::to_string(mcount()) + " spinningthreads=" +
                  std::to_string(sched.nmspinning.Load()) + " needspinning=" +
                  std::to_string(sched.needspinning.Load()) + " idlethreads=" + std::to_string(sched.nmidle) +
                  " runqueue=" + std::to_string(sched.runq.size);
  for (size_t i = 0; i < allp.size(); i++) {
    const uint32_t h = allp[i]->runqhead.Load();
    const uint32_t t = allp[i]->runqtail.Load();
    s += " ";
    if (i == 0) s += "[ ";
    s += std::to_string(t - h);
    if (i == allp.size() - 1) s += " ]";
  }
  s += " schedticks=[ ";
  for (p* pp : allp) s += std::to_string(pp->schedtick.Load()) + " ";
  s += "]";
  unlock(&sched.lock);
  return s;
}

}  // namespace gmp::rt
