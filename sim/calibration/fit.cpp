// Fitting a cost profile to measurements: see fit.h.
#include "sim/calibration/fit.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <thread>

#include "sim/calibration/gc_measurements.h"
#include "sim/calibration/gctrace.h"
#include "sim/simulation/simulation.h"

namespace gmp::calibration {

std::string FitParam::name() const {
  if (gc >= 0) return std::string(cost::gc_cost_fields().at(static_cast<size_t>(gc)).name);
  return speed ? std::string("speed_ns_per_iteration") : std::string(cost::param_name(param));
}

FitParam fit_param_by_name(const std::string& name) {
  if (name == "speed_ns_per_iteration") return FitParam{true, cost::Param::ChanOp};
  if (const auto p = cost::param_by_name(name)) return FitParam{false, *p};
  if (const auto g = cost::gc_cost_field_by_name(name)) return FitParam{false, cost::Param::ChanOp, static_cast<int>(*g)};
  throw std::invalid_argument("unknown parameter '" + name + "'");
}

std::vector<FitParam> default_fit_params() {
  std::vector<FitParam> out{FitParam{true, cost::Param::ChanOp}};
  for (const char* n : {"chan_op", "schedule_pass", "newproc", "goexit", "mutex_fast_path", "syscall_enter_exit",
                        "futex_wake", "futex_wake_latency", "futex_sleep", "cacheline_transfer", "timer_add",
                        "gogo", "mcall"}) {
    out.push_back(fit_param_by_name(n));
  }
  for (const std::string& n : gc_fit_param_names()) out.push_back(fit_param_by_name(n));
  return out;
}

const std::vector<std::string>& gc_fit_param_names() {
  static const std::vector<std::string> names = {"mark_ns_per_byte",  "stack_scan_ns_per_byte", "sweep_ns_per_page",
                                                 "alloc_ns_per_object", "alloc_ns_per_byte",    "write_barrier_slowdown",
                                                 "mark_ns_per_object"};
  return names;
}

double get(const cost::Profile& p, const FitParam& f) {
  if (f.gc >= 0) return (p.gc.*cost::gc_cost_fields().at(static_cast<size_t>(f.gc)).member).value;
  return f.speed ? p.machine.speed_ns_per_iteration.value : p[f.param];
}

cost::Sourced& sourced(cost::Profile& p, const FitParam& f) {
  if (f.gc >= 0) return p.gc.*cost::gc_cost_fields().at(static_cast<size_t>(f.gc)).member;
  return f.speed ? p.machine.speed_ns_per_iteration : p.params[static_cast<size_t>(f.param)];
}

Range fit_range(const FitParam& f) {
  Range r = f.speed ? Range{cost::kMinNsPerIteration, cost::kMaxNsPerIteration} : Range{0.0, cost::kMaxCost};
  if (f.gc >= 0) {
    const cost::GCCostField& g = cost::gc_cost_fields().at(static_cast<size_t>(f.gc));
    r = Range{g.lo, g.hi};
  }
  if (const auto b = cost::physical_bound(f.name())) {
    r.lo = std::max(r.lo, b->lo);
    r.hi = std::min(r.hi, b->hi);
  }
  return r;
}

double regularization(const cost::Profile& p, const cost::Profile& anchor, const std::vector<FitParam>& params) {
  if (params.empty()) return 0;
  double sum = 0;
  for (const FitParam& f : params) {
    const double a = get(anchor, f), v = get(p, f);
    if (!(a > 0)) continue;  // nothing to pull toward
    // A value moved to 0 counts as the range's floor, or 1 ns: the term stays finite.
    const double floor = std::max(fit_range(f).lo, 1e-3);
    const double l = std::log(std::max(v, floor) / a);
    sum += l * l;
  }
  return sum / static_cast<double>(params.size());
}

void set(cost::Profile& p, const FitParam& f, double v) {
  if (f.gc >= 0) {
    const cost::GCCostField& g = cost::gc_cost_fields().at(static_cast<size_t>(f.gc));
    cost::Sourced& s = p.gc.*g.member;
    s.value = std::clamp(v, g.lo, g.hi);
    if (s.unit.empty()) s.unit = std::string(g.unit);  // an optional field the profile lacked
    return;
  }
  if (f.speed) {
    p.machine.speed_ns_per_iteration.value = std::clamp(v, cost::kMinNsPerIteration, cost::kMaxNsPerIteration);
    return;
  }
  const auto i = static_cast<size_t>(f.param);
  p.ns[i] = p.params[i].value = std::clamp(v, 0.0, cost::kMaxCost);  // the fit keeps to fit_range() itself
}

std::vector<double> simulate_points(const std::vector<Point>& pts, const cost::Profile& prof, size_t jobs) {
  std::vector<double> out;
  for (const SimPoint& s : simulate_points_gc(pts, prof, jobs)) out.push_back(s.ns_per_op);
  return out;
}

std::vector<SimPoint> simulate_points_gc(const std::vector<Point>& pts, const cost::Profile& prof, size_t jobs) {
  std::vector<SimPoint> out(pts.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < pts.size();) {
      engine::SimConfig cfg;
      cfg.procs = pts[i].procs;
      cfg.seed = 1;
      const engine::SimResult r = engine::simulate(*pts[i].scenario, prof, cfg);
      if (r.stop == engine::Engine::Stop::Exit && r.measured) {
        out[i].ns_per_op = r.ns_per_op;
        const GCFigures f = gc_figures(bench_run_of(r, pts[i].bench));
        out[i].gc_cycles_per_op = f.cycles_per_op;
        out[i].gc_cpu_share = f.gc_cpu_share;
      }
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

double gc_fit_error(const std::vector<Point>& pts, const std::vector<SimPoint>& sim) {
  double sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    if (!pts[i].has_gc_target()) continue;
    ++n;
    const SimPoint& s = sim[i];
    const double cyc = s.gc_cycles_per_op > 0 ? std::abs(std::log(s.gc_cycles_per_op / pts[i].gc_cycles_per_op))
                                              : std::log(10.0);
    const double cpu = std::abs(std::log((s.gc_cpu_share + 0.01) / (pts[i].gc_cpu_share + 0.01)));
    sum += (cyc + cpu) / 2;
  }
  return n == 0 ? 0 : sum / static_cast<double>(n);
}

namespace {
std::vector<double> ns_of(const std::vector<SimPoint>& s) {
  std::vector<double> out;
  for (const SimPoint& p : s) out.push_back(p.ns_per_op);
  return out;
}
}  // namespace

FitResult fit_profile(const std::vector<Point>& pts, const cost::Profile& start, const FitOptions& opt) {
  FitResult r;
  r.profile = start;
  const cost::Profile& anchor = opt.anchor != nullptr ? *opt.anchor : start;
  const auto penalty = [&](const cost::Profile& p) {
    return opt.regularize > 0 ? opt.regularize * regularization(p, anchor, opt.params) : 0.0;
  };
  const auto gc_term = [&](const std::vector<SimPoint>& s) {
    return opt.gc_weight > 0 ? gc_fit_error(pts, s) : 0.0;
  };
  const std::vector<SimPoint> first = simulate_points_gc(pts, r.profile, opt.jobs);
  double err = fit_error(pts, ns_of(first));
  double gc_err = gc_term(first);
  double best = err + opt.gc_weight * gc_err + penalty(r.profile);
  r.error_before = err;
  r.gc_error_before = gc_fit_error(pts, first);
  r.evaluations = 1;
  for (double factor = std::max(opt.first_factor, 1.0); factor > 1.01 && r.evaluations < opt.max_evaluations;) {
    bool moved = false;
    for (const FitParam& f : opt.params) {
      const double v = get(r.profile, f);
      const Range range = fit_range(f);
      // A zero cost is moved from a nanosecond, or a speed from its floor: a product never leaves 0.
      const double base = v > 0 ? v : (f.speed ? cost::kMinNsPerIteration : 1.0);
      for (const double raw : {base * factor, v > 0 ? base / factor : 0.0}) {
        const double trial = std::clamp(raw, range.lo, range.hi);
        if (r.evaluations >= opt.max_evaluations || trial == v) continue;
        cost::Profile p = r.profile;
        set(p, f, trial);
        const std::vector<SimPoint> s = simulate_points_gc(pts, p, opt.jobs);
        const double e = fit_error(pts, ns_of(s));
        const double g = gc_term(s);
        const double o = e + opt.gc_weight * g + penalty(p);
        ++r.evaluations;
        if (o < best * (1 - 1e-9)) {
          best = o;
          err = e;
          gc_err = g;
          r.profile = std::move(p);
          moved = true;
          if (opt.progress) {
            char line[240];
            std::snprintf(line, sizeof line,
                          "fit: %s %.4g -> %.4g ns, mean |log error| %.4f, objective %.4f (%d runs of the suite)",
                          f.name().c_str(), v, get(r.profile, f), e, o, r.evaluations);
            opt.progress(line);
          }
          break;
        }
      }
    }
    if (!moved) factor = std::sqrt(factor);
  }
  r.error_after = err;
  const bool any_gc = std::any_of(pts.begin(), pts.end(), [](const Point& p) { return p.has_gc_target(); });
  r.gc_error_after = opt.gc_weight > 0 ? gc_err : any_gc ? gc_fit_error(pts, simulate_points_gc(pts, r.profile, opt.jobs)) : 0;
  r.penalty_after = penalty(r.profile);
  for (const FitParam& f : opt.params) {
    const double v = get(r.profile, f);
    const Range range = fit_range(f);
    char line[160];
    if (range.lo > 0 && v <= range.lo * (1 + 1e-9)) {
      std::snprintf(line, sizeof line, "%s at its lower bound %.6g", f.name().c_str(), range.lo);
    } else if (v >= range.hi * (1 - 1e-9)) {
      std::snprintf(line, sizeof line, "%s at its upper bound %.6g", f.name().c_str(), range.hi);
    } else {
      continue;
    }
    r.at_bound.push_back(line);
  }
  return r;
}

std::vector<double> cross_validate(const std::vector<Point>& pts, const cost::Profile& full, const FitOptions& opt,
                                   const std::function<void(const std::string&)>& progress) {
  std::vector<std::string> benches;
  for (const Point& p : pts) {
    if (std::find(benches.begin(), benches.end(), p.bench) == benches.end()) benches.push_back(p.bench);
  }
  if (benches.size() < 2) return {};
  std::vector<double> out(pts.size(), std::numeric_limits<double>::quiet_NaN());
  for (size_t b = 0; b < benches.size(); ++b) {
    std::vector<Point> rest, left;
    std::vector<size_t> where;
    for (size_t i = 0; i < pts.size(); ++i) {
      if (pts[i].bench == benches[b]) {
        left.push_back(pts[i]);
        where.push_back(i);
      } else {
        rest.push_back(pts[i]);
      }
    }
    FitOptions o = opt;
    o.progress = nullptr;
    const FitResult r = fit_profile(rest, full, o);
    const std::vector<double> sim = simulate_points(left, r.profile, opt.jobs);
    std::string errors;
    for (size_t k = 0; k < left.size(); ++k) {
      out[where[k]] = sim[k];
      char e[64];
      std::snprintf(e, sizeof e, " %d P %+.1f%%", left[k].procs, 100 * (sim[k] - left[k].measured) / left[k].measured);
      errors += e;
    }
    if (progress) {
      char line[200];
      std::snprintf(line, sizeof line, "cross-validation [%zu/%zu] without %s: %d runs, error on it:", b + 1,
                    benches.size(), benches[b].c_str(), r.evaluations);
      progress(line + errors);
    }
  }
  return out;
}

}  // namespace gmp::calibration
