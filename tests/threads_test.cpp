// The real platform: the ported queues on OS threads with std::atomic and futexes. These are the
// tests CI also runs under ThreadSanitizer.
#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <thread>
#include <vector>

#include "model/queue_check.h"
#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"

using namespace gmp;
using namespace gmp::rt;

namespace {
void spin_until(const std::atomic<int64_t>& v, int64_t want) {
  while (v.load(std::memory_order_acquire) != want) std::this_thread::yield();
}
}  // namespace

// RunSchedLocalQueueEmptyTest (export_test.go): while the owner puts a second G and takes one,
// a concurrent runqempty never reports the queue empty. Each iteration varies which of the two
// puts go to runnext. Go starts a goroutine per iteration; here one helper thread meets the owner
// at a spin barrier each iteration.
TEST_CASE("RunSchedLocalQueueEmptyTest", "[threads][runq][go]") {
  constexpr int64_t kIters = 100000;
  Runtime r(1);
  p* pp = r.allp[0];
  std::vector<g> gs(2);
  std::atomic<int64_t> owner_ready{-1}, helper_ready{-1}, checked{-1};
  std::atomic<int64_t> spurious{0};
  std::thread helper([&] {
    for (int64_t i = 0; i < kIters; i++) {
      spin_until(owner_ready, i);
      helper_ready.store(i, std::memory_order_release);
      if (r.runqempty(pp)) spurious.fetch_add(1);
      checked.store(i, std::memory_order_release);
    }
  });
  for (int64_t i = 0; i < kIters; i++) {
    const bool next0 = (i & 1) == 0;
    const bool next1 = (i & 2) == 0;
    r.runqput(pp, &gs[0], next0);
    owner_ready.store(i, std::memory_order_release);
    spin_until(helper_ready, i);
    r.runqput(pp, &gs[1], next1);
    r.runqget(pp);
    spin_until(checked, i);
    r.runqget(pp);
  }
  helper.join();
  CHECK(spurious.load() == 0);
  CHECK(r.runqempty(pp));
}

// The same concurrent put/get/steal check as under the checker (interleave_test.cpp), on 4 OS threads.
TEST_CASE("4 Ps put get and steal on OS threads", "[threads][runq]") {
  model::QueueCheckConfig cfg;
  cfg.procs = 4;
  cfg.gs = 20000;
  for (uint64_t seed = 1; seed <= 5; seed++) {
    cfg.seed = seed;
    const model::QueueCheckResult res = model::run_queue_check_threads(cfg);
    INFO("seed " << seed << ": " << (res.errors.empty() ? "" : res.errors.front()));
    REQUIRE(res.ok());
  }
}

namespace {
std::atomic<uint64_t> handled_tid{0};
void on_sigurg(int) { handled_tid.store(plat::gettid(), std::memory_order_release); }
}  // namespace

// signalM's platform half: tgkill to an M's thread id runs the handler on that thread.
TEST_CASE("tgkill delivers to the target OS thread", "[threads][signal]") {
  plat::set_signal_handler(SIGURG, &on_sigurg);
  std::atomic<uint64_t> target{0};
  std::thread t([&] {
    target.store(plat::gettid(), std::memory_order_release);
    while (handled_tid.load(std::memory_order_acquire) == 0) std::this_thread::yield();
  });
  uint64_t tid;
  while ((tid = target.load(std::memory_order_acquire)) == 0) std::this_thread::yield();
  plat::tgkill(tid, SIGURG);
  t.join();
  CHECK(handled_tid.load() == tid);
  CHECK(tid != plat::gettid());
  plat::set_signal_handler(SIGURG, nullptr);
}
