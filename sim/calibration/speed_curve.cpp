// A core group's speed curve from BenchmarkCPU's points: see speed_curve.h.
#include "sim/calibration/speed_curve.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "sim/calibration/fit.h"

namespace gmp::calibration {

std::vector<cost::BusySpeed> busy_speed_from_points(const std::vector<CpuPoint>& points, const cost::CoreGroup& group,
                                                    const std::string& how) {
  const uint32_t cluster = group.cluster_size != 0 ? group.cluster_size : group.count;
  const CpuPoint* one = nullptr;
  for (const CpuPoint& p : points) {
    if (p.procs == 1 && p.measured > 0) one = &p;
  }
  if (one == nullptr || cluster < 2) return {};
  // busy count -> (factor, the point it came from); a point at exactly busy = n wins over a
  // whole number of full clusters.
  std::map<uint32_t, std::pair<double, const CpuPoint*>> derived;
  for (const CpuPoint& p : points) {
    if (p.procs < 2 || !(p.measured > 0) || static_cast<uint32_t>(p.procs) > group.count) continue;
    const auto n = static_cast<uint32_t>(p.procs);
    const bool exact = n <= cluster;
    if (!exact && n % cluster != 0) continue;
    const uint32_t busy = exact ? n : cluster;
    if (const auto it = derived.find(busy); it != derived.end() && !exact) {
      const int32_t had = it->second.second->procs;
      if (had == static_cast<int32_t>(busy) || had < p.procs) continue;  // exact, or fewer clusters, wins
    }
    const double measured = one->measured / (n * p.measured);
    const double simulated = p.simulated > 0 && one->simulated > 0 ? one->simulated / (n * p.simulated) : 1.0;
    derived[busy] = {std::clamp(measured / simulated, cost::kMinBusyFactor, cost::kMaxBusyFactor), &p};
  }
  if (derived.empty()) return {};
  std::map<uint32_t, cost::BusySpeed> out;
  for (const cost::BusySpeed& b : group.busy_speed) out[b.busy] = b;
  out[1] = cost::BusySpeed{1, 1.0, "by definition: the speed is measured with one core busy (BenchmarkCPU at -cpu 1)"};
  for (const auto& [busy, d] : derived) {
    const CpuPoint& p = *d.second;
    char text[320];
    std::snprintf(text, sizeof text,
                  "measured: BenchmarkCPU at -cpu 1 and -cpu %d, %.6g and %.6g ns/op: per-core efficiency "
                  "t1/(%d t%d) = %.4f, over the %.4f simulated without a curve",
                  p.procs, one->measured, p.measured, p.procs, p.procs, one->measured / (p.procs * p.measured),
                  p.simulated > 0 && one->simulated > 0 ? one->simulated / (p.procs * p.simulated) : 1.0);
    out[busy] = cost::BusySpeed{busy, d.first, std::string(text) + (busy == static_cast<uint32_t>(p.procs)
                                                                          ? ""
                                                                          : "; every busy cluster full") +
                                                   " (" + how + ")"};
  }
  std::vector<cost::BusySpeed> curve;
  for (auto& [busy, b] : out) {
    if (busy <= cluster) curve.push_back(std::move(b));
  }
  return curve;
}

std::string measure_speed_curve(const std::vector<Point>& suite, cost::Profile& prof, size_t jobs,
                                const std::string& how) {
  if (prof.machine.core_groups.empty()) return "";
  std::vector<Point> cpu;
  for (const Point& p : suite) {
    if (p.bench == "BenchmarkCPU") cpu.push_back(p);
  }
  cost::CoreGroup& group = prof.machine.core_groups[0];
  cost::Profile flat = prof;  // the model's own efficiency: no curve, no memory slowdown
  flat.machine.core_groups[0].busy_speed.clear();
  flat.machine.memory_slowdown.reset();
  const std::vector<double> sim = simulate_points(cpu, flat, jobs);
  std::vector<CpuPoint> points;
  for (size_t i = 0; i < cpu.size(); ++i) points.push_back(CpuPoint{cpu[i].procs, cpu[i].measured, sim[i]});
  std::vector<cost::BusySpeed> curve = busy_speed_from_points(points, group, how);
  if (curve.empty()) return "";
  group.busy_speed = std::move(curve);
  std::string line = "speed curve of core group 0 (" + group.kind + "), measured by BenchmarkCPU:";
  for (const cost::BusySpeed& b : group.busy_speed) {
    char point[48];
    std::snprintf(point, sizeof point, " %u busy %.4f", b.busy, b.factor);
    line += point;
  }
  return line;
}

}  // namespace gmp::calibration
