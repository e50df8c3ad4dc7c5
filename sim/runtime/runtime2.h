// The scheduler's data structures, ported from Go 1.27 src/runtime/runtime2.go (tag go1.27rc2),
// with the fields the ported code uses. Fields that Go reads or writes from more than one thread
// are gmp::Atomic cells (see sim/platform/atomic.h); the rest are plain and follow Go's ownership
// rules (owner-only, or guarded by sched.lock).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/platform/atomic.h"
#include "sim/platform/context.h"
#include "sim/platform/platform.h"
#include "sim/runtime/gqueue.h"
#include "sim/runtime/mgc.h"
#include "sim/runtime/mgcpacer.h"

namespace gmp::rt {

class Runtime;
struct m;
struct p;
using muintptr = m*;
using puintptr = p*;

// G status (runtime2.go).
enum : uint32_t {
  _Gidle = 0,
  _Grunnable = 1,
  _Grunning = 2,
  _Gsyscall = 3,
  _Gwaiting = 4,
  _Gmoribund_unused = 5,
  _Gdead = 6,
  _Genqueue_unused = 7,
  _Gcopystack = 8,
  _Gpreempted = 9,
  _Gleaked = 10,
  _Gdeadextra = 11,
  _Gscan = 0x1000,
};

// P status (runtime2.go).
enum : uint32_t {
  _Pidle = 0,
  _Prunning = 1,
  _Psyscall_unused = 2,
  _Pgcstop = 3,
  _Pdead = 4,
};

// waitReason (runtime2.go): why a goroutine is blocked; the names print as Go prints them.
enum class waitReason : uint8_t {
  waitReasonZero,
  waitReasonSemacquire,
  waitReasonSleep,
  waitReasonChanReceiveNilChan,
  waitReasonChanSendNilChan,
  waitReasonSelectNoCases,
  waitReasonSelect,
  waitReasonChanReceive,
  waitReasonChanSend,
  waitReasonSyncMutexLock,
  waitReasonSyncWaitGroupWait,
  waitReasonPreempted,
  waitReasonForceGCIdle,
  waitReasonUpdateGOMAXPROCSIdle,
  waitReasonGCSweepWait,
  waitReasonGCScavengeWait,
  waitReasonIOWait,
  waitReasonGCAssistMarking,
  waitReasonGCAssistWait,
  waitReasonGCWorkerIdle,
  waitReasonGCWorkerActive,
  waitReasonGarbageCollection,
  waitReasonWaitForGCCycle,
  waitReasonStoppingTheWorld,    // the goroutine that stops the world, while it waits for the Ps
  waitReasonGCMarkTermination,
  waitReasonFlushProcCaches,
};

// The runtime's own goroutines, by the startpc they get instead of a scenario function's id
// (isSystemGoroutine tells them apart, as Go does by function).
inline constexpr uintptr_t kRuntimeFuncBase = uintptr_t{1} << 48;
inline constexpr uintptr_t funcForcegchelper = kRuntimeFuncBase + 1;
inline constexpr uintptr_t funcBgsweep = kRuntimeFuncBase + 2;
inline constexpr uintptr_t funcBgscavenge = kRuntimeFuncBase + 3;
inline constexpr uintptr_t funcUpdateMaxProcsGoroutine = kRuntimeFuncBase + 4;
const char* waitReasonString(waitReason r);
// waitReason.isWaitingForSuspendG (runtime2.go): the reasons a goroutine gives when it goes
// _Gwaiting only so that suspendG may scan its stack, while it goes on running on its M (stopping
// the world, forEachP, a mark worker marking, an assist marking, the GC's own stop). Go's table
// also has the tracer's and the page tracer's reasons, which the port has not.
inline bool isWaitingForSuspendG(waitReason r) {
  return r == waitReason::waitReasonStoppingTheWorld || r == waitReason::waitReasonGCMarkTermination ||
         r == waitReason::waitReasonGarbageCollection || r == waitReason::waitReasonGCAssistMarking ||
         r == waitReason::waitReasonGCWorkerActive || r == waitReason::waitReasonFlushProcCaches;
}

// stackPreempt (stack.go): the stackguard0 value that makes the next function-call safe point
// enter the scheduler (cooperative preemption).
inline constexpr uintptr_t stackPreempt = ~uintptr_t{0} - 1313;
// stackGuardNormal stands for "stack.lo + stackGuard": any value other than stackPreempt.
inline constexpr uintptr_t stackGuardNormal = 0;

struct sudog;
struct timer;
struct gcBgMarkWorkerNode;
struct timers;

struct g {
  Atomic<uint32_t> atomicstatus{_Gidle};
  guintptr schedlink = nullptr;
  int64_t goid = 0;
  muintptr m = nullptr;  // the M running this goroutine, nil while it does not run

  plat::Context* stack = nullptr;  // the goroutine's stack (its execution context)
  // Cooperative preemption: stackguard0 == stackPreempt makes the next safe point call into the
  // scheduler; preempt says why (a preemption, not a stack overflow).
  Atomic<uintptr_t> stackguard0{stackGuardNormal};
  Atomic<uint32_t> preempt_;        // Go's gp.preempt (a bool), through preempt()/setPreempt()
  bool preemptStop = false;         // preempt into _Gpreempted (suspend), not back to the run queue
  bool asyncSafePoint = false;      // true while g is stopped by an async preemption
  // Not in Go: set by the preemption signal handler where Go's pushes a call to asyncPreempt
  // into the interrupted context; the goroutine's code makes that call when it resumes.
  bool asyncPreemptInjected = false;
  waitReason waitreason = waitReason::waitReasonZero;
  int64_t waitsince = 0;            // roughly when g blocked
  void* param = nullptr;            // what the waker hands over (chan, select, sema)
  sudog* waiting = nullptr;         // g's sudogs while it blocks (a select's, in lock order)
  Atomic<uint32_t> selectDone;      // 1 once a case of g's select has been chosen by a waker
  Atomic<uint32_t> parkingOnChan;   // 1 from a channel park's start until its unlock
  Atomic<muintptr> lockedm;         // the M gp is locked to; read by the Ms that schedule gp
  timer* timer_ = nullptr;          // time.Sleep's timer, kept for g's next sleep
  int64_t sleepWhen = 0;            // the end of the current time.Sleep
  int64_t parentGoid = 0;
  uintptr_t startpc = 0;            // the function the goroutine runs (a scenario function id)
  Atomic<uint32_t> runningCleanups;  // Go's atomic.Bool: never true here (no cleanups run)
  uint8_t trackingSeq = 0;          // newproc1's draw: 1 in gTrackingPeriod Gs is sampled
  bool tracking = false;            // sampled for scheduling-latency statistics (not kept here)
  int64_t syscallsp = 0;            // nonzero while in a system call
  // GC assist credit in bytes: positive, the goroutine may allocate that much without assisting;
  // negative, it owes that much scan work (runtime2.go).
  int64_t gcAssistBytes = 0;
  bool inMarkAssist = false;        // between GCMarkAssistStart and Done

  // Not in Go: the workload interpreter's state for this goroutine, and the time it last became
  // runnable (for scheduling-latency measurement).
  void* task = nullptr;
  int64_t runnableSince = 0;

  bool preempt() const { return preempt_.get() != 0; }
  void setPreempt(bool v) { preempt_.set(v ? 1 : 0); }
};

// isSystemGoroutine (traceback.go): the runtime's own goroutines, which Go leaves out of
// deadlock detection, goroutine counts and default tracebacks. runtime.main is not one.
inline bool isSystemGoroutine(const g* gp) { return gp->startpc >= kRuntimeFuncBase; }

// readgstatus (proc.go)
inline uint32_t readgstatus(const g* gp) { return gp->atomicstatus.Load(); }

// listNodeManual (list_manual.go): links an m into sched.midle.
struct listNodeManual {
  muintptr prev = nullptr;
  muintptr next = nullptr;
};

// The bytes of Go's mPadded, what allocm allocates for an M (runtime2.go): the m struct padded to
// the 2048-byte size class less the 8-byte malloc header (Go 1.23's m is 1,760 bytes on
// linux/amd64, its DWARF says).
inline constexpr uint64_t mPaddedSize = 2048 - 8;

struct m {
  g* g0 = nullptr;               // the M's scheduler goroutine (runs on the M's own stack)
  void (Runtime::*mstartfn)() = nullptr;
  Atomic<g*> curg;               // the user goroutine this M runs; read by stealing Ps
  puintptr p = nullptr;          // the P held while running Go code, nil otherwise
  puintptr nextp = nullptr;
  puintptr oldp = nullptr;       // the P held before the system call now under way
  uint64_t procid = 0;           // the OS thread's id (plat::gettid), for signalM
  int64_t id = 0;
  int32_t locks = 0;
  bool spinning = false;         // this M has no work and is searching for some (nmspinning)
  bool blocked = false;          // sleeping on a note
  bool incgo = false;            // in a cgo call (never here)
  // Non-empty while the M must not be preempted: stopTheWorld sets the reason's name (Go's string,
  // here a C string; "" is none). Only this M writes or reads it.
  const char* preemptoff = "";
  plat::Note park;
  muintptr alllink = nullptr;    // on allm
  muintptr schedlink = nullptr;
  listNodeManual idleNode;
  guintptr lockedg = nullptr;
  uint32_t lockedExt = 0;        // nesting depth of the user's LockOSThread calls
  uint32_t lockedInt = 0;        // nesting depth of the runtime's own lockOSThread calls
  // gopark's hand-off to park_m.
  bool (*waitunlockf)(g*, void*) = nullptr;
  void* waitlock = nullptr;
  uint32_t syscalltick = 0;
  Atomic<uint32_t> preemptGen;     // counts completed async preemption signals
  Atomic<uint32_t> signalPending;  // whether a preemption signal is pending
  uint32_t cheaprand = 0;
  uint64_t cheaprand64 = 0;
  // findRunnable's snapshot of allp before it drops its P (m.allpSnapshot).
  std::vector<puintptr> allpSnapshot;
  // Not in Go: mcall's function and argument, handed from the goroutine's stack to g0's (Go passes
  // them in registers).
  void (Runtime::*mcallfn)(g*) = nullptr;
  g* mcallg = nullptr;
  int64_t ncgocall = 0;
};

constexpr uint32_t kRunqSize = 256;  // len(p.runq)

// sysmontick (proc.go): what sysmon last saw of a P.
struct sysmontick {
  uint32_t schedtick = 0;
  int64_t schedwhen = 0;
  uint32_t syscalltick = 0;
  int64_t syscallwhen = 0;
};

struct p {
  int32_t id = 0;
  Atomic<uint32_t> status{_Pidle};  // one of _Pidle/_Prunning/...; read by stealing Ps
  puintptr link = nullptr;
  Atomic<uint32_t> schedtick;       // +1 per new time slice (execute); read by sysmon
  Atomic<uint32_t> syscalltick;     // +1 per system call; read by sysmon
  sysmontick sysmontick_;           // the ticks sysmon saw last, and when
  Atomic<muintptr> m;               // the M holding this P, nil when idle; read by stealing Ps
  uint64_t goidcache = 0;
  uint64_t goidcacheend = 0;
  // 1 asks the P to run sched.safePointFn when it next can: a plain uint32 in Go, set by
  // forEachP from another thread; cleared by whoever runs the function for this P (a CAS).
  Atomic<uint32_t> runSafePointFn;
  muintptr oldm = nullptr;          // the M this P ran on last (acquirepNoTrace); procresize's hint
  int64_t gcStopTime = 0;           // when the P stopped for the stop-the-world under way (0: not)
  // Stack space held by this P's goroutines not yet added to gcController.maxStackScan.
  int64_t maxStackScanDelta = 0;
  uint64_t goroutinesCreated = 0;   // goroutines this P has made, all told
  // The mode of the GC mark worker findRunnableGCWorker picked to run next on this P (mgc.go);
  // read by the tracer's GoStart.
  gcMarkWorkerMode gcMarkWorkerMode_ = gcMarkWorkerMode::gcMarkWorkerNotWorker;
  int64_t gcAssistTime = 0;               // ns in assists (gcAssistAlloc1)
  Atomic<int64_t> gcFractionalMarkTime;   // ns in fractional mark workers this cycle
  limiterEvent limiterEvent_;             // Go's p.limiterEvent: the CPU limiter's event slot
  int64_t gcMarkWorkerStartTime = 0;      // nanotime when the current mark worker started
  // The mark worker assigned to run next on this P (assignWaitingGCWorker), nil if none.
  gcBgMarkWorkerNode* nextGCMarkWorker = nullptr;
  mcache mcache_;                         // Go's p.mcache, the allocation cache
  gcWork gcw;                             // this P's unpublished mark work

  // The local run queue, a ring read and written without a lock (see runq.cpp).
  Atomic<uint32_t> runqhead;
  Atomic<uint32_t> runqtail;
  std::array<Atomic<g*>, kRunqSize> runq;
  // runnext: a goroutine just readied by the running one, to run before anything in runq and
  // in the rest of the current time slice (nil when empty).
  Atomic<g*> runnext;

  gList gFree;                      // dead goroutines kept for reuse (_Gdead)
  std::vector<sudog*> sudogcache;
  Atomic<uint32_t> preempt;         // asks whatever runs on this P to enter the scheduler soon
  Atomic<uint32_t> timersLen;       // p.timers.len: number of timers in the P's heap
  timers* timers_ = nullptr;        // the P's timer heap (time.go); owned by the Runtime
};

// listHeadManual (list_manual.go), specialised to m.idleNode.
struct mList {
  muintptr obj = nullptr;
  bool empty() const { return obj == nullptr; }
  void push(muintptr mp);
  muintptr pop();
  void remove(muintptr mp);
};

struct schedt {
  Atomic<uint64_t> goidgen;
  Atomic<int64_t> lastpoll;   // when the network was last polled; 0 while an M blocks in it
  Atomic<int64_t> pollUntil;  // the deadline of the blocking poll under way, 0 if none

  // mutexPreferLowLatency (lock_spinbit.go): sched.lock passes quickly between Ms, so all its
  // waiters may spin.
  plat::Mutex lock{.prefer_low_latency = true};

  mList midle;                // parked Ms, without a P (stopm)
  int32_t nmidle = 0;         // len(midle)
  int32_t nmidlelocked = 0;   // Ms parked while locked to a goroutine
  int64_t mnext = 0;          // Ms created so far; also the next M's id
  int32_t maxmcount = 10000;  // creating more Ms than this is fatal
  int32_t nmsys = 0;          // Ms that checkdead leaves out (sysmon's)
  int64_t nmfreed = 0;        // Ms that have exited, all told

  LockGuarded<puintptr> pidle;  // idle p's; read once without sched.lock (exitsyscallTryGetP)
  Atomic<int32_t> npidle;
  Atomic<int32_t> nmspinning;     // see the spinning protocol comment in sim/runtime
  Atomic<uint32_t> needspinning;  // the "delicate dance" flag; set to 1 only under sched.lock
  Atomic<int32_t> nGsyscallNoP;   // goroutines in a system call whose M lost its P
  Atomic<int32_t> pollingNet;     // 1 while an M makes findRunnable's non-blocking poll
  Atomic<int32_t> ngsys;          // how many of the goroutines are the runtime's own
  Atomic<int64_t> idleTime;       // ns Ps spent idle, from the CPU limiter's events (proc.go)
  Atomic<uint32_t> gcwaiting;     // Go's atomic.Bool: a stop-the-world is pending
  // Stop-the-world and forEachP (proc.go), guarded by sched.lock: the Ps still to stop (to run
  // safePointFn), and the note the stopping M sleeps on until the last one has.
  int32_t stopwait = 0;
  plat::Note stopnote;
  int32_t safePointWait = 0;
  std::function<void(p*)> safePointFn;
  plat::Note safePointNote;
  struct {
    Atomic<uint32_t> user;        // Go's plain bool: user goroutines may not run (never here)
  } disable;

  // The global run queue.
  gQueue runq;

  // Dead goroutines kept for reuse by any P.
  struct {
    plat::Mutex lock;
    gList stack;    // Gs with stacks
    gList noStack;  // Gs without stacks
  } gFree;

  plat::Mutex sudoglock;
  sudog* sudogcache = nullptr;

  // GOMAXPROCS was set by hand (the GOMAXPROCS variable, runtime.GOMAXPROCS): no automatic
  // updates. Guarded by sched.lock.
  bool customGOMAXPROCS = false;
  // procresize's bookkeeping of P-time: when it last ran, and the sum of gomaxprocs x time
  // before that. Guarded by sched.lock.
  int64_t procresizetime = 0;
  int64_t totaltime = 0;
  Atomic<uint64_t> goroutinesCreated;  // the goroutines made on Ps that were destroyed since

  Atomic<uint32_t> sysmonwait;    // sysmon is parked on sysmonnote (Go's atomic.Bool)
  plat::Note sysmonnote;
  plat::Mutex sysmonlock;
};

}  // namespace gmp::rt
