// The engine's choice mode, the seam between the engine and the model checker (model/).
//
// With a Chooser installed (EngineConfig::chooser) the engine stops ordering threads by virtual
// time. Before every step of a thread (each shared-memory access, lock, unlock, note operation,
// clock read, signal, and the end of each timed wait) it stops the thread and asks the chooser
// which of the enabled threads takes the next step. The sequence of answers is the schedule: the
// same scenario, seed and answers give the same run, byte for byte.
//
// Time under a chooser. Platform operations take no time. Only compute, blocking system calls,
// usleep and timed note sleeps move the clock: each is a timed wait with a deadline, enabled from
// the moment it starts, and choosing it ends it. The clock is then the later of its deadline and
// the clock before, so time never goes backwards and a wait never ends before its deadline, but
// whether it ends before or after any other thread's step is a choice like any other.
//
// Daemon threads (sysmon) run an endless loop of timed waits. Each execution lets a daemon's wait
// end by choice only daemon_rounds times; after that it ends only when no other thread is
// enabled, so every execution of a terminating program is finite.
//
// Strict time (EngineConfig::strict_time) narrows this to the timing engine's clock with zero
// costs: a wait may end only when no thread is stopped at a step, and then only the waits due first
// (and any overdue). Waits thus end at their deadlines, in deadline order; the choices left are the
// interleavings of steps at one instant and the order of waits due together. Daemon rounds are not
// counted (sysmon's sleeps take time); the time limit bounds the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "sim/platform/driver.h"
#include "sim/platform/site.h"

namespace gmp::rt {
struct g;
class Runtime;
}  // namespace gmp::rt

namespace gmp::engine {

enum class StepKind : uint8_t {
  Start,      // a new thread's first step
  Access,     // a shared-memory operation (op)
  Lock,       // an attempt to take a runtime lock (obj: the lock)
  Unlock,     // a runtime lock's release
  NoteSleep,  // a note sleeper checks its note (after a wake-up or on entry)
  Timeout,    // a timed wait ends (obj: the note waited on, if any; the clock moves)
  Clock,      // nanotime, or the clock read that starts a timed wait
  Signal,     // tgkill (target: the thread signalled)
  Yield,      // osyield
};

const char* step_kind_name(StepKind k);

// The step a thread takes when chosen next.
struct Step {
  uint32_t tid = 0;
  StepKind kind = StepKind::Start;
  plat::Op op = plat::Op::Load;  // for Access
  bool write = false;            // whether it may change obj
  uint8_t size = 0;              // bytes of obj, for Access
  const void* obj = nullptr;     // the object it touches; nullptr: nothing shared
  bool clock = false;            // it moves the clock (Timeout) or reads it (Clock)
  uint32_t target = UINT32_MAX;  // Signal: the thread signalled
  uint64_t value = 0;            // Access: stored value, delta, mask or CAS new value
  uint64_t expected = 0;         // Access: CAS expected value
  int64_t deadline = 0;          // Timeout: when the wait would end by itself
  bool user = false;             // Timeout: the end of user code (a compute, a system call)
  uint32_t process = 0;          // the simulated process of the thread (newosproc's)
  rt::g* g = nullptr;            // getg() when the thread stopped
  plat::Site site;               // where in the port
};

// Whether the order of two steps of different threads can matter.
inline bool dependent(const Step& a, const Step& b) {
  if (a.kind == StepKind::Signal && a.target == b.tid) return true;
  if (b.kind == StepKind::Signal && b.target == a.tid) return true;
  if (a.clock && b.clock && (a.kind == StepKind::Timeout || b.kind == StepKind::Timeout)) return true;
  return a.obj != nullptr && a.obj == b.obj && (a.write || b.write);
}

// What the threads are doing at a point, for properties of quiescent states.
struct PointInfo {
  // No scheduler code is in flight: every thread other than daemons is parked on a note, computing
  // user code or in a system call, and every daemon is asleep.
  bool quiescent = false;
  uint32_t user_running = 0;  // threads computing user code or in a system call
  uint32_t timed_parked = 0;  // non-daemon threads parked on a note with a deadline
  int64_t now = 0;            // the clock, ns since the start of the run
  // Several processes: the same counts over each process's threads alone, indexed by process id
  // (`quiescent` then says that no scheduler code of that process is in flight). Empty (nullptr)
  // while every thread belongs to process 0; of() then gives this point itself.
  const PointInfo* per_process = nullptr;
  uint32_t processes = 0;
  const PointInfo& of(uint32_t process) const { return process < processes ? per_process[process] : *this; }
};

// Returned by Chooser::choose to end the run at this point (Engine::Stop::Stopped).
inline constexpr size_t kStopRun = SIZE_MAX;

class Chooser {
 public:
  virtual ~Chooser() = default;
  // Process `process`'s runtime exists and is about to boot. A run calls it once for every process,
  // in id order, before any process boots (one process: once, with id 0).
  virtual void process_started(uint32_t /*process*/, rt::Runtime& /*r*/) {}
  // A run of one process: its runtime, process 0's.
  void started(rt::Runtime& r) { process_started(0, r); }
  // Thread `tid` of process `process` was created by thread `parent` (UINT32_MAX: before the run).
  virtual void thread_created(uint32_t /*tid*/, uint32_t /*parent*/, bool /*daemon*/, uint32_t /*process*/) {}
  // Picks which of `enabled` (ascending by tid, never empty) takes the next step; returns its
  // index in `enabled`, or kStopRun. `current` is the thread that stopped last (it may not be
  // enabled).
  virtual size_t choose(std::span<const Step> enabled, uint32_t current, const PointInfo& info) = 0;
  // The index of the step being taken: the last one chosen (0 before the first), for the trace.
  virtual uint64_t step() const { return 0; }
  // Strict time: asked at each point where threads are stopped at steps; true offers, beside their
  // steps, the ends of the waits due first, as if the steps had taken the time up to then. The
  // checker's fairness asks for it when steps at one instant go round a cycle while a wait is
  // pending (model/execution.cpp, livelock).
  virtual bool pass_time() { return false; }
  // Whether process `process` has a timer armed (any P's heap): a spin-wait's round that reads the
  // same values again is not fruitless then, since the clock that moves on while it spins brings
  // the timer nearer, and only the spinner's trips through the scheduler may run it.
  virtual bool timers_pending(uint32_t /*process*/) const { return false; }
};

}  // namespace gmp::engine
