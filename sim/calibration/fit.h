// Fitting a cost profile to real measurements (gmpsim calibrate).
//
// A Point pairs a Go benchmark at one GOMAXPROCS with its scenario (sim/calibration/*/NAME.textproto,
// whose `benchmark` reports ns/op as go test -bench does) and the measured median.
//
// The fit: minimise the mean over the points of |ln(simulated / measured)|, so that a 10% error
// weighs the same on a 50 ns and a 50 us benchmark, and one benchmark the model cannot match (or
// a noisy measurement) pulls the others less than a squared error would, over the chosen
// parameters, by coordinate
// descent in log space: each parameter in turn is multiplied and divided by a factor, the better
// value kept; after a pass that changes nothing the factor is square-rooted, from 2 down to
// 1.01. Every value stays inside its physical range (sim/cost/physical_bounds.h) and its profile
// range. Deterministic: the same points and start give the same profile (the simulations run in
// parallel but each is seeded and independent).
//
// Regularisation: with `regularize` = lambda > 0 the objective adds lambda * the mean over the
// fitted parameters of ln(v / v_anchor)^2, v_anchor being the anchor profile's value (the base
// profile: measured or documented). With few points the fit can trade one parameter against
// others; the penalty makes a value far from its anchor pay for itself in error. A parameter whose
// anchor is 0 (a feature that is off, or nothing known) has no term: there is nothing to pull it
// toward.
//
// Cross-validation: cross_validate fits once per benchmark with that benchmark's points left out,
// warm-started from a full fit, and predicts the points it left out.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "sim/cost/physical_bounds.h"
#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"

namespace gmp::calibration {

struct Point {
  std::string bench;
  int32_t procs = 1;
  double measured = 0;  // ns/op, the median
  double spread = 0;    // (max - min) / median of the measured samples
  const scenario::Scenario* scenario = nullptr;
  double ci_lo = 0, ci_hi = 0, ci_level = 0;  // the median's confidence interval (bench_output.h)
  size_t samples = 0;
  // GC targets from GODEBUG=gctrace=1 (gctrace.h, gc_figures): the medians over the runs of the
  // loop's GC cycles per op and GC CPU share (0 to 1). A point whose median cycles per op is 0
  // (the loop collected nothing) has no GC target.
  double gc_cycles_per_op = 0;
  double gc_cpu_share = 0;
  bool has_gc_target() const { return gc_cycles_per_op > 0; }
};

// A parameter the fit moves: a cost, the machine's speed_ns_per_iteration, or a field of the gc
// section (gc >= 0: its index in cost::gc_cost_fields(); the value's unit is the field's, ns/byte
// or a fraction as well as ns).
struct FitParam {
  bool speed = false;
  cost::Param param = cost::Param::ChanOp;
  int gc = -1;
  std::string name() const;
};
// "chan_op", "speed_ns_per_iteration" or a gc field ("mark_ns_per_byte"); throws
// std::invalid_argument for an unknown name.
FitParam fit_param_by_name(const std::string& name);
// The default set: the costs the suite isolates, and gc_fit_param_names().
std::vector<FitParam> default_fit_params();
// The garbage collector's cost parameters (profile.proto's gc section) that the fit suite's
// allocating benchmarks and the GC targets move. A fit of a gc field changes nothing on a profile
// without a gc section (the simulation reads none).
const std::vector<std::string>& gc_fit_param_names();

double get(const cost::Profile& p, const FitParam& f);
cost::Sourced& sourced(cost::Profile& p, const FitParam& f);  // the value with its unit and source
void set(cost::Profile& p, const FitParam& f, double v);

// Simulated ns/op of each point under `prof`, `jobs` simulations at a time; NaN where the run
// failed or measured nothing.
std::vector<double> simulate_points(const std::vector<Point>& pts, const cost::Profile& prof, size_t jobs);

// The same with the run's GC figures, computed as for the real run (gc_figures of the simulated
// cycles after the last forced one).
struct SimPoint {
  double ns_per_op = std::numeric_limits<double>::quiet_NaN();
  double gc_cycles_per_op = 0, gc_cpu_share = 0;
};
std::vector<SimPoint> simulate_points_gc(const std::vector<Point>& pts, const cost::Profile& prof, size_t jobs);

// The GC targets' error: the mean over the points with a GC target of
// (|ln(simulated / measured cycles per op)| + |ln((simulated + 0.01) / (measured + 0.01) GC CPU
// share)|) / 2; the 0.01 (one point of CPU) keeps a GC CPU of 0.1% against 0.2% from weighing like
// 10% against 20%. A simulated run with no cycle against a measured one counts ln(10) for its
// cycles. 0 when no point has a target.
double gc_fit_error(const std::vector<Point>& pts, const std::vector<SimPoint>& sim);

// The objective above; points with NaN count as an error of 10x. (0.1: about 10% at every point.)
double fit_error(const std::vector<Point>& pts, const std::vector<double>& sim);

// The range the fit keeps `f` in: its physical range (sim/cost/physical_bounds.h) intersected with
// the loader's.
struct Range {
  double lo = 0, hi = 0;
};
Range fit_range(const FitParam& f);

// The penalty term above (without lambda) of `p` against `anchor` over `params`.
double regularization(const cost::Profile& p, const cost::Profile& anchor, const std::vector<FitParam>& params);

struct FitOptions {
  std::vector<FitParam> params;
  size_t jobs = 1;
  int max_evaluations = 400;
  double first_factor = 2.0;               // the first step's multiplier (more than 1.01)
  double regularize = 0;                   // lambda
  double gc_weight = 0;                    // the GC targets' weight: objective += gc_weight * gc_fit_error
  const cost::Profile* anchor = nullptr;   // what the penalty pulls toward; null: the start
  std::function<void(const std::string&)> progress;  // one line per accepted step
};

struct FitResult {
  cost::Profile profile;
  double error_before = 0, error_after = 0;  // fit_error: the points alone
  double gc_error_before = 0, gc_error_after = 0;  // gc_fit_error
  double penalty_after = 0;                  // regularization(), times lambda
  int evaluations = 0;
  std::vector<std::string> at_bound;         // "futex_wake at its upper bound 50000 ns" per such parameter
};

FitResult fit_profile(const std::vector<Point>& pts, const cost::Profile& start, const FitOptions& opt);

// Leave-one-benchmark-out: for each benchmark (in the order of first appearance in `pts`), a fit
// without its points started from `full` with `opt` (its own budget and first factor), then that
// benchmark's points simulated with the result. Returns the prediction per point of `pts` (NaN
// where a run failed), or nothing when `pts` has fewer than two benchmarks (nothing to fit to
// without the one left out). `progress` gets one line per benchmark left out.
std::vector<double> cross_validate(const std::vector<Point>& pts, const cost::Profile& full, const FitOptions& opt,
                                   const std::function<void(const std::string&)>& progress);

}  // namespace gmp::calibration
