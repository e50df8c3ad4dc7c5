// gmp_bench: how fast the simulator runs and how much memory it takes. Prints figures; asserts
// nothing.
//   1. simulated scheduler events per wall-clock second;
//   2. wall time to simulate 1,000,000 ping-pong round trips at GOMAXPROCS=1 and 2, against the
//      real Go benchmark (sim/bench/pingpong_test.go) run on this machine in the same invocation,
//      as a ratio (below 1: the simulation is faster than the real program);
//   3. peak memory of the goroutine-count scenario (sim/scenarios/goroutines.textproto) with
//      10,000 and 100,000 goroutines at 1 P, each simulation in a child process of its own, and
//      what each goroutine adds.
// Usage: gmp_bench [ROUND_TRIPS]   (default 1000000; set GMP_GO to choose the go binary)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost/profile.h"
#include "sim/simulation/simulation.h"
#include "sim/scenario/scenario.h"

namespace {

const char kPingPong[] = GMP_SOURCE_DIR "/sim/scenarios/pingpong.textproto";
const char kGoroutines[] = GMP_SOURCE_DIR "/sim/scenarios/goroutines.textproto";

// A shipped scenario's text with each edit's first text replaced by its second.
std::string shipped(const char* path, const std::vector<std::pair<std::string, std::string>>& edits) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& [from, to] : edits) {
    const size_t at = text.find(from);
    if (at == std::string::npos) {
      std::fprintf(stderr, "gmp_bench: %s: expected '%s'\n", path, from.c_str());
      std::exit(1);
    }
    text.replace(at, from.size(), to);
  }
  return text;
}

// The ping-pong with its round-trip count (b.N) set to n.
std::string pingpong(long n) { return shipped(kPingPong, {{"count: 100000", "count: " + std::to_string(n)}}); }

// The goroutine-count scenario with n goroutines.
std::string goroutines(long n) {
  const std::string s = std::to_string(n);
  return shipped(kGoroutines, {{"n: 10000", "n: " + s}, {"count: 10000", "count: " + s}});
}

// Peak resident memory (KiB) of simulating `text` at 1 P, in a child process so that nothing else
// this program did counts; -1 if the child fails.
long peak_rss_kib(const std::string& text) {
  const gmp::scenario::Scenario sc = gmp::scenario::parse_scenario(text, kGoroutines);
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    gmp::engine::SimConfig cfg;
    cfg.procs = 1;
    const gmp::engine::SimResult r = gmp::engine::simulate(sc, gmp::cost::default_profile(), cfg);
    _exit(r.measured ? 0 : 1);
  }
  int status = 0;
  rusage ru{};
  if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return ru.ru_maxrss;
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
  const gmp::scenario::Scenario sc = gmp::scenario::parse_scenario(pingpong(n), kPingPong);
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

  std::printf("\n%-14s %16s %22s\n", "goroutines", "peak RSS (MiB)", "per goroutine (KiB)");
  const long base = peak_rss_kib(goroutines(1));
  for (long g : {10000L, 100000L}) {
    const long rss = peak_rss_kib(goroutines(g));
    if (rss < 0 || base < 0) {
      std::printf("%-14ld %16s %22s\n", g, "failed", "n/a");
      continue;
    }
    std::printf("%-14ld %16.1f %22.2f\n", g, static_cast<double>(rss) / 1024.0,
                static_cast<double>(rss - base) / static_cast<double>(g - 1));
  }
  std::printf("per goroutine = (peak RSS - peak RSS with 1 goroutine) / (goroutines - 1); goroutines\n"
              "that end while main still starts others leave their stacks for reuse, so this is per\n"
              "goroutine started, not per goroutine alive at once\n");
  return 0;
}
