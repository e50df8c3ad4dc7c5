// The machine's quietness while measuring: see quiet.h.
#include "sim/calibration/quiet.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace gmp::calibration {

std::optional<CpuTimes> parse_proc_stat(const std::string& text) {
  std::istringstream in(text);
  std::optional<CpuTimes> out;
  int cpus = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu", 0) != 0) continue;
    std::istringstream fl(line);
    std::string name;
    fl >> name;
    if (name != "cpu") {
      if (name.size() > 3 && name.find_first_not_of("0123456789", 3) == std::string::npos) ++cpus;
      continue;
    }
    // user nice system idle iowait irq softirq steal [guest guest_nice]
    std::vector<uint64_t> v;
    for (std::string f; fl >> f && v.size() < 8;) {
      if (f.empty() || f.size() > 19 || f.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
      v.push_back(std::strtoull(f.c_str(), nullptr, 10));
    }
    if (v.size() < 4) return std::nullopt;
    v.resize(8, 0);  // old kernels print fewer fields
    CpuTimes t;
    t.busy = v[0] + v[1] + v[2] + v[5] + v[6];
    t.steal = v[7];
    t.total = t.busy + v[3] + v[4] + t.steal;
    out = t;
  }
  if (out) out->cpus = std::max(cpus, 1);
  return out;
}

std::optional<double> parse_loadavg(const std::string& text) {
  std::istringstream in(text);
  std::string f;
  if (!(in >> f)) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(f.c_str(), &end);
  if (end != f.c_str() + f.size() || errno != 0 || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

Quietness quietness(const CpuTimes& before, const CpuTimes& after, double own_cpu_s, double ticks_per_s) {
  Quietness q;
  if (after.total <= before.total || after.busy < before.busy || after.steal < before.steal || ticks_per_s <= 0) {
    return q;
  }
  const double total = static_cast<double>(after.total - before.total);
  q.wall_s = total / ticks_per_s / std::max(after.cpus, 1);
  const double busy_s = static_cast<double>(after.busy - before.busy) / ticks_per_s;
  q.others_cores = std::max(0.0, busy_s - own_cpu_s) / q.wall_s;
  q.steal = static_cast<double>(after.steal - before.steal) / total;
  q.known = q.wall_s >= kQuietMinSeconds;
  return q;
}

}  // namespace gmp::calibration
