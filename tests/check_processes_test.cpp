// The checker with several processes (model/recorder.h): only the checked process's steps are
// choices; the other processes' threads are taken, lowest first, whenever one can step, so the
// schedules and the search are the checked process's alone. Plain threads (model/thread_run.h)
// given process ids stand in for processes: two threads of process "a" race on one counter, two
// of process "b" on another, and the processes never touch each other's cells.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "model/execution.h"
#include "model/policies.h"
#include "model/recorder.h"
#include "model/search.h"
#include "model/thread_run.h"
#include "sim/cost/profile.h"
#include "sim/platform/atomic.h"
#include "sim/platform/platform.h"
#include "sim/scenario/scenario.h"

using namespace gmp;
using namespace gmp::model;

namespace {

constexpr uint64_t kMaxSteps = 100'000;

// The threads, in the order added: each its process (0: a, 1: b).
using Layout = std::vector<uint32_t>;

struct Cells {
  Atomic<uint32_t> counter[2];  // by process
  plat::Note go;                // a's second thread wakes it; b's first thread (if any) waits on it
};

// Two racy increments (a plain load, then a plain store) per thread, on its process's counter.
// The second thread of a wakes `go` after its first increment, and the first thread of b waits for
// it before its own: so b's steps come in the middle of a's run, and a's next choice follows
// them. (The one cell the two processes share, for this test of the Recorder alone.)
ThreadProgram program(const Layout& layout, Cells& c) {
  ThreadProgram prog;
  int seen[2] = {0, 0};
  for (size_t i = 0; i < layout.size(); i++) {
    const uint32_t p = layout[i];
    const bool waker = p == 0 && seen[0] == 1, waiter = p == 1 && seen[1] == 0;
    seen[p]++;
    prog.add_thread(
        "T" + std::to_string(i),
        [&c, p, waker, waiter] {
          if (waiter) plat::notesleep(c.go);
          for (int k = 0; k < 2; k++) {
            c.counter[p].set(c.counter[p].get() + 1);
            if (waker && k == 0) plat::notewakeup(c.go);
          }
        },
        nullptr, p);
  }
  return prog;
}

// A schedule's text with each thread renumbered through `map` (a thread of the mixed layout to the
// same thread of the layout of one process).
std::string renumbered(const Schedule& s, const std::vector<uint32_t>& map) {
  Schedule r = s;
  for (auto& [step, tid] : r.picks) tid = map.at(tid);
  return r.str();
}

struct Search {
  uint64_t executions = 0;
  std::set<std::string> schedules;  // renumbered
  std::set<uint32_t> picked;        // every thread a schedule names (not renumbered)
  std::set<uint32_t> finals[2];     // each counter's final values
  std::set<uint64_t> forced;        // steps taken without a choice, per execution
};

Search dpor(const Layout& layout, uint32_t checked, const std::vector<uint32_t>& map) {
  Search out;
  Dpor d;
  for (uint64_t n = 0; d.begin(n); n++) {
    Cells c;
    const ThreadRun r = program(layout, c).run(d, kMaxSteps, checked);
    // Completed, or cut short by a sleep set (nothing new below).
    REQUIRE((r.outcome == ThreadRun::Outcome::Completed || r.outcome == ThreadRun::Outcome::Stopped));
    out.executions++;
    out.schedules.insert(renumbered(r.schedule, map));
    for (const auto& [step, tid] : r.schedule.picks) out.picked.insert(tid);
    if (r.outcome != ThreadRun::Outcome::Completed) continue;
    for (uint32_t p = 0; p < 2; p++) out.finals[p].insert(c.counter[p].peek());
    out.forced.insert(r.forced);
    REQUIRE(out.executions < 10'000);
  }
  return out;
}

// b's threads around a's, so that a's thread numbers differ from a's alone and b's thread is the
// one that ran last when a's next step is chosen.
const Layout kMixed = {1, 0, 0, 1};
const std::vector<uint32_t> kToA = {9, 0, 1, 9};  // a's threads of kMixed as numbered alone
const std::vector<uint32_t> kToB = {0, 9, 9, 1};
const std::vector<uint32_t> kSame = {0, 1, 2, 3};

}  // namespace

TEST_CASE("another process's steps are no choices: DPOR explores what the checked process alone does",
          "[check][processes]") {
  const Search alone = dpor({0, 0}, 0, {0, 1});
  REQUIRE(alone.executions > 1);
  CHECK(alone.finals[0] == std::set<uint32_t>{2, 3, 4});  // the lost updates are reached

  const Search a = dpor(kMixed, 0, kToA);
  CHECK(a.executions == alone.executions);
  CHECK(a.schedules == alone.schedules);        // the same schedules, a's threads renumbered
  CHECK(a.picked == std::set<uint32_t>{1, 2});  // only a's threads are ever picked
  CHECK(a.finals[0] == alone.finals[0]);
  CHECK(a.finals[1] == std::set<uint32_t>{4});  // b runs one fixed way: its threads one after the other
  CHECK(a.forced.size() == 1);                  // b's steps, the same number in every execution
  CHECK(*a.forced.begin() > 0);

  const Search b = dpor(kMixed, 1, kToB);  // and the other way round
  CHECK(b.executions == alone.executions);
  CHECK(b.picked.count(1) == 0);
  CHECK(b.picked.count(2) == 0);
  CHECK(b.finals[1] == std::set<uint32_t>{2, 3, 4});

  const Search all = dpor(kMixed, kAllProcesses, kSame);  // every step a choice
  CHECK(all.executions > alone.executions);
  CHECK(all.finals[0] == std::set<uint32_t>{2, 3, 4});
  CHECK(all.finals[1] == std::set<uint32_t>{2, 3, 4});
  CHECK(all.forced == std::set<uint64_t>{0});
}

TEST_CASE("a random search of one process draws what it draws alone and replays only under its process",
          "[check][processes]") {
  for (uint64_t seed = 1; seed <= 30; seed++) {
    Cells c1, c2;
    RandomPolicy p1(seed), p2(seed);
    const ThreadRun alone = program({0, 0}, c1).run(p1, kMaxSteps, 0);
    const ThreadRun mixed = program(kMixed, c2).run(p2, kMaxSteps, 0);
    REQUIRE(mixed.outcome == ThreadRun::Outcome::Completed);
    CHECK(renumbered(mixed.schedule, kToA) == alone.schedule.str());
    CHECK(mixed.steps == alone.steps);
    CHECK(c2.counter[0].peek() == c1.counter[0].peek());

    // The schedule replays strictly under the same process, to the same outcome.
    Cells c3;
    ReplayPolicy again(mixed.schedule, /*strict=*/true);
    const ThreadRun replayed = program(kMixed, c3).run(again, kMaxSteps, 0);
    CHECK(replayed.schedule.str() == mixed.schedule.str());
    CHECK(c3.counter[0].peek() == c2.counter[0].peek());
    // Under every process's steps it is another run: its length no longer fits.
    Cells c4;
    ReplayPolicy other(mixed.schedule, /*strict=*/true);
    CHECK_THROWS_AS(program(kMixed, c4).run(other, kMaxSteps, kAllProcesses), ScheduleError);
  }
}

TEST_CASE("a schedule names the process it was recorded for", "[check][processes]") {
  const Schedule s = Schedule::parse("server@12:3,40:1/77");
  CHECK(s.process == "server");
  CHECK(s.picks.size() == 2);
  CHECK(s.steps == 77);
  CHECK(s.str() == "server@12:3,40:1/77");
  CHECK(Schedule::parse("all@/5").process == "all");
  CHECK(Schedule::parse("12:3/77").process.empty());
  CHECK(Schedule::parse("12:3/77").str() == "12:3/77");
  CHECK_THROWS_WITH(Schedule::parse("a b@1:0/3"), Catch::Contains("byte 1: expected a process name"));
  CHECK_THROWS_WITH(Schedule::parse("@1:0/3"), Catch::Contains("byte 0: expected a process name"));
}

TEST_CASE("the process flag names a declared process or all", "[check][processes]") {
  scenario::Scenario sc;
  sc.processes.resize(2);
  sc.processes[0].name = "client";
  sc.processes[1].name = "server";
  CHECK(resolve_process(sc, "client") == 0);
  CHECK(resolve_process(sc, "server") == 1);
  CHECK(resolve_process(sc, "all") == kAllProcesses);
  CHECK_THROWS_WITH(resolve_process(sc, "db"), Catch::Contains("its processes: client, server, or all"));
  CHECK(process_label(sc, 1) == "server");
  CHECK(process_label(sc, kAllProcesses) == "all");
  const scenario::Scenario one;
  CHECK(resolve_process(one, "all") == kAllProcesses);
  CHECK_THROWS_WITH(resolve_process(one, "main"), Catch::Contains("declares no processes"));
}

namespace {

// gmpsim check on sim/scenarios/check/two_processes.textproto under `process`: bounded DPOR at 1
// preemption, run to completion (or to the first violation).
CheckReport check_two(const scenario::Scenario& sc, uint32_t process, uint32_t properties = kDefaultProperties,
                      uint64_t max_executions = 200'000) {
  CheckConfig cfg;
  cfg.setup.scenario = &sc;
  cfg.setup.profile = &cost::default_profile();
  cfg.setup.procs = 2;
  cfg.setup.process = process;
  cfg.setup.properties = properties;
  cfg.strategy = "bounded";
  cfg.params["preemptions"] = 1;
  cfg.params["estimate"] = 0;
  cfg.max_executions = max_executions;
  return run_check(cfg);
}

}  // namespace

TEST_CASE("two processes: --process a searches a as alone, all searches more, b's assertion is b's",
          "[check][processes]") {
  const scenario::Scenario sc =
      scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/check/two_processes.textproto");
  REQUIRE(sc.processes.size() == 2);
  const scenario::Scenario& a_alone = *sc.processes[0].program;

  const CheckReport alone = check_two(a_alone, 0);
  REQUIRE(alone.complete);
  REQUIRE_FALSE(alone.found);

  const CheckReport a = check_two(sc, 0);
  CHECK(a.complete);
  CHECK_FALSE(a.found);  // b's assertion is not a's property
  CHECK(a.executions == alone.executions);

  const CheckReport b = check_two(sc, 1);
  REQUIRE(b.found);
  CHECK(b.found->violation.property == kAssertions);
  CHECK_THAT(b.found->violation.message, Catch::Contains("process b: ") && Catch::Contains("worker"));

  // Every process's steps: more executions than a's alone (b's assertion left out, so that the
  // search does not stop at it).
  const CheckReport wide = check_two(sc, kAllProcesses, kDefaultProperties & ~kAssertions, alone.executions + 1);
  CHECK(wide.executions == alone.executions + 1);
  CHECK_FALSE(wide.complete);
  CHECK_FALSE(wide.found);

  const CheckReport all = check_two(sc, kAllProcesses);
  REQUIRE(all.found);
  CHECK(all.found->violation.property == kAssertions);
  CHECK_THAT(all.found->violation.message, Catch::Contains("process b: "));

  // b's counterexample replays under b, and is refused under a.
  CheckSetup setup;
  setup.scenario = &sc;
  setup.profile = &cost::default_profile();
  setup.procs = 2;
  setup.process = 1;
  const Execution again = replay(setup, b.found->schedule, "");
  CHECK(again.end == Execution::End::Violation);
  CHECK(again.violation.message == b.found->violation.message);
  setup.process = 0;
  CHECK_THROWS_AS(replay(setup, b.found->schedule, ""), ScheduleError);
}
