// Fitting a cost profile to measurements: see fit.h.
#include "sim/calibration/fit.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <thread>

#include "sim/simulation/simulation.h"

namespace gmp::calibration {

std::string FitParam::name() const {
  return speed ? std::string("speed_ns_per_iteration") : std::string(cost::param_name(param));
}

FitParam fit_param_by_name(const std::string& name) {
  if (name == "speed_ns_per_iteration") return FitParam{true, cost::Param::ChanOp};
  if (const auto p = cost::param_by_name(name)) return FitParam{false, *p};
  throw std::invalid_argument("unknown parameter '" + name + "'");
}

std::vector<FitParam> default_fit_params() {
  std::vector<FitParam> out{FitParam{true, cost::Param::ChanOp}};
  for (const char* n : {"chan_op", "schedule_pass", "newproc", "goexit", "mutex_fast_path", "syscall_enter_exit",
                        "futex_wake", "futex_wake_latency", "futex_sleep", "cacheline_transfer", "timer_add",
                        "gogo", "mcall"}) {
    out.push_back(fit_param_by_name(n));
  }
  return out;
}

double get(const cost::Profile& p, const FitParam& f) {
  return f.speed ? p.machine.speed_ns_per_iteration.value : p[f.param];
}

void set(cost::Profile& p, const FitParam& f, double v) {
  if (f.speed) {
    p.machine.speed_ns_per_iteration.value = std::clamp(v, cost::kMinNsPerIteration, cost::kMaxNsPerIteration);
    return;
  }
  const auto i = static_cast<size_t>(f.param);
  p.ns[i] = p.params[i].value = std::clamp(v, 0.0, cost::kMaxCost);
}

std::vector<double> simulate_points(const std::vector<Point>& pts, const cost::Profile& prof, size_t jobs) {
  std::vector<double> out(pts.size(), std::numeric_limits<double>::quiet_NaN());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < pts.size();) {
      engine::SimConfig cfg;
      cfg.procs = pts[i].procs;
      cfg.seed = 1;
      const engine::SimResult r = engine::simulate(*pts[i].scenario, prof, cfg);
      if (r.stop == engine::Engine::Stop::Exit && r.measured) out[i] = r.ns_per_op;
    }
  };
  std::vector<std::thread> threads;
  for (size_t j = 1; j < std::min(jobs, pts.size()); ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return out;
}

double fit_error(const std::vector<Point>& pts, const std::vector<double>& sim) {
  if (pts.empty()) return 0;
  double sum = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    const double e = std::isfinite(sim[i]) && sim[i] > 0 && pts[i].measured > 0 ? std::log(sim[i] / pts[i].measured)
                                                                                : std::log(10.0);
    sum += std::abs(e);
  }
  return sum / static_cast<double>(pts.size());
}

FitResult fit_profile(const std::vector<Point>& pts, const cost::Profile& start, const FitOptions& opt) {
  FitResult r;
  r.profile = start;
  double best = fit_error(pts, simulate_points(pts, r.profile, opt.jobs));
  r.error_before = best;
  r.evaluations = 1;
  for (double factor = 2.0; factor > 1.01 && r.evaluations < opt.max_evaluations;) {
    bool moved = false;
    for (const FitParam& f : opt.params) {
      const double v = get(r.profile, f);
      // A zero cost is moved from a nanosecond, or a speed from its floor: a product never leaves 0.
      const double base = v > 0 ? v : (f.speed ? cost::kMinNsPerIteration : 1.0);
      for (const double trial : {base * factor, v > 0 ? base / factor : 0.0}) {
        if (r.evaluations >= opt.max_evaluations || trial == v) continue;
        cost::Profile p = r.profile;
        set(p, f, trial);
        const double e = fit_error(pts, simulate_points(pts, p, opt.jobs));
        ++r.evaluations;
        if (e < best * (1 - 1e-9)) {
          best = e;
          r.profile = std::move(p);
          moved = true;
          if (opt.progress) {
            char line[200];
            std::snprintf(line, sizeof line, "fit: %s %.4g -> %.4g ns, mean |log error| %.4f (%d runs of the suite)",
                          f.name().c_str(), v, get(r.profile, f), best, r.evaluations);
            opt.progress(line);
          }
          break;
        }
      }
    }
    if (!moved) factor = std::sqrt(factor);
  }
  r.error_after = best;
  return r;
}

}  // namespace gmp::calibration
