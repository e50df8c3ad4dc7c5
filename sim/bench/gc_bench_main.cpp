// gmp_gc_bench: the garbage collector against real Go (issue 24). For the allocating held-out
// programs (BenchmarkTreeBuild: trees built and dropped beside a long-lived one; BenchmarkSpawnStorm:
// a storm of live goroutines; BenchmarkSmallAllocParallel: small allocations under b.RunParallel)
// at GOMAXPROCS 1, 2, 4 and GOGC 50, 100, 400 it simulates each point and prints it beside the
// real figures of a measurement file (sim/bench/gc_measure.py writes it): ns/op, GC cycles per
// op and per second, GC CPU share, and whether each GOMAXPROCS and GOGC step moves the way the
// measurement does; then the summary against the aims. It prints figures and never
// asserts them.
//
//   gmp_gc_bench [--profile NAME|FILE] [--measured FILE] [--scenarios DIR] [--jobs N]
//
// Defaults: profile epyc-vm-fitted, measured
// sim/calibration/measurements/epyc-vm-go1.23-gc.txt, scenarios sim/calibration/heldout.
// Without a measurement file it prints the simulated side alone.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/calibration/bench_output.h"
#include "sim/calibration/gc_measurements.h"
#include "sim/calibration/gctrace.h"
#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation/simulation.h"

using namespace gmp;

namespace {

const std::vector<std::string> kBenchmarks = {"BenchmarkTreeBuild", "BenchmarkSpawnStorm",
                                              "BenchmarkSmallAllocParallel"};
const std::vector<int32_t> kProcs = {1, 2, 4};
const std::vector<int32_t> kGogc = {50, 100, 400};

struct Side {
  bool have = false;
  double ns = NAN, cycles_op = NAN, cycles_s = NAN, cpu = NAN;  // medians
  double ns_lo = NAN, ns_hi = NAN;                              // CI of the ns/op median
  std::string error;
};

struct Row {
  calibration::GCPointKey key;
  Side sim, real;
};

std::string gogc_name(int32_t g) { return g < 0 ? "off" : std::to_string(g); }

double pct(double sim, double real) { return (sim - real) / real * 100; }

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

int sign_of(double d, double tol) { return std::abs(d) <= tol ? 0 : (d > 0 ? 1 : -1); }

}  // namespace

int main(int argc, char** argv) {
  std::string profile_name = "epyc-vm-fitted";
  std::string measured = std::string(GMP_SOURCE_DIR) + "/sim/calibration/measurements/epyc-vm-go1.23-gc.txt";
  std::string dir = std::string(GMP_SOURCE_DIR) + "/sim/calibration/heldout";
  size_t jobs = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gmp_gc_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--profile") {
      profile_name = value();
    } else if (a == "--measured") {
      measured = value();
    } else if (a == "--scenarios") {
      dir = value();
    } else if (a == "--jobs") {
      const std::string v = value();
      if (v.empty() || v.size() > 3 || v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) < 1) {
        std::fprintf(stderr, "gmp_gc_bench: --jobs takes 1 to 999\n");
        return 2;
      }
      jobs = static_cast<size_t>(std::stoi(v));
    } else {
      std::fprintf(stderr, "usage: gmp_gc_bench [--profile NAME|FILE] [--measured FILE] [--scenarios DIR] [--jobs N]\n");
      return 2;
    }
  }

  cost::Profile prof;
  try {
    auto b = cost::builtin_profile(profile_name);
    prof = b ? *b : cost::load_profile(profile_name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }

  calibration::GCMeasurements real;
  bool have_real = false;
  {
    std::ifstream in(measured);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      try {
        real = calibration::read_gc_measurements(ss.str(), measured);
        have_real = true;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
      }
    } else {
      std::printf("no measurement file %s (sim/bench/gc_measure.py writes it): the simulated side alone\n\n",
                  measured.c_str());
    }
  }

  // The scenarios, one per benchmark; a scenario that does not load is reported on its rows.
  std::vector<std::unique_ptr<scenario::Scenario>> scs(kBenchmarks.size());
  std::vector<std::string> load_err(kBenchmarks.size());
  for (size_t b = 0; b < kBenchmarks.size(); ++b) {
    try {
      scs[b] = std::make_unique<scenario::Scenario>(scenario::load_scenario(dir + "/" + kBenchmarks[b] + ".textproto"));
    } catch (const std::exception& e) {
      load_err[b] = e.what();
    }
  }

  std::vector<Row> rows;
  std::vector<size_t> bench_of;
  for (size_t b = 0; b < kBenchmarks.size(); ++b) {
    for (const int32_t p : kProcs) {
      for (const int32_t g : kGogc) {
        rows.push_back(Row{calibration::GCPointKey{kBenchmarks[b], p, g}, {}, {}});
        bench_of.push_back(b);
      }
    }
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < rows.size();) {
      Row& r = rows[i];
      const size_t b = bench_of[i];
      if (!scs[b]) {
        r.sim.error = load_err[b];
        continue;
      }
      engine::SimConfig cfg;
      cfg.procs = r.key.procs;
      cfg.seed = 1;
      cfg.gc.gcPercent = r.key.gogc;
      try {
        const engine::SimResult res = engine::simulate(*scs[b], prof, cfg);
        if (!res.measured) {
          r.sim.error = "the run measured nothing (" + res.message.substr(0, 200) + ")";
          continue;
        }
        const calibration::GCFigures f = calibration::gc_figures(calibration::bench_run_of(res, r.key.bench));
        r.sim.have = true;
        r.sim.ns = res.ns_per_op;
        r.sim.cycles_op = f.cycles_per_op;
        r.sim.cycles_s = f.cycles_per_s;
        r.sim.cpu = f.gc_cpu_share;
      } catch (const std::exception& e) {
        r.sim.error = e.what();
      }
    }
  };
  {
    std::vector<std::thread> ts;
    for (size_t j = 1; j < std::min(jobs, rows.size()); ++j) ts.emplace_back(worker);
    worker();
    for (std::thread& t : ts) t.join();
  }
  for (Row& r : rows) {
    const auto it = real.points.find(r.key);
    if (it == real.points.end()) continue;
    const calibration::Summary ns = calibration::summarize(it->second.ns_per_op);
    r.real.have = true;
    r.real.ns = ns.median;
    r.real.ns_lo = ns.ci_lo;
    r.real.ns_hi = ns.ci_hi;
    r.real.cycles_op = calibration::summarize(it->second.cycles_per_op).median;
    r.real.cycles_s = calibration::summarize(it->second.cycles_per_s).median;
    r.real.cpu = calibration::summarize(it->second.gc_cpu_share).median;
  }

  std::printf("GC validation: profile %s, scenarios %s%s%s\n\n", profile_name.c_str(), dir.c_str(),
              have_real ? ", measured " : "", have_real ? measured.c_str() : "");
  std::printf("| benchmark | procs | GOGC | ns/op sim | real | error | cycles/op sim | real | error | cycles/s sim | real "
              "| GC CPU sim | real | diff (points) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> ns_err;
  int cycles_ok = 0, cycles_n = 0, cpu_ok = 0, cpu_n = 0;
  for (const Row& r : rows) {
    if (!r.sim.error.empty()) {
      std::printf("| %s | %d | %s | simulation failed: %s |\n", r.key.bench.c_str(), r.key.procs,
                  gogc_name(r.key.gogc).c_str(), r.sim.error.substr(0, r.sim.error.find('\n')).c_str());
      continue;
    }
    const bool both = r.sim.have && r.real.have;
    const double e_ns = both ? pct(r.sim.ns, r.real.ns) : NAN;
    const double e_cy = both && r.real.cycles_op > 0 ? pct(r.sim.cycles_op, r.real.cycles_op) : NAN;
    const double d_cpu = both ? (r.sim.cpu - r.real.cpu) * 100 : NAN;
    if (std::isfinite(e_ns)) ns_err.push_back(std::abs(e_ns));
    if (std::isfinite(e_cy)) {
      ++cycles_n;
      cycles_ok += std::abs(e_cy) <= 20;
    }
    if (std::isfinite(d_cpu)) {
      ++cpu_n;
      cpu_ok += std::abs(d_cpu) <= 5;
    }
    std::printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.key.bench.c_str(),
                r.key.procs, gogc_name(r.key.gogc).c_str(), fmt("%.4g", r.sim.ns).c_str(), fmt("%.4g", r.real.ns).c_str(),
                fmt("%+.1f%%", e_ns).c_str(), fmt("%.3g", r.sim.cycles_op).c_str(), fmt("%.3g", r.real.cycles_op).c_str(),
                fmt("%+.1f%%", e_cy).c_str(), fmt("%.3g", r.sim.cycles_s).c_str(), fmt("%.3g", r.real.cycles_s).c_str(),
                fmt("%.1f%%", r.sim.cpu * 100).c_str(), fmt("%.1f%%", r.real.cpu * 100).c_str(),
                fmt("%+.1f", d_cpu).c_str());
  }

  // Steps: GOMAXPROCS 1->2->4 at each GOGC (ns/op), GOGC 50->100->400 at each GOMAXPROCS (ns/op and
  // cycles/op). A measured step whose two ns/op confidence intervals overlap is inside the noise.
  int right = 0, wrong = 0, noise = 0;
  std::string wrong_list;
  const auto find = [&](const std::string& b, int32_t p, int32_t g) -> const Row* {
    for (const Row& r : rows) {
      if (r.key.bench == b && r.key.procs == p && r.key.gogc == g) return &r;
    }
    return nullptr;
  };
  const auto step = [&](const Row* a, const Row* b, bool cycles, const std::string& what) {
    if (a == nullptr || b == nullptr || !a->sim.have || !b->sim.have || !a->real.have || !b->real.have) return;
    int real_dir = 0, sim_dir = 0;
    if (cycles) {
      real_dir = sign_of(b->real.cycles_op - a->real.cycles_op, 0.05 * std::max(a->real.cycles_op, b->real.cycles_op));
      sim_dir = sign_of(b->sim.cycles_op - a->sim.cycles_op, 0);
    } else {
      const bool overlap = !(a->real.ns_hi < b->real.ns_lo || b->real.ns_hi < a->real.ns_lo);
      real_dir = overlap ? 0 : sign_of(b->real.ns - a->real.ns, 0);
      sim_dir = sign_of(b->sim.ns - a->sim.ns, 0);
    }
    if (real_dir == 0) {
      ++noise;
    } else if (real_dir == sim_dir) {
      ++right;
    } else {
      ++wrong;
      wrong_list += "  " + what + (cycles ? " cycles/op" : " ns/op") + ": measured " + (real_dir > 0 ? "up" : "down") +
                    ", simulated " + (sim_dir > 0 ? "up" : sim_dir < 0 ? "down" : "flat") + "\n";
    }
  };
  for (const std::string& b : kBenchmarks) {
    for (const int32_t g : kGogc) {
      for (size_t i = 0; i + 1 < kProcs.size(); ++i) {
        step(find(b, kProcs[i], g), find(b, kProcs[i + 1], g), false,
             b + " GOGC " + gogc_name(g) + ", procs " + std::to_string(kProcs[i]) + "->" + std::to_string(kProcs[i + 1]));
      }
    }
    for (const int32_t p : kProcs) {
      for (size_t i = 0; i + 1 < kGogc.size(); ++i) {
        const std::string what =
            b + " procs " + std::to_string(p) + ", GOGC " + gogc_name(kGogc[i]) + "->" + gogc_name(kGogc[i + 1]);
        step(find(b, p, kGogc[i]), find(b, p, kGogc[i + 1]), false, what);
        step(find(b, p, kGogc[i]), find(b, p, kGogc[i + 1]), true, what);
      }
    }
  }

  std::printf("\nSummary (aims of issue 24 in brackets):\n");
  if (ns_err.empty()) {
    std::printf("  no point has both sides: nothing to compare\n");
    return 0;
  }
  std::sort(ns_err.begin(), ns_err.end());
  const size_t n = ns_err.size();
  const double med = n % 2 ? ns_err[n / 2] : (ns_err[n / 2 - 1] + ns_err[n / 2]) / 2;
  std::printf("  median |ns/op error| %.1f%% over %zu points, worst %.1f%% [median within 15%%]\n", med, n, ns_err.back());
  std::printf("  GC cycles/op within 20%%: %d of %d [all]\n", cycles_ok, cycles_n);
  std::printf("  GC CPU share within 5 points: %d of %d [all]\n", cpu_ok, cpu_n);
  std::printf("  steps in the measured direction: %d, against it: %d, inside the noise: %d [none against]\n", right,
              wrong, noise);
  if (!wrong_list.empty()) std::printf("%s", wrong_list.c_str());
  std::printf("  held-out SpawnStorm at GOGC 100 [within 25%%]:");
  for (const int32_t p : kProcs) {
    const Row* r = find("BenchmarkSpawnStorm", p, 100);
    std::printf(" %d P %s", p, r != nullptr && r->sim.have && r->real.have ? fmt("%+.1f%%", pct(r->sim.ns, r->real.ns)).c_str() : "-");
  }
  std::printf("\n");
  return 0;
}
