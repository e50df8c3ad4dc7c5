// Several processes on one simulated machine (simulate with Scenario::processes): each runs its
// own program with its own results, a process that exits leaves the others running, the run waits
// for every process that is not a daemon, and the cgroups (the scenario's, or --cpu-quota's for a
// single process) reach the engine and the results. The scenarios are built by hand: a program per
// process, parsed from text, under a machine scenario that lists them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/cost/profile.h"
#include "sim/engine/chooser.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation/simulation.h"
#include "tests/temp_dir.h"
#include "traces/trace_reader.h"
#include "traces/validate.h"

using namespace gmp;
using namespace gmp::engine;

namespace {

constexpr int64_t kMs = 1'000'000;

// main computes for `ms` milliseconds and returns (the program exits with status 0).
std::string compute_program(int ms) {
  return "func { name: \"main\" op { compute { ns: " + std::to_string(ms * kMs) + " } } }\n";
}

// A server that never exits: it wakes every millisecond, forever.
constexpr char kForever[] = R"(
func { name: "main" op { loop { forever: true op { sleep { duration: "1ms" } } } } }
)";

scenario::ProcessSpec spec(const std::string& name, const std::string& text, bool daemon = false) {
  scenario::ProcessSpec p;
  p.name = name;
  p.procs = 1;
  p.daemon = daemon;
  p.program = std::make_shared<const scenario::Scenario>(scenario::parse_scenario(text, name + ".textproto"));
  return p;
}

scenario::Scenario machine(std::vector<scenario::ProcessSpec> procs) {
  scenario::Scenario sc;
  sc.source = "machine.textproto";
  sc.processes = std::move(procs);
  return sc;
}

SimConfig two_cores() {
  SimConfig cfg;
  cfg.cores = 2;
  cfg.time_limit = 10'000 * kMs;
  return cfg;
}

// Takes the first enabled step always: a plain order for the choice driver.
class First final : public Chooser {
 public:
  size_t choose(std::span<const Step>, uint32_t, const PointInfo&) override { return 0; }
};

}  // namespace

TEST_CASE("two processes on two cores both run and finish with their own results", "[machine]") {
  const scenario::Scenario sc = machine({spec("a", compute_program(20)), spec("b", compute_program(30))});
  const SimResult r = simulate(sc, cost::default_profile(), two_cores());
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.processes.size() == 2);
  const SimResult& a = r.processes[0];
  const SimResult& b = r.processes[1];
  CHECK(a.process == "a");
  CHECK(b.process == "b");
  CHECK(a.exited);
  CHECK(b.exited);
  // Each computed its own work: 20 ms and 30 ms at least, on its own P.
  CHECK(a.exit_time >= 20 * kMs);
  CHECK(b.exit_time >= 30 * kMs);
  CHECK(a.lat_samples > 0);
  CHECK(b.lat_samples > 0);
  REQUIRE(a.utilisation.size() == 1);
  REQUIRE(b.utilisation.size() == 1);
  // On two cores they ran side by side: the run ends with b, well before the 50 ms the two would
  // take one after the other.
  CHECK(r.end_time >= 30 * kMs);
  CHECK(r.end_time < 45 * kMs);
  CHECK(a.exit_time < b.exit_time);
  // Each process draws its own seed; the first keeps the run's.
  CHECK(a.seed == r.seed);
  CHECK(b.seed != r.seed);
}

TEST_CASE("a process that exits leaves the other running", "[machine]") {
  const scenario::Scenario sc = machine({spec("short", compute_program(5)), spec("long", compute_program(40))});
  const SimResult r = simulate(sc, cost::default_profile(), two_cores());
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.processes.size() == 2);
  CHECK(r.processes[0].exited);
  CHECK(r.processes[0].exit_time < 10 * kMs);
  CHECK(r.processes[1].exited);
  CHECK(r.processes[1].exit_time >= 40 * kMs);
  CHECK(r.end_time >= 40 * kMs);
}

TEST_CASE("an exited process's threads stop using the cores", "[machine]") {
  // One core, kept busy while anything can run. Process a (GOMAXPROCS 2) starts a goroutine that
  // computes forever on its second M, computes 5 ms in main and returns; b computes 20 ms. Once a
  // has exited, its spinner must stop: the core then has 25 ms of work in all (plus the runtimes'
  // own), so b ends near 25 ms. Were the spinner to go on, b would share the core with it after a's
  // exit and end near 45 ms.
  constexpr char kSpinner[] = R"(
func { name: "main" op { go { func: "spin" } } op { compute { duration: "5ms" } } }
func { name: "spin" op { loop { forever: true op { compute { duration: "1ms" } } } } }
)";
  SimConfig cfg = two_cores();
  cfg.cores = 1;
  scenario::ProcessSpec a = spec("a", kSpinner);
  a.procs = 2;
  const scenario::Scenario sc = machine({a, spec("b", compute_program(20))});
  const SimResult r = simulate(sc, cost::default_profile(), cfg);
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.processes.size() == 2);
  CHECK(r.processes[0].exited);
  CHECK(r.processes[0].exit_time >= 5 * kMs);
  CHECK(r.processes[1].exit_time >= 25 * kMs);
  CHECK(r.processes[1].exit_time < 28 * kMs);
}

TEST_CASE("a daemon process does not keep the run alive", "[machine]") {
  const scenario::Scenario sc = machine({spec("server", kForever, /*daemon=*/true), spec("client", compute_program(10))});
  const SimResult r = simulate(sc, cost::default_profile(), two_cores());
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.processes.size() == 2);
  CHECK_FALSE(r.processes[0].exited);
  CHECK(r.processes[0].daemon);
  CHECK(r.processes[1].exited);
  CHECK(r.end_time == r.processes[1].exit_time);
  CHECK(r.end_time < 20 * kMs);
  // The server ran meanwhile: it woke about every millisecond.
  CHECK(r.processes[0].lat_samples >= 5);
}

TEST_CASE("a process that is no daemon keeps the run alive", "[machine]") {
  SimConfig cfg = two_cores();
  cfg.time_limit = 50 * kMs;
  const scenario::Scenario sc = machine({spec("server", kForever), spec("client", compute_program(10))});
  const SimResult r = simulate(sc, cost::default_profile(), cfg);
  CHECK(r.stop == Engine::Stop::TimeLimit);
  REQUIRE(r.processes.size() == 2);
  CHECK(r.processes[1].exited);
  CHECK_FALSE(r.processes[0].exited);
}

TEST_CASE("under the choice driver an exited process's threads take no more steps", "[machine]") {
  // Choice mode has no costs: computes end by choice, and First always takes the lowest thread
  // first. The second process still finishes after the first exited.
  First chooser;
  SimConfig cfg;
  cfg.cores = 2;
  cfg.chooser = &chooser;
  cfg.event_limit = 200'000;
  const scenario::Scenario sc = machine({spec("a", compute_program(1)), spec("b", compute_program(1))});
  const SimResult r = simulate(sc, cost::default_profile(), cfg);
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.processes.size() == 2);
  CHECK(r.processes[0].exited);
  CHECK(r.processes[1].exited);
}

TEST_CASE("a cpu quota on a single process gives it a cgroup", "[machine]") {
  SimConfig cfg = two_cores();
  cfg.cgroup.quota = 50 * kMs;
  cfg.cgroup.period = 100 * kMs;
  const scenario::Scenario sc = scenario::parse_scenario(compute_program(5), "one.textproto");
  const SimResult r = simulate(sc, cost::default_profile(), cfg);
  CHECK(r.stop == Engine::Stop::Exit);
  CHECK(r.processes.empty());
  CHECK(r.cpu_quota == 50 * kMs);
  CHECK(r.cpu_period == 100 * kMs);
  SimConfig none = two_cores();
  const SimResult plain = simulate(sc, cost::default_profile(), none);
  CHECK(plain.cpu_quota == -1);
}

TEST_CASE("each process reports its own cgroup", "[machine]") {
  scenario::ProcessSpec a = spec("a", compute_program(5));
  a.cgroup.quota = 150 * kMs;
  a.cgroup.period = 100 * kMs;
  const scenario::Scenario sc = machine({a, spec("b", compute_program(5))});
  const SimResult r = simulate(sc, cost::default_profile(), two_cores());
  REQUIRE(r.processes.size() == 2);
  CHECK(r.processes[0].cpu_quota == 150 * kMs);
  CHECK(r.processes[1].cpu_quota == -1);
}

TEST_CASE("a cgroup the machine cannot hold is refused before anything is written", "[machine]") {
  TempDir dir;
  const std::string path = dir.file("t.gmptrace");
  SimConfig cfg = two_cores();
  cfg.trace_path = path;
  scenario::ProcessSpec a = spec("a", compute_program(1));
  a.cgroup.cpuset = {0, 2};  // the machine has cores 0 and 1
  const scenario::Scenario bad_set = machine({a, spec("b", compute_program(1))});
  CHECK_THROWS_AS(simulate(bad_set, cost::default_profile(), cfg), SimConfigError);
  CHECK_THROWS_WITH(check_machine(bad_set, cost::default_profile(), cfg), Catch::Contains("core 2"));
  CHECK_FALSE(std::filesystem::exists(path));
  SimConfig quota = cfg;
  quota.cgroup.quota = 300 * kMs;  // 3 CPUs on 2 cores
  const scenario::Scenario one = scenario::parse_scenario(compute_program(1), "one.textproto");
  CHECK_THROWS_AS(simulate(one, cost::default_profile(), quota), SimConfigError);
  CHECK_FALSE(std::filesystem::exists(path));
  quota.cgroup.quota = 200 * kMs;  // every core: allowed
  CHECK_NOTHROW(check_machine(one, cost::default_profile(), quota));
}

TEST_CASE("a trace of several processes lists them with their quotas", "[machine][trace]") {
  TempDir dir;
  const std::string path = dir.file("t.gmptrace");
  SimConfig cfg = two_cores();
  cfg.trace_path = path;
  scenario::ProcessSpec a = spec("a", compute_program(2));
  a.cgroup.quota = 50 * kMs;
  a.cgroup.period = 100 * kMs;
  const scenario::Scenario sc = machine({a, spec("b", compute_program(2))});
  simulate(sc, cost::default_profile(), cfg);
  trace::TraceReader rd(path);
  const trace::Header& h = rd.header();
  REQUIRE(h.processes_size() == 2);
  CHECK(h.processes(0).name() == "a");
  CHECK(h.processes(0).cpu_quota() == Approx(0.5));
  CHECK(h.processes(0).cpu_period() == 100 * kMs);
  CHECK(h.processes(1).name() == "b");
  CHECK(h.processes(1).cpu_quota() == 0);
  bool saw1 = false;
  trace::Event e;
  while (rd.next(e)) saw1 |= e.process() == 1;
  CHECK(saw1);
}

TEST_CASE("each process's cpu.stat is its own group's", "[machine][cfs]") {
  // Quota 0.5 CPU per 100 ms period: process a's 80 ms of computing runs 50 ms in the first
  // period, is throttled until the refill at 100 ms, and finishes its last 30 ms by about 130 ms
  // (the runtime's own threads share the quota, and the pool is handed out in 5 ms slices, so a
  // few ms either way). cpu.stat counts a period when it ends: one by then, throttled. b, with no
  // quota, computes 10 ms on the other core and has no cpu.stat.
  scenario::ProcessSpec a = spec("a", compute_program(80));
  a.cgroup.quota = 50 * kMs;
  a.cgroup.period = 100 * kMs;
  const scenario::Scenario sc = machine({a, spec("b", compute_program(10))});
  const SimResult r = simulate(sc, cost::default_profile(), two_cores());
  REQUIRE(r.processes.size() == 2);
  const SimResult& pa = r.processes[0];
  const SimResult& pb = r.processes[1];
  CHECK(pa.cpu_stat.nr_throttled == 1);
  CHECK(pa.cpu_stat.nr_periods == 1);
  CHECK(pa.cpu_stat.throttled_time >= 40 * kMs);
  CHECK(pa.cpu_stat.throttled_time <= 55 * kMs);
  CHECK(pa.exit_time >= 130 * kMs);
  CHECK(pa.exit_time < 140 * kMs);
  CHECK(pb.cpu_stat.nr_periods == 0);
  CHECK(pb.cpu_stat.usage == 0);
  CHECK(pb.exit_time < 15 * kMs);
}

namespace {
// A server (a daemon that blocks in main once it has started a handler per connection) and a
// closed-loop client process that dials it with 4 connections and makes 50 round trips on each.
constexpr char kClientServer[] = R"(
process {
  name: "server"
  daemon: true
  program {
    conn { name: "c" conns: 4 }
    listener { name: "ln" conn: "c" }
    chan { name: "never" }
    func { name: "main"
      op { loop { count: 4 op { accept { listener: "ln" var: "i" } } op { go { func: "handle" arg: "i" } } } }
      op { recv { chan: "never" } }
    }
    func { name: "handle" param: "i"
      op { loop { forever: true
        op { read { conn: "c" index: "i" } }
        op { compute { duration: "20us" } }
        op { write { conn: "c" index: "i" } } } }
    }
  }
}
process {
  name: "client"
  procs: 1
  program {
    conn { name: "c" conns: 4 dial: "server.ln" }
    waitgroup { name: "wg" }
    func { name: "main"
      op { add { wg: "wg" n: 4 } }
      op { loop { count: 4 var: "k" op { go { func: "client" arg: "k" } } } }
      op { wait { wg: "wg" } }
    }
    func { name: "client" param: "k"
      op { loop { count: 50
        op { write { conn: "c" index: "k" } }
        op { read { conn: "c" index: "k" } } } }
      op { close { conn: "c" index: "k" } }
      op { done { wg: "wg" } }
    }
  }
}
)";
}  // namespace

TEST_CASE("a client process drives a server process over dialled connections", "[machine][net]") {
  const scenario::Scenario sc = scenario::parse_scenario(kClientServer, "client-server.textproto");
  REQUIRE(sc.processes.size() == 2);
  const SimResult r = simulate(sc, cost::default_profile(), two_cores());
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.processes.size() == 2);
  const SimResult& server = r.processes[0];
  const SimResult& client = r.processes[1];
  CHECK_FALSE(server.exited);
  CHECK(client.exited);
  // Every request the client wrote reached the server and was answered; every answer came back.
  CHECK(server.requests == 200);
  CHECK(server.answered == 200);
  CHECK(client.client_requests == 200);
  CHECK(client.client_answered == 200);
  // A round trip includes the server's 20 us of work.
  CHECK(client.client_p50 >= 20'000);
  // 200 requests of 20 us on the server's two Ps take at least 2 ms; with one request in flight
  // per connection and 4 connections the run cannot take more than a few ms per request either.
  CHECK(r.end_time >= 2 * kMs);
  CHECK(r.end_time < 100 * kMs);
}

TEST_CASE("a write by one process wakes the other's idle poller", "[machine][net]") {
  // The server has nothing to do until the client, after sleeping 5 ms, writes one request: its Ms
  // are parked and its poller is blocked in netpoll with no deadline. The delivery must wake it
  // (the network's wake callback is the server runtime's netpollBreak), so the round trip takes
  // the server's 20 us of work plus wake-ups, far below a millisecond; without the wake nothing
  // wakes the poller and the run reaches its time limit.
  constexpr char kIdle[] = R"(
process {
  name: "server"
  daemon: true
  program {
    conn { name: "c" conns: 1 }
    listener { name: "ln" conn: "c" }
    func { name: "main"
      op { accept { listener: "ln" var: "i" } }
      op { loop { forever: true
        op { read { conn: "c" index: "i" } }
        op { compute { duration: "20us" } }
        op { write { conn: "c" index: "i" } } } }
    }
  }
}
process {
  name: "client"
  procs: 1
  program {
    conn { name: "c" conns: 1 dial: "server.ln" }
    func { name: "main"
      op { sleep { duration: "5ms" } }
      op { write { conn: "c" index: "0" } }
      op { read { conn: "c" index: "0" } }
    }
  }
}
)";
  const scenario::Scenario sc = scenario::parse_scenario(kIdle, "idle.textproto");
  const SimResult r = simulate(sc, cost::default_profile(), two_cores());
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.processes.size() == 2);
  const SimResult& client = r.processes[1];
  CHECK(client.client_answered == 1);
  CHECK(client.client_max >= 20'000);
  CHECK(client.client_max < 1 * kMs);
}

TEST_CASE("a busy client process whose writes wake the server keeps running its own goroutines", "[machine][net]") {
  // 42 connections into a server of 2 Ps from a client of 8: the client's writes wake the server's
  // poller (netpollBreak) while other client threads are ready, so the engine switches between the
  // client's own threads inside a wake. Those threads must run on the client's runtime: a wake that
  // made the server's runtime current for its duration ran client goroutines on the server's
  // interpreter (a segmentation fault).
  std::string text = kClientServer;
  auto replace = [&text](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  };
  replace("conns: 4", "conns: 42");
  replace("count: 4 ", "count: 42 ");
  replace("n: 4 ", "n: 42 ");
  replace("count: 50", "count: 20");
  replace("procs: 1", "procs: 8");
  const scenario::Scenario sc = scenario::parse_scenario(text, "busy-client.textproto");
  engine::SimConfig cfg = two_cores();
  cfg.procs = 2;
  cfg.cores = 4;
  const SimResult r = simulate(sc, cost::default_profile(), cfg);
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.processes.size() == 2);
  CHECK(r.processes[0].answered == 840);
  CHECK(r.processes[1].client_answered == 840);
}

TEST_CASE("a quota-bound server's trace stays in time order with its throttles", "[machine][cfs]") {
  // The echo server under 0.5 CPU on the fitted 2-core VM (affine placement): its threads are
  // throttled at the end of their runtime, and threads woken onto a throttled queue are parked
  // from their wake-up time, which the OS's wake-up latency puts after the waker's clock. The
  // parking's THROTTLE_BEGIN was stamped with that later time and written before events of other
  // threads that came earlier ("time goes back" in the validator).
  std::ifstream in(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/containers-echo-closed.textproto");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(text.find("quota: 1 ") != std::string::npos);
  text.replace(text.find("quota: 1 "), 9, "quota: 0.5 ");
  REQUIRE(text.find("count: 1500") != std::string::npos);
  text.replace(text.find("count: 1500"), 11, "count: 300");
  const scenario::Scenario sc = scenario::parse_scenario(text, "echo-closed.textproto");
  const cost::Profile prof = cost::load_profile(std::string(GMP_SOURCE_DIR) + "/sim/cost/profiles/epyc-vm-fitted.textproto");
  TempDir dir;
  SimConfig cfg = two_cores();
  cfg.procs = 2;
  cfg.trace_path = dir.file("echo.trace");
  const SimResult r = simulate(sc, prof, cfg);
  REQUIRE(r.stop == Engine::Stop::Exit);
  REQUIRE(r.processes.size() == 2);
  CHECK(r.processes[0].cpu_stat.nr_throttled >= 2);
  const trace::Validator v = trace::validate_file(cfg.trace_path);
  CHECK(v.issue_count() == 0);
}
