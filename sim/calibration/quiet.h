// Is the machine quiet while calibrate measures? From /proc/stat (all CPUs' busy, idle and steal
// time) read before and after one run of a benchmark binary, and the CPU time that run itself
// used (getrusage of the waited-for child): the CPU time of everything else, as cores, and the
// share of time the hypervisor gave to other guests (steal).
//
// Protocol: parse_proc_stat and parse_loadavg read the files' text (tests feed them text; the
// caller reads /proc); quietness() compares two /proc/stat readings. Thresholds (kQuiet*) are
// what calibrate warns above; docs/calibration.md gives them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gmp::calibration {

// Above these a run is not quiet.
inline constexpr double kQuietOthersCores = 0.10;  // other processes' CPU, in cores (10% of one)
inline constexpr double kQuietSteal = 0.02;        // steal, a share of all CPUs' time
inline constexpr double kQuietLoad = 0.5;          // the 1-minute load average before measuring
// Shorter runs say nothing: /proc/stat counts in ticks (10 ms at 100 per second), so one tick of
// error over a 10-ms run would read as a whole core.
inline constexpr double kQuietMinSeconds = 0.5;

// The aggregate "cpu" line of /proc/stat, in clock ticks, and the number of "cpuN" lines.
struct CpuTimes {
  uint64_t busy = 0;   // user + nice + system + irq + softirq (guest time is inside user)
  uint64_t steal = 0;
  uint64_t total = 0;  // busy + idle + iowait + steal
  int cpus = 0;
};
std::optional<CpuTimes> parse_proc_stat(const std::string& text);  // nullopt: no well-formed cpu line
std::optional<double> parse_loadavg(const std::string& text);      // the 1-minute figure

struct Quietness {
  double wall_s = 0;        // the interval, from the ticks of all CPUs over their count
  double others_cores = 0;  // busy CPU time not the run's nor calibrate's own, over wall_s
  double steal = 0;         // steal ticks over all ticks
  bool known = false;       // false: the interval was under kQuietMinSeconds (too short to say)
  bool quiet() const { return !known || (others_cores <= kQuietOthersCores && steal <= kQuietSteal); }
};
// `own_cpu_s`: the CPU time of the run and of calibrate itself over the interval; `ticks_per_s`:
// sysconf(_SC_CLK_TCK).
Quietness quietness(const CpuTimes& before, const CpuTimes& after, double own_cpu_s, double ticks_per_s);

}  // namespace gmp::calibration
