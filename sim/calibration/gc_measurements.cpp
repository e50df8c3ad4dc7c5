// The GC validation's measurement file: see gc_measurements.h.
#include "sim/calibration/gc_measurements.h"

#include "sim/scenario/limits.h"

#include <sstream>

namespace gmp::calibration {

void GCPointSamples::add(double ns, const GCFigures& f) {
  ns_per_op.push_back(ns);
  cycles_per_op.push_back(f.cycles_per_op);
  cycles_per_s.push_back(f.cycles_per_s);
  gc_cpu_share.push_back(f.gc_cpu_share);
  pause_ms_mean.push_back(f.pause_ms_mean);
  goal_mb.push_back(f.goal_mb_mean);
}

namespace {

constexpr char kPoint[] = "# point: ";

GCPointKey parse_point(const std::string& line, const std::string& where) {
  const auto fail = [&](const std::string& what) { throw GCMeasurementError(where + ": " + what); };
  std::istringstream in(line.substr(sizeof kPoint - 1));
  GCPointKey k;
  std::string procs, gogc, round, extra;
  if (!(in >> k.bench >> procs >> gogc >> round) || (in >> extra)) {
    fail("expected \"# point: BenchmarkName procs=P gogc=G round=R\"");
  }
  if (k.bench.rfind("Benchmark", 0) != 0 || k.bench.size() > 200) fail("a benchmark name, not '" + k.bench + "'");
  const auto number = [&](const std::string& field, const char* key, long lo, long hi) {
    const std::string pre = std::string(key) + "=";
    if (field.rfind(pre, 0) != 0) fail(std::string("expected ") + key + "=N, not '" + field + "'");
    const std::string v = field.substr(pre.size());
    if (std::string(key) == "gogc" && v == "off") return -1L;
    if (v.empty() || v.size() > 7 || v.find_first_not_of("0123456789") != std::string::npos || std::stol(v) < lo ||
        std::stol(v) > hi) {
      fail(std::string(key) + " '" + v + "' is not " + std::to_string(lo) + " to " + std::to_string(hi) +
           (std::string(key) == "gogc" ? " or off" : ""));
    }
    return std::stol(v);
  };
  k.procs = static_cast<int32_t>(number(procs, "procs", 1, scenario::kMaxProcs));
  k.gogc = static_cast<int32_t>(number(gogc, "gogc", 1, 100000));
  number(round, "round", 1, 1000000);
  return k;
}

}  // namespace

GCMeasurements read_gc_measurements(const std::string& text, const std::string& origin) {
  GCMeasurements out;
  bool have = false;
  GCPointKey key;
  size_t key_line = 0;
  std::string section;
  const auto close = [&] {
    if (!have) return;
    const std::string where = origin + ":" + std::to_string(key_line);
    const GoOutput o = split_go_output(section, where + " (its run)");
    const BenchRun* found = nullptr;
    for (const BenchRun& r : o.runs) {
      if (r.key.name != key.bench || r.key.procs != key.procs) continue;
      if (found != nullptr) throw GCMeasurementError(where + ": two results of " + key.bench + " in one run");
      found = &r;
    }
    if (found == nullptr) {
      throw GCMeasurementError(where + ": the run has no result of " + key.bench + " at " +
                               std::to_string(key.procs) + " Ps");
    }
    if (out.points.find(key) == out.points.end()) out.order.push_back(key);
    out.points[key].add(found->ns_per_op, gc_figures(*found));
    section.clear();
  };
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    const std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    at = nl == std::string::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.rfind(kPoint, 0) == 0) {
      close();
      key = parse_point(line, origin + ":" + std::to_string(line_no));
      key_line = line_no;
      have = true;
      continue;
    }
    if (have) {
      section += line;
      section += '\n';
    }
  }
  close();
  return out;
}

GCTraceLine gctrace_line_of(const rt::GCCycleRecord& c) {
  GCTraceLine l;
  const auto ms = [](int64_t ns) { return static_cast<double>(ns) / 1e6; };
  l.n = c.n;
  l.at_s = static_cast<double>(c.start) / 1e9;
  l.sweep_term_clock_ms = ms(c.sweepTermWall);
  l.mark_clock_ms = ms(c.markWall);
  l.mark_term_clock_ms = ms(c.markTermWall);
  l.sweep_term_cpu_ms = ms(c.sweepTermCpu);
  l.assist_cpu_ms = ms(c.assistCpu);
  l.background_cpu_ms = ms(c.backgroundCpu);
  l.idle_cpu_ms = ms(c.idleCpu);
  l.mark_term_cpu_ms = ms(c.markTermCpu);
  l.heap_start_mb = c.heapStart >> 20;
  l.heap_end_mb = c.heapEnd >> 20;
  l.heap_live_mb = c.heapLive >> 20;
  l.goal_mb = c.heapGoal >> 20;
  l.stacks_mb = c.stacks >> 20;
  l.globals_mb = c.globals >> 20;
  l.procs = c.procs;
  l.forced = c.forced;
  return l;
}

BenchRun bench_run_of(const engine::SimResult& r, const std::string& name) {
  BenchRun b;
  b.key = BenchKey{name, r.procs};
  b.iterations = r.ops;
  b.ns_per_op = r.ns_per_op;
  // Only the cycles up to the measured loop's end count; gc_figures starts after the last forced.
  for (const rt::GCCycleRecord& c : r.gc.cycles) b.cycles.push_back(gctrace_line_of(c));
  return b;
}

}  // namespace gmp::calibration
