// GOMAXPROCS at run time: procresize growing and shrinking allp (p.destroy handing a P's
// goroutines, timers and caches on), runtime.GOMAXPROCS under stop-the-world, Go 1.25's
// container-aware default (cgroup_linux.go) and sysmon's updates of it when the quota changes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cost/profile.h"
#include "sim/engine/engine.h"
#include "sim/platform/platform.h"
#include "sim/platform/throw.h"
#include "sim/runtime/runtime.h"
#include "sim/runtime/time.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation/costs_from_profile.h"
#include "sim/simulation/metrics.h"
#include "sim/simulation/process.h"
#include "sim/simulation/process_switch.h"
#include "sim/simulation/simulation.h"
#include "tests/temp_dir.h"
#include "traces/trace_reader.h"
#include "traces/validate.h"

using namespace gmp;
using namespace gmp::rt;

namespace {

// A Runtime on the calling OS thread with getg() == m0's g0 and no P yet, as schedinit finds it.
struct OnM0 {
  explicit OnM0(int32_t procs) : r(procs) {
    Runtime::setCurrent(&r);
    plat::setg(r.g0);
  }
  ~OnM0() {
    plat::setg(saved);
    Runtime::setCurrent(nullptr);
  }
  OnM0(const OnM0&) = delete;
  OnM0& operator=(const OnM0&) = delete;

  // What stopTheWorldWithSema leaves procresize: every idle P off the list and stopped (the
  // current one is m0's), then the resize under sched.lock.
  p* resize(int32_t n) {
    lock(&r.sched.lock);
    for (;;) {
      p* pp = r.pidleget(0).first;
      if (pp == nullptr) break;
      pp->status.set(_Pgcstop);
    }
    p* runnable = r.procresize(n);
    unlock(&r.sched.lock);
    return runnable;
  }

  Runtime r;
  g* saved = plat::getg();
};

void noop(void*, uintptr_t, int64_t) {}

// A host that answers only the CPU questions.
class CpuHost final : public Host {
 public:
  CpuHost(int32_t cpus, CPULimit limit) : cpus_(cpus), limit_(limit) {}
  void newosproc(m*, plat::Fiber::Entry, void*) override { plat::throw_("CpuHost: no threads"); }
  [[noreturn]] void exitThread() override { plat::throw_("CpuHost: no threads"); }
  [[noreturn]] void exit(int) override { plat::throw_("CpuHost: no exit"); }
  void runGoroutine(g*) override {}
  void event(Ev, g*, p*, int64_t) override {}
  CPULimit cgroupCPULimit() override { return limit_; }
  int32_t getproccount() override { return cpus_; }

 private:
  int32_t cpus_;
  CPULimit limit_;
};

engine::SimResult run(const std::string& text, int32_t procs, engine::SimConfig cfg = {}) {
  const scenario::Scenario sc = scenario::parse_scenario(text, "maxprocs.textproto");
  cfg.procs = procs;
  if (cfg.time_limit == engine::SimConfig{}.time_limit) cfg.time_limit = 20LL * 1000 * 1000 * 1000;
  return engine::simulate(sc, cost::default_profile(), cfg);
}

uint64_t event_count(const engine::SimResult& r, const std::string& name) {
  for (const auto& [k, n] : r.event_counts) {
    if (k == name) return n;
  }
  return 0;
}

// One process in a cgroup, on an engine built here: Sim's wiring, plus the group (the quota and
// its changes), which SimConfig does not carry yet.
engine::SimResult run_in_group(const std::string& text, int32_t cores, engine::CpuGroup group,
                               engine::ProcessConfig pc) {
  const scenario::Scenario sc = scenario::parse_scenario(text, "maxprocs.textproto");
  const cost::Profile& prof = cost::default_profile();
  engine::EngineConfig ec;
  ec.cores = engine::machine_cores(prof, cores);
  ec.costs = engine::costs_from_profile(prof);
  ec.seed = pc.seed;
  ec.time_limit = 60LL * 1000 * 1000 * 1000;
  ec.groups.push_back(group);
  ec.processes.push_back(engine::EngineProcess{0, false});
  engine::Engine eng(ec);
  engine::ProcessSwitch sw(eng);
  engine::Process proc(pc, sc, prof, eng, nullptr);
  sw.add(0, proc.runtime());
  proc.boot();
  const engine::Engine::Result er = eng.run();
  Runtime::setCurrent(nullptr);
  engine::SimResult res;
  res.stop = er.stop;
  res.end_time = er.end_time;
  proc.finish(er, res);
  return res;
}

constexpr int64_t kSecond = 1000LL * 1000 * 1000;

}  // namespace

TEST_CASE("procresize shrinking moves a P's run queue and runnext to the global queue's head in run order",
          "[maxprocs]") {
  OnM0 w(4);
  REQUIRE(w.resize(4) == nullptr);  // the start: P 0 is m0's
  p* p3 = w.r.allp[3];
  g a, b, c, next;
  for (g* gp : {&a, &b, &c}) w.r.runqput(p3, gp, false);
  w.r.runqput(p3, &next, true);
  // And one goroutine queued on a P that stays: untouched.
  g stays;
  w.r.runqput(w.r.allp[1], &stays, false);

  p* runnable = w.resize(1);
  CHECK(runnable == nullptr);  // P 1 is destroyed too: no P is left with work
  CHECK(w.r.gomaxprocs == 1);
  REQUIRE(w.r.allp.size() == 1);
  CHECK(p3->status.peek() == _Pdead);
  CHECK(w.r.allp[0]->status.peek() == _Prunning);
  // The Ps are destroyed in id order, each putting its goroutines at the head: P 3's come first,
  // runnext, then its queue from head to tail, and P 1's after them.
  std::vector<g*> order;
  while (g* gp = w.r.sched.runq.pop()) order.push_back(gp);
  CHECK(order == std::vector<g*>{&next, &a, &b, &c, &stays});
  CHECK(w.r.runqempty(p3));
  CHECK(p3->runnext.peek() == nullptr);
}

TEST_CASE("procresize shrinking moves the destroyed P's timers to the current P", "[maxprocs]") {
  OnM0 w(3);
  REQUIRE(w.resize(3) == nullptr);
  p* p2 = w.r.allp[2];
  timer t1, t2;
  t1.init(&noop, nullptr);
  t2.init(&noop, nullptr);
  t1.when = 5000;
  t2.when = 3000;
  t1.state = t2.state = timerHeaped;
  p2->timers_->addHeap(&t1, true);  // as with the world stopped: no lock
  p2->timers_->addHeap(&t2, true);
  p2->timersLen.set(2);
  REQUIRE(p2->timers_->minWhenHeap.peek() == 3000);

  w.resize(1);
  timers* ts0 = w.r.allp[0]->timers_;
  REQUIRE(ts0->heap.size() == 2);
  CHECK(ts0->heap[0].t == &t2);  // a heap: the earliest first
  CHECK(t1.ts == ts0);
  CHECK(t2.ts == ts0);
  CHECK(w.r.allp[0]->timersLen.peek() == 2);
  CHECK(ts0->minWhenHeap.peek() == 3000);
  CHECK(p2->timers_->heap.empty());
  CHECK(p2->timersLen.peek() == 0);
  CHECK(p2->timers_->minWhenHeap.peek() == 0);
}

TEST_CASE("procresize grows past the constructor's count and brings destroyed Ps back", "[maxprocs]") {
  OnM0 w(2);
  REQUIRE(w.resize(2) == nullptr);
  p* p1 = w.r.allp[1];
  w.resize(6);
  REQUIRE(w.r.allp.size() == 6);
  for (int32_t i = 0; i < 6; i++) CHECK(w.r.allp[static_cast<size_t>(i)]->id == i);
  CHECK(w.r.allp[1] == p1);
  CHECK(w.r.sched.npidle.peek() == 5);  // every P but m0's is idle
  for (uint32_t i = 1; i < 6; i++) CHECK(w.r.idlepMask.read(i));
  CHECK(w.r.stealOrder.count == 6);
  p* p5 = w.r.allp[5];

  // Shrink with an idle P among the destroyed, then grow again: the same P structs return.
  w.resize(2);
  CHECK(p5->status.peek() == _Pdead);
  CHECK(w.r.sched.npidle.peek() == 1);
  w.resize(6);
  CHECK(w.r.allp[5] == p5);
  CHECK(p5->status.peek() == _Pidle);
  CHECK(w.r.sched.npidle.peek() == 5);

  // A P that stays and has work comes back as runnable, without an M (none is idle).
  g gp;
  w.r.runqput(w.r.allp[2], &gp, false);
  p* runnable = w.resize(3);
  REQUIRE(runnable == w.r.allp[2]);
  CHECK(runnable->link == nullptr);
  CHECK(runnable->m.peek() == nullptr);
  CHECK(w.r.sched.npidle.peek() == 1);
}

TEST_CASE("procresize moves a goroutine whose P goes away to P 0", "[maxprocs]") {
  OnM0 w(4);
  REQUIRE(w.resize(4) == nullptr);
  // m0 runs on P 3 instead of P 0, as a goroutine that stops the world from P 3 would.
  p* p3 = w.r.allp[3];
  lock(&w.r.sched.lock);
  for (;;) {
    p* pp = w.r.pidleget(0).first;
    if (pp == nullptr) break;
    pp->status.set(_Pgcstop);
  }
  unlock(&w.r.sched.lock);
  p* p0 = w.r.releasep();
  p0->status.set(_Pgcstop);
  p3->status.set(_Pidle);
  w.r.acquirep(p3);

  w.resize(2);
  CHECK(w.r.m0->p == w.r.allp[0]);
  CHECK(w.r.allp[0]->m.peek() == w.r.m0);
  CHECK(p3->status.peek() == _Pdead);
}

TEST_CASE("adjustCgroupGOMAXPROCS rounds the limit up to at least 2 and never above the CPUs", "[maxprocs]") {
  // cgroup_linux_test.go's TestCgroupGOMAXPROCSRound (quota / period 100000) on 8 CPUs.
  CHECK(adjustCgroupGOMAXPROCS(8, {true, 200001.0 / 100000.0}) == 3);
  CHECK(adjustCgroupGOMAXPROCS(8, {true, 2.5}) == 3);
  CHECK(adjustCgroupGOMAXPROCS(8, {true, 299999.0 / 100000.0}) == 3);
  CHECK(adjustCgroupGOMAXPROCS(8, {true, 0.5}) == 2);
  CHECK(adjustCgroupGOMAXPROCS(8, {true, 1.0}) == 2);
  CHECK(adjustCgroupGOMAXPROCS(8, {true, 1.5}) == 2);
  CHECK(adjustCgroupGOMAXPROCS(8, {true, 3.0}) == 3);  // TestCgroupGOMAXPROCS
  // A limit above the CPUs, or none: the CPUs.
  CHECK(adjustCgroupGOMAXPROCS(8, {true, 100.0}) == 8);
  CHECK(adjustCgroupGOMAXPROCS(8, {false, 0.0}) == 8);
  CHECK(adjustCgroupGOMAXPROCS(8, {true, 1e12}) == 8);
  // The floor of 2 is not above the CPUs: one CPU stays one (TestCgroupGOMAXPROCSSchedAffinity
  // keeps 2 CPUs under a 3-CPU limit).
  CHECK(adjustCgroupGOMAXPROCS(1, {true, 0.5}) == 1);
  CHECK(adjustCgroupGOMAXPROCS(2, {true, 3.0}) == 2);
}

TEST_CASE("defaultGOMAXPROCS reads the affinity and the limit, and containermaxprocs=0 ignores the limit",
          "[maxprocs]") {
  CpuHost host(8, CPULimit{true, 2.5});
  Runtime r(1);
  r.host = &host;
  r.ncpu = 64;  // the machine: the affinity, not this, is the CPU count
  r.defaultGOMAXPROCSInit();
  CHECK(r.getCPUCount() == 8);
  CHECK(r.defaultGOMAXPROCS(0) == 3);
  CHECK(r.defaultGOMAXPROCS(4) == 3);  // a given CPU count instead of the affinity
  r.maxprocsSettings.containermaxprocs = 0;
  r.defaultGOMAXPROCSInit();
  CHECK(r.defaultGOMAXPROCS(0) == 8);
}

namespace {

// 16 workers computing and 8 sleeping (their timers on the Ps that go away) while main changes
// GOMAXPROCS 4 -> 1 -> 3; every one must finish.
constexpr char kResize[] = R"(
waitgroup { name: "wg" }
func { name: "main"
  op { add { wg: "wg" n: 24 } }
  op { loop { count: 16 op { go { func: "work" } } } }
  op { loop { count: 8 op { go { func: "nap" } } } }
  op { sleep { duration: "2ms" } }
  op { gomaxprocs { n: 1 } }
  op { sleep { duration: "2ms" } }
  op { gomaxprocs { n: 3 } }
  op { wait { wg: "wg" } }
}
func { name: "work"
  op { loop { count: 40 op { compute { duration: "50us" } } op { gosched {} } } }
  op { done { wg: "wg" } }
}
func { name: "nap"
  op { loop { count: 40 op { sleep { duration: "150us" } } op { compute { duration: "10us" } } } }
  op { done { wg: "wg" } }
}
)";

}  // namespace

TEST_CASE("gomaxprocs 4 -> 1 -> 3 loses no goroutine and leaves 3 Ps", "[maxprocs]") {
  const engine::SimResult r = run(kResize, 4);
  INFO(r.message);
  REQUIRE(r.stop == engine::Engine::Stop::Exit);
  CHECK(r.procs_end == 3);
  CHECK(r.procs_changes == 2);
  CHECK(event_count(r, "GoEnd") >= 24);
  CHECK(r.gc.stwCount == 2);
  // Utilisation for every P that existed: 4; P 3 ran only before the shrink.
  REQUIRE(r.utilisation.size() == 4);
  for (double u : r.utilisation) CHECK((u > 0.0 && u <= 1.0));
}

TEST_CASE("a goroutine that shrinks GOMAXPROCS below its own P continues on P 0 and the trace stays consistent",
          "[maxprocs]") {
  // The changer is stolen by another P while main computes, and changes GOMAXPROCS from there.
  constexpr char kChanger[] = R"(
waitgroup { name: "wg" }
func { name: "main"
  op { add { wg: "wg" n: 9 } }
  op { go { func: "changer" } }
  op { compute { duration: "200us" } }
  op { loop { count: 8 op { go { func: "work" } } } }
  op { wait { wg: "wg" } }
}
func { name: "work"
  op { loop { count: 40 op { compute { duration: "50us" } } op { gosched {} } } }
  op { done { wg: "wg" } }
}
func { name: "changer"
  op { compute { duration: "1ms" } }
  op { gomaxprocs { n: 1 } }
  op { compute { duration: "1ms" } }
  op { gomaxprocs { n: 4 } }
  op { done { wg: "wg" } }
}
)";
  TempDir dir("gmp_maxprocs");
  engine::SimConfig cfg;
  cfg.trace_path = dir.file("changer.trace");
  const engine::SimResult r = run(kChanger, 4, cfg);
  REQUIRE(r.stop == engine::Engine::Stop::Exit);
  CHECK(r.procs_changes == 2);
  CHECK(r.procs_end == 4);
  const trace::Validator v = trace::validate_file(cfg.trace_path);
  CHECK(v.issue_count() == 0);
  // The stop began on a P other than 0, and the changer was started on P 0 inside it.
  trace::TraceReader reader(cfg.trace_path);
  int64_t stw_p = -1;
  int64_t stw_g = 0;
  bool moved = false;
  for (trace::Event e; reader.next(e);) {
    if (e.kind() == trace::KIND_STW_BEGIN && stw_p < 0) {
      stw_p = e.p();
      stw_g = e.g();
    }
    if (e.kind() == trace::KIND_GO_START && stw_p > 0 && e.g() == stw_g && e.p() == 0) moved = true;
  }
  CHECK(stw_p > 0);
  CHECK(moved);
}

TEST_CASE("runtime.GOMAXPROCS(0) and GOMAXPROCS(current) do not stop the world", "[maxprocs]") {
  constexpr char kQuery[] = R"(
func { name: "main" op { gomaxprocs { n: 0 } } op { gomaxprocs { n: 2 } } op { compute { duration: "10us" } } }
)";
  const engine::SimResult r = run(kQuery, 2);
  REQUIRE(r.stop == engine::Engine::Stop::Exit);
  CHECK(r.gc.stwCount == 0);
  CHECK(r.procs_changes == 0);
  CHECK(r.procs_end == 2);
}

namespace {

// main sleeps for 6 s of virtual time, while the cgroup's quota changes.
constexpr char kIdle[] = R"(
func { name: "main" op { loop { count: 60 op { sleep { duration: "100ms" } } } } }
)";

engine::CpuGroup autoscaled() {
  engine::CpuGroup g;
  g.quota = -1;  // no limit at first
  g.period = 100'000'000;
  g.changes = {{1 * kSecond, 300'000'000}, {2500'000'000LL, 100'000'000}, {4 * kSecond, -1}};
  return g;
}

engine::ProcessConfig auto_procs() {
  engine::ProcessConfig pc;
  pc.procs = 8;
  pc.procs_auto = true;
  return pc;
}

}  // namespace

TEST_CASE("sysmon applies a quota change mid-run: 8 -> 3 -> 2 -> 8", "[maxprocs]") {
  const engine::SimResult r = run_in_group(kIdle, 8, autoscaled(), auto_procs());
  REQUIRE(r.stop == engine::Engine::Stop::Exit);
  CHECK(r.procs_changes == 3);
  CHECK(r.procs_end == 8);
  CHECK(r.gc.stwCount == 3);
}

TEST_CASE("procs auto starts at the quota's default and the updates stop with updatemaxprocs=0", "[maxprocs]") {
  engine::CpuGroup g;
  g.quota = 250'000'000;  // 2.5 CPUs
  g.changes = {{1 * kSecond, -1}};
  engine::ProcessConfig pc = auto_procs();
  SECTION("updates on: 3 from the start, 8 once the limit is gone") {
    const engine::SimResult r = run_in_group(kIdle, 8, g, pc);
    REQUIRE(r.stop == engine::Engine::Stop::Exit);
    CHECK(r.procs == 3);          // schedinit's choice is the start, not a change
    CHECK(r.procs_changes == 1);  // -> 8 after 1 s
    CHECK(r.procs_end == 8);
  }
  SECTION("updatemaxprocs=0: 3 for good") {
    pc.updatemaxprocs = 0;
    const engine::SimResult r = run_in_group(kIdle, 8, g, pc);
    REQUIRE(r.stop == engine::Engine::Stop::Exit);
    CHECK(r.procs == 3);
    CHECK(r.procs_changes == 0);
    CHECK(r.procs_end == 3);
    CHECK(r.gc.stwCount == 0);
  }
  SECTION("containermaxprocs=0: the CPUs, and the quota's changes are not seen") {
    pc.containermaxprocs = 0;
    const engine::SimResult r = run_in_group(kIdle, 8, g, pc);
    REQUIRE(r.stop == engine::Engine::Stop::Exit);
    CHECK(r.procs_changes == 0);
    CHECK(r.procs_end == 8);
  }
  SECTION("an explicit GOMAXPROCS: no default and no updates") {
    pc.procs_auto = false;
    pc.procs = 5;
    const engine::SimResult r = run_in_group(kIdle, 8, g, pc);
    REQUIRE(r.stop == engine::Engine::Stop::Exit);
    CHECK(r.procs_changes == 0);
    CHECK(r.procs_end == 5);
  }
}

TEST_CASE("runtime.GOMAXPROCS(n) turns the automatic updates off", "[maxprocs]") {
  constexpr char kSet[] = R"(
func { name: "main" op { gomaxprocs { n: 5 } } op { loop { count: 30 op { sleep { duration: "100ms" } } } } }
)";
  engine::CpuGroup g;
  g.quota = -1;
  g.changes = {{1 * kSecond, 200'000'000}};
  const engine::SimResult r = run_in_group(kSet, 8, g, auto_procs());
  REQUIRE(r.stop == engine::Engine::Stop::Exit);
  CHECK(r.procs_changes == 1);  // 8 -> 5 by hand, then nothing
  CHECK(r.procs_end == 5);
}

TEST_CASE("each P's utilisation is over the time it existed when GOMAXPROCS changes", "[maxprocs]") {
  engine::Metrics m(2);
  g gp0, gp3;
  p p0, p3;
  p0.id = 0;
  p3.id = 3;
  m.on_event(Ev::GoStart, &gp0, &p0, 0, 0);
  m.on_event(Ev::ProcsChange, nullptr, nullptr, 4, 100);  // Ps 2 and 3 from t=100
  m.on_event(Ev::GoStart, &gp3, &p3, 0, 100);
  m.on_event(Ev::GoPark, &gp3, &p3, 0, 150);
  m.on_event(Ev::ProcsChange, nullptr, nullptr, 1, 300);  // only P 0 from t=300
  m.on_event(Ev::GoPark, &gp0, &p0, 0, 350);
  m.finish(400);
  const std::vector<double> u = m.utilisation();
  REQUIRE(u.size() == 4);
  CHECK(u[0] == Approx(350.0 / 400.0));
  CHECK(u[1] == 0.0);                   // existed 300 ns, ran nothing
  CHECK(u[3] == Approx(50.0 / 200.0));  // existed from 100 to 300
  CHECK(m.count(Ev::ProcsChange) == 2);
}

TEST_CASE("procs auto through simulate: the cpuset's CPUs, then the quota's changes", "[maxprocs]") {
  engine::SimConfig cfg;
  cfg.procs_auto = true;
  cfg.cores = 8;
  SECTION("a cpuset of 2 cores under a 3-CPU quota: 2 (TestCgroupGOMAXPROCSSchedAffinity)") {
    cfg.cgroup.quota = 300'000'000;
    cfg.cgroup.cpuset = {0, 1};
    const engine::SimResult r = run(kIdle, 8, cfg);
    REQUIRE(r.stop == engine::Engine::Stop::Exit);
    CHECK(r.procs == 2);          // not --procs' 8: schedinit's choice
    CHECK(r.procs_end == 2);
    CHECK(r.procs_changes == 0);
  }
  SECTION("an autoscaled quota: 8 -> 3 -> 2 -> 8") {
    const engine::CpuGroup g = autoscaled();
    cfg.cgroup.quota = g.quota;
    for (const auto& ch : g.changes) cfg.cgroup.changes.push_back({ch.at, ch.quota});
    TempDir dir("gmp_maxprocs");
    cfg.trace_path = dir.file("auto.trace");
    const engine::SimResult r = run(kIdle, 8, cfg);
    REQUIRE(r.stop == engine::Engine::Stop::Exit);
    CHECK(r.procs_changes == 3);
    CHECK(r.procs_end == 8);
    // Each change is applied within sysmon's second (plus its deep sleep, here at most the
    // 100 ms until main's next timer) of the quota's change.
    std::vector<std::pair<int64_t, int64_t>> procs;  // (time, value)
    trace::TraceReader reader(cfg.trace_path);
    for (trace::Event e; reader.next(e);) {
      if (e.kind() == trace::KIND_PROCS) procs.emplace_back(e.ts(), static_cast<int64_t>(e.value()));
    }
    REQUIRE(procs.size() == 3);
    const int64_t at[] = {1 * kSecond, 2500'000'000LL, 4 * kSecond};
    const int64_t want[] = {3, 2, 8};
    for (size_t i = 0; i < 3; i++) {
      INFO("change " << i << " at " << procs[i].first);
      CHECK(procs[i].second == want[i]);
      CHECK(procs[i].first >= at[i]);
      CHECK(procs[i].first <= at[i] + kSecond + 100'000'000);
    }
  }
}
