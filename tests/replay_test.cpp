// gmpsim replay's derivation (traces/derive_scenario.h) against the simulator: a simulated run's
// trace, replayed at its own GOMAXPROCS, takes about as long as the run did.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "sim/cost/profile.h"
#include "tests/temp_dir.h"
#include "sim/simulation/replay_fit.h"
#include "sim/simulation/simulation.h"
#include "sim/scenario/scenario.h"
#include "traces/derive_scenario.h"
#include "traces/import/go_import.h"
#include "traces/timeline.h"
#include "traces/trace_reader.h"

using namespace gmp;

namespace {

// Each goroutine's running time in a trace, by goid.
std::map<int64_t, int64_t> running(const trace::Timeline& tl) {
  std::map<int64_t, int64_t> out;
  for (const auto& [g, life] : tl.gs) {
    for (const trace::Interval& iv : life.intervals) {
      if (iv.state == trace::GState::Running) out[g.g] += iv.t1 - iv.t0;
    }
  }
  return out;
}

// The replay's goroutine for each goroutine of the run: the replay runs goroutine N's work in a
// function named "gN" (main's in "main"), and the simulator's traces name the function a goroutine
// starts in on its creation.
std::map<int64_t, int64_t> replay_goids(const std::string& path) {
  std::map<int64_t, int64_t> out;
  trace::TraceReader r(path);
  trace::Event e;
  while (r.next(e)) {
    if (e.kind() != trace::KIND_GO_CREATE) continue;
    if (e.label() == "main") out[1] = e.g();
    if (e.label().size() > 1 && e.label()[0] == 'g') out[std::stoll(e.label().substr(1))] = e.g();
  }
  return out;
}

struct Replayed {
  int64_t run_end = 0, replay_end = 0;
  // The largest difference between a goroutine's running time in the run and in the replay,
  // relative to the run's, over the goroutines other than main that ran at least 100 us. Main's
  // running time holds the runtime's start, which the replay's runtime spends again
  // (docs/traces.md, "replay").
  double worst_g = 0;
};

// The run's end and its replay's, at `procs` Ps.
std::pair<int64_t, int64_t> run_and_replay(const std::string& name, int32_t procs, Replayed* per_g = nullptr) {
  const scenario::Scenario sc = scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/" + name);
  engine::SimConfig cfg;
  cfg.procs = procs;
  // Each test process writes into a folder of its own: ctest runs the test cases of this file at
  // the same time.
  const TempDir dir("gmp_replay_test");
  cfg.trace_path = dir.file("run.trace");
  const engine::SimResult r = engine::simulate(sc, cost::default_profile(), cfg);
  REQUIRE(r.stop == engine::Engine::Stop::Exit);
  const trace::Timeline run_tl = trace::build_timeline(cfg.trace_path);
  // Per goroutine, the replay is fitted as gmpsim replay fits it (sim/simulation/replay_fit.h): the
  // running time the run spent on each operation is taken out of the compute beside it.
  const trace::DerivedScenario d =
      per_g == nullptr ? trace::derive_scenario(run_tl, name)
                       : engine::derive_fitted(run_tl, name, cost::default_profile(), engine::SimConfig{},
                                               dir.file("fit.trace"))
                             .derived;
  std::remove(cfg.trace_path.c_str());
  INFO(d.text.substr(0, 2000));
  const scenario::Scenario derived = scenario::parse_scenario(d.text, name + ".replay");
  engine::SimConfig again;
  again.procs = procs;
  if (per_g != nullptr) again.trace_path = dir.file("replay.trace");
  const engine::SimResult rr = engine::simulate(derived, cost::default_profile(), again);
  REQUIRE(rr.stop == engine::Engine::Stop::Exit);
  if (per_g != nullptr) {
    const std::map<int64_t, int64_t> a = running(run_tl), b = running(trace::build_timeline(again.trace_path));
    const std::map<int64_t, int64_t> ids = replay_goids(again.trace_path);
    std::remove(again.trace_path.c_str());
    for (const auto& [g, ns] : a) {
      if (g == 1 || ns < 100000 || ids.count(g) == 0) continue;  // the runtime's goroutines are not replayed
      const int64_t r = b.count(ids.at(g)) != 0 ? b.at(ids.at(g)) : 0;
      per_g->worst_g = std::max(per_g->worst_g, std::abs(static_cast<double>(r - ns)) / static_cast<double>(ns));
    }
  }
  return {r.end_time, rr.end_time};
}

double error_of(std::pair<int64_t, int64_t> x) {
  return std::abs(static_cast<double>(x.second - x.first)) / static_cast<double>(x.first);
}

}  // namespace

TEST_CASE("a replayed trace takes as long as its run, within 6%, where computation dominates", "[replay]") {
  for (int32_t procs : {1, 2, 4}) {
    INFO("GOMAXPROCS " << procs);
    CHECK(error_of(run_and_replay("cpu.textproto", procs)) < 0.01);
    CHECK(error_of(run_and_replay("chanshared.textproto", procs)) < 0.01);
    CHECK(error_of(run_and_replay("check/ready2.textproto", procs)) < 0.06);
    CHECK(error_of(run_and_replay("check/spawn2.textproto", procs)) < 0.06);
    CHECK(error_of(run_and_replay("check/syscall_sleep.textproto", procs)) < 0.02);
  }
}

TEST_CASE("a fitted replay gives each goroutine its running time back, within 6%, where computation dominates",
          "[replay]") {
  for (const char* name : {"cpu.textproto", "check/ready2.textproto", "check/spawn2.textproto", "workers.textproto"}) {
    for (int32_t procs : {1, 2, 4}) {
      INFO(name << " at GOMAXPROCS " << procs);
      Replayed r;
      run_and_replay(name, procs, &r);
      CHECK(r.worst_g < 0.06);
    }
  }
}

// A real Go program's trace with its collector (tests/data/gctrees: four goroutines building trees
// at GOMAXPROCS 2; 23 cycles in the Go 1.23 trace, 27 in the Go 1.19 one), imported and replayed at
// its GOMAXPROCS: the derived allocation and live heap (traces/derive_scenario.h) make the
// simulated collector run about as many cycles as the real one did. Needs the simulated collector
// and the scenario language's alloc and release (issue 24's other parts).
TEST_CASE("a replayed Go trace collects about as often as the real run did, within 20%", "[replay][gc]") {
  const TempDir dir("gmp_replay_test");
  for (const char* name : {"gctrees-1.23.trace", "gctrees-1.19.trace"}) {
    INFO(name);
    const std::string imported = dir.file("imported.trace");
    trace::go::import_go_trace(std::string(GMP_SOURCE_DIR) + "/tests/data/gctrees/" + name, imported,
                               trace::go::FormatChoice::kAuto);
    const trace::DerivedScenario d = trace::derive_scenario(trace::build_timeline(imported), name);
    REQUIRE(d.trace_gc_cycles >= 20);
    const scenario::Scenario sc = scenario::parse_scenario(d.text, std::string(name) + ".replay");
    engine::SimConfig cfg;
    cfg.procs = d.procs;
    cfg.trace_path = dir.file("replay.trace");
    const engine::SimResult r = engine::simulate(sc, cost::default_profile(), cfg);
    REQUIRE(r.stop == engine::Engine::Stop::Exit);
    uint64_t cycles = 0;
    trace::TraceReader tr(cfg.trace_path);
    trace::Event e;
    while (tr.next(e)) cycles += e.kind() == trace::KIND_GC_END;
    INFO("the trace's cycles " << d.trace_gc_cycles << ", the replay's " << cycles);
    CHECK(std::abs(static_cast<double>(cycles) - static_cast<double>(d.trace_gc_cycles)) <=
          0.2 * static_cast<double>(d.trace_gc_cycles));
  }
}

// A fitting run that does not exit fits nothing and says why, instead of leaving the scenario
// unfitted without a word: here its virtual time runs out after 1 us.
TEST_CASE("a fit whose run does not exit says so", "[replay]") {
  const scenario::Scenario sc = scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/workers.textproto");
  const TempDir dir("gmp_replay_test");
  engine::SimConfig cfg;
  cfg.procs = 2;
  cfg.trace_path = dir.file("run.trace");
  REQUIRE(engine::simulate(sc, cost::default_profile(), cfg).stop == engine::Engine::Stop::Exit);
  const trace::Timeline tl = trace::build_timeline(cfg.trace_path);
  engine::SimConfig fit_cfg;
  fit_cfg.time_limit = 1000;
  const engine::FittedScenario f =
      engine::derive_fitted(tl, "workers", cost::default_profile(), fit_cfg, dir.file("fit.trace"));
  CHECK_FALSE(f.fitted);
  CHECK(f.not_fitted ==
        "the fit's run at GOMAXPROCS 2 did not exit (it reached the virtual-time limit): nothing taken out next to "
        "the operations");
  // With time enough it fits, and says nothing of the kind.
  const engine::FittedScenario ok =
      engine::derive_fitted(tl, "workers", cost::default_profile(), engine::SimConfig{}, dir.file("fit.trace"));
  CHECK(ok.not_fitted.empty());
}

namespace {
// A trace of main alone: running `run` ns, then its heap counter rising by `rise` bytes.
trace::Timeline lone_main(int64_t run, int64_t rise) {
  trace::Timeline tl;
  trace::GLife main;
  trace::Interval iv;
  iv.state = trace::GState::Running;
  iv.t1 = run;
  iv.m = 0;
  iv.p = 0;
  main.intervals = {iv};
  main.exited = true;
  tl.gs[trace::GKey{0, 1}] = main;
  tl.t_end = run;
  tl.heap = {trace::HeapSample{0, 1, 0, 0, 0}, trace::HeapSample{run / 2, 1, 0, 0, rise}};
  return tl;
}
}  // namespace

TEST_CASE("a derived replay splits an allocation past the largest object and refuses what it cannot hold",
          "[replay]") {
  // 3 GiB and 5 bytes at once: a scenario's object is at most 1 GiB, so three of those and one of 5
  // bytes; the text must load (before, one alloc of the whole amount did not).
  const int64_t gib = int64_t{1} << 30;
  const trace::DerivedScenario d = trace::derive_scenario(lone_main(1'000'000, 3 * gib + 5), "big", {});
  CHECK(d.text.find("alloc { bytes: 1073741824 count: 3 }") != std::string::npos);
  CHECK(d.text.find("alloc { bytes: 5 count: 1 }") != std::string::npos);
  CHECK_NOTHROW(scenario::parse_scenario(d.text, "big"));
  // Running time past the language's longest duration, and a heap counter no machine has: a
  // DeriveError each, not a scenario that fails to load.
  CHECK_THROWS_AS(trace::derive_scenario(lone_main(2'000'000'000'000'000, 0), "long", {}), trace::DeriveError);
  CHECK_THROWS_AS(trace::derive_scenario(lone_main(1'000'000, int64_t{1} << 62), "huge", {}), trace::DeriveError);
}

TEST_CASE("a derived replay keeps the trace's own text out of its code", "[replay]") {
  // A producer with a newline and a control character (a fuzzer's trace): written into the header
  // comment as it was, its second line was read as a field, and the scenario did not load.
  trace::Timeline tl = lone_main(1'000'000, 0);
  tl.header.set_producer("gmpsim run\n\x04seed\x12\x01");
  const trace::DerivedScenario d = trace::derive_scenario(tl, "odd\nname", {});
  CHECK_NOTHROW(scenario::parse_scenario(d.text, "odd"));
  CHECK(d.text.find("gmpsim run??seed??") != std::string::npos);
}
