// The process seam: each engine thread belongs to a process, the engine tells the simulation when
// the thread it runs next belongs to another process than the last, and ProcessSwitch then makes
// that process's runtime current. Two runtimes share one engine here, without booting: the
// threads are plain code that checks Runtime::current() at every point where the engine may have
// switched. And a one-process run's trace carries no process at all.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost/profile.h"
#include "sim/engine/engine.h"
#include "sim/platform/atomic.h"
#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation/process_switch.h"
#include "sim/simulation/simulation.h"
#include "tests/pingpong_text.h"
#include "tests/temp_dir.h"

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

// The field numbers at the top level of each record of the trace file in `bytes`: the header's
// first, then each event's.
std::vector<std::set<uint32_t>> record_fields(const std::string& bytes) {
  size_t at = 12;  // the magic and the format version
  auto varint = [&](size_t end) {
    uint64_t v = 0;
    for (int shift = 0; at < end; shift += 7) {
      const auto byte = static_cast<uint8_t>(bytes[at++]);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    FAIL("a varint runs past its record");
    return v;
  };
  std::vector<std::set<uint32_t>> out;
  while (at < bytes.size()) {
    const size_t len = varint(bytes.size());
    const size_t end = at + len;
    REQUIRE(end <= bytes.size());
    std::set<uint32_t>& fields = out.emplace_back();
    while (at < end) {
      const uint64_t tag = varint(end);
      fields.insert(static_cast<uint32_t>(tag >> 3));
      switch (tag & 7) {
        case 0: varint(end); break;
        case 1: at += 8; break;
        case 2: at += varint(end); break;
        case 5: at += 4; break;
        default: FAIL("wire type " << (tag & 7));
      }
    }
    REQUIRE(at == end);
  }
  return out;
}

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

TEST_CASE("a one-process run's trace has no process ids and no process list", "[process][trace]") {
  TempDir dir("gmp_process_test");
  SimConfig cfg;
  cfg.procs = 2;
  cfg.trace_path = dir.file("run.gmptrace");
  const SimResult res = simulate(scenario::parse_scenario(kPingPong, "pingpong.textproto"), cost::default_profile(), cfg);
  REQUIRE(res.stop == Engine::Stop::Exit);
  std::ifstream in(cfg.trace_path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<std::set<uint32_t>> records = record_fields(bytes);
  REQUIRE(records.size() > 1000);
  CHECK(records[0].count(4) == 1);  // num_ps
  CHECK(records[0].count(7) == 0);  // Header.processes
  size_t with_process = 0, with_g = 0;
  for (size_t i = 1; i < records.size(); i++) {
    with_process += records[i].count(20);  // Event.process
    with_g += records[i].count(3);
  }
  CHECK(with_process == 0);
  CHECK(with_g > 1000);  // the walk does see the events' fields
}
