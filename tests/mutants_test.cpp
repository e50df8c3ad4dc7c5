// The scheduler mutants (sim/runtime/mutants.h, docs/mutants.md), in a build with GMP_MUTANTS:
// the table is complete and consistent with the sources, docs and scenarios, and the mutants that
// the timing simulator can expose do change what a run shows.
#include <catch2/catch.hpp>

#include <cctype>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>

#include "sim/cost/profile.h"
#include "sim/simulation/simulation.h"
#include "sim/runtime/mutants.h"
#include "sim/scenario/scenario.h"

using namespace gmp;
using namespace gmp::rt;
using engine::Engine;
using engine::SimConfig;
using engine::SimResult;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const std::string kSource = GMP_SOURCE_DIR;
const char* const kCheckScenarios[] = {
    "gosched",       "gosched_spinner", "locked_sleep",      "mutex",           "mutex_handoff", "pingpong",
    "ready2",        "ready_syscall",   "sleep_hog",         "sleepers",        "spawn2",        "syscall_lock",
    "syscall_loop",  "syscall_overdue", "syscall_sleep",     "syscall_then_hogs", "timer_hog",   "waitgroup",
    "netpoll_inject", "stw_ready",       "assist_handoff",    "netpoll_strand",
};

// Selects a mutant for the scope of a test and puts None back after it.
struct WithMutant {
  explicit WithMutant(Mutant m) { setActiveMutant(m); }
  ~WithMutant() { setActiveMutant(Mutant::None); }
  WithMutant(const WithMutant&) = delete;
  WithMutant& operator=(const WithMutant&) = delete;
};

SimResult run(const char* scenario, Mutant m, int32_t procs, uint64_t seed = 1, int64_t jitter = 0) {
  const scenario::Scenario sc = scenario::load_scenario(kSource + "/sim/scenarios/check/" + scenario + ".textproto");
  SimConfig cfg;
  cfg.procs = procs;
  cfg.seed = seed;
  cfg.jitter = jitter;
  cfg.time_limit = 1000LL * 1000 * 1000;  // 1s: every scenario ends within 30ms when it ends at all
  WithMutant with(m);
  return engine::simulate(sc, cost::default_profile(), cfg);
}

constexpr int64_t kMs = 1000 * 1000;

}  // namespace

TEST_CASE("every name round-trips and only known names are accepted", "[mutants]") {
  CHECK(kMutantsBuilt);
  CHECK(mutantFromName("none") == Mutant::None);
  CHECK(mutantFromName("") == Mutant::None);
  CHECK(std::string(mutantName(Mutant::None)) == "none");
  for (int i = 1; i < static_cast<int>(Mutant::Count_); i++) {
    const auto m = static_cast<Mutant>(i);
    INFO(mutantName(m));
    CHECK(mutantFromName(mutantName(m)) == m);
    CHECK(mutantInfo(m).id == m);
  }
  CHECK_THROWS_AS(mutantFromName("no-such-mutant"), std::invalid_argument);
  CHECK_THROWS_AS(mutantFromName("Gosched-No-Wakep"), std::invalid_argument);
  CHECK_THROWS_AS(mutantInfo(Mutant::None), std::out_of_range);
  CHECK_THROWS_AS(mutantInfo(Mutant::Count_), std::out_of_range);
}

TEST_CASE("the table is complete and every row has a Go reference and a summary", "[mutants]") {
  CHECK(mutantTable().size() == static_cast<size_t>(Mutant::Count_) - 1);
  CHECK(mutantTable().size() >= 12);
  std::set<std::string> names;
  for (const MutantInfo& mi : mutantTable()) {
    const std::string name = mi.name;
    INFO(name);
    CHECK(names.insert(name).second);
    // kebab-case
    REQUIRE(!name.empty());
    CHECK(name.front() != '-');
    CHECK(name.back() != '-');
    for (char c : name) {
      CHECK((std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'));
    }
    // A golang/go commit: ten hex digits first.
    const std::string ref = mi.go_ref;
    REQUIRE(ref.size() >= 10);
    for (size_t i = 0; i < 10; i++) CHECK(std::isxdigit(static_cast<unsigned char>(ref[i])));
    CHECK(std::string(mi.summary).size() > 20);
    CHECK(std::string(mi.symptom).size() > 20);
  }
}

TEST_CASE("each lives where the table says and docs and scenarios name it", "[mutants]") {
  const std::string doc = slurp(kSource + "/docs/mutants.md");
  REQUIRE(!doc.empty());
  std::string scenarios;
  for (const char* s : kCheckScenarios) {
    const std::string text = slurp(kSource + "/sim/scenarios/check/" + s + ".textproto");
    INFO(s);
    REQUIRE(!text.empty());
    scenarios += text;
  }
  for (const MutantInfo& mi : mutantTable()) {
    const std::string name = mi.name;
    INFO(name);
    // where = "file.cpp:function[,function]": the file mentions the mutant by name.
    const std::string where = mi.where;
    const size_t colon = where.find(':');
    REQUIRE(colon != std::string::npos);
    const std::string src = slurp(kSource + "/sim/runtime/" + where.substr(0, colon));
    REQUIRE(!src.empty());
    CHECK(src.find("Mutant " + name) != std::string::npos);
    CHECK(doc.find("`" + name + "`") != std::string::npos);
    CHECK(doc.find(std::string(mi.go_ref).substr(0, 10)) != std::string::npos);
    CHECK(scenarios.find(name) != std::string::npos);
  }
}

TEST_CASE("setActiveMutant selects one mutant at a time", "[mutants]") {
  CHECK(activeMutantSetting() == Mutant::None);
  CHECK_FALSE(mutant(Mutant::GoschedNoWakep));
  {
    WithMutant with(Mutant::GoschedNoWakep);
    CHECK(activeMutantSetting() == Mutant::GoschedNoWakep);
    CHECK(mutant(Mutant::GoschedNoWakep));
    CHECK_FALSE(mutant(Mutant::NoNeedspinning));
    CHECK_FALSE(mutant(Mutant::None));
  }
  CHECK(activeMutantSetting() == Mutant::None);
  CHECK_FALSE(mutant(Mutant::GoschedNoWakep));
  CHECK_THROWS_AS(setActiveMutant(Mutant::Count_), std::out_of_range);
}

// The timing simulator's view of the mutants it exposes (docs/mutants.md has the survey). Each
// case runs the unmutated port beside the mutant on the same seed.

TEST_CASE("exitsyscall-no-sysmon-wake leaves hogs unpreempted until the time limit", "[mutants][sim]") {
  const SimResult ok = run("syscall_then_hogs", Mutant::None, 2);
  REQUIRE(ok.stop == Engine::Stop::Exit);
  CHECK(ok.end_time < 40 * kMs);
  const SimResult bad = run("syscall_then_hogs", Mutant::ExitsyscallNoSysmonWake, 2);
  CHECK(bad.stop == Engine::Stop::TimeLimit);
}

TEST_CASE("retake-no-sysretake lets short system calls keep a P past the time slice", "[mutants][sim]") {
  const SimResult ok = run("syscall_loop", Mutant::None, 2);
  REQUIRE(ok.stop == Engine::Stop::Exit);
  CHECK(ok.end_time < 16 * kMs);  // sysmon takes a caller's P once its 10ms slice is used up
  const SimResult bad = run("syscall_loop", Mutant::RetakeNoSysretake, 2);
  REQUIRE(bad.stop == Engine::Stop::Exit);
  CHECK(bad.end_time > 20 * kMs);  // main waits until a caller's 8,000 calls are done
}

TEST_CASE("resetspinning-no-wakep leaves a worker queued while a P idles", "[mutants][sim]") {
  const SimResult ok = run("spawn2", Mutant::None, 3);
  REQUIRE(ok.stop == Engine::Stop::Exit);
  CHECK(ok.end_time < 1500 * 1000);
  const SimResult bad = run("spawn2", Mutant::ResetspinningNoWakep, 3);
  REQUIRE(bad.stop == Engine::Stop::Exit);
  CHECK(bad.end_time > 1900 * 1000);
}

TEST_CASE("no-recheck-after-spinning strands a readied goroutine while an M parks", "[mutants][sim]") {
  // ready2 at 3 Ps: a receiver readies main into its P's runnext just as the last spinning M
  // gives up; without the re-check that M parks and main waits for the receiver's 1ms.
  int stranded = 0;
  for (uint64_t seed = 1; seed <= 5; seed++) {
    const SimResult ok = run("ready2", Mutant::None, 3, seed);
    REQUIRE(ok.stop == Engine::Stop::Exit);
    CHECK(ok.end_time < 1500 * 1000);
    const SimResult bad = run("ready2", Mutant::NoRecheckAfterSpinning, 3, seed);
    REQUIRE(bad.stop == Engine::Stop::Exit);
    if (bad.end_time > 1900 * 1000) stranded++;
  }
  CHECK(stranded > 0);
}

TEST_CASE("pidleget-no-timerpmask and wakep-keeps-nmspinning lose a sleeper's timer", "[mutants][sim]") {
  for (Mutant m : {Mutant::PidlegetNoTimerpMask, Mutant::WakepKeepsNmspinning}) {
    INFO(mutantName(m));
    int hangs = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
      const SimResult ok = run("syscall_sleep", Mutant::None, 2, seed);
      REQUIRE(ok.stop == Engine::Stop::Exit);
      const SimResult bad = run("syscall_sleep", m, 2, seed);
      if (bad.stop == Engine::Stop::TimeLimit) hangs++;
    }
    CHECK(hangs > 0);
  }
}

TEST_CASE("semacquire-no-recheck loses a Mutex wake-up under jitter", "[mutants][sim]") {
  int deadlocks = 0;
  for (uint64_t seed = 1; seed <= 10; seed++) {
    const SimResult ok = run("mutex", Mutant::None, 2, seed, 1000);
    REQUIRE(ok.stop == Engine::Stop::Exit);
    const SimResult bad = run("mutex", Mutant::SemacquireNoRecheck, 2, seed, 1000);
    if (bad.stop == Engine::Stop::Exit) continue;
    CHECK(bad.message.find("all goroutines are asleep - deadlock!") != std::string::npos);
    deadlocks++;
  }
  CHECK(deadlocks > 0);
}

TEST_CASE("runqgrab-no-backoff steals ping-pong partners apart", "[mutants][sim]") {
  const SimResult ok = run("pingpong", Mutant::None, 2);
  const SimResult bad = run("pingpong", Mutant::RunqgrabNoBackoff, 2);
  REQUIRE(ok.measured);
  REQUIRE(bad.measured);
  CHECK(bad.steals >= 5 * ok.steals);
  CHECK(bad.runnext_backoffs == 0);
  CHECK(bad.ns_per_op > 1.1 * ok.ns_per_op);
}

TEST_CASE("runqgrab-backoff-in-syscall backs off from a P whose goroutine is in a syscall", "[mutants][sim]") {
  const SimResult ok = run("ready_syscall", Mutant::None, 2);
  const SimResult bad = run("ready_syscall", Mutant::RunqgrabBackoffInSyscall, 2);
  REQUIRE(ok.stop == Engine::Stop::Exit);
  REQUIRE(bad.stop == Engine::Stop::Exit);
  CHECK(bad.runnext_backoffs >= ok.runnext_backoffs + 10);
}

TEST_CASE("injectglist-all-local leaves readers from the poller queued while a P idles", "[mutants][sim]") {
  // netpoll_strand at 2 Ps: the M woken from the blocking netpoll keeps one reader and hands two
  // to injectglist while the other P is idle. go1.27rc2 sends one of them to the global queue and
  // starts an M for it, so two readers compute side by side; the mutant queues both behind the
  // first and the three 1ms computations run one after the other (requests at 2ms).
  for (uint64_t seed = 1; seed <= 3; seed++) {
    INFO("seed " << seed);
    const SimResult ok = run("netpoll_strand", Mutant::None, 2, seed);
    REQUIRE(ok.stop == Engine::Stop::Exit);
    CHECK(ok.end_time < 4300 * 1000);  // about 4.01ms: two readers side by side, then the third
    const SimResult bad = run("netpoll_strand", Mutant::InjectglistAllLocal, 2, seed);
    REQUIRE(bad.stop == Engine::Stop::Exit);
    CHECK(bad.end_time > 4800 * 1000);  // about 5.01ms: one after the other
  }
}
