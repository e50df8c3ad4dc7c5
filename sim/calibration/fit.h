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
// 1.01. Every value stays inside its profile range. Deterministic: the same points and start
// give the same profile (the simulations run in parallel but each is seeded and independent).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"

namespace gmp::calibration {

struct Point {
  std::string bench;
  int32_t procs = 1;
  double measured = 0;  // ns/op, the median
  double spread = 0;    // (max - min) / median of the measured samples
  const scenario::Scenario* scenario = nullptr;
};

// A parameter the fit moves: a cost, or the machine's speed_ns_per_iteration.
struct FitParam {
  bool speed = false;
  cost::Param param = cost::Param::ChanOp;
  std::string name() const;
};
// "chan_op" or "speed_ns_per_iteration"; throws std::invalid_argument for an unknown name.
FitParam fit_param_by_name(const std::string& name);
// The default set: the costs the suite isolates.
std::vector<FitParam> default_fit_params();

double get(const cost::Profile& p, const FitParam& f);
void set(cost::Profile& p, const FitParam& f, double v);

// Simulated ns/op of each point under `prof`, `jobs` simulations at a time; NaN where the run
// failed or measured nothing.
std::vector<double> simulate_points(const std::vector<Point>& pts, const cost::Profile& prof, size_t jobs);

// The objective above; points with NaN count as an error of 10x. (0.1: about 10% at every point.)
double fit_error(const std::vector<Point>& pts, const std::vector<double>& sim);

struct FitOptions {
  std::vector<FitParam> params;
  size_t jobs = 1;
  int max_evaluations = 400;
  std::function<void(const std::string&)> progress;  // one line per accepted step
};

struct FitResult {
  cost::Profile profile;
  double error_before = 0, error_after = 0;
  int evaluations = 0;
};

FitResult fit_profile(const std::vector<Point>& pts, const cost::Profile& start, const FitOptions& opt);

}  // namespace gmp::calibration
