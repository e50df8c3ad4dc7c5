// The process seam: each engine thread belongs to a process, the engine tells the simulation when
// the thread it runs next belongs to another process than the last, and ProcessSwitch then makes
// that process's runtime current. Two runtimes share one engine here, without booting: the
// threads are plain code that checks Runtime::current() at every point where the engine may have
// switched.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/platform/atomic.h"
#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"
#include "sim/simulation/process_switch.h"

using namespace gmp;
using namespace gmp::engine;

namespace {

EngineConfig timing_config() {
  EngineConfig cfg;
  cfg.cores.assign(2, Core{1.0});
  cfg.costs.op.fill(1);
  cfg.costs.futex_wake_latency = 100;
  cfg.costs.context_switch = 10;
  cfg.costs.os_quantum = 1000;
  cfg.seed = 3;
  return cfg;
}

// Picks, at every point, the first enabled thread after the one that stopped last (wrapping), so
// that consecutive steps come from different threads whenever more than one is enabled.
class RoundRobin final : public Chooser {
 public:
  size_t choose(std::span<const Step> enabled, uint32_t current, const PointInfo&) override {
    for (size_t i = 0; i < enabled.size(); i++) {
      if (enabled[i].tid > current) return i;
    }
    return 0;
  }
};

// Threads of plain code, each in a process, that record whether Runtime::current() was their
// process's runtime at each of their points.
struct World {
  World(Engine& e, std::vector<rt::Runtime*> rts) : eng(e), runtimes(std::move(rts)) {}

  Engine& eng;
  std::vector<rt::Runtime*> runtimes;  // by process
  std::vector<std::unique_ptr<std::function<void()>>> bodies;
  int checks = 0;
  int wrong = 0;
  int changes = 0;              // consecutive checks made by threads of different processes
  uint32_t last = UINT32_MAX;   // the process of the last check
  Atomic<int64_t> shared;       // touched by every thread: a step in choice mode
  plat::Mutex mu;

  static void entry(void* arg) { (*static_cast<std::function<void()>*>(arg))(); }

  void check(uint32_t process) {
    checks++;
    if (rt::Runtime::current() != runtimes[process]) wrong++;
    if (last != UINT32_MAX && last != process) changes++;
    last = process;
  }

  // A thread of `process` that checks, then does something that lets the engine switch, `rounds`
  // times; `then` runs after its first check.
  void spawn(uint32_t process, int rounds, std::function<void()> then = {}) {
    bodies.push_back(std::make_unique<std::function<void()>>([this, process, rounds, then] {
      for (int k = 0; k < rounds; k++) {
        check(process);
        if (k == 0 && then) then();
        plat::lock(mu);
        shared.Add(1);
        plat::unlock(mu);
        check(process);
        if (eng.config().chooser == nullptr) eng.compute(7 + 3 * process);
      }
    }));
    eng.newosproc("P" + std::to_string(process) + "T" + std::to_string(bodies.size()), &World::entry,
                  bodies.back().get(), nullptr, false, process);
  }
};

}  // namespace

TEST_CASE("the engine calls the process hook only when the next thread's process is another", "[process]") {
  for (const bool two : {false, true}) {
    INFO((two ? "two processes" : "one process"));
    Engine eng(timing_config());
    std::vector<uint32_t> calls;
    eng.set_process_hook([](void* ctx, uint32_t process) { static_cast<std::vector<uint32_t>*>(ctx)->push_back(process); },
                         &calls);
    rt::Runtime a(1), b(1);
    World w(eng, {&a, &b});
    rt::Runtime::setCurrent(&a);  // as a machine of one process sets it before the run
    for (uint32_t t = 0; t < 4; t++) w.spawn(two ? t % 2 : 0, 10);
    REQUIRE(eng.run().stop == Engine::Stop::AllExited);
    rt::Runtime::setCurrent(nullptr);
    if (!two) {
      CHECK(calls == std::vector<uint32_t>{0});  // the first thread of the run, then never again
    } else {
      REQUIRE(w.changes > 5);
      CHECK(calls.size() >= static_cast<size_t>(w.changes) + 1);
      for (size_t i = 1; i < calls.size(); i++) CHECK(calls[i] != calls[i - 1]);
    }
  }
}

TEST_CASE("each engine thread runs with its process's runtime current", "[process]") {
  RoundRobin rr;
  for (const bool choice : {false, true}) {
    INFO((choice ? "choice mode" : "timing mode"));
    EngineConfig cfg = timing_config();
    if (choice) cfg.chooser = &rr;
    Engine eng(cfg);
    ProcessSwitch sw(eng);
    rt::Runtime a(1), b(1), c(2);
    sw.add(0, a);
    sw.add(1, b);
    sw.add(2, c);
    World w(eng, {&a, &b, &c});
    w.spawn(0, 12);
    w.spawn(1, 12);
    // A thread started during the run belongs to the process it is given, not to its starter's.
    w.spawn(0, 12, [&w] { w.spawn(2, 12); });
    w.spawn(1, 12);
    REQUIRE(eng.run().stop == Engine::Stop::AllExited);
    rt::Runtime::setCurrent(nullptr);
    CHECK(w.checks == 5 * 12 * 2);
    CHECK(w.wrong == 0);
    CHECK(w.changes > 20);  // the processes' threads did interleave
  }
}

TEST_CASE("a process id the simulation never added is an error, not another runtime", "[process]") {
  Engine eng(timing_config());
  ProcessSwitch sw(eng);
  rt::Runtime a(1);
  sw.add(0, a);
  CHECK_THROWS_AS(sw.add(2, a), std::invalid_argument);
  World w(eng, {&a, &a});
  w.spawn(1, 1);
  CHECK_THROWS_WITH(eng.run(), Catch::Contains("process 1, which was never added"));
  rt::Runtime::setCurrent(nullptr);
}
