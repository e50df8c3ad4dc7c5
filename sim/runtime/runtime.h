// The ported runtime: Go's package-level scheduler state and the functions over it.
//
// Go keeps the scheduler in package variables (sched, allp, gomaxprocs, stealOrder, ...). Here
// they are members of Runtime, one instance per simulated program, so that several simulations
// can live in one process (each on its own OS thread). The ported functions are members too,
// which lets them call each other and name the globals exactly as Go does; each definition is in
// the file for its concern and cites the Go function it ports.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "sim/platform/site.h"
#include "sim/runtime/events.h"
#include "sim/runtime/gqueue.h"
#include "sim/runtime/mgc.h"
#include "sim/runtime/mgcpacer.h"
#include "sim/runtime/mgcwork.h"
#include "sim/runtime/netpoll.h"
#include "sim/runtime/rand.h"
#include "sim/platform/arena.h"
#include "sim/platform/splitmix64.h"
#include "sim/runtime/runtime2.h"
#include "sim/runtime/steal_order.h"

namespace gmp::rt {

struct SyncState;
struct hchan;
struct Sema;

// pMask (proc.go): an atomic bitstring with one bit per P. Go's is a slice: resize reslices
// within its capacity and copies into a new array beyond it. Here the live array is words_ with
// n_ words in use of cap_; an outgrown array is kept (Go's stays alive while anyone holds the old
// slice), so a reader holding the mask across a resize never reads freed memory.
class pMask {
 public:
  void resize(int32_t nprocs);
  bool read(uint32_t id) const;
  void set(int32_t id);
  void clear(int32_t id);
  bool any() const;

 private:
  Atomic<uint32_t>* words_ = nullptr;
  int32_t n_ = 0;
  int32_t cap_ = 0;
  std::vector<std::unique_ptr<Atomic<uint32_t>[]>> arrays_;  // every array made, the live one last
};

// Go constants that the queue code consults.
inline constexpr bool haveSysmon = true;           // GOARCH != wasm
inline constexpr bool randomizeScheduler = false;  // = raceenabled; the race detector is off

// The platform-facing parts the embedding supplies: how to start an OS thread for an M, and
// where the program's goroutines get their code. The engine (sim/engine) and tests implement it.
// internal/runtime/cgroup's answer: a limit in CPUs (quota / period) when ok.
struct CPULimit {
  bool ok = false;
  double limit = 0;
};

class Host {
 public:
  virtual ~Host() = default;
  // Starts a thread that runs fn(arg) on a new stack with getg() == g0 (newosproc).
  virtual void newosproc(m* mp, plat::Fiber::Entry fn, void* arg) = 0;
  // The thread's exit (mexit's final act). Never returns.
  [[noreturn]] virtual void exitThread() = 0;
  // Go's exit(code): ends the program.
  [[noreturn]] virtual void exit(int code) = 0;
  // Runs goroutine gp's code (gp->startpc, gp->task) on its own stack; returns when the code ends.
  virtual void runGoroutine(g* gp) = 0;
  // Scheduler events worth recording (trace, counters); see events.h for what gp, pp and arg mean
  // for each.
  virtual void event(Ev e, g* gp, p* pp, int64_t arg) = 0;
  // The process's cgroup CPU limit as internal/runtime/cgroup reads it now (cpu.max's quota over
  // its period, in CPUs); ok false when the process has no limit ("max", or no cgroup).
  virtual CPULimit cgroupCPULimit() { return {}; }
  // sched_getaffinity's CPU count for the process (getproccount): its cpuset's cores, or all; 0:
  // not known (ncpu stays as set).
  virtual int32_t getproccount() { return 0; }
};

// adjustCgroupGOMAXPROCS (cgroup_linux.go): procs lowered to the CPU limit, rounded up and at
// least 2, when there is a limit.
int32_t adjustCgroupGOMAXPROCS(int32_t procs, CPULimit limit);

// Go constants.
inline constexpr int64_t forcePreemptNS = 10 * 1000 * 1000;  // 10ms time slice (proc.go)
// sysmon's longest pause between rounds, in microseconds (proc.go's sysmon writes it as a literal).
inline constexpr uint32_t sysmonMaxDelayUS = 10 * 1000;
inline constexpr uint64_t _GoidCacheBatch = 16;              // proc.go
inline constexpr uint8_t gTrackingPeriod = 8;                 // runtime2.go
// A goroutine's stack size: stackMin (stack.go) on Linux, where startingStackSize stays at
// fixedStack unless GODEBUG=adaptivestackstart=1; stacks never grow here.
inline constexpr int64_t startingStackSize = 2048;
inline constexpr int64_t maxStackScanSlack = 8 << 10;         // mgcpacer.go
// fingStatus bits (mfinal.go).
inline constexpr uint32_t fingCreated = 1;
inline constexpr uint32_t fingRunningFinalizer = 2;
inline constexpr uint32_t fingWait = 4;
inline constexpr uint32_t fingWake = 8;
inline constexpr int sigPreempt = 23;                         // SIGURG (signal_unix.go)

class Runtime {
 public:
  // Package-level state (proc.go, runtime2.go).
  schedt sched;
  std::vector<p*> allp;
  int32_t gomaxprocs = 0;
  int32_t ncpu = 0;
  randomOrder stealOrder;
  pMask idlepMask;   // bit set for each P on the idle list
  pMask timerpMask;  // bit set for each P that may have timers
  Atomic<m*> allm;   // published with a store (atomicstorep): read without sched.lock in Go
  m* m0 = nullptr;
  g* g0 = nullptr;   // m0's g0
  // allgs, its lock, and what allgadd publishes for readers that take no lock.
  plat::Mutex allglock;
  std::vector<g*> allgs;
  Atomic<g**> allgptr;
  Atomic<uintptr_t> allglen;
  bool mainStarted = false;
  bool asyncpreemptoff = false;  // GODEBUG=asyncpreemptoff=1
  int64_t starttime = 0;
  int64_t runtimeInitTime = 0;   // proc.go: when the program started (gctrace's @ times count from it)
  Host* host = nullptr;
  std::unique_ptr<SyncState> syncstate;  // what the chan/sema/sync ports allocate (sudog.h)

  // Creates nprocs Ps, all idle, owned by this Runtime.
  explicit Runtime(int32_t nprocs);
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime();

  // Goroutine stacks are borrowed from a pool of a few shared stacks (plat::StackPool) instead of
  // one mapping each, so that millions of goroutines fit. Only for a runtime driven on one OS
  // thread (the engine); call before the first goroutine is made.
  void useStackPool(uint32_t slots = plat::StackPool::kDefaultSlots);

  // The Runtime of the simulation running on this OS thread (for signal handlers).
  static Runtime* current();
  static void setCurrent(Runtime* r);

  // Local run queue (runq.cpp).
  void runqput(p* pp, g* gp, bool next);
  bool runqputslow(p* pp, g* gp, uint32_t h, uint32_t t);
  void runqputbatch(p* pp, gQueue* q);
  std::pair<g*, bool> runqget(p* pp);
  gQueue runqdrain(p* pp);
  uint32_t runqgrab(p* pp, std::array<Atomic<g*>, kRunqSize>& batch, uint32_t batchHead,
                    bool stealRunNextG);
  g* runqsteal(p* pp, p* p2, bool stealRunNextG);
  bool runqempty(p* pp);

  // Global run queue (globrunq.cpp). sched.lock must be held.
  void globrunqput(g* gp);
  void globrunqputhead(g* gp);
  void putGlobalEvent(g* first, int32_t n);
  void globrunqputbatch(gQueue* batch);
  g* globrunqget();
  std::pair<g*, gQueue> globrunqgetbatch(int32_t n);

  // Idle P and M lists (idle.cpp). sched.lock must be held.
  int64_t pidleput(p* pp, int64_t now);
  std::pair<p*, int64_t> pidleget(int64_t now);
  std::pair<p*, int64_t> pidlegetSpinning(int64_t now);
  void mput(m* mp);
  m* mget();
  m* mgetSpecific(m* mp);
  int32_t mcount() const;

  // Program start (proc_start.cpp): schedinit and the main goroutine, mstart.
  void schedinit();
  p* procresize(int32_t nprocs);  // the Ps with work that need an M, linked by p.link
  void pinit(p* pp);
  void pdestroy(p* pp);  // p.destroy (proc.go)
  p* newP(int32_t id);   // Not in Go: new(p) and its timer heap (runtime.cpp)
  void gfpurge(p* pp);   // proc.go
  // Starts the program: m0's thread, which runs rt0_go. The host must be set.
  void boot(uint64_t seed);
  void rt0_go(uintptr_t mainpc, void* maintask);  // m0's thread body
  void runtime_main();                            // the main goroutine's runtime part
  void mstart0();
  void mstart1();
  void mexit();
  m* allocm(p* pp, void (Runtime::*fn)(), int64_t id);
  void mcommoninit(m* mp, int64_t id);
  int64_t mReserveID();
  void newm(void (Runtime::*fn)(), p* pp, int64_t id);
  void newm1(m* mp);
  m* acquirem();
  void releasem(m* mp);
  g* malg();

  // Stack switches (proc_stack.cpp): gogo and mcall on the platform's contexts.
  void gogo(g* gp);
  void mcall(void (Runtime::*fn)(g*));
  void g0loop();  // g0's stack: runs the pending mcall function whenever a goroutine hands over

  // M and P hand-off (proc_mp.cpp).
  void stopm();
  void gcstopm();
  void mspinning();
  void startm(p* pp, bool spinning, bool lockheld);
  void handoffp(p* pp);
  void wakep();
  void stoplockedm();
  void startlockedm(g* gp);
  void mPark();
  void acquirep(p* pp);
  void wirep(p* pp);
  p* releasep();
  void becomeSpinning(m* mp);
  void resetspinning();
  void injectglist(gList* glist);
  void incidlelocked(int32_t v);

  // The scheduling loop (proc_schedule.cpp).
  void schedule();
  void execute(g* gp, bool inheritTime);
  struct Found {
    g* gp = nullptr;
    bool inheritTime = false;
    bool tryWakeP = false;
  };
  Found findRunnable();
  struct Stolen {
    g* gp = nullptr;
    bool inheritTime = false;
    int64_t rnow = 0;
    int64_t pollUntil = 0;
    bool newWork = false;
  };
  Stolen stealWork(int64_t now);
  p* checkRunqsNoP(const std::vector<p*>& allpSnapshot, const pMask& idlepMaskSnapshot);
  int64_t checkTimersNoP(const std::vector<p*>& allpSnapshot, const pMask& timerpMaskSnapshot, int64_t pollUntil);
  void checkdead();

  // Goroutine state changes (proc_g.cpp).
  uint32_t casgstatus(g* gp, uint32_t oldval, uint32_t newval);
  void dropg();
  void gopark(bool (*unlockf)(g*, void*), void* lock, waitReason reason, int traceskip);
  void goparkunlock(plat::Mutex* lock, waitReason reason, int traceskip);
  void park_m(g* gp);
  void goready(g* gp, int traceskip);
  void ready(g* gp, int traceskip, bool next);
  void Gosched();
  void gosched_m(g* gp);
  void goschedImpl(g* gp, bool preempted);
  void gopreempt_m(g* gp);
  void goyield();
  void goyield_m(g* gp);
  void preemptPark(g* gp);
  g* newproc(uintptr_t fn, void* task);
  g* newproc1(uintptr_t fn, void* task, g* callergp, bool parked, waitReason reason);
  g* gfget(p* pp);
  void gfput(p* pp, g* gp);
  [[noreturn]] void goexit1();
  void goexit0(g* gp);
  bool gdestroy(g* gp);
  void LockOSThread();
  void UnlockOSThread();
  void lockOSThread();    // the runtime's internal lock (m.lockedInt)
  void unlockOSThread();
  void dolockOSThread();
  void dounlockOSThread();

  // The runtime's init goroutines (proc_init.cpp): they start and park until there is work.
  // forcegc and updateMaxProcsG (proc.go): helpers that sysmon resumes; idle is Go's
  // atomic.Bool.
  struct HelperState {
    plat::Mutex lock;
    g* gp = nullptr;
    Atomic<uint32_t> idle;
  };
  // updateMaxProcsGState (proc.go): procs, the value sysmon wants, is written by sysmon while the
  // helper is idle and read by the helper once woken.
  struct updateMaxProcsGState : HelperState {
    int32_t procs = 0;
  };
  HelperState forcegc;
  updateMaxProcsGState updateMaxProcsG;
  // sweep (mgcsweep.go) and scavenger (mgcscavenge.go): parked is a plain bool under the lock.
  struct BgState {
    plat::Mutex lock;
    g* gp = nullptr;
    bool parked = false;
  };
  struct sweepdata : BgState {
    activeSweep active;  // mgcsweep.go: sweepers at work and the drained bit
  };
  sweepdata sweep;
  BgState scavenger;
  void runtimeInit();                 // runtime_inittasks: proc.go's init starts forcegchelper
  void gcenable();
  void defaultGOMAXPROCSUpdateEnable();
  void forcegchelper();
  void updateMaxProcsGoroutine();
  void bgsweep(hchan* c);
  void bgscavenge(hchan* c);
  void runSystemGoroutine(g* gp);     // goroutine_entry for a runtime function's startpc

  // System calls (proc_syscall.cpp).
  void entersyscall();
  void entersyscallHandleGCWait();
  void exitsyscall();
  p* exitsyscallTryGetP(p* oldp);
  void addGSyscallNoP(m* mp);
  void decGSyscallNoP(m* mp);
  void exitsyscallNoP(g* gp);

  // Preemption (preempt.cpp, signal handling): sysmon's retake, preemptone, preemptM, the
  // signal handler and the safe-point checks the goroutine code makes.
  void sysmon();
  uint32_t retake(int64_t now);
  bool preemptall();
  bool preemptone(p* pp);
  void preemptM(m* mp);
  void doSigPreempt(g* gp);
  bool wantAsyncPreempt(g* gp);
  void asyncPreempt2();
  void asyncPreempt2_m(g* gp);  // the function asyncPreempt2 passes to mcall
  void newstack(g* gp);         // newstack's preemption path (stack.go), on g0
  bool canPreemptM(m* mp);
  bool isAsyncSafePoint(g* gp);
  // The check at a function-call safe point (morestack -> newstack's preemption path).
  void morestackPreemptCheck();

  // The network poller (netpoll.cpp): goroutines park on a descriptor's pollDesc, and netpoll
  // returns those whose descriptors the network (NetKernel) made ready; an idle M also blocks
  // here until the next timer, the next network event or a break.
  Atomic<uint32_t> netpollInited;
  plat::Mutex netpollInitLock;
  Atomic<uint32_t> netpollWaiters;  // goroutines blocked on file descriptors
  NetKernel* net = nullptr;         // the simulated network; nullptr: no descriptors, no events
  void netpollGenericInit();
  bool netpollinited() const { return netpollInited.Load() != 0; }
  bool netpollAnyWaiters() const { return netpollWaiters.Load() > 0; }
  void netpollAdjustWaiters(int32_t delta);
  std::pair<gList, int32_t> netpoll(int64_t delay);  // the goroutines to run, and the waiters' delta
  void netpollBreak();
  bool netpollblock(pollDesc* pd, int32_t mode, bool waitio);
  g* netpollunblock(pollDesc* pd, int32_t mode, bool ioready, int32_t* delta);
  int32_t netpollready(gList* toRun, pollDesc* pd, int32_t mode);
  // poll_runtime_pollReset: prepareRead/prepareWrite's clearing of a stale notification before
  // the system call; false (pollErrClosing) if the descriptor is closed.
  bool pollReset(pollDesc* pd, int32_t mode);
  // poll_runtime_pollWait: waits until the descriptor is ready for mode; false (pollErrClosing)
  // when it is, or becomes, closed.
  bool pollWait(pollDesc* pd, int32_t mode);
  // poll_runtime_pollUnblock: marks the descriptor closing and readies the goroutines parked on it.
  void pollUnblock(pollDesc* pd);
  void wakeNetPoller(int64_t when);

  // Package variables of subsystems the port leaves out (docs/fidelity.md, 13). The scheduler
  // reads and writes them where Go's does, so it makes the same shared-memory operations; no flag
  // among them is ever set here, so the branches they guard are never taken.
  Atomic<uint32_t> fingStatus;        // mfinal.go: the finalizer goroutine's state bits
  struct {
    Atomic<uint64_t> workUnits;       // mcleanup.go's cleanupQueue: queued cleanup blocks
  } gcCleanups;
  Atomic<uint32_t> gcBlackenEnabled;  // mgc.go: a plain uint32, stored atomically by the GC
  struct {
    Atomic<uint32_t> shutdown;        // trace.go: atomic.Bool
  } trace;
  Atomic<uint32_t> panicking;         // panic.go: non-zero while the program dies of a panic
  Atomic<uint64_t> mutexprofilerate;  // mprof.go: SetMutexProfileFraction's rate, 0 (off)
  void allgadd(g* gp);

  // The garbage collector (mgc.cpp and the files it names; the types are in mgc.h). The settings
  // are set before boot; the statistics are read after the run.
  GCSettings gcSettings;
  GCStats gcstats;
  gcCostModel gccost;                     // the profile's GC costs (Not in Go)
  gcControllerState gcController{*this};  // mgcpacer.go
  gcCPULimiterState gcCPULimiter{*this};  // mgclimit.go
  lfstack gcBgMarkWorkerPool;             // runtime2.go: parked mark workers' nodes
  int32_t gcBgMarkWorkerCount = 0;        // runtime2.go: worker goroutines made; under worldsema
  Atomic<uint32_t> gcphase;               // mgc.go: _GCoff, _GCmark, _GCmarktermination
  mstats memstats;                        // mstats.go, the fields read here
  mheapSweep mheap_;                      // mheap.go: the sweeper's fields
  // Not in Go: the bytes the program keeps reachable (retained allocations); marking takes it
  // as the marked heap, as the objects graph would give it.
  uint64_t liveHeap = 0;
  uint64_t liveObjects = 0;  // Not in Go: the objects of liveHeap (a release takes its share)
  // The cycle (mgc.cpp, owned by the cycle's port): declared here for the allocation path.
  void gcStart(gcTrigger trigger);        // mgc.go
  void gcAssistAlloc(g* gp);              // mgcmark.go
  bool gcShouldScheduleWorker(p* pp);     // mgc.go
  bool pollFractionalWorkerExit();        // mgc.go
  // Sweeping (mgcsweep.cpp).
  void gcPaceSweeper(uint64_t trigger);
  void deductSweepCredit(uintptr_t spanBytes, uintptr_t callerSweepPages);
  uintptr_t sweepone();
  bool isSweepDone();
  void finishsweep_m();
  void sweepStartCycle();
  void goschedIfBusy();                   // proc.go
  // Allocation (malloc.cpp).
  void heapGrow(uint64_t spanBytes);
  void deductAssistCreditBatch(uint64_t size, uint64_t n);
  void allocCost(uint64_t size, uint64_t n);
  uint64_t sweepFreeablePages_ = 0;       // Not in Go: garbage pages this cycle's sweep frees
  uint64_t sweepFreedPages_ = 0;          // ... and how many it has freed so far
  void gcControllerCommit();              // mgcpacer.go
  // Reports a heap-size event (HeapAlloc, HeapGoal) in bytes.
  void evUnpark(g* gp, p* pp) { ev(Ev::GoUnpark, gp, pp, 0); }  // the tracer's GoUnpark, for the pacer
  void evHeap(Ev e, uint64_t bytes) { ev(e, nullptr, nullptr, static_cast<int64_t>(bytes)); }  // Not in Go: gcSweep's bookkeeping of this model's page counts
  // The program allocates count objects of size bytes each: mallocgc's part that the GC sees
  // (assist credit, sweep credit, heapLive, the trigger test), once per batch. Retained objects
  // stay reachable until releaseHeap drops that many bytes of them.
  void mallocgc(uint64_t size, uint64_t count, bool retained);
  void releaseHeap(uint64_t bytes);
  void GC();            // runtime.GC
  // runtime.GOMAXPROCS (debug.go): n >= 1 sets it under stop-the-world (procresize at the
  // restart); returns the previous value.
  int32_t GOMAXPROCS(int32_t n);
  void SetDefaultGOMAXPROCS();  // debug.go
  // The container-aware default (cgroup_linux.go, os_linux.go) and its upkeep (proc.go).
  int32_t getCPUCount();                    // sched_getaffinity's count, through the host
  void defaultGOMAXPROCSInit();             // from schedinit
  int32_t defaultGOMAXPROCS(int32_t ncpu);  // ncpu 0: getCPUCount()
  void sysmonUpdateGOMAXPROCS();            // sysmon, about once a second
  int32_t numCPUStartup = 0;                // runtime2.go: getCPUCount() at start (osinit)
  bool cgroupOK = false;                    // cgroup_linux.go: the limit is to be read (containermaxprocs > 0)
  // newprocs (runtime2.go): set while the world is stopped to the P count startTheWorldWithSema
  // gives procresize; 0: keep gomaxprocs.
  int32_t newprocs = 0;
  // computeMaxProcsLock (proc.go): held by sysmon while it computes the default, so that a
  // runtime.GOMAXPROCS call can wait for a computation under way before it returns.
  plat::Mutex computeMaxProcsLock;
  // How GOMAXPROCS is chosen, set before boot (cgroup_linux.go, proc.go): explicit is the GOMAXPROCS
  // environment variable (the constructor's nprocs is then the value); otherwise schedinit takes
  // defaultGOMAXPROCS(ncpu) and sysmon keeps it current. GODEBUG containermaxprocs and
  // updatemaxprocs, 1 by default.
  struct MaxProcsSettings {
    bool explicit_ = true;
    int32_t containermaxprocs = 1;
    int32_t updatemaxprocs = 1;
  } maxprocsSettings;

  // The cycle (mgc.cpp) and marking (mgcmark.cpp).
  bool writeBarrierEnabled = false;      // writeBarrier.enabled: on while marking
  workType work;                         // mgc.go's work (mgcwork.h)
  std::vector<std::unique_ptr<gcBgMarkWorkerNode>> gcBgMarkWorkerNodes;  // the workers' nodes
  Atomic<uint32_t> gcMarkDoneFlushed;    // Ps with flushed work in gcMarkDone's barrier
  void setGCPhase(uint32_t x);
  void gcWaitOnMark(uint32_t n);
  void gcMarkDone();
  void gcMark(int64_t startTime);
  void gcBgMarkStartWorkers();
  void gcBgMarkPrepare();
  void gcBgMarkWorker(hchan* ready);
  bool gcMarkWorkAvailable();
  bool gcIsMarkDone();
  void gcBeginWork();
  bool gcEndWork();
  void gcResetMarkState();
  bool pollWork();
  std::pair<p*, g*> checkIdleGCNoP();
  void gcPrepareMarkRoots();
  int64_t markroot(gcWork* gcw, uint32_t i, bool flushBgCredit);
  std::pair<uint32_t, bool> gcNextMarkRoot();
  int64_t scanHeapUnit(gcWork* gcw);
  void gcDrain(gcWork* gcw, uint32_t flags);
  int64_t gcDrainN(gcWork* gcw, int64_t scanWork);
  void gcDrainMarkWorkerIdle(gcWork* gcw);
  void gcDrainMarkWorkerDedicated(gcWork* gcw, bool untilPreempt);
  void gcDrainMarkWorkerFractional(gcWork* gcw);
  void gcAssistAlloc1(g* gp, int64_t scanWork);
  void gcWakeAllAssists();
  bool gcParkAssist();
  void gcFlushBgCredit(int64_t scanWork);
  void gcinit();  // mgc.go, from schedinit
  // The profile's GC costs, as bytes and ns (mgc.cpp).
  uint64_t gcCostGlobalsBytes();
  int64_t gcCostMarkUnitBytes();
  int64_t gcCostScanNs(int64_t bytes);
  int64_t gcCostHeapScanNs(int64_t bytes);  // gcCostScanNs plus the heap's cost per object
  int64_t gcCostStackScanNs(int64_t bytes);
  void gcMarkTerminationWork();
  void gcPauseWork(double ns);  // Not in Go: a pause's work as time (the profile's gc costs)
  void ReadMemStats();  // runtime.ReadMemStats: here a stop-the-world and its restart

  // Stop-the-world (stw.cpp, proc.go).
  struct worldStop {
    stwReason reason = stwReason::stwUnknown;
    int64_t startedStopping = 0;
    int64_t finishedStopping = 0;
    int64_t stoppingCPUTime = 0;
  };
  worldStop stopTheWorld(stwReason reason);
  void startTheWorld(worldStop w);
  worldStop stopTheWorldGC(stwReason reason);
  void startTheWorldGC(worldStop w);
  worldStop stopTheWorldWithSema(stwReason reason);
  int64_t startTheWorldWithSema(int64_t now, worldStop w);
  void gcMarkTermination(worldStop stw);  // mgc.cpp
  // worldsema and gcsema (proc.go): semaphores of one unit, made by the constructor.
  std::unique_ptr<Sema> worldsema, gcsema;
  // forEachP (proc.go): runs fn for every P at a safe point of that P (the GC's ragged barrier).
  // The caller holds worldsema.
  void forEachP(waitReason reason, const std::function<void(p*)>& fn);
  void forEachPInternal(const std::function<void(p*)>& fn);
  void runSafePointFn();

  // Schedtrace (proc.go): one GODEBUG=schedtrace line.
  std::string schedtrace();
  int64_t schedtracePeriod = 0;  // ns; 0 off
  std::vector<std::string> schedtraceLines;

 private:
  // Reports a scheduler event to the host, if there is one (tests run the port without).
  void ev(Ev e, g* gp, p* pp, int64_t arg) {
    if (host != nullptr) host->event(e, gp, pp, arg);
  }

  int32_t procresizeOld_ = 0;  // Go's gomaxprocs as procresize reads it: 0 until schedinit's call
  // Not in Go: the P count the Runtime was built with (the GOMAXPROCS variable when explicit_).
  int32_t constructedProcs_ = 0;
  // Not in Go: sysmon skips its GOMAXPROCS check while GOMAXPROCS came from the variable (see
  // sysmon.cpp); SetDefaultGOMAXPROCS clears it.
  std::atomic<bool> sysmonSkipsMaxProcs_{false};  // a C++ atomic: no operation of Go's
  // Every P ever made, by id: Go's allp keeps Ps past its length (up to its capacity) and reuses
  // them when it grows again; a P is never freed while the Runtime lives.
  std::vector<std::unique_ptr<p>> pstore_;
  std::vector<std::unique_ptr<m>> mstore_;
  plat::Arena<g> gstore_;
  std::unique_ptr<plat::StackPool> stackpool_;  // before ctxstore_: it outlives the contexts
  plat::Arena<plat::Context> ctxstore_;
  plat::Note netpollNote_;
  Atomic<uint32_t> netpollWakeSig_;
  SplitMix64 seed_{1};  // turns the run seed into the Ms' cheaprand states (Go: its ChaCha8 rand())
};

void assertLockHeld(const plat::Mutex& l);

// lock and unlock (lock_spinbit.go's lock2 and unlock2, through lockrank_off.go): a runtime
// mutex as the M sees it. The mutex itself is the platform's (docs/fidelity.md, 4); these add
// what lock2/unlock2 do to the M: m.locks counts mutexMLocksDelta per lock held, which keeps the M
// from being preempted (canPreemptM) or rescheduled (schedule, stopm) in between, and the last
// unlock puts back a preemption request that newstack set aside.
inline constexpr int32_t mutexMLocksDelta = 16;  // lock_spinbit.go
// The call site travels down to the platform, so that the checker names the caller, not this.
void lock(plat::Mutex* l, plat::Site site = plat::Site::current());
void unlock(plat::Mutex* l, plat::Site site = plat::Site::current());

}  // namespace gmp::rt
