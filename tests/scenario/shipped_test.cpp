// The scenarios shipped in sim/scenarios load, compile, and have the shape their header comments
// promise.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <utility>

#include "sim/scenario/scenario.h"

using namespace gmp::scenario;

namespace {

Scenario load(const std::string& name) {
  return load_scenario(std::string(GMP_SCENARIOS_DIR) + "/" + name);
}

// The measured loop, checked to live in main.
const Loop& measured(const Scenario& s, const std::string& benchmark) {
  REQUIRE(s.benchmark.has_value());
  CHECK(s.benchmark->name == benchmark);
  const Loop& l = s.loops.at(s.benchmark->loop);
  CHECK(l.func == s.entry);
  return l;
}

// The instructions of a function with the given opcode.
std::vector<Instr> with(const Function& f, Opcode op) {
  std::vector<Instr> out;
  for (const Instr& in : f.code) {
    if (in.op == op) out.push_back(in);
  }
  return out;
}

}  // namespace

TEST_CASE("pingpong: a round trip over two unbuffered channels is the operation") {
  Scenario s = load("pingpong.textproto");
  const Loop& l = measured(s, "BenchmarkPingPong");
  CHECK(l.kind == LoopKind::Count);
  REQUIRE(s.chans.size() == 2);
  for (const Channel& c : s.chans) CHECK(c.capacity == 0);
  const Function& main = s.funcs.at(s.entry);
  // The loop body is one send and one receive, on different channels.
  std::vector<Instr> body(main.code.begin() + l.begin + 1, main.code.begin() + l.end - 1);
  REQUIRE(body.size() == 2);
  CHECK(body[0].op == Opcode::Send);
  CHECK(body[1].op == Opcode::Recv);
  CHECK(body[0].obj != body[1].obj);
  // main starts the echo goroutine, which ranges over ping.
  REQUIRE(with(main, Opcode::Go).size() == 1);
  const Function& echo = s.funcs.at(with(main, Opcode::Go)[0].obj);
  REQUIRE(with(echo, Opcode::RangeRecv).size() == 1);
  CHECK(with(echo, Opcode::RangeRecv)[0].obj == body[0].obj);
}

TEST_CASE("cpu: b.RunParallel over cpuWork(20000), given in iterations") {
  Scenario s = load("cpu.textproto");
  const Loop& l = measured(s, "BenchmarkCPU");
  CHECK(l.kind == LoopKind::Parallel);
  const Instr& parallel = s.funcs.at(s.entry).code.at(l.begin);
  REQUIRE(parallel.op == Opcode::Parallel);
  std::vector<Instr> work = with(s.funcs.at(parallel.obj), Opcode::Compute);
  REQUIRE(work.size() == 1);
  CHECK(work[0].iterations == 20000);
  CHECK(work[0].ns == 0);
}

TEST_CASE("goroutines: 10,000 goroutines each sum 0..999, then main waits on the WaitGroup") {
  Scenario s = load("goroutines.textproto");
  CHECK(measured(s, "BenchmarkGoroutines10000").kind == LoopKind::Count);
  const Function& main = s.funcs.at(s.entry);
  REQUIRE(with(main, Opcode::WgAdd).size() == 1);
  CHECK(with(main, Opcode::WgAdd)[0].count == 10000);
  REQUIRE(with(main, Opcode::WgWait).size() == 1);
  // The spawn loop runs go 10,000 times.
  std::vector<Instr> starts = with(main, Opcode::LoopStart);
  bool spawns = false;
  for (const Instr& in : starts) {
    const Loop& loop = s.loops.at(in.loop);
    spawns |= in.count == 10000 && loop.end - loop.begin == 3 &&
              main.code.at(loop.begin + 1).op == Opcode::Go;
  }
  CHECK(spawns);
  const Function& sum = s.funcs.at(with(main, Opcode::Go)[0].obj);
  REQUIRE(with(sum, Opcode::Compute).size() == 1);
  CHECK(with(sum, Opcode::Compute)[0].iterations == 1000);
  CHECK(with(sum, Opcode::WgDone).size() == 1);
}

TEST_CASE("busypoll: one goroutine posts to a NIC and busy-polls its completions, all through cgo") {
  Scenario s = load("busypoll.textproto");
  const Loop& l = measured(s, "BenchmarkRDMASend");
  CHECK(l.kind == LoopKind::Count);
  // The NIC sends a 64 KB message in 1,337 ns (49,000 MB/s).
  REQUIRE(s.devices.size() == 1);
  CHECK(s.devices[0].service == 1337);
  const Function& main = s.funcs.at(s.entry);
  CHECK(with(main, Opcode::Go).empty());
  // 128 requests go in flight before the measured loop; each turn of it reaps one and posts one.
  const Loop& fill = s.loops.at(main.code.at(0).loop);
  CHECK(main.code.at(0).op == Opcode::LoopStart);
  CHECK(main.code.at(0).count == 128);
  CHECK(fill.end <= l.begin);
  std::vector<Instr> body(main.code.begin() + l.begin + 1, main.code.begin() + l.end - 1);
  REQUIRE(body.size() == 3);
  CHECK(body[0].op == Opcode::BusyPoll);
  CHECK(body[0].device == 0);
  CHECK(body[0].cgo);
  CHECK(body[0].safe_point);  // each cgo call goes through a Go wrapper, whose prologue checks
  CHECK(body[1].op == Opcode::Compute);
  CHECK(body[1].cgo);
  CHECK(body[1].ns == 256);
  CHECK(body[2].op == Opcode::Submit);
  CHECK(body[2].device == 0);
}

TEST_CASE("busypollhog: busypoll's send loop with a CPU-bound goroutine beside it") {
  Scenario s = load("busypollhog.textproto");
  Scenario plain = load("busypoll.textproto");
  const Loop& l = measured(s, "BenchmarkRDMASendHog");
  const Function& main = s.funcs.at(s.entry);
  const Function& plain_main = plain.funcs.at(plain.entry);
  // main starts the hog, then runs busypoll's loops unchanged (the Go op shifts them by one), but
  // for the measured loop's count.
  REQUIRE(with(main, Opcode::Go).size() == 1);
  CHECK(main.code.at(0).op == Opcode::Go);
  REQUIRE(main.code.size() == plain_main.code.size() + 1);
  for (size_t i = 0; i < plain_main.code.size(); i++) {
    INFO("pc " << i);
    const Instr& a = main.code[i + 1];
    const Instr& b = plain_main.code[i];
    CHECK(a.op == b.op);
    CHECK(a.ns == b.ns);
    CHECK(a.cgo == b.cgo);
    CHECK(a.device == b.device);
    if (static_cast<int32_t>(i + 1) != l.begin) CHECK(a.count == b.count);
  }
  CHECK(s.devices.at(0).service == plain.devices.at(0).service);
  CHECK(l.kind == LoopKind::Count);
  // The hog computes forever, with no channel or cgo call.
  const Function& hog = s.funcs.at(main.code.at(0).obj);
  REQUIRE(with(hog, Opcode::Compute).size() == 1);
  CHECK(with(hog, Opcode::Compute)[0].iterations == 1000);
  CHECK_FALSE(with(hog, Opcode::Compute)[0].cgo);
}

TEST_CASE("chanshared: every goroutine of a b.RunParallel sends to and receives from one channel") {
  Scenario s = load("chanshared.textproto");
  const Loop& l = measured(s, "BenchmarkChanShared");
  CHECK(l.kind == LoopKind::Parallel);
  REQUIRE(s.chans.size() == 1);
  CHECK(s.chans[0].capacity == 1024);
  const Instr& parallel = s.funcs.at(s.entry).code.at(l.begin);
  REQUIRE(parallel.op == Opcode::Parallel);
  const Function& body = s.funcs.at(parallel.obj);
  REQUIRE(with(body, Opcode::Send).size() == 1);
  REQUIRE(with(body, Opcode::Recv).size() == 1);
  CHECK(with(body, Opcode::Send)[0].obj == 0);
  CHECK(with(body, Opcode::Recv)[0].obj == 0);
}

TEST_CASE("ring: 64 goroutines of one function with a parameter pass a token around a channel array") {
  Scenario s = load("ring.textproto");
  REQUIRE(s.benchmark.has_value());
  CHECK(s.benchmark->name == "BenchmarkRing");
  REQUIRE(s.benchmark->func >= 0);
  CHECK(s.benchmark->loop == -1);
  CHECK(s.benchmark->n >= 1);
  REQUIRE(s.chans.size() == 1);
  CHECK(s.chans[0].length == 64);
  // The synthesized main runs the benchmark function.
  const Function& main = s.funcs.at(static_cast<size_t>(s.entry));
  REQUIRE(main.code.size() == 1);
  CHECK(main.code[0].op == Opcode::Bench);
  const Function& bench = s.funcs.at(static_cast<size_t>(s.benchmark->func));
  // bench starts node(i) for each i of a counted loop: one Go with one argument, the loop's var.
  REQUIRE(with(bench, Opcode::Go).size() == 1);
  const Instr go = with(bench, Opcode::Go)[0];
  CHECK(go.num_args == 1);
  const Function& node = s.funcs.at(static_cast<size_t>(go.obj));
  CHECK(node.num_params == 1);
  // node's loop runs N times and receives from ring[i], sends to ring[(i+1)%64].
  REQUIRE(with(node, Opcode::LoopStart).size() == 1);
  CHECK(s.exprs.at(static_cast<size_t>(with(node, Opcode::LoopStart)[0].expr)).text == "N");
  REQUIRE(with(node, Opcode::Recv).size() == 1);
  REQUIRE(with(node, Opcode::Send).size() == 1);
  CHECK(s.exprs.at(static_cast<size_t>(with(node, Opcode::Recv)[0].index)).text == "i");
  CHECK(s.exprs.at(static_cast<size_t>(with(node, Opcode::Send)[0].index)).text == "(i+1)%64");
}

TEST_CASE("fanout: b.N split over 8 workers, the timer reset after the setup") {
  Scenario s = load("fanout.textproto");
  REQUIRE(s.benchmark.has_value());
  CHECK(s.benchmark->name == "BenchmarkFanout");
  REQUIRE(s.benchmark->func >= 0);
  const Function& bench = s.funcs.at(static_cast<size_t>(s.benchmark->func));
  // The setup's compute, then reset_timer, before the workers start.
  REQUIRE(bench.code.size() >= 2);
  CHECK(bench.code[0].op == Opcode::Compute);
  CHECK(bench.code[1].op == Opcode::ResetTimer);
  REQUIRE(with(bench, Opcode::WgAdd).size() == 1);
  CHECK(with(bench, Opcode::WgAdd)[0].count == 8);
  const Function& worker = s.funcs.at(static_cast<size_t>(with(bench, Opcode::Go).at(0).obj));
  REQUIRE(with(worker, Opcode::LoopStart).size() == 1);
  CHECK(s.exprs.at(static_cast<size_t>(with(worker, Opcode::LoopStart)[0].expr)).text == "N/8");
}

TEST_CASE("echo: one array of 4 connections, each served by a goroutine of one function") {
  Scenario s = load("echo.textproto");
  REQUIRE(s.conns.size() == 1);
  CHECK(s.conns[0].length == 4);
  CHECK(s.conns[0].count == 5000);
  CHECK(s.conns[0].poisson);
  const Function& main = s.funcs.at(s.entry);
  REQUIRE(with(main, Opcode::Go).size() == 4);
  const Function& serve = s.funcs.at(with(main, Opcode::Go)[0].obj);
  CHECK(serve.num_params == 1);
  REQUIRE(with(serve, Opcode::Read).size() == 1);
  REQUIRE(with(serve, Opcode::Write).size() == 1);
  CHECK(with(serve, Opcode::Read)[0].index >= 0);
}

// docs/network.md: the real echo server of sim/bench/echo at its two rates. Request k of c[i] at
// 1 ms + (i + 16k)/R: stagger 1/R, interval 16/R; 3.5 s of requests, each goroutine serving all
// of its connection's (a loop count other than the connection's would leave a reader parked).
TEST_CASE("echo-loopback: 16 connections at fixed times, read, 15 us, write, 3.5 s") {
  for (const auto& [name, rate] : {std::pair<const char*, double>{"echo-loopback-5500.textproto", 5500},
                                   std::pair<const char*, double>{"echo-loopback-13800.textproto", 13800}}) {
    INFO(name);
    Scenario s = load(name);
    REQUIRE(s.conns.size() == 1);
    const Conn& c = s.conns[0];
    CHECK(c.length == 16);
    CHECK_FALSE(c.poisson);
    CHECK(c.start == 1000000);
    CHECK(c.interval == 16 * c.stagger);
    CHECK(std::abs(1e9 / static_cast<double>(c.stagger) - rate) < 0.1);  // whole ns
    const double end = static_cast<double>(c.start + 15 * c.stagger + (c.count - 1) * c.interval);
    CHECK(std::abs(end - 3.5e9) < 1.5e6);
    const Function& main = s.funcs.at(s.entry);
    REQUIRE(with(main, Opcode::Go).size() == 1);
    const Function& serve = s.funcs.at(with(main, Opcode::Go)[0].obj);
    CHECK(serve.num_params == 1);
    REQUIRE(with(serve, Opcode::LoopStart).size() == 1);
    CHECK(with(serve, Opcode::LoopStart)[0].count == c.count);
    REQUIRE(with(serve, Opcode::Read).size() == 1);
    REQUIRE(with(serve, Opcode::Write).size() == 1);
    REQUIRE(with(serve, Opcode::Compute).size() == 1);
    CHECK(with(serve, Opcode::Compute)[0].ns == 15000);
    CHECK(with(serve, Opcode::Read)[0].index >= 0);
  }
}

TEST_CASE("echo-accept and echo-pool: 16 connections of one listener, accepted by main or by 4 workers") {
  for (const char* name : {"echo-accept.textproto", "echo-pool.textproto"}) {
    INFO(name);
    Scenario s = load(name);
    REQUIRE(s.conns.size() == 1);
    REQUIRE(s.listeners.size() == 1);
    CHECK(s.conns[0].length == 16);
    CHECK(s.conns[0].listener == 0);
    CHECK(s.listeners[0].conn == 0);
    bool accepts = false, closes = false;
    for (const Function& f : s.funcs) {
      accepts |= !with(f, Opcode::Accept).empty() && with(f, Opcode::Accept)[0].var >= 0;
      closes |= !with(f, Opcode::CloseConn).empty();
      // The serving loop's read leaves it at end of file.
      for (const Instr& read : with(f, Opcode::Read)) CHECK(read.target >= 0);
    }
    CHECK(accepts);
    CHECK(closes);
  }
}
