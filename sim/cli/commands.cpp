#include "sim/cli/commands.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "sim/cost/profile.h"
#include "sim/scenario/error.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/settings.h"

namespace gmp::cli {

namespace {
// The longest --max-time or --schedtrace: 10^18 ns, about 31.7 years of virtual time, short of
// the engine's end of virtual time (2^61 ns).
constexpr int64_t kMaxFlagTime = 1'000'000'000'000'000'000;
}  // namespace

bool parse_common_flag(Args& a, RunOptions& o) {
  const std::string& f = a.flag();
  if (f == "--procs") {
    o.procs = parse_procs_list(f, a.value(), scenario::kMaxProcs);
  } else if (f == "--cores") {
    o.cores = parse_list(f, a.value(), 1, cost::kMaxCores);
  } else if (f == "--profile") {
    o.profile = a.value();
    if (o.profile.empty()) usage_error("--profile: expected a file or a builtin name, got ''");
  } else if (f == "--seed") {
    o.seed = parse_uint(f, a.value(), 0, UINT64_MAX);
  } else if (f == "--seeds") {
    o.seeds = parse_uint(f, a.value(), 1, 10000);
  } else if (f == "--trace") {
    o.sim.trace_path = a.value();
    if (o.sim.trace_path.empty()) usage_error("--trace: expected a file name");
  } else if (f == "--schedtrace") {
    o.sim.schedtrace_ns = parse_duration(f, a.value(), 1, kMaxFlagTime, "that is positive, at most 1e18ns");
  } else if (f == "--jitter") {
    // Added to every operation's cost, so held to a cost's bound (cost/profile.h's kMaxCost).
    o.sim.jitter = parse_duration(f, a.value(), 0, static_cast<int64_t>(cost::kMaxCost), "of at most 1s");
  } else if (f == "--asyncpreemptoff") {
    o.sim.asyncpreemptoff = true;
  } else if (f == "--max-time") {
    // 0 used to mean no limit, silently; a run always has one (see the engine's end of time).
    o.sim.time_limit = parse_duration(f, a.value(), 1, kMaxFlagTime, "that is positive, at most 1e18ns");
  } else if (f == "--gogc") {
    o.gogc.clear();
    for (const std::string& v : split_list(a.value())) o.gogc.push_back(parse_gogc(f, v));
  } else if (f == "--memlimit") {
    o.memlimit.clear();
    for (const std::string& v : split_list(a.value())) o.memlimit.push_back(parse_memlimit(f, v));
  } else if (f == "--cpu-quota") {
    o.cpu_quota = parse_cpus_list(f, a.value());
  } else if (f == "--cpu-period") {
    o.sim.cgroup.period = parse_duration(f, a.value(), scenario::kMinCpuPeriodNs, scenario::kMaxCpuPeriodNs,
                                         "from 1ms to 1s (cgroup v2's cpu.max)");
  } else if (f == "--cpu-burst") {
    o.sim.cgroup.burst = parse_duration(f, a.value(), 0, kMaxFlagTime, "of at most the quota per period");
  } else if (f == "--cpuset") {
    const std::string v = a.value();
    scenario::ParsedCpuset s = scenario::parse_cpuset(v);
    if (!s.error.empty()) usage_error(f + ": " + s.error + ", got '" + v + "'");
    o.sim.cgroup.cpuset = std::move(s.cpus);
  } else if (f == "--godebug") {
    const std::string v = a.value();
    const scenario::ParsedGodebug g = scenario::parse_godebug(v);
    if (!g.error.empty()) usage_error(f + ": " + g.error + ", got '" + v + "'");
    if (g.containermaxprocs >= 0) o.sim.containermaxprocs = g.containermaxprocs;
    if (g.updatemaxprocs >= 0) o.sim.updatemaxprocs = g.updatemaxprocs;
  } else if (f == "--max-events") {
    o.sim.event_limit = parse_uint(f, a.value(), 1, UINT64_MAX);
  } else {
    return false;
  }
  return true;
}

void finish_common_flags(RunOptions& o) {
  int64_t least = -1;  // the smallest quota given, ns per period
  for (double cpus : o.cpu_quota) {
    const scenario::QuotaNs q = scenario::quota_ns(cpus, o.sim.cgroup.period);
    if (!q.error.empty()) usage_error("--cpu-quota: " + q.error);
    if (q.ns >= 0) least = least < 0 ? q.ns : std::min(least, q.ns);
  }
  const int64_t burst = o.sim.cgroup.burst;
  if (burst > 0 && least < 0) usage_error("--cpu-burst: needs a --cpu-quota (a burst carries unused quota over)");
  if (burst > least && least >= 0) {
    usage_error("--cpu-burst: " + scenario::ns_text(burst) + " is more than the quota's " + scenario::ns_text(least) +
                " per period (cpu.max.burst is at most the quota)");
  }
}

int64_t quota_ns(const RunOptions& o, double cpus) { return scenario::quota_ns(cpus, o.sim.cgroup.period).ns; }

cost::Profile load_profile_option(const RunOptions& o) {
  try {
    if (o.profile.empty()) return cost::default_profile();
    if (auto b = cost::builtin_profile(o.profile)) return *b;
    return cost::load_profile(o.profile);
  } catch (const cost::ProfileError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(1);
  }
}

Loaded load_inputs(const RunOptions& o) {
  Loaded l;
  try {
    l.scenario = scenario::load_scenario(o.scenario_path);
  } catch (const scenario::ScenarioError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(1);
  }
  l.profile = load_profile_option(o);
  return l;
}

engine::SimConfig sim_config(const RunOptions& o, int64_t procs, int64_t cores, uint64_t seed) {
  engine::SimConfig c = o.sim;
  // --procs auto: the runtime picks GOMAXPROCS (SimConfig::procs_auto); procs holds a placeholder.
  c.procs_auto = procs == 0;
  c.procs = procs == 0 ? 1 : static_cast<int32_t>(procs);
  c.cores = static_cast<int32_t>(cores);
  c.seed = seed;
  if (!o.gogc.empty()) c.gc.gcPercent = o.gogc.front();
  if (!o.memlimit.empty()) c.gc.memoryLimit = o.memlimit.front();
  if (!o.cpu_quota.empty()) c.cgroup.quota = quota_ns(o, o.cpu_quota.front());
  return c;
}

void single_gc_settings(const std::string& cmd, const RunOptions& o) {
  if (o.gogc.size() > 1) usage_error(cmd + ": --gogc takes one value (a list is for gmpsim sweep)");
  if (o.memlimit.size() > 1) usage_error(cmd + ": --memlimit takes one value (a list is for gmpsim sweep)");
  if (o.cpu_quota.size() > 1) usage_error(cmd + ": --cpu-quota takes one value (a list is for gmpsim sweep)");
}

int exit_status(const engine::SimResult& r) {
  switch (r.stop) {
    case engine::Engine::Stop::AllExited:
    case engine::Engine::Stop::Exit:
      return r.exit_code == 0 && !r.violations.empty() ? kAssertionsViolated : r.exit_code;
    default:
      return 2;
  }
}

std::function<void(int64_t, uint64_t)> terminal_progress(const std::string& what) {
  if (isatty(STDERR_FILENO) == 0) return nullptr;
  return [what](int64_t now, uint64_t events) {
    std::fprintf(stderr, "\r%s: %.3f ms virtual, %llu M events   ", what.c_str(), static_cast<double>(now) / 1e6,
                 static_cast<unsigned long long>(events >> 20));
  };
}

void end_progress() {
  if (isatty(STDERR_FILENO) != 0) std::fprintf(stderr, "\r%70s\r", "");
}

bool files_equal(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  if (!fa || !fb) return false;
  return std::equal(std::istreambuf_iterator<char>(fa), std::istreambuf_iterator<char>(),
                    std::istreambuf_iterator<char>(fb), std::istreambuf_iterator<char>());
}

}  // namespace gmp::cli
