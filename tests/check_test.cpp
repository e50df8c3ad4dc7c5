// gmpsim check's model checker (model/): schedules as text, exact replay, the properties, the
// search's splits, and what it says about programs it cannot bound.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "model/execution.h"
#include "tests/check_setup.h"
#include "model/policies.h"
#include "model/properties.h"
#include "model/search.h"
#include "model/strategies.h"
#include "sim/cost/profile.h"
#include "sim/runtime/runtime.h"
#include "sim/scenario/scenario.h"
#include "traces/trace_reader.h"
#include "traces/validate.h"

using namespace gmp;
using namespace gmp::checktest;

namespace {

// main waits on a channel nobody sends on: every execution ends in Go's deadlock throw.
const char kDeadlock[] = R"(
chan { name: "a" }
func { name: "main" op { go { func: "w" } } op { recv { chan: "a" } } }
func { name: "w" op { compute { ns: 100 } } }
)";



std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

TEST_CASE("a schedule's text round-trips, and bad text names its byte", "[check]") {
  const model::Schedule s = model::Schedule::parse("12:1,40:0/97");
  CHECK(s.picks.size() == 2);
  CHECK(s.picks[1] == std::pair<uint64_t, uint32_t>{40, 0});
  CHECK(s.steps == 97);
  CHECK(s.str() == "12:1,40:0/97");
  CHECK(model::Schedule::parse("/5").picks.empty());
  auto error_of = [](const std::string& text) {
    try {
      model::Schedule::parse(text);
    } catch (const model::ScheduleError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("12:1,x/9").find("byte 5") != std::string::npos);
  CHECK(error_of("12:1").find("byte 4: expected '/'") != std::string::npos);
  CHECK(error_of("5:1,3:0/9").find("steps must increase") != std::string::npos);
  CHECK(error_of("5:1/4").find("beyond the last step") != std::string::npos);
  CHECK(error_of("99999999999999999999:1/5").find("too large") != std::string::npos);
  CHECK(error_of("1:2/3 ").find("byte 5") != std::string::npos);
}

TEST_CASE("a counterexample replays exactly: the same steps and the same trace bytes", "[check]") {
  const scenario::Scenario sc = scenario::parse_scenario(kDeadlock, "deadlock");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 2);
  cfg.strategy = "random";
  cfg.max_executions = 5;
  cfg.states = false;
  const model::CheckReport rep = model::run_check(cfg);
  REQUIRE(rep.found);
  CHECK(rep.found->violation.property == model::kThrow);
  CHECK(rep.found->violation.message.find("all goroutines are asleep") != std::string::npos);
  const std::string a = std::string(GMP_BINARY_DIR) + "/check_test_a.trace", b = a + ".b";
  const model::Execution x = model::replay(cfg.setup, rep.found->schedule, a);
  const model::Execution y = model::replay(cfg.setup, rep.found->schedule, b);
  CHECK(x.end == model::Execution::End::Violation);
  CHECK(x.steps == rep.found->schedule.steps);
  CHECK(x.schedule.str() == rep.found->schedule.str());
  REQUIRE(x.log.size() == y.log.size());
  for (size_t i = 0; i < x.log.size(); i++) CHECK(x.log[i].step.tid == y.log[i].step.tid);
  const std::string ta = slurp(a), tb = slurp(b);
  CHECK(!ta.empty());
  CHECK(ta == tb);
  const trace::Validator v = trace::validate_file(a);
  INFO((v.issues().empty() ? std::string("consistent") : v.issues().front().what));
  CHECK(v.issue_count() == 0);
  // Every scheduler event is marked with the step it happened in, in the schedule's numbering.
  trace::TraceReader in(a);
  trace::Event e;
  uint64_t last = 0, marked = 0, events = 0;
  while (in.next(e)) {
    if (e.kind() == trace::KIND_RUN_END) continue;
    events++;
    if (!e.has_step()) continue;
    marked++;
    CHECK(e.step() >= last);
    CHECK(e.step() < x.steps);
    last = e.step();
  }
  CHECK(events > 10);
  CHECK(marked == events);
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST_CASE("a stale schedule is refused at the step where it diverges", "[check]") {
  const scenario::Scenario sc =
      scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/check/waitgroup.textproto");
  const model::CheckSetup setup = setup_for(sc, 2);
  std::string what;
  try {
    model::replay(setup, model::Schedule::parse("3:9/500"), "");
  } catch (const model::ScheduleError& e) {
    what = e.what();
  }
  CHECK(what.find("diverges at step 3") != std::string::npos);
  CHECK(what.find("thread 9") != std::string::npos);
  // The default order with a wrong length: the run and the schedule disagree on where it ends.
  what.clear();
  try {
    model::replay(setup, model::Schedule::parse("/3"), "");
  } catch (const model::ScheduleError& e) {
    what = e.what();
  }
  CHECK(what.find("ends at step 3") != std::string::npos);
}

TEST_CASE("jobs and shards search the same executions as one job", "[check]") {
  // One worker and a WaitGroup: a complete bounded search of a few hundred executions.
  const scenario::Scenario sc = scenario::parse_scenario(R"(
waitgroup { name: "wg" }
func { name: "main" op { add { wg: "wg" n: 1 } } op { go { func: "worker" } } op { wait { wg: "wg" } } }
func { name: "worker" op { done { wg: "wg" } } }
)",
                                                         "wg1");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 2);
  cfg.strategy = "bounded";
  cfg.params["preemptions"] = 1;
  const model::CheckReport one = model::run_check(cfg);
  CHECK(one.complete);
  CHECK(!one.found);
  cfg.jobs = 3;
  const model::CheckReport three = model::run_check(cfg);
  CHECK(three.complete);
  CHECK(three.executions == one.executions);
  CHECK(three.states == one.states);
  cfg.jobs = 1;
  cfg.shards = 2;
  cfg.shard = 0;
  const model::CheckReport s0 = model::run_check(cfg);
  cfg.shard = 1;
  const model::CheckReport s1 = model::run_check(cfg);
  CHECK(s0.executions + s1.executions == one.executions);
  CHECK(s0.executions > 0);
  CHECK(s1.executions > 0);
}

TEST_CASE("random search reports the same first violation whatever the jobs", "[check]") {
  const scenario::Scenario sc = scenario::parse_scenario(kDeadlock, "deadlock");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 2);
  cfg.strategy = "random";
  cfg.max_executions = 20;
  cfg.shrink = false;
  const model::CheckReport one = model::run_check(cfg);
  cfg.jobs = 4;
  const model::CheckReport four = model::run_check(cfg);
  REQUIRE(one.found);
  REQUIRE(four.found);
  CHECK(one.found->execution == four.found->execution);
  CHECK(one.found->schedule.str() == four.found->schedule.str());
}

TEST_CASE("a program that does not end is reported with the loop it is in", "[check]") {
  const scenario::Scenario sc = scenario::parse_scenario(R"(
func { name: "main" op { loop { forever: true op { compute { ns: 1000 } } op { gosched {} } } } }
)",
                                                         "forever.textproto");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 2);
  cfg.setup.max_steps = 3000;
  cfg.strategy = "random";
  cfg.max_executions = 2;
  const model::CheckReport rep = model::run_check(cfg);
  CHECK(!rep.found);
  CHECK(rep.step_limited == 2);
  CHECK(!rep.complete);
  CHECK(rep.unbounded.find("G1 (main)") != std::string::npos);
  CHECK(rep.unbounded.find("endless loop at forever.textproto:2") != std::string::npos);
}

TEST_CASE("the state properties name what is wrong", "[check]") {
  rt::Runtime r(2);
  rt::g a, b;
  a.goid = 7;
  b.goid = 8;
  a.atomicstatus.set(rt::_Grunnable);
  b.atomicstatus.set(rt::_Gwaiting);
  r.allgs = {&a, &b};
  r.allp[0]->runnext.set(&a);
  CHECK(model::check_g_conservation(r).empty());
  // The same G in a second queue.
  r.allp[1]->runq[0].set(&a);
  r.allp[1]->runqtail.set(1);
  CHECK(model::check_g_conservation(r).find("G7 is in 2 run queues at once") != std::string::npos);
  r.allp[1]->runqtail.set(0);
  // A waiting G in a run queue.
  r.allp[1]->runnext.set(&b);
  CHECK(model::check_g_conservation(r).find("G8 is _Gwaiting but in P1's runnext") != std::string::npos);
  r.allp[1]->runnext.set(nullptr);
  // A runnable G in no queue at all.
  r.allp[0]->runnext.set(nullptr);
  CHECK(model::check_g_conservation(r).find("G7 is _Grunnable but in no run queue") != std::string::npos);
  r.allp[0]->runnext.set(&a);

  // Work conservation: runnable work, an idle P, nobody spinning.
  r.sched.npidle.set(1);
  r.allp[1]->status.set(rt::_Pidle);
  r.allp[0]->status.set(rt::_Prunning);
  CHECK(model::check_work_conservation(r).find("G7 in P0's runnext while P1 is idle") != std::string::npos);
  // An M that spins will find it.
  rt::m spinner;
  spinner.spinning = true;
  r.allm.set(&spinner);
  CHECK(model::check_work_conservation(r).empty());
  // The counts must agree with the Ms and Ps they count.
  CHECK(model::check_accounting(r).find("sched.nmspinning is 0 but 1 Ms are spinning") != std::string::npos);
  r.sched.nmspinning.set(1);
  CHECK(model::check_accounting(r).find("sched.npidle is 1, the idle list holds 0 Ps") != std::string::npos);
  r.allm.set(nullptr);
  r.sched.nmspinning.set(0);

  // Lost wake-up: the same, with no M running anything.
  engine::PointInfo info;
  CHECK(model::check_lost_wakeup(r, info).find("every M is parked") != std::string::npos);
  info.user_running = 1;
  CHECK(model::check_lost_wakeup(r, info).empty());
  r.allgs.clear();
}

// Three sleepers and a computation of different lengths on 2 Ps: under strict time the waits end in
// the order of their deadlines, each when it is due, in every execution; under free time some
// execution ends one after a later one.
TEST_CASE("under strict time waits end in deadline order, under free time in any order", "[check]") {
  const scenario::Scenario sc = scenario::parse_scenario(R"(
waitgroup { name: "wg" }
func { name: "main" op { add { wg: "wg" n: 3 } } op { go { func: "a" } } op { go { func: "b" } }
       op { go { func: "c" } } op { compute { duration: "35us" } } op { wait { wg: "wg" } } }
func { name: "a" op { sleep { duration: "30us" } } op { done { wg: "wg" } } }
func { name: "b" op { sleep { duration: "10us" } } op { compute { duration: "15us" } } op { done { wg: "wg" } } }
func { name: "c" op { compute { duration: "20us" } } op { done { wg: "wg" } } }
)",
                                                         "sleepers");
  auto out_of_order = [&](bool strict) {
    model::CheckSetup setup = setup_for(sc, 2);
    setup.strict_time = strict;
    uint64_t late = 0;
    for (uint64_t seed = 1; seed <= 30; seed++) {
      model::RandomPolicy policy(seed);
      model::ExecOptions opt;
      opt.log = true;
      const model::Execution ex = model::execute(setup, policy, opt);
      REQUIRE(ex.end == model::Execution::End::Completed);
      int64_t last = 0;
      for (const model::LoggedStep& l : ex.log) {
        if (l.step.kind != engine::StepKind::Timeout) continue;
        if (l.step.deadline < last || l.step.deadline < l.now) late++;
        last = std::max(last, l.step.deadline);
      }
    }
    return late;
  };
  CHECK(out_of_order(true) == 0);
  CHECK(out_of_order(false) > 0);
}

// At 1 P main yields to a goroutine that computes 500ms in one piece. Sysmon asks for it to be
// preempted after its 10ms slice; under strict time the signal must cut the computation short
// there, as in a timed run, and not when the computation would have ended.
TEST_CASE("under strict time a preemption signal cuts a long computation short", "[check]") {
  const scenario::Scenario sc = scenario::parse_scenario(R"(
assertion { max_runnable_latency { duration: "30ms" } }
func { name: "main" op { go { func: "hog" } } op { gosched {} } }
func { name: "hog" op { compute { duration: "500ms" } } }
)",
                                                         "hog");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 1);
  cfg.setup.strict_time = true;
  cfg.setup.properties = model::parse_properties("all");
  cfg.strategy = "random";
  cfg.max_executions = 5;
  cfg.states = false;
  const model::CheckReport rep = model::run_check(cfg);
  INFO((rep.found ? rep.found->violation.message : std::string("none")));
  CHECK(!rep.found);
  CHECK(rep.executions == 5);
}

// The schedule docs/checker-findings.md and the README quote (a worker stranded while a P idles on
// the unmodified port) still replays to its violation: a change of the step model that moves it
// fails here, and the docs must be updated with the new schedule.
TEST_CASE("the work-conservation schedule quoted in the docs still replays", "[check]") {
  const scenario::Scenario sc =
      scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/check/waitgroup.textproto");
  model::CheckSetup setup = setup_for(sc, 2);
  setup.properties = model::parse_properties("all");
  const model::Execution ex = model::replay(setup, model::Schedule::parse("277:3,400:3,583:2/726"), "");
  REQUIRE(ex.end == model::Execution::End::Violation);
  CHECK(ex.violation.property == model::kWorkConservation);
  CHECK(ex.violation.message.find("G6 in P0's run queue while P1 is idle") != std::string::npos);
}

// A server's worker pool under PCT: Ms coming back from read and write system calls spin in
// casgstatus (osyield) while sysmon holds the goroutine's _Gscan bit. Each yield gives another
// thread a step, as sched_yield does; with strict priorities alone the spinning M never let sysmon
// finish, and execution 280 was reported as a livelock.
TEST_CASE("PCT lets a thread's osyield give another thread a step: no false livelock on a server", "[check]") {
  const scenario::Scenario sc =
      scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/check/netpoll_pool.textproto");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 2);
  cfg.setup.properties = model::parse_properties("all");
  cfg.strategy = "pct";
  cfg.max_executions = 400;
  cfg.shrink = false;
  const model::CheckReport r = model::run_check(cfg);
  INFO((r.found ? r.found->violation.message : std::string("none")));
  CHECK(!r.found);
  CHECK(r.executions == 400);
}

// A sampling search numbers its executions, and a policy begun with number i runs execution i
// whatever it ran before: the searching threads share the numbers out in any order (--jobs,
// --shard) and every split runs the same executions.
TEST_CASE("a sampling policy's execution i is the same whatever the policy ran before", "[check]") {
  const scenario::Scenario sc =
      scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/check/waitgroup.textproto");
  const model::CheckSetup setup = setup_for(sc, 2);
  auto schedules = [&](model::Policy& pol, std::initializer_list<uint64_t> numbers) {
    std::vector<std::string> out;
    for (uint64_t i : numbers) {
      REQUIRE(pol.begin(i));
      out.push_back(model::execute(setup, pol, model::ExecOptions{}).schedule.str());
    }
    return out;
  };
  model::RandomPolicy a(7), b(7);
  const std::vector<std::string> ra = schedules(a, {3, 5}), rb = schedules(b, {5, 3});
  CHECK(ra[0] == rb[1]);
  CHECK(ra[1] == rb[0]);
  CHECK(ra[0] != ra[1]);
  model::PctPolicy p(7, 3, 500), q(7, 3, 500);
  const std::vector<std::string> pa = schedules(p, {3, 5}), pb = schedules(q, {5, 3});
  CHECK(pa[0] == pb[1]);
  CHECK(pa[1] == pb[0]);
  CHECK(pa[0] != pa[1]);
}

// The strategies' table (model/strategies.h): each row makes its strategy from its defaults, and a
// search refuses a name or a parameter the table does not have.
TEST_CASE("every strategy of the table searches, and unknown names and parameters are refused", "[check]") {
  const scenario::Scenario sc = scenario::parse_scenario(kDeadlock, "deadlock");
  const std::set<std::string> exhaustive{"dpor", "bounded", "plain"};  // docs/checker.md's "complete?"
  for (const model::StrategyInfo& s : model::strategies()) {
    INFO(s.name);
    CHECK(s.exhaustive == (exhaustive.count(s.name) != 0));
    model::CheckConfig cfg;
    cfg.setup = setup_for(sc, 1);
    cfg.strategy = s.name;
    cfg.max_executions = 3;
    cfg.shrink = false;
    for (const model::StrategyParam& p : s.params) cfg.params[p.name] = p.lo;  // the smallest value each takes
    const model::CheckReport rep = model::run_check(cfg);
    REQUIRE(rep.found);  // every execution of this scenario deadlocks
    CHECK(rep.found->violation.property == model::kThrow);
    CHECK(rep.found->execution == 0);
    // On a program with no violation, an exhaustive search under a bound of 0 preemptions ends
    // complete; a sampling search is never complete.
    if (!s.exhaustive || cfg.params.count("preemptions") != 0) {
      const scenario::Scenario empty = scenario::parse_scenario("func { name: \"main\" }", "empty");
      cfg.setup = setup_for(empty, 1);
      cfg.max_executions = s.exhaustive ? 0 : 3;
      const model::CheckReport clean = model::run_check(cfg);
      CHECK(!clean.found);
      CHECK(clean.complete == s.exhaustive);
    }
  }
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 1);
  cfg.strategy = "nope";
  CHECK_THROWS_WITH(model::run_check(cfg),
                    Catch::Contains("unknown strategy 'nope' (known: auto, dpor, bounded, pct, random or plain)"));
  cfg.strategy = "bounded";
  cfg.params["depth"] = 3;
  CHECK_THROWS_WITH(model::run_check(cfg), Catch::Contains("strategy bounded takes no parameter 'depth'"));
  cfg.params = {{"preemptions", 1001}};
  CHECK_THROWS_WITH(model::run_check(cfg), Catch::Contains("preemptions must be in [0, 1000], got 1001"));
}

// What a strategy adds to the report: DPOR's estimate when asked for one, PCT's probability.
TEST_CASE("a strategy's summary: DPOR's estimate and PCT's bound", "[check]") {
  const scenario::Scenario sc = scenario::parse_scenario(kDeadlock, "deadlock");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 1);
  cfg.max_executions = 2;
  cfg.shrink = false;
  cfg.params = {{"estimate", 3}};
  CHECK(model::run_check(cfg).strategy_summary.rfind("estimate (before the search, 3 random executions", 0) == 0);
  cfg.params = {{"estimate", 0}};
  CHECK(model::run_check(cfg).strategy_summary.empty());
  cfg.strategy = "pct";
  cfg.params = {{"depth", 2}};
  const model::CheckReport pct = model::run_check(cfg);
  CHECK(pct.strategy_summary.rfind("PCT: each execution finds a given bug of depth 2 with probability", 0) == 0);
  CHECK(pct.max_steps_seen > 0);
}

TEST_CASE("the runtime's loops over hundreds of Ps are not a livelock", "[check][limits]") {
  // procresize's p.init of each P at the start repeats one state per P (only the loop index and
  // the pMask bits move, and the fingerprint has neither): at 200 Ps the default order of a
  // program of one computation came back to it 200 times and was reported as a livelock.
  const scenario::Scenario sc =
      scenario::parse_scenario("func { name: \"main\" op { compute { iterations: 10 } } }\n", "one.textproto");
  for (const int32_t procs : {200, 1024}) {
    INFO(procs << " Ps");
    const model::Execution ex = default_order(setup_for(sc, procs));
    INFO(ex.violation.message);
    CHECK(ex.end == model::Execution::End::Completed);
  }
}

TEST_CASE("a loop whose values move on toward its end is not a livelock", "[check]") {
  // main passes a value around a channel of one slot, adding 1 each time, and closes it at 300:
  // the loop's pc and counters repeat, but the received value does not, so its states never do
  // (the fingerprint hashes a goroutine's variables). Hashing only pc and counters called it a
  // livelock ("same state 200 times").
  const scenario::Scenario sc = scenario::parse_scenario(R"(
chan { name: "c" cap: 1 }
func { name: "main"
  op { send { chan: "c" value: "1" } }
  op { loop { range: "c" var: "v"
    op { loop { count_expr: "1 - v / 300" op { send { chan: "c" value: "v + 1" } } } }
    op { loop { count_expr: "v / 300" op { close { chan: "c" } } } } } }
}
)",
                                                         "ring.textproto");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 2);
  cfg.setup.properties = model::parse_properties("livelock");
  cfg.strategy = "random";
  cfg.max_executions = 20;
  cfg.shrink = false;
  const model::CheckReport r = model::run_check(cfg);
  INFO((r.found ? r.found->violation.message : std::string("none")));
  CHECK(!r.found);
  CHECK(r.executions == 20);
}

TEST_CASE("the time limit bounds shrinking too: past it the schedule stays as found", "[check]") {
  // Every execution deadlocks, and a random schedule departs from the default order many times;
  // shrinking takes those departures away, unless its deadline (the check's time limit) has
  // passed: then the schedule stays as it was found, and the result says so.
  const scenario::Scenario sc = scenario::parse_scenario(kDeadlock, "deadlock");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 2);
  cfg.strategy = "random";
  cfg.max_executions = 1;
  cfg.shrink = false;
  const model::CheckReport r = model::run_check(cfg);
  REQUIRE(r.found);
  REQUIRE(!r.found->schedule.picks.empty());
  model::Found free = *r.found;
  model::shrink(cfg.setup, free, std::nullopt);
  CHECK(!free.shrink_cut);
  CHECK(free.schedule.picks.size() < r.found->schedule.picks.size());
  model::Found cut = *r.found;
  model::shrink(cfg.setup, cut, std::chrono::steady_clock::now());
  CHECK(cut.shrink_cut);
  CHECK(cut.schedule.str() == r.found->schedule.str());
}

TEST_CASE("an execution still running at the time limit is cut and counted as cut", "[check]") {
  // An endless loop reaches the step limit (200,000 steps) unless the time limit cuts it first; a
  // limit of 1 ns has passed at its first look at the clock, so the execution is cut there, not
  // counted as one that ran to the step limit, and the search stops.
  const scenario::Scenario sc = scenario::parse_scenario(R"(
func { name: "main" op { loop { forever: true op { gosched {} } } } }
)",
                                                         "endless.textproto");
  model::CheckConfig cfg;
  cfg.setup = setup_for(sc, 1);
  cfg.strategy = "random";
  cfg.max_executions = 3;
  cfg.time_limit = 1e-9;
  const model::CheckReport r = model::run_check(cfg);
  CHECK(r.time_cut == 1);
  CHECK(r.step_limited == 0);
  CHECK(r.executions == 1);
  CHECK(!r.complete);
  CHECK(!r.found);
}
