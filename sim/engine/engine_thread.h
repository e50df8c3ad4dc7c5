// The record of a simulated OS thread that both drivers keep (each derives its own from it, with
// its mode's fields), and the engine's constants. Internal to sim/engine.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "sim/engine/driver_base.h"
#include "sim/platform/context.h"

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
}  // namespace engine_detail

struct DriverBase::Thread {
  virtual ~Thread() = default;  // records are the drivers' own kinds, owned through this base

  DriverBase* eng = nullptr;
  uint32_t id = 0;
  uint32_t process = 0;  // the simulated process it belongs to (newosproc)
  State state = State::Ready;
  Wait wait = Wait::None;
  int64_t t = 0;              // this thread's clock
  uint64_t pending = 0;       // signals pending, one bit each
  bool in_handler = false;    // running a signal handler
  bool computing = false;     // inside compute()
  int64_t compute_end = 0;    // when that compute ends (or was cut)
  const void* wait_on = nullptr;
  uint32_t waiter_idx = 0;    // its index in waiters_ while it waits on something
  plat::Context* ctx = nullptr;          // the stack it is on now

  std::string name;
  plat::Fiber::Entry entry = nullptr;
  void* arg = nullptr;
  std::unique_ptr<plat::Context> g0ctx;  // the stack the thread starts on
  std::array<int64_t, engine_detail::kSignals> sig_at{};  // when each pending signal is due
};

}  // namespace gmp::engine
