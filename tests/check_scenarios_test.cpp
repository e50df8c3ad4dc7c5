// The mutation self-test's scenarios (sim/scenarios/check, docs/mutants.md) run to completion on
// the unmutated port at 2 and 3 Ps, the P counts they are written for, over a few seeds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "model/search.h"
#include "sim/cost/profile.h"
#include "sim/simulation/simulation.h"
#include "sim/scenario/scenario.h"

using namespace gmp;

TEST_CASE("sim/scenarios/check: every scenario ends normally at 2 and 3 Ps", "[sim][check]") {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/check")) {
    if (e.path().extension() == ".textproto") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 10);
  for (const auto& f : files) {
    const scenario::Scenario sc = scenario::load_scenario(f.string());
    for (int32_t procs : {2, 3}) {
      for (uint64_t seed : {1, 2, 3}) {
        engine::SimConfig cfg;
        cfg.procs = procs;
        cfg.seed = seed;
        cfg.time_limit = 1000LL * 1000 * 1000;
        const engine::SimResult r = engine::simulate(sc, cost::default_profile(), cfg);
        INFO(f.filename().string() << " at " << procs << " Ps, seed " << seed << ": " << r.message);
        CHECK(r.stop == engine::Engine::Stop::Exit);
        CHECK(r.exit_code == 0);
        CHECK(r.end_time < 50LL * 1000 * 1000);  // the slowest, syscall_then_hogs, ends near 28ms
      }
    }
  }
}

// A program that allocates and forces cycles under the checker (docs/checker.md, "GC programs"):
// the stop-the-worlds, mark workers, assists and sweeping are steps like the scheduler's, and a
// random search with every property, stw-completes included, finds nothing on the port.
TEST_CASE("gmpsim check: the GC's stop-the-worlds and workers under a random search", "[check][gc]") {
  const scenario::Scenario sc =
      scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/check/gc_alloc2.textproto");
  model::CheckConfig cfg;
  cfg.setup.scenario = &sc;
  cfg.setup.profile = &cost::default_profile();
  cfg.setup.procs = 2;
  cfg.setup.properties = model::parse_properties("all");
  cfg.strategy = "random";
  cfg.max_executions = 300;
  cfg.shrink = false;
  cfg.states = false;
  const model::CheckReport rep = model::run_check(cfg);
  INFO((rep.found ? rep.found->violation.message : std::string("none")));
  CHECK(!rep.found);
  CHECK(rep.executions == 300);
  CHECK((cfg.setup.properties & model::kStwCompletes) != 0);
}
