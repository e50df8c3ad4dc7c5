// gmp_scale_bench: what large programs cost the simulator. Prints figures; asserts nothing.
//   1. goroutines parked at once: main starts N goroutines that all block on one channel receive
//      (so all N hold runtime frames at the same time), then closes the channel and waits for them
//      on a WaitGroup; at 1 P, for N = 10k, 100k, 1M and 10M: peak resident memory, what each
//      parked goroutine adds to it, wall time, virtual time and simulated events per second;
//   2. the same program with 100k goroutines at 1 to 256 Ps;
//   3. the one-goroutine program at 1 to 4096 Ps on as many cores: peak resident memory and what
//      each P (with its core) adds to it over 1 P.
// Each simulation runs in a child process of its own, so that its peak memory is its own.
// Usage: gmp_scale_bench [MAX_GOROUTINES]   (default 10000000; lower it on a smaller machine:
// 10M goroutines take about 12 GiB)
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/cost/profile.h"
#include "sim/simulation/simulation.h"
#include "sim/scenario/scenario.h"

namespace {

std::string parked(long n) {
  const std::string s = std::to_string(n);
  return "chan { name: \"start\" }\n"
         "waitgroup { name: \"wg\" }\n"
         "func { name: \"main\"\n"
         "  op { add { wg: \"wg\" n: " + s + " } }\n"
         "  op { loop { count: " + s + " op { go { func: \"w\" } } } }\n"
         "  op { gosched {} }\n"  // at 1 P every goroutine runs to its receive before main goes on
         "  op { close { chan: \"start\" } }\n"
         "  op { wait { wg: \"wg\" } }\n"
         "}\n"
         "func { name: \"w\" op { recv { chan: \"start\" } } op { done { wg: \"wg\" } } }\n";
}

struct Figures {
  bool ok = false;
  long rss_kib = 0;
  double wall = 0;
  double virt = 0;  // virtual seconds
  double events = 0;
};

// Simulates `text` at `procs` in a child process. The child reports its figures through a shared
// page; the parent reads the child's peak RSS from wait4.
Figures measure(const std::string& text, int procs, int cores = 0) {
  const gmp::scenario::Scenario sc = gmp::scenario::parse_scenario(text, "parked.textproto");
  auto* shared = static_cast<Figures*>(
      mmap(nullptr, sizeof(Figures), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (shared == MAP_FAILED) return {};
  *shared = Figures{};
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    gmp::engine::SimConfig cfg;
    cfg.procs = procs;
    cfg.cores = cores;  // 0: the profile's machine
    cfg.time_limit = 3600LL * 1000 * 1000 * 1000;  // an hour of virtual time: never the limit here
    const auto t0 = std::chrono::steady_clock::now();
    const gmp::engine::SimResult r = gmp::engine::simulate(sc, gmp::cost::default_profile(), cfg);
    shared->wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    shared->virt = static_cast<double>(r.end_time) / 1e9;
    shared->events = static_cast<double>(r.events);
    shared->ok = r.stop == gmp::engine::Engine::Stop::Exit && r.exit_code == 0;
    _exit(0);
  }
  int status = 0;
  rusage ru{};
  Figures f;
  if (pid > 0 && wait4(pid, &status, 0, &ru) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    f = *shared;
    f.rss_kib = ru.ru_maxrss;
  }
  munmap(shared, sizeof(Figures));
  return f;
}

void row(const char* label, long n, int procs, const Figures& f, long base_kib, long per) {
  if (!f.ok) {
    std::printf("%-12s %11ld %6d   failed (out of memory, or the run did not end normally)\n", label, n, procs);
    return;
  }
  std::printf("%-12s %11ld %6d %12.1f %12.2f %10.2f %12.4f %10.2f %12.3g\n", label, n, procs,
              static_cast<double>(f.rss_kib) / 1024.0,
              per > 0 ? static_cast<double>(f.rss_kib - base_kib) / static_cast<double>(per) : 0.0, f.wall, f.virt,
              f.virt > 0 ? f.wall / f.virt : 0.0, f.events / f.wall);
}

}  // namespace

int main(int argc, char** argv) {
  const long max = argc > 1 ? std::atol(argv[1]) : 10000000;
  std::printf("%-12s %11s %6s %12s %12s %10s %12s %10s %12s\n", "", "goroutines", "procs", "peak MiB",
              "KiB/goroutine", "wall s", "virtual s", "wall/virt", "events/s");
  const Figures base = measure(parked(1), 1);
  if (!base.ok) {
    std::printf("the one-goroutine run failed\n");
    return 1;
  }
  for (long n : {10000L, 100000L, 1000000L, 10000000L}) {
    if (n > max) break;
    row("parked", n, 1, measure(parked(n), 1), base.rss_kib, n);
  }
  constexpr long kAtProcs = 100000;
  for (int procs : {1, 2, 4, 16, 64, 256}) {
    row("by procs", kAtProcs, procs, measure(parked(kAtProcs), procs), base.rss_kib, kAtProcs);
  }
  std::printf("KiB/goroutine = (peak RSS - peak RSS with one goroutine) / goroutines, with all of them\n"
              "parked at once (at more than one P, some may finish before the last is started)\n");
  // The cost of a P: the one-goroutine run at growing P counts, each on as many cores.
  std::printf("\n%-12s %11s %6s %12s %12s\n", "", "goroutines", "procs", "peak MiB", "KiB/P");
  long one_kib = -1;  // the run at 1 P, the baseline
  for (int procs : {1, 64, 256, 1024, 4096}) {
    const Figures f = measure(parked(1), procs, procs);
    if (!f.ok) {
      std::printf("%-12s %11d %6d   failed\n", "by procs", 1, procs);
      continue;
    }
    if (procs == 1) one_kib = f.rss_kib;
    std::printf("%-12s %11d %6d %12.1f %12.2f\n", "by procs", 1, procs, static_cast<double>(f.rss_kib) / 1024.0,
                procs > 1 && one_kib >= 0 ? static_cast<double>(f.rss_kib - one_kib) / (procs - 1) : 0.0);
  }
  std::printf("KiB/P = (peak RSS - peak RSS at 1 P on 1 core) / (Ps - 1), Ps and cores equal\n");
  return 0;
}
