// gmpsim sweep SCENARIO --procs 1,2,4,8,16 [--cores 4,16,64] [--seeds K] [--profile F]
//                       [--gogc 50,100,off] [--memlimit 64MiB,off] [--cpu-quota 0.5,1,2]
//                       [--svg OUT] [--seed S] [--jobs N]
// Runs the scenario at every (procs, cores, CPU quota, GOGC, GOMEMLIMIT) point under K seeds; prints a table
// per metric, then `go test -bench` lines for benchstat, and with --svg writes an SVG chart there.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "sim/cli/report.h"
#include "traces/output_file.h"

namespace gmp::cli {

int cmd_sweep(int argc, char** argv) {
  RunOptions o;
  std::string svg_path;
  size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  parse_sim_args("sweep", argc, argv, o, [&](Args& a) {
    if (a.flag() == "--jobs") {
      jobs = static_cast<size_t>(parse_uint("--jobs", a.value(), 1, 256));
      return true;
    }
    if (a.flag() != "--svg") return false;
    svg_path = a.value();
    if (svg_path.empty()) usage_error("--svg: expected a file name");
    return true;
  });
  if (!o.sim.trace_path.empty()) usage_error("sweep: --trace is for gmpsim run");
  try {
    if (!svg_path.empty()) trace::output_target(svg_path);  // a directory or the like is refused before the runs
  } catch (const trace::OutputError& e) {
    std::fprintf(stderr, "gmpsim: cannot write %s\n", e.what());
    return 1;
  }
  const Loaded in = load_inputs(o);

  // GOGC and GOMEMLIMIT are dimensions only when given (the output is unchanged otherwise).
  const SweepDims dims{!o.gogc.empty(), !o.memlimit.empty(), !o.cpu_quota.empty()};
  const rt::GCSettings go_default;
  const std::vector<int64_t> limits = dims.memlimit ? o.memlimit : std::vector<int64_t>{go_default.memoryLimit};
  const std::vector<int32_t> gogcs = dims.gogc ? o.gogc : std::vector<int32_t>{go_default.gcPercent};
  const std::vector<double> quotas = dims.quota ? o.cpu_quota : std::vector<double>{0};
  std::vector<SweepPoint> pts;
  for (int64_t c : o.cores) {
    for (double quota : quotas) {
      for (int64_t limit : limits) {
        for (int32_t gogc : gogcs) {
          for (int64_t p : o.procs) pts.push_back(SweepPoint{p, c, {}, rt::GCSettings{gogc, limit}, quota});
        }
      }
    }
  }
  // A cgroup the machine cannot hold (a cpuset past its cores, a quota above them) is refused
  // before any run.
  for (const SweepPoint& pt : pts) {
    try {
      engine::check_machine(in.scenario, in.profile, sim_config(o, pt.procs, pt.cores, o.seed));
    } catch (const engine::SimConfigError& e) {
      usage_error(std::string("sweep: ") + e.what() + (pt.cores > 0 ? " (--cores " + std::to_string(pt.cores) + ")" : ""));
    }
  }
  // Every (point, seed) run is independent and deterministic on its own, so they run on worker
  // threads, one simulation per thread at a time; results land in fixed slots, so the output does
  // not depend on which thread finished first.
  const size_t total = pts.size() * o.seeds;
  for (auto& pt : pts) pt.runs.resize(o.seeds);
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  size_t done = 0;
  // An exception on a worker (out of memory; bad input is refused before) is handed to the main
  // thread, which rethrows it once every worker has stopped; the remaining runs are skipped.
  std::exception_ptr failure;
  auto worker = [&] {
    for (size_t j = next.fetch_add(1); j < total; j = next.fetch_add(1)) {
      SweepPoint& pt = pts[j / o.seeds];
      const uint64_t k = j % o.seeds;
      try {
        engine::SimConfig cfg = sim_config(o, pt.procs, pt.cores, o.seed + k);
        cfg.gc = pt.gc;
        cfg.cgroup.quota = quota_ns(o, pt.cpu_quota);
        pt.runs[k] = engine::simulate(in.scenario, in.profile, cfg);
      } catch (...) {
        std::lock_guard<std::mutex> l(mu);
        if (!failure) failure = std::current_exception();
        next.store(total);
        done = total;
        cv.notify_one();
        return;
      }
      std::lock_guard<std::mutex> l(mu);
      done++;
      cv.notify_one();
    }
  };
  const size_t nthreads = std::min<size_t>(total, jobs);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < nthreads; t++) threads.emplace_back(worker);
  const bool tty = isatty(STDERR_FILENO) != 0;
  {
    std::unique_lock<std::mutex> l(mu);
    for (size_t shown = 0; shown < total;) {
      cv.wait(l, [&] { return done > shown; });
      shown = done;
      if (tty) std::fprintf(stderr, "\r[%zu/%zu] runs done   ", shown, total);
    }
  }
  for (auto& t : threads) t.join();
  end_progress();
  if (failure) std::rethrow_exception(failure);
  int status = 0;
  for (auto& pt : pts) {
    if (pt.cores == 0) pt.cores = pt.runs.front().cores;
    for (const engine::SimResult& r : pt.runs) {
      const int st = exit_status(r);
      if (st == 0) continue;
      if (st == kAssertionsViolated) {
        if (status == 0) status = st;
        const auto& v = r.violations.front();
        std::fprintf(stderr, "gmpsim: %sGOMAXPROCS=%s seed=%llu: assertion violated: %s: %s%s\n",
                     gc_point_label(pt, dims).c_str(), procs_text(pt.procs).c_str(), static_cast<unsigned long long>(r.seed), v.assertion.c_str(),
                     v.detail.c_str(), r.violations.size() > 1 ? " (and more: gmpsim run shows them all)" : "");
        continue;
      }
      status = 2;
      std::fprintf(stderr, "gmpsim: %sGOMAXPROCS=%s seed=%llu: %s\n", gc_point_label(pt, dims).c_str(),
                   procs_text(pt.procs).c_str(),
                   static_cast<unsigned long long>(r.seed), r.message.c_str());
    }
  }

  std::printf("sweep of %s (profile %s)\n", in.scenario.source.c_str(), in.profile.origin.c_str());
  std::fputs(format_sweep_tables(pts, dims).c_str(), stdout);
  const std::string bench = format_bench_lines(pts, dims);
  if (!bench.empty()) std::printf("\n%s", bench.c_str());

  if (svg_path.empty()) return status;
  try {
    trace::write_output_file(svg_path, sweep_svg(pts, in.scenario.benchmark ? in.scenario.benchmark->name
                                                                           : in.scenario.source, dims));
  } catch (const trace::OutputError& e) {
    std::fprintf(stderr, "gmpsim: %s\n", e.what());
    return 1;
  }
  std::printf("\nchart: %s\n", svg_path.c_str());
  return status;
}

}  // namespace gmp::cli
