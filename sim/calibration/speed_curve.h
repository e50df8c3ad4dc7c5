// A core group's speed curve (profile.proto, CoreGroup.busy_speed) from BenchmarkCPU measured at
// several GOMAXPROCS values (gmpsim calibrate).
//
// BenchmarkCPU is b.RunParallel over a loop in registers: at n Ps, n goroutines compute on n
// cores, so its ns/op t(n) against t(1) gives each core's speed with n cores busy as
// t(1) / (n t(n)), the per-core efficiency. The model itself loses a little at n Ps (the
// scheduler's and RunParallel's own work), so the curve takes the measured efficiency over the one
// simulated without a curve: factor(n) = [t(1) / (n t(n))] / [s(1) / (n s(n))].
//
// Which point sets which busy count: the engine puts n busy threads on the n fastest cores, lowest
// index first, so up to the first group's cluster size they all share its first cluster and n is
// that cluster's busy count. A point at a whole number of clusters (n = k x cluster size, within
// the first group) has every busy cluster full: it stands for busy = cluster size when no point
// at exactly that count was measured. Other points (some clusters part full, or slower groups
// busy) are not used. busy 1 is 1.0 by definition (the speed is measured at 1 P).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cost/profile.h"

namespace gmp::calibration {

struct CpuPoint {
  int32_t procs = 1;
  double measured = 0;   // BenchmarkCPU ns/op at procs
  double simulated = 0;  // the same simulated without a curve; 0: taken to scale perfectly
};

// The curve for `group` (its count and cluster_size) from the points; `how` ends each entry's
// source (what was measured, where). Factors are clamped to the profile's range (a measured
// efficiency above 1 is noise). Empty if no point beyond 1 P can be used; entries of the group's
// current curve at busy counts no point measures are kept, in order.
std::vector<cost::BusySpeed> busy_speed_from_points(const std::vector<CpuPoint>& points, const cost::CoreGroup& group,
                                                    const std::string& how);

struct Point;  // fit.h

// The suite's BenchmarkCPU points (those of `suite` named so) simulated under `prof` without the
// first group's curve or a memory slowdown, then the first group's curve set from them as above.
// Returns a line saying what was set, empty (and prof unchanged) if nothing could be derived.
std::string measure_speed_curve(const std::vector<Point>& suite, cost::Profile& prof, size_t jobs,
                                const std::string& how);

}  // namespace gmp::calibration
