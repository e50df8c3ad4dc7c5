// The scheduler's data structures, ported from Go 1.27 src/runtime/runtime2.go (tag go1.27rc2),
// with the fields the ported code uses. Fields that Go reads or writes from more than one thread
// are gmp::Atomic cells (see sim/platform/atomic.h); the rest are plain and follow Go's ownership
// rules (owner-only, or guarded by sched.lock).
#pragma once

#include <array>
#include <cstdint>

#include "sim/platform/atomic.h"
#include "sim/platform/platform.h"
#include "sim/runtime/gqueue.h"

namespace gmp::rt {

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

struct g {
  Atomic<uint32_t> atomicstatus{_Gidle};
  guintptr schedlink = nullptr;
  int64_t goid = 0;
  muintptr m = nullptr;  // current m; nil if not running
};

// readgstatus (proc.go)
inline uint32_t readgstatus(const g* gp) { return gp->atomicstatus.Load(); }

// listNodeManual (list_manual.go): links an m into sched.midle.
struct listNodeManual {
  muintptr prev = nullptr;
  muintptr next = nullptr;
};

struct m {
  g* g0 = nullptr;               // goroutine with the scheduling stack
  Atomic<g*> curg;               // current running goroutine; read by stealing Ps
  puintptr p = nullptr;          // attached p for executing Go code (nil if not executing Go code)
  puintptr nextp = nullptr;
  puintptr oldp = nullptr;       // the p that was attached before executing a syscall
  uint64_t procid = 0;           // the OS thread's id (plat::gettid), for signalM
  int64_t id = 0;
  int32_t locks = 0;
  bool spinning = false;         // m is out of work and is actively looking for work
  bool blocked = false;          // m is blocked on a note
  plat::Note park;
  muintptr schedlink = nullptr;
  listNodeManual idleNode;
  uint32_t cheaprand = 0;
  uint64_t cheaprand64 = 0;
};

constexpr uint32_t kRunqSize = 256;  // len(p.runq)

struct p {
  int32_t id = 0;
  Atomic<uint32_t> status{_Pidle};  // one of _Pidle/_Prunning/...; read by stealing Ps
  puintptr link = nullptr;
  uint32_t schedtick = 0;           // incremented on every scheduler call
  uint32_t syscalltick = 0;         // incremented on every system call
  Atomic<muintptr> m;               // back-link to associated m (nil if idle); read by stealing Ps

  // Queue of runnable goroutines. Accessed without lock.
  Atomic<uint32_t> runqhead;
  Atomic<uint32_t> runqtail;
  std::array<Atomic<g*>, kRunqSize> runq;
  // runnext, if non-nil, is a runnable G that was ready'd by the current G and should be run next
  // instead of what's in runq, inheriting the time slice.
  Atomic<g*> runnext;

  gList gFree;                      // available G's (status == Gdead)
  Atomic<uint32_t> timersLen;       // p.timers.len: number of timers in the P's heap
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
  plat::Mutex lock;

  mList midle;                // idle m's waiting for work
  int32_t nmidle = 0;         // number of idle m's waiting for work
  int32_t nmidlelocked = 0;   // number of locked m's waiting for work
  int64_t mnext = 0;          // number of m's that have been created and next M ID
  int32_t maxmcount = 10000;  // maximum number of m's allowed (or die)
  int32_t nmsys = 0;          // number of system m's not counted for deadlock
  int64_t nmfreed = 0;        // cumulative number of freed m's

  puintptr pidle = nullptr;   // idle p's
  Atomic<int32_t> npidle;
  Atomic<int32_t> nmspinning;     // see the spinning protocol comment in sim/runtime
  Atomic<uint32_t> needspinning;  // the "delicate dance" flag; set to 1 only under sched.lock

  // Global runnable queue.
  gQueue runq;
};

}  // namespace gmp::rt
