// The engine's per-thread record and constants, shared by its timing mode (engine.cpp) and its
// choice mode (engine_check.cpp). Internal to sim/engine.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "sim/engine/engine.h"
#include "sim/platform/context.h"
#include "sim/platform/site.h"

namespace gmp::engine {

namespace engine_detail {
constexpr int kSignals = 64;  // signals 1..63, one bit each in Thread::pending
constexpr int64_t kNever = INT64_MAX;

// The end of virtual time, 2^61 ns (about 73 years): a run whose clock passes it stops as at a
// time limit. One step of a thread (a compute, a blocking system call) is held to the same
// amount, so a clock stays below 2^62 and no sum of a clock and a step can overflow. Checked
// inputs (scenario durations at most 10^15 ns, core speeds at least 10^-3) come nowhere near.
constexpr int64_t kEndOfTime = int64_t{1} << 61;

inline int64_t clamp_step(int64_t ns) { return std::clamp<int64_t>(ns, 0, kEndOfTime); }
constexpr uint64_t kProgressMask = (uint64_t{1} << 22) - 1;
}  // namespace engine_detail
using namespace engine_detail;

struct Engine::Thread {
  Engine* eng = nullptr;
  uint32_t id = 0;
  uint32_t process = 0;  // the simulated process it belongs to (newosproc)
  std::string name;
  plat::Fiber::Entry entry = nullptr;
  void* arg = nullptr;
  std::unique_ptr<plat::Context> g0ctx;  // the stack the thread starts on
  plat::Context* ctx = nullptr;          // the stack it is on now

  State state = State::Ready;
  Wait wait = Wait::None;
  const void* wait_on = nullptr;
  uint64_t wait_seq = 0;      // order of arrival among waiters
  uint32_t waiter_idx = 0;    // its index in waiters_ while it waits on something

  int64_t t = 0;              // this thread's clock
  uint64_t tie = 0;           // tie-break of its newest queue entry

  int core = -1;
  int last_core = -1;         // the core it last ran on (affine placement's previous core)
  int queued_on = -1;         // the core whose run queue holds it (spread: 0), -1 if none
  int64_t slept_at = -1;      // when it last gave up its core to block, -1 if it has run since
  int64_t slice_end = 0;

  bool computing = false;
  int64_t compute_start = 0;
  int64_t compute_end = 0;

  std::array<int64_t, kSignals> sig_at{};  // when each pending signal (a bit of `pending`) is due
  uint64_t pending = 0;
  bool in_handler = false;

  bool lock_sleeping = false;  // waiting for a runtime lock asleep in the kernel, not spinning

  // Choice mode.
  Step step;                   // the step it takes when chosen (while Running and stopped)
  int64_t deadline = kNever;   // when its timed wait may end (Blocked); kNever: not timed
  bool daemon = false;
  uint32_t rounds = 0;         // timed waits ended by choice (daemons)
  plat::Site wait_site;  // where it blocked
};


}  // namespace gmp::engine
