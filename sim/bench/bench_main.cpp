// gmp_bench: how fast the simulator runs. Prints figures; asserts nothing.
//   1. simulated scheduler events per wall-clock second;
//   2. wall time to simulate 1,000,000 ping-pong round trips at GOMAXPROCS=1 and 2, against the
//      real Go benchmark (sim/bench/pingpong_test.go) run on this machine in the same invocation,
//      as a ratio (below 1: the simulation is faster than the real program).
// Usage: gmp_bench [ROUND_TRIPS]   (default 1000000; set GMP_GO to choose the go binary)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <fstream>
#include <iterator>
#include <string>

#include "sim/cost/profile.h"
#include "sim/engine/simulation.h"
#include "sim/scenario/scenario.h"

namespace {

const char kScenario[] = GMP_SOURCE_DIR "/sim/scenarios/pingpong.textproto";

// The shipped ping-pong scenario with its round-trip count (b.N) set to n.
std::string pingpong(long n) {
  std::ifstream in(kScenario);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string count = "count: 100000";
  const size_t at = text.find(count);
  if (at == std::string::npos) {
    std::fprintf(stderr, "gmp_bench: %s: expected the round-trip loop's '%s'\n", kScenario, count.c_str());
    std::exit(1);
  }
  return text.replace(at, count.size(), "count: " + std::to_string(n));
}

// Runs `go test -bench` on the real program; returns ns/op for each -cpu value, or -1.
double go_ns_per_op(const std::string& go, int cpu, long n) {
  const std::string dir = std::string(GMP_SOURCE_DIR) + "/sim/bench";
  const std::string cache = std::string(GMP_BINARY_DIR) + "/go-cache";
  const std::string cmd = "cd '" + dir + "' && GOCACHE='" + cache + "' GO111MODULE=off GOPATH='" +
                          cache + "/gopath' '" + go + "' test -run '^$' -bench PingPong -benchtime " +
                          std::to_string(n) + "x -cpu " + std::to_string(cpu) + " pingpong_test.go 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  pclose(p);
  // The result line: "BenchmarkPingPong[-N] <tab> iterations <tab> X ns/op".
  const size_t at = out.find("BenchmarkPingPong");
  const size_t unit = out.find(" ns/op", at == std::string::npos ? 0 : at);
  if (at != std::string::npos && unit != std::string::npos) {
    size_t b = unit;
    while (b > at && (std::isdigit(static_cast<unsigned char>(out[b - 1])) || out[b - 1] == '.')) b--;
    if (b < unit) return std::stod(out.substr(b, unit - b));
  }
  std::fprintf(stderr, "go benchmark failed:\n%s\n", out.c_str());
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  const char* go_env = std::getenv("GMP_GO");
  const std::string go = go_env != nullptr ? go_env : "/usr/lib/go-1.23/bin/go";
  const gmp::scenario::Scenario sc = gmp::scenario::parse_scenario(pingpong(n), kScenario);
  std::printf("%-14s %14s %14s %14s %16s %14s %12s\n", "GOMAXPROCS", "sim wall (s)", "events", "events/s",
              "sim ns/op (virt)", "go ns/op", "wall ratio");
  for (int procs : {1, 2}) {
    gmp::engine::SimConfig cfg;
    cfg.procs = procs;
    const auto t0 = std::chrono::steady_clock::now();
    const gmp::engine::SimResult r = gmp::engine::simulate(sc, gmp::cost::default_profile(), cfg);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double go_ns = go_ns_per_op(go, procs, n);
    const double go_wall = go_ns * static_cast<double>(n) / 1e9;
    std::printf("%-14d %14.3f %14llu %14.3g %16.1f %14.1f %12s\n", procs, wall,
                static_cast<unsigned long long>(r.events), static_cast<double>(r.events) / wall, r.ns_per_op, go_ns,
                go_ns > 0 ? std::to_string(wall / go_wall).substr(0, 6).c_str() : "n/a");
  }
  std::printf("wall ratio = simulation wall time / real Go wall time for the same round trips\n");
  return 0;
}
