// gmpsim sweep SCENARIO --procs 1,2,4,8,16 [--cores 4,16,64] [--seeds K] [--profile F]
//                       [--svg OUT] [--seed S]
// Runs the scenario at every (procs, cores) point under K seeds; prints a table per metric, then
// `go test -bench` lines for benchstat, and writes an SVG chart.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "sim/cli/report.h"

namespace gmp::cli {

int cmd_sweep(int argc, char** argv) {
  RunOptions o;
  std::string svg_path;
  parse_sim_args("sweep", argc, argv, o, [&](Args& a) {
    if (a.flag() != "--svg") return false;
    svg_path = a.value();
    return true;
  });
  if (!o.trace_path.empty()) usage_error("sweep: --trace is for gmpsim run");
  if (svg_path.empty()) {
    const size_t slash = o.scenario_path.find_last_of('/');
    std::string base = o.scenario_path.substr(slash == std::string::npos ? 0 : slash + 1);
    if (const size_t dot = base.find('.'); dot != std::string::npos) base = base.substr(0, dot);
    svg_path = base + "-sweep.svg";
  }
  const Loaded in = load_inputs(o);

  std::vector<SweepPoint> pts;
  for (int64_t c : o.cores) {
    for (int64_t p : o.procs) pts.push_back(SweepPoint{p, c, {}});
  }
  const size_t total = pts.size() * o.seeds;
  const bool tty = isatty(STDERR_FILENO) != 0;
  size_t done = 0;
  int status = 0;
  for (auto& pt : pts) {
    for (uint64_t k = 0; k < o.seeds; k++) {
      if (tty) {
        std::fprintf(stderr, "\r[%zu/%zu] GOMAXPROCS=%lld cores=%lld seed=%llu   ", done + 1, total,
                     static_cast<long long>(pt.procs), static_cast<long long>(pt.cores),
                     static_cast<unsigned long long>(o.seed + k));
      }
      engine::SimConfig cfg = sim_config(o, pt.procs, pt.cores, o.seed + k);
      pt.runs.push_back(engine::simulate(in.scenario, in.profile, cfg));
      if (pt.cores == 0) pt.cores = pt.runs.back().cores;
      const engine::SimResult& r = pt.runs.back();
      if (exit_status(r) != 0) {
        status = 2;
        if (tty) std::fputc('\n', stderr);
        std::fprintf(stderr, "gmpsim: GOMAXPROCS=%lld seed=%llu: %s\n", static_cast<long long>(pt.procs),
                     static_cast<unsigned long long>(r.seed), r.message.c_str());
      }
      done++;
    }
  }
  if (tty) std::fprintf(stderr, "\r%60s\r", "");

  std::printf("sweep of %s (profile %s)\n", in.scenario.source.c_str(), in.profile.origin.c_str());
  std::fputs(format_sweep_tables(pts).c_str(), stdout);
  const std::string bench = format_bench_lines(pts);
  if (!bench.empty()) std::printf("\n%s", bench.c_str());

  const std::string tmp = svg_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << sweep_svg(pts, in.scenario.benchmark ? in.scenario.benchmark->name : in.scenario.source);
    if (!out) {
      std::fprintf(stderr, "gmpsim: cannot write %s\n", svg_path.c_str());
      std::remove(tmp.c_str());
      return 1;
    }
  }
  if (std::rename(tmp.c_str(), svg_path.c_str()) != 0) {
    std::fprintf(stderr, "gmpsim: cannot write %s\n", svg_path.c_str());
    std::remove(tmp.c_str());
    return 1;
  }
  std::printf("\nchart: %s\n", svg_path.c_str());
  return status;
}

}  // namespace gmp::cli
