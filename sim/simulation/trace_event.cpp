#include "sim/simulation/trace_event.h"

#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"

namespace gmp::engine {

using rt::Ev;

namespace {

// The schema's StwReason of Go's stwReason: Go's order shifted by one; the stwForTest* reasons and
// anything past them are OTHER.
static_assert(static_cast<int>(rt::stwReason::stwStopTrace) + 1 == trace::STW_REASON_STOP_TRACE);
trace::StwReason stw_reason(int64_t arg) {
  if (arg < 0 || arg > static_cast<int64_t>(rt::stwReason::stwStopTrace)) return trace::STW_REASON_OTHER;
  return static_cast<trace::StwReason>(arg + 1);
}

}  // namespace

trace::Event to_trace(Ev e, rt::g* gp, rt::p* pp, int64_t arg, int64_t now) {
  trace::Event ev;
  ev.set_ts(now);
  if (gp != nullptr) ev.set_g(gp->goid);
  if (rt::g* cur = plat::getg(); cur != nullptr && cur->m != nullptr) ev.set_m(cur->m->id);
  if (pp != nullptr) ev.set_p(pp->id);
  switch (e) {
    case Ev::GoCreate:
      ev.set_kind(trace::KIND_GO_CREATE);
      ev.set_reason(trace::REASON_NEWPROC);
      ev.set_peer_g(arg);
      break;
    case Ev::GoStart:
      ev.set_kind(trace::KIND_GO_START);
      ev.set_reason(arg != 0 ? trace::REASON_INHERIT_TIME : trace::REASON_SCHEDULE);
      if (pp != nullptr) {  // a mark worker runs in the mode findRunnableGCWorker gave its P
        switch (pp->gcMarkWorkerMode_) {
          case rt::gcMarkWorkerMode::gcMarkWorkerNotWorker: break;
          case rt::gcMarkWorkerMode::gcMarkWorkerDedicatedMode: ev.set_gc_worker_mode(trace::GC_WORKER_MODE_DEDICATED); break;
          case rt::gcMarkWorkerMode::gcMarkWorkerFractionalMode: ev.set_gc_worker_mode(trace::GC_WORKER_MODE_FRACTIONAL); break;
          case rt::gcMarkWorkerMode::gcMarkWorkerIdleMode: ev.set_gc_worker_mode(trace::GC_WORKER_MODE_IDLE); break;
        }
      }
      break;
    case Ev::GoEnd:
      ev.set_kind(trace::KIND_GO_EXIT);
      ev.set_reason(trace::REASON_GOEXIT);
      break;
    case Ev::GoPark:
      ev.set_kind(trace::KIND_GO_PARK);
      ev.set_reason(trace::REASON_PARK);
      ev.set_label(rt::waitReasonString(static_cast<rt::waitReason>(arg)));
      break;
    case Ev::GoUnpark:
      ev.set_kind(trace::KIND_GO_UNPARK);
      ev.set_reason(trace::REASON_READY);
      if (rt::g* cur = plat::getg(); cur != nullptr && cur->m != nullptr && cur->m->curg.peek() != nullptr) {
        ev.set_peer_g(cur->m->curg.peek()->goid);
      }
      break;
    case Ev::GoSched:
      ev.set_kind(trace::KIND_GO_STOP);
      ev.set_reason(trace::REASON_GOSCHED);
      break;
    case Ev::GoPreempt:
      ev.set_kind(trace::KIND_GO_STOP);
      ev.set_reason(arg != 0 ? trace::REASON_PREEMPT_ASYNC : trace::REASON_PREEMPT_COOPERATIVE);
      break;
    case Ev::GoSyscall:
      ev.set_kind(trace::KIND_GO_SYSCALL_ENTER);
      ev.set_reason(trace::REASON_SYSCALL);
      break;
    case Ev::GoSysExit:
      ev.set_kind(trace::KIND_GO_SYSCALL_EXIT);
      ev.set_reason(arg == 0 ? trace::REASON_EXITSYSCALL_FAST
                             : arg == 1 ? trace::REASON_EXITSYSCALL_IDLE_P : trace::REASON_EXITSYSCALL_NO_P);
      break;
    case Ev::PutRunnext:
      ev.set_kind(trace::KIND_RUNQ_PUT);
      ev.set_queue(trace::QUEUE_RUNNEXT);
      break;
    case Ev::PutLocal:
      ev.set_kind(trace::KIND_RUNQ_PUT);
      ev.set_queue(trace::QUEUE_LOCAL);
      if (arg != 0) ev.set_reason(trace::REASON_KICKED_FROM_RUNNEXT);
      break;
    case Ev::PutGlobal:
      ev.set_kind(trace::KIND_RUNQ_PUT);
      ev.set_queue(trace::QUEUE_GLOBAL);
      ev.set_count(arg);
      break;
    case Ev::GetGlobal:
      ev.set_kind(trace::KIND_RUNQ_GET);
      ev.set_queue(trace::QUEUE_GLOBAL);
      ev.set_count(arg);
      break;
    case Ev::Steal:
      ev.set_kind(trace::KIND_STEAL);
      ev.set_reason(trace::REASON_STEAL_WORK);
      ev.clear_p();
      if (rt::g* cur = plat::getg(); cur != nullptr && cur->m != nullptr && cur->m->p != nullptr) ev.set_p(cur->m->p->id);
      if (pp != nullptr) ev.set_peer_p(pp->id);
      ev.set_count(arg);
      break;
    case Ev::ProcStart:
      ev.set_kind(trace::KIND_P_ACQUIRE);
      break;
    case Ev::ProcStop:
      ev.set_kind(trace::KIND_P_RELEASE);
      break;
    case Ev::ProcSteal:
      ev.set_kind(trace::KIND_P_RELEASE);
      ev.set_reason(trace::REASON_RETAKE);
      ev.set_peer_m(arg);
      break;
    case Ev::Wakep:
      ev.set_kind(trace::KIND_M_WAKEUP);
      ev.set_reason(trace::REASON_WAKEP);
      break;
    case Ev::StartM:  // arg: the M woken, or -1 for a new one (its M_CREATE follows)
      ev.set_kind(trace::KIND_M_WAKEUP);
      ev.set_reason(trace::REASON_STARTM);
      if (arg >= 0) ev.set_peer_m(arg);
      break;
    case Ev::StopM:
      ev.set_kind(trace::KIND_M_SLEEP);
      ev.set_reason(trace::REASON_STOPM);
      break;
    case Ev::HandoffP:
      ev.set_kind(trace::KIND_P_HANDOFF);
      ev.set_reason(trace::REASON_HANDOFFP);
      break;
    case Ev::SpinStart:
      ev.set_kind(trace::KIND_M_SPIN_START);
      break;
    case Ev::SpinStop:
      ev.set_kind(trace::KIND_M_SPIN_STOP);
      break;
    case Ev::PreemptRequest:
      ev.set_kind(trace::KIND_PREEMPT_REQUEST);
      ev.set_reason(trace::REASON_SYSMON);
      ev.set_peer_m(arg);
      break;
    case Ev::PreemptSignal:
      ev.set_kind(trace::KIND_SIGNAL_SEND);
      ev.set_peer_m(arg);
      ev.set_signal(rt::sigPreempt);
      break;
    case Ev::SigPreempt:
      ev.set_kind(trace::KIND_SIGNAL_RECEIVE);
      ev.set_signal(rt::sigPreempt);
      ev.set_reason(arg != 0 ? trace::REASON_PREEMPT_ASYNC : trace::REASON_PREEMPT_ASYNC_UNSAFE);
      break;
    case Ev::MCreate:  // arg: the new M; the M running newm created it
      ev.set_kind(trace::KIND_M_CREATE);
      if (ev.has_m()) ev.set_peer_m(ev.m());
      ev.set_m(arg);
      break;
    case Ev::WakepSpinning:
    case Ev::WakepNoP:
    case Ev::RunnextBackoff:
    case Ev::RunnextCasFail:
      break;
    case Ev::GCStart:
      ev.set_kind(trace::KIND_GC_BEGIN);
      ev.set_value(arg);
      break;
    case Ev::GCDone:
      ev.set_kind(trace::KIND_GC_END);
      ev.set_value(arg);
      break;
    case Ev::STWStart:
      ev.set_kind(trace::KIND_STW_BEGIN);
      ev.set_stw_reason(stw_reason(arg));
      break;
    case Ev::STWDone:
      ev.set_kind(trace::KIND_STW_END);
      ev.set_stw_reason(stw_reason(arg));
      break;
    case Ev::GCMarkAssistStart:
      ev.set_kind(trace::KIND_GC_MARK_ASSIST_BEGIN);
      break;
    case Ev::GCMarkAssistDone:
      ev.set_kind(trace::KIND_GC_MARK_ASSIST_END);
      break;
    case Ev::GCSweepStart:
      ev.set_kind(trace::KIND_GC_SWEEP_BEGIN);
      break;
    case Ev::GCSweepDone:
      ev.set_kind(trace::KIND_GC_SWEEP_END);
      ev.set_value(arg);
      break;
    case Ev::HeapAlloc:
      ev.set_kind(trace::KIND_HEAP_ALLOC);
      ev.set_value(arg);
      break;
    case Ev::HeapGoal:
      ev.set_kind(trace::KIND_HEAP_GOAL);
      ev.set_value(arg);
      break;
    case Ev::ProcsChange:
      ev.set_kind(trace::KIND_PROCS);
      ev.set_value(arg);
      break;
    case Ev::Count_:
      break;
  }
  return ev;
}

}  // namespace gmp::engine
