#include "sim/cli/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "sim/cli/flags.h"
#include "sim/runtime/gctrace.h"
#include "sim/scenario/settings.h"

namespace gmp::cli {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string dur(int64_t ns) {
  if (ns < 10000) return std::to_string(ns) + "ns";
  if (ns < 10000000) return fmt("%.3fus", static_cast<double>(ns) / 1e3);
  if (ns < 10000000000LL) return fmt("%.3fms", static_cast<double>(ns) / 1e6);
  return fmt("%.3fs", static_cast<double>(ns) / 1e9);
}

// testing.prettyPrint: Go's precision rule for ns/op.
std::string pretty_ns(double x) {
  const double y = std::fabs(x);
  if (y == 0 || y >= 999.95) return fmt("%10.0f ns/op", x);
  if (y >= 99.995) return fmt("%12.1f ns/op", x);
  if (y >= 9.9995) return fmt("%13.2f ns/op", x);
  if (y >= 0.99995) return fmt("%14.3f ns/op", x);
  return fmt("%15.4f ns/op", x);
}

// testing.benchmarkName: the -N suffix appears unless GOMAXPROCS is 1.
std::string bench_name(const std::string& name, int32_t procs) {
  return procs == 1 ? name : name + "-" + std::to_string(procs);
}

// One `go test -bench` result line: name[-procs], iterations, ns/op.
std::string bench_line(const engine::SimResult& r) {
  return bench_name(r.bench_name, r.procs) + "\t" + fmt("%8.0f", static_cast<double>(r.ops)) + "\t" + pretty_ns(r.ns_per_op) + "\n";
}

// Text for an SVG element's content.
std::string xml_escape(const std::string& in) {
  std::string out;
  for (char c : in) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

// Bytes in gctrace's unit, 2^20 bytes ("MB"), or KB and B below one.
std::string bytes(uint64_t b) {
  if (b < 1024) return std::to_string(b) + " B";
  if (b < (uint64_t{1} << 20)) return fmt("%.1f KB", static_cast<double>(b) / 1024);
  return fmt("%.1f MB", static_cast<double>(b) / static_cast<double>(uint64_t{1} << 20));
}

const char* stop_name(engine::Engine::Stop s) {
  switch (s) {
    case engine::Engine::Stop::AllExited: return "all threads exited";
    case engine::Engine::Stop::Exit: return "program exited";
    case engine::Engine::Stop::Deadlock: return "every thread blocked";
    case engine::Engine::Stop::TimeLimit: return "virtual-time limit";
    case engine::Engine::Stop::EventLimit: return "event limit";
    case engine::Engine::Stop::Fatal: return "fatal error";
    case engine::Engine::Stop::Stopped: return "stopped by the checker";
    case engine::Engine::Stop::Livelock: return "every thread blocked but spin-waits";
  }
  return "?";
}

}  // namespace

std::string format_assertions(const engine::SimResult& r) {
  if (r.assertions == 0) return "";
  std::set<int32_t> violated;
  for (const auto& v : r.violations) violated.insert(v.index);
  const auto n = static_cast<int32_t>(violated.size());
  std::string s = "assertions: ";
  if (n == 0 && r.assertions_unchecked == 0) {
    s += r.assertions == 1 ? "1 held" : "all " + std::to_string(r.assertions) + " held";
  } else {
    s += std::to_string(n) + " of " + std::to_string(r.assertions) + " violated";
    if (r.assertions_unchecked > 0) {
      s += ", " + std::to_string(r.assertions_unchecked) +
           " not checked (about the program's exit, which the run did not reach)";
    }
  }
  s += "\n";
  // Each violated assertion once, in the order of their first violations, with every violation.
  std::set<int32_t> shown;
  for (const auto& first : r.violations) {
    if (!shown.insert(first.index).second) continue;
    s += "violated: " + first.assertion + "\n";
    for (const auto& v : r.violations) {
      if (v.index == first.index) s += "  " + v.detail + "\n";
    }
  }
  return s;
}

std::string format_gc_summary(const engine::SimResult& r) {
  const rt::GCStats& g = r.gc;
  if (g.allocBytes == 0) return "";
  size_t forced = 0;
  for (const rt::GCCycleRecord& c : g.cycles) forced += c.forced ? 1 : 0;
  // Go's gc_cpu_fraction (gctrace's "#%", MemStats.GCCPUFraction): the GC's CPU without idle
  // marking, over GOMAXPROCS times the time since the start.
  const double capacity = static_cast<double>(r.procs) * static_cast<double>(r.end_time);
  const double share = capacity > 0 ? 100 * static_cast<double>(g.gcCpu) / capacity : 0;
  std::string s = "GC: " + std::to_string(g.cycles.size()) + " cycles";
  if (forced > 0) s += " (" + std::to_string(forced) + " forced)";
  s += ", GC CPU " + fmt("%.1f%%", share) + " of GOMAXPROCS x run time; stop-the-world " +
       std::to_string(g.stwCount) + " pauses, " + dur(g.stwTotal) + " total, " + dur(g.stwMax) + " max; assists " +
       dur(g.assistTime) + "; heap goal " + bytes(g.lastHeapGoal) + ", peak heap " + bytes(g.peakHeap) +
       "; allocated " + bytes(g.allocBytes) + " in " + std::to_string(g.allocObjects) + " objects\n";
  return s;
}

std::string format_cpu_stat(const engine::SimResult& r) {
  if (r.cpu_quota < 0) return "";
  const engine::GroupStats& c = r.cpu_stat;
  return "cpu.stat: nr_periods " + std::to_string(c.nr_periods) + " nr_throttled " + std::to_string(c.nr_throttled) +
         " throttled_usec " + std::to_string(c.throttled_time / 1000) + "\n";
}

namespace {

// A process's cgroup quota as cgroup v2's cpu.max says it (microseconds), and in CPUs.
std::string quota_text(const engine::SimResult& r) {
  if (r.cpu_quota < 0 || r.cpu_period <= 0) return "no quota";
  return "quota " + fmt("%.2f", static_cast<double>(r.cpu_quota) / static_cast<double>(r.cpu_period)) +
         " CPUs (cpu.max " + std::to_string(r.cpu_quota / 1000) + " " + std::to_string(r.cpu_period / 1000) + ")";
}

// One process's section of a run of several: what a run of one prints about its program.
// A process's benchmark line, scheduling latency and (a server's) requests: what a run of one
// process and each process of several print alike.
std::string program_lines(const engine::SimResult& r) {
  std::string s;
  if (r.measured) {
    s += bench_line(r);
  } else if (!r.bench_name.empty()) {
    s += r.bench_name + ": the measured loop did not finish\n";
  }
  s += "scheduling latency (runnable to running): p50 " + dur(r.lat_p50) + "  p90 " + dur(r.lat_p90) + "  p99 " +
       dur(r.lat_p99) + "  max " + dur(r.lat_max) + "  (" + std::to_string(r.lat_samples) + " starts)\n";
  if (r.requests > 0) {
    s += "requests: " + std::to_string(r.answered) + " answered of " + std::to_string(r.requests) + "; latency p50 " +
         dur(r.req_p50) + "  p99 " + dur(r.req_p99) + "  p99.9 " + dur(r.req_p999) + "  max " + dur(r.req_max) + "; " +
         fmt("%.0f", r.req_per_s) + " requests/s\n";
  }
  return s;
}

// What a run and each process end with: every event's count (--events), the assertions, the
// schedtrace lines and the gctrace lines.
std::string closing_lines(const engine::SimResult& r, bool all_events, bool gctrace) {
  std::string s;
  if (all_events) {
    s += "events:";
    for (const auto& [name, n] : r.event_counts) s += " " + name + "=" + std::to_string(n);
    s += "\n";
  }
  s += format_assertions(r);
  for (const auto& line : r.schedtrace) s += line + "\n";
  if (gctrace) {
    for (const auto& line : rt::gctraceLines(r.gc)) s += line + "\n";
  }
  return s;
}

std::string format_process(const engine::SimResult& r, bool all_events, bool gctrace) {
  std::string s = "\nprocess " + r.process + (r.daemon ? " (daemon)" : "") + ": GOMAXPROCS=" + std::to_string(r.procs);
  if (r.procs_auto) s += " (auto)";
  if (r.procs_end != 0 && r.procs_end != r.procs) {
    s += ", " + std::to_string(r.procs_end) + " at the end (" + std::to_string(r.procs_changes) + " changes)";
  }
  s += "; cgroup " + quota_text(r) + "; seed=" + std::to_string(r.seed) + "\n";
  if (r.exited) {
    s += "exited (status " + std::to_string(r.exit_code) + ") at " + dur(r.exit_time) + " virtual\n";
  } else {
    s += "still running when the run ended at " + dur(r.end_time) + " virtual\n";
  }
  if (const size_t from = r.message.find_first_not_of('\n'); from != std::string::npos) s += r.message.substr(from) + "\n";
  s += program_lines(r);
  if (r.client_answered > 0) {
    s += "round trips: " + std::to_string(r.client_answered) + " answered of " + std::to_string(r.client_requests) +
         " sent; latency p50 " + dur(r.client_p50) + "  p99 " + dur(r.client_p99) + "  p99.9 " + dur(r.client_p999) +
         "  max " + dur(r.client_max) + "; " + fmt("%.0f", r.client_per_s) + " round trips/s\n";
  }
  s += "P utilisation:";
  for (size_t i = 0; i < r.utilisation.size(); i++) s += " P" + std::to_string(i) + " " + fmt("%.1f%%", 100 * r.utilisation[i]);
  s += "\n";
  s += "counts: goroutines " + std::to_string(r.goroutines) + ", Ms created " + std::to_string(r.ms_created) +
       ", steals " + std::to_string(r.steals) + ", wakeps " + std::to_string(r.wakeps) + ", handoffs " +
       std::to_string(r.handoffs) + ", preemption requests " + std::to_string(r.preempt_requests) +
       ", preemption signals " + std::to_string(r.preempt_signals) + ", global-queue puts " +
       std::to_string(r.global_puts) + "\n";
  s += format_gc_summary(r);
  s += format_cpu_stat(r);
  return s + closing_lines(r, all_events, gctrace);
}

// A run of several processes: the machine's lines, then a section per process.
std::string format_machine(const engine::SimResult& r, bool all_events, bool gctrace) {
  std::string s = "machine: cores=" + std::to_string(r.cores) + " seed=" + std::to_string(r.seed) + ", " +
                  std::to_string(r.processes.size()) + " processes\n";
  s += "ended: " + std::string(stop_name(r.stop));
  if (r.stop == engine::Engine::Stop::Exit || r.stop == engine::Engine::Stop::AllExited) s += " (status " + std::to_string(r.exit_code) + ")";
  s += " at " + dur(r.end_time) + " virtual, " + std::to_string(r.events) + " scheduler events\n";
  if (!r.message.empty()) s += r.message + "\n";
  s += "OS: preemptions " + std::to_string(r.os_preemptions) + ", cache-line transfers " + std::to_string(r.line_transfers) + "\n";
  if (r.affine) {
    s += "OS placement (affine): " + std::to_string(r.placed_on_prev) + " on their idle previous core, " +
         std::to_string(r.placed_on_other) + " on another idle core, " + std::to_string(r.woken_delayed) +
         " woken while still queued on theirs, " + std::to_string(r.queued_busy) + " queued on a busy core (" +
         std::to_string(r.wake_preemptions) + " preempting); pulled by an idle core: " +
         std::to_string(r.balance_pulls) + " at a tick, " + std::to_string(r.newidle_pulls) + " going idle\n";
  }
  for (const engine::SimResult& p : r.processes) s += format_process(p, all_events, gctrace);
  return s;
}

}  // namespace

std::string format_run(const engine::SimResult& r, bool all_events, bool gctrace) {
  if (!r.processes.empty()) return format_machine(r, all_events, gctrace);
  std::string s;
  s += "GOMAXPROCS=" + std::to_string(r.procs) + " cores=" + std::to_string(r.cores) + " seed=" + std::to_string(r.seed) + "\n";
  s += "ended: " + std::string(stop_name(r.stop));
  if (r.stop == engine::Engine::Stop::Exit || r.stop == engine::Engine::Stop::AllExited) s += " (status " + std::to_string(r.exit_code) + ")";
  s += " at " + dur(r.end_time) + " virtual, " + std::to_string(r.events) + " scheduler events\n";
  if (!r.message.empty()) s += r.message + "\n";
  s += program_lines(r);
  s += "P utilisation:";
  for (size_t i = 0; i < r.utilisation.size(); i++) s += " P" + std::to_string(i) + " " + fmt("%.1f%%", 100 * r.utilisation[i]);
  s += "\n";
  // Only when GOMAXPROCS changed during the run (runtime.GOMAXPROCS, --procs auto's updates): each
  // P's utilisation above is then over the time it existed.
  if (r.procs_changes > 0) {
    s += "GOMAXPROCS changed " + std::to_string(r.procs_changes) + " times, " + std::to_string(r.procs_end) +
         " at the end (utilisation: of each P's own lifetime)\n";
  }
  s += "counts: goroutines " + std::to_string(r.goroutines) + ", Ms created " + std::to_string(r.ms_created) +
       ", steals " + std::to_string(r.steals) + ", wakeps " + std::to_string(r.wakeps) + ", handoffs " +
       std::to_string(r.handoffs) + ", preemption requests " + std::to_string(r.preempt_requests) +
       ", preemption signals " + std::to_string(r.preempt_signals) + ", global-queue puts " +
       std::to_string(r.global_puts) + ", OS preemptions " + std::to_string(r.os_preemptions) +
       ", cache-line transfers " + std::to_string(r.line_transfers) + "\n";
  if (r.affine) {
    s += "OS placement (affine): " + std::to_string(r.placed_on_prev) + " on their idle previous core, " +
         std::to_string(r.placed_on_other) + " on another idle core, " + std::to_string(r.woken_delayed) +
         " woken while still queued on theirs, " + std::to_string(r.queued_busy) + " queued on a busy core (" +
         std::to_string(r.wake_preemptions) + " preempting); pulled by an idle core: " +
         std::to_string(r.balance_pulls) + " at a tick, " + std::to_string(r.newidle_pulls) + " going idle\n";
  }
  s += "wakep calls: " + std::to_string(r.wakeps) + " started a spinning M, " + std::to_string(r.wakep_spinning) +
       " found one spinning, " + std::to_string(r.wakep_no_p) + " found no idle P; runnext of a running P: " +
       std::to_string(r.runnext_backoffs) + " usleep(3) back-offs, " + std::to_string(r.runnext_cas_fails) +
       " lost the CAS after\n";
  s += format_gc_summary(r);
  s += format_cpu_stat(r);
  if (all_events) {
    // The OS placement metrics (docs/placement.md, "Metrics"), per second of virtual time.
    const double secs = r.end_time > 0 ? static_cast<double>(r.end_time) / 1e9 : 0;
    auto per_s = [&](double v) { return secs > 0 ? v / secs : 0.0; };
    s += "os placement: wakeups=" + std::to_string(r.wakeups) + " on_prev=" +
         fmt("%.3f", r.wakeups_ran > 0 ? static_cast<double>(r.wake_on_prev) / static_cast<double>(r.wakeups_ran) : 0.0) +
         " migrations_per_s=" + fmt("%.1f", per_s(static_cast<double>(r.migrations))) +
         " idle_wait_ms_per_s=" + fmt("%.2f", per_s(static_cast<double>(r.idle_wait_ns) / 1e6)) + "\n";
  }
  if (r.cores > 1 && r.end_time > 0 && static_cast<double>(r.idle_wait_ns) > 0.9 * static_cast<double>(r.end_time)) {
    s += "warning: for " + fmt("%.0f%%", 100.0 * static_cast<double>(r.idle_wait_ns) / static_cast<double>(r.end_time)) +
         " of the run a thread waited for a core while another core was idle (OS placement)\n";
  }
  return s + closing_lines(r, all_events, gctrace);
}

namespace {

struct Metric {
  const char* name;
  double (*get)(const engine::SimResult&);
  const char* fmt;
};

const Metric kMetrics[] = {
    {"ns/op", [](const engine::SimResult& r) { return r.measured ? r.ns_per_op : NAN; }, "%.1f"},
    {"virtual time (ms)", [](const engine::SimResult& r) { return static_cast<double>(r.end_time) / 1e6; }, "%.3f"},
    // A server scenario's requests (its connections); a table only where some run has them.
    {"request latency p50 (us)", [](const engine::SimResult& r) { return r.answered > 0 ? r.req_p50 / 1e3 : NAN; },
     "%.1f"},
    {"request latency p99 (us)", [](const engine::SimResult& r) { return r.answered > 0 ? r.req_p99 / 1e3 : NAN; },
     "%.1f"},
    {"request latency p99.9 (us)", [](const engine::SimResult& r) { return r.answered > 0 ? r.req_p999 / 1e3 : NAN; },
     "%.1f"},
    // A client process's round trips (several processes); a table only where some run has them.
    {"round-trip latency p50 (us)",
     [](const engine::SimResult& r) { return r.client_answered > 0 ? r.client_p50 / 1e3 : NAN; }, "%.1f"},
    {"round-trip latency p99 (us)",
     [](const engine::SimResult& r) { return r.client_answered > 0 ? r.client_p99 / 1e3 : NAN; }, "%.1f"},
    {"round-trip latency p99.9 (us)",
     [](const engine::SimResult& r) { return r.client_answered > 0 ? r.client_p999 / 1e3 : NAN; }, "%.1f"},
    {"round trips/s", [](const engine::SimResult& r) { return r.client_answered > 0 ? r.client_per_s : NAN; }, "%.0f"},
    // The garbage collector; a table only where some run allocated.
    {"GC cycles", [](const engine::SimResult& r) { return r.gc.allocBytes > 0 ? static_cast<double>(r.gc.cycles.size()) : NAN; },
     "%.0f"},
    {"GC CPU (% of GOMAXPROCS x run time)",
     [](const engine::SimResult& r) {
       const double cap = static_cast<double>(r.procs) * static_cast<double>(r.end_time);
       return r.gc.allocBytes > 0 && cap > 0 ? 100 * static_cast<double>(r.gc.gcCpu) / cap : NAN;
     },
     "%.1f"},
    {"stop-the-world total (us)",
     [](const engine::SimResult& r) { return r.gc.allocBytes > 0 ? static_cast<double>(r.gc.stwTotal) / 1e3 : NAN; }, "%.1f"},
    {"stop-the-world max (us)",
     [](const engine::SimResult& r) { return r.gc.allocBytes > 0 ? static_cast<double>(r.gc.stwMax) / 1e3 : NAN; }, "%.1f"},
    {"mark assists (ms)",
     [](const engine::SimResult& r) { return r.gc.allocBytes > 0 ? static_cast<double>(r.gc.assistTime) / 1e6 : NAN; }, "%.2f"},
    // The cgroup's cpu.stat; a table only where some run had a quota.
    {"cgroup throttled periods",
     [](const engine::SimResult& r) { return r.cpu_quota >= 0 ? static_cast<double>(r.cpu_stat.nr_throttled) : NAN; }, "%.0f"},
    {"cgroup throttled time (ms)",
     [](const engine::SimResult& r) { return r.cpu_quota >= 0 ? static_cast<double>(r.cpu_stat.throttled_time) / 1e6 : NAN; },
     "%.2f"},
    {"sched latency p50 (ns)", [](const engine::SimResult& r) { return static_cast<double>(r.lat_p50); }, "%.0f"},
    {"sched latency p99 (ns)", [](const engine::SimResult& r) { return static_cast<double>(r.lat_p99); }, "%.0f"},
    {"mean P utilisation (%)",
     [](const engine::SimResult& r) {
       double s = 0;
       for (double u : r.utilisation) s += u;
       return r.utilisation.empty() ? 0.0 : 100 * s / static_cast<double>(r.utilisation.size());
     },
     "%.1f"},
    {"steals", [](const engine::SimResult& r) { return static_cast<double>(r.steals); }, "%.0f"},
    {"wakeps", [](const engine::SimResult& r) { return static_cast<double>(r.wakeps); }, "%.0f"},
    {"wakep found an M spinning", [](const engine::SimResult& r) { return static_cast<double>(r.wakep_spinning); }, "%.0f"},
    {"wakep found no idle P", [](const engine::SimResult& r) { return static_cast<double>(r.wakep_no_p); }, "%.0f"},
    {"runnext back-offs", [](const engine::SimResult& r) { return static_cast<double>(r.runnext_backoffs); }, "%.0f"},
    {"handoffs", [](const engine::SimResult& r) { return static_cast<double>(r.handoffs); }, "%.0f"},
    {"preemption signals", [](const engine::SimResult& r) { return static_cast<double>(r.preempt_signals); }, "%.0f"},
    {"Ms created", [](const engine::SimResult& r) { return static_cast<double>(r.ms_created); }, "%.0f"},
    {"cache-line transfers", [](const engine::SimResult& r) { return static_cast<double>(r.line_transfers); }, "%.0f"},
};

double mean(const std::vector<engine::SimResult>& runs, double (*get)(const engine::SimResult&)) {
  double s = 0;
  for (const auto& r : runs) s += get(r);
  return s / static_cast<double>(runs.size());
}

}  // namespace

std::string gc_point_label(const SweepPoint& p, SweepDims dims) {
  std::string s;
  if (dims.gogc) s += "GOGC=" + gogc_text(p.gc.gcPercent) + " ";
  if (dims.memlimit) s += "GOMEMLIMIT=" + memlimit_text(p.gc.memoryLimit) + " ";
  if (dims.quota) s += "quota=" + quota_text(p.cpu_quota) + " ";
  return s;
}

std::string procs_text(int64_t procs) { return procs == 0 ? "auto" : std::to_string(procs); }

std::string quota_text(double cpus) { return cpus == 0 ? "none" : scenario::cpus_text(cpus); }

namespace {
using GCKey = std::tuple<int32_t, int64_t, double>;  // (gcPercent, memoryLimit, CPU quota)
GCKey gc_key(const SweepPoint& p) { return {p.gc.gcPercent, p.gc.memoryLimit, p.cpu_quota}; }
// The points' distinct GC settings, in the order the points first have them.
std::vector<GCKey> gc_keys(const std::vector<SweepPoint>& pts) {
  std::vector<GCKey> keys;
  for (const auto& p : pts) {
    if (std::find(keys.begin(), keys.end(), gc_key(p)) == keys.end()) keys.push_back(gc_key(p));
  }
  return keys;
}
}  // namespace

namespace {
// A sweep of a scenario of several processes: the points with each run replaced by its process k's
// result.
std::vector<SweepPoint> process_points(const std::vector<SweepPoint>& pts, size_t k) {
  std::vector<SweepPoint> out = pts;
  for (SweepPoint& p : out) {
    for (engine::SimResult& r : p.runs) {
      engine::SimResult one = k < r.processes.size() ? r.processes[k] : engine::SimResult{};
      r = std::move(one);
    }
  }
  return out;
}

size_t process_count(const std::vector<SweepPoint>& pts) {
  return pts.empty() || pts.front().runs.empty() ? 0 : pts.front().runs.front().processes.size();
}
}  // namespace

std::string format_sweep_tables(const std::vector<SweepPoint>& pts, SweepDims dims) {
  // Several processes: each process's tables in turn, under its name.
  if (const size_t n = process_count(pts); n > 0) {
    std::string s;
    for (size_t k = 0; k < n; k++) {
      s += "\nprocess " + pts.front().runs.front().processes[k].process + "\n";
      s += format_sweep_tables(process_points(pts, k), dims);
    }
    return s;
  }
  std::set<int64_t> procs, cores;
  std::map<std::tuple<GCKey, int64_t, int64_t>, const SweepPoint*> at;
  for (const auto& p : pts) {
    procs.insert(p.procs);
    cores.insert(p.cores);
    at[{gc_key(p), p.procs, p.cores}] = &p;
  }
  const std::vector<GCKey> gcs = gc_keys(pts);
  const size_t seeds = pts.empty() ? 0 : pts.front().runs.size();
  auto cell = [](const std::string& text) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%14s", text.c_str());
    return std::string(buf);
  };
  std::string s;
  for (const Metric& m : kMetrics) {
    // Server and GC tables only where some run has requests or allocated.
    const std::string_view name(m.name);
    if (name.starts_with("request") || name.starts_with("GC ") || name.starts_with("stop-the-world") ||
        name.starts_with("mark assists") || name.starts_with("cgroup ") || name.starts_with("round")) {
      bool any = false;
      for (const auto& p : pts) any = any || !std::isnan(mean(p.runs, m.get));
      if (!any) continue;
    }
    s += "\n" + std::string(m.name) + (seeds > 1 ? " (mean of " + std::to_string(seeds) + " seeds)" : "") + "\n";
    if (dims.gogc) s += cell("GOGC");
    if (dims.memlimit) s += cell("GOMEMLIMIT");
    if (dims.quota) s += cell("CPU quota");
    s += cell("GOMAXPROCS");
    for (int64_t c : cores) s += cell(std::to_string(c) + " cores");
    s += "\n";
    for (const GCKey& g : gcs) {
      for (int64_t p : procs) {
        if (dims.gogc) s += cell(gogc_text(std::get<0>(g)));
        if (dims.memlimit) s += cell(memlimit_text(std::get<1>(g)));
        if (dims.quota) s += cell(quota_text(std::get<2>(g)));
        s += cell(procs_text(p));
        for (int64_t c : cores) {
          auto it = at.find({g, p, c});
          const double v = it == at.end() ? NAN : mean(it->second->runs, m.get);
          s += cell(std::isnan(v) ? "-" : fmt(m.fmt, v));
        }
        s += "\n";
      }
    }
  }
  return s;
}

std::string format_bench_lines(const std::vector<SweepPoint>& pts, SweepDims dims) {
  // Several processes: each process's lines after a "process: NAME" configuration line.
  if (const size_t n = process_count(pts); n > 0) {
    std::string s;
    for (size_t k = 0; k < n; k++) {
      const std::vector<SweepPoint> one = process_points(pts, k);
      bool measured = false;
      for (const SweepPoint& p : one) {
        for (const engine::SimResult& r : p.runs) measured |= r.measured;
      }
      const std::string lines = format_bench_lines(one, dims);
      if (measured) s += "process: " + pts.front().runs.front().processes[k].process + "\n" + lines;
    }
    return s;
  }
  // Configuration lines ("key: value", Go's benchmark data format) tell benchstat which machine
  // (and GC settings) each block of results ran on.
  std::string s;
  int64_t cores = -1;
  std::optional<GCKey> gc;
  for (const auto& p : pts) {
    const bool new_cores = p.cores != cores;
    if (new_cores) {
      cores = p.cores;
      s += "cores: " + std::to_string(cores) + "\n";
    }
    if (new_cores || gc != gc_key(p)) {
      if (dims.gogc && (new_cores || !gc || std::get<0>(*gc) != p.gc.gcPercent)) {
        s += "gogc: " + gogc_text(p.gc.gcPercent) + "\n";
      }
      if (dims.memlimit && (new_cores || !gc || std::get<1>(*gc) != p.gc.memoryLimit)) {
        s += "memlimit: " + memlimit_text(p.gc.memoryLimit) + "\n";
      }
      if (dims.quota && (new_cores || !gc || std::get<2>(*gc) != p.cpu_quota)) {
        s += "cpu-quota: " + quota_text(p.cpu_quota) + "\n";
      }
      gc = gc_key(p);
    }
    for (const auto& r : p.runs) {
      if (!r.measured) continue;
      s += bench_line(r);
    }
  }
  return s;
}

std::string sweep_svg(const std::vector<SweepPoint>& pts, const std::string& title, SweepDims dims) {
  const bool bench = !pts.empty() && !pts.front().runs.empty() && pts.front().runs.front().measured;
  // A server without a benchmark: its requests' p99 latency (kMetrics[3]); else the run's length.
  const bool server = !bench && !pts.empty() && !pts.front().runs.empty() && pts.front().runs.front().answered > 0;
  auto value = [bench, server](const SweepPoint& p) {
    return mean(p.runs, bench ? kMetrics[0].get : server ? kMetrics[3].get : kMetrics[1].get);
  };
  std::set<int64_t> procs, cores;
  double ymax = 0;
  for (const auto& p : pts) {
    procs.insert(p.procs);
    cores.insert(p.cores);
    const double v = value(p);
    if (!std::isnan(v)) ymax = std::max(ymax, v);
  }
  if (ymax <= 0) ymax = 1;
  // A 1-2-5 tick step giving about five gridlines, and an axis top on a tick.
  const double raw = ymax / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag <= 1 ? mag : raw / mag <= 2 ? 2 * mag : raw / mag <= 5 ? 5 * mag : 10 * mag;
  const double ytop = std::ceil(ymax / step) * step;
  const double W = 720, H = 440, L = 80, R = 160, T = 50, B = 60;
  const double pw = W - L - R, ph = H - T - B;
  const std::vector<int64_t> xs(procs.begin(), procs.end());
  auto xpos = [&](int64_t p) {
    const auto i = static_cast<double>(std::find(xs.begin(), xs.end(), p) - xs.begin());
    return L + (xs.size() == 1 ? pw / 2 : pw * i / static_cast<double>(xs.size() - 1));
  };
  auto ypos = [&](double v) { return T + ph - ph * v / ytop; };
  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt("%.0f", W) + "\" height=\"" + fmt("%.0f", H) +
       "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + fmt("%.0f", W / 2) + "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" + xml_escape(title) + "</text>\n";
  s += "<line x1=\"" + fmt("%.0f", L) + "\" y1=\"" + fmt("%.0f", T + ph) + "\" x2=\"" + fmt("%.0f", L + pw) + "\" y2=\"" +
       fmt("%.0f", T + ph) + "\" stroke=\"black\"/>\n";
  s += "<line x1=\"" + fmt("%.0f", L) + "\" y1=\"" + fmt("%.0f", T) + "\" x2=\"" + fmt("%.0f", L) + "\" y2=\"" +
       fmt("%.0f", T + ph) + "\" stroke=\"black\"/>\n";
  // At most 100 gridlines (a chart has about five): a value near the largest double (a part file
  // that says so) makes the axis top overflow to infinity, which v would never pass.
  int gridlines = 0;
  for (double v = 0; v <= ytop + step / 2 && gridlines < 100; v += step, gridlines++) {
    s += "<text x=\"" + fmt("%.0f", L - 6) + "\" y=\"" + fmt("%.1f", ypos(v) + 4) + "\" text-anchor=\"end\">" +
         fmt(step >= 1 ? "%.0f" : "%.2f", v) + "</text>\n";
    s += "<line x1=\"" + fmt("%.0f", L) + "\" y1=\"" + fmt("%.1f", ypos(v)) + "\" x2=\"" + fmt("%.0f", L + pw) + "\" y2=\"" +
         fmt("%.1f", ypos(v)) + "\" stroke=\"#ddd\"/>\n";
  }
  for (int64_t p : xs) {
    s += "<text x=\"" + fmt("%.1f", xpos(p)) + "\" y=\"" + fmt("%.0f", T + ph + 18) + "\" text-anchor=\"middle\">" +
         procs_text(p) + "</text>\n";
  }
  s += "<text x=\"" + fmt("%.0f", L + pw / 2) + "\" y=\"" + fmt("%.0f", H - 16) + "\" text-anchor=\"middle\">GOMAXPROCS</text>\n";
  s += "<text transform=\"rotate(-90)\" x=\"" + fmt("%.0f", -(T + ph / 2)) + "\" y=\"20\" text-anchor=\"middle\">" +
       std::string(bench ? "ns/op" : server ? "request latency p99 (us)" : "virtual time (ms)") + "</text>\n";
  static const char* const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
  size_t ci = 0;
  const std::vector<GCKey> gcs = gc_keys(pts);
  for (int64_t c : cores) for (const GCKey& g : gcs) {
    const char* col = colors[ci % 6];
    std::string path, label = std::to_string(c) + " cores";
    for (const auto& p : pts) {
      if (p.cores != c || gc_key(p) != g) continue;
      if (dims.gogc || dims.memlimit || dims.quota) {
        label = std::to_string(c) + " cores " + gc_point_label(p, dims);
        label.pop_back();  // the label's trailing space
      }
      const double v = value(p);
      if (std::isnan(v)) continue;
      path += (path.empty() ? "M" : " L") + fmt("%.1f", xpos(p.procs)) + "," + fmt("%.1f", ypos(v));
      s += "<circle cx=\"" + fmt("%.1f", xpos(p.procs)) + "\" cy=\"" + fmt("%.1f", ypos(v)) + "\" r=\"3.5\" fill=\"" + col + "\"/>\n";
    }
    s += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + col + "\" stroke-width=\"2\"/>\n";
    const double ly = T + 20 + 18 * static_cast<double>(ci);
    s += "<line x1=\"" + fmt("%.0f", L + pw + 15) + "\" y1=\"" + fmt("%.0f", ly) + "\" x2=\"" + fmt("%.0f", L + pw + 35) +
         "\" y2=\"" + fmt("%.0f", ly) + "\" stroke=\"" + col + "\" stroke-width=\"2\"/>\n";
    s += "<text x=\"" + fmt("%.0f", L + pw + 40) + "\" y=\"" + fmt("%.0f", ly + 4) + "\">" + xml_escape(label) + "</text>\n";
    ci++;
  }
  s += "</svg>\n";
  return s;
}

}  // namespace gmp::cli
