// gmpsim check SCENARIO --procs N [--strategy dpor|bounded|pct|random] [--preemptions K] [--depth D]
//   [--seed S] [--max-executions N] [--time-limit DUR] [--jobs J] [--shard I/N] [--max-steps N]
//   [--sysmon-rounds N] [--time free|strict] [--max-time DUR] [--property LIST] [--estimate N] [--no-shrink]
//   [--show N] [--trace OUT]
//   [--replay SCHEDULE]
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

#include "model/policies.h"
#include "model/search.h"
#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "sim/runtime/mutants.h"
#include "traces/trace_writer.h"

namespace gmp::cli {

namespace {

struct CheckOptions {
  model::CheckConfig cfg;
  std::string replay;
  bool replaying = false;
  size_t show = 80;
  bool estimate_set = false;
  std::string mutant;
};

std::string fmt_count(double v) {
  char buf[64];
  if (v < 1e6) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.2g", v);
  }
  return buf;
}

std::string replay_command(const RunOptions& o, const CheckOptions& co, const std::string& sched) {
  const model::CheckConfig& c = co.cfg;
  std::string cmd = "gmpsim check " + o.scenario_path + " --procs " + std::to_string(c.setup.procs);
  if (!co.mutant.empty()) cmd += " --mutant " + co.mutant;
  if (!o.profile.empty()) cmd += " --profile " + o.profile;
  if (o.seed != 1) cmd += " --seed " + std::to_string(o.seed);
  if (c.setup.max_steps != model::CheckSetup{}.max_steps) cmd += " --max-steps " + std::to_string(c.setup.max_steps);
  if (c.setup.daemon_rounds != model::CheckSetup{}.daemon_rounds)
    cmd += " --sysmon-rounds " + std::to_string(c.setup.daemon_rounds);
  if (c.setup.strict_time) {
    cmd += " --time strict";
    if (c.setup.max_time != model::CheckSetup{}.max_time) cmd += " --max-time " + std::to_string(c.setup.max_time) + "ns";
  }
  if (c.setup.properties != model::kDefaultProperties) {
    std::string props;
    for (uint32_t b = 1; b <= model::kAssertions; b <<= 1) {
      if ((c.setup.properties & b) != 0)
        props += (props.empty() ? "" : ",") + std::string(model::property_name(static_cast<model::Property>(b)));
    }
    cmd += " --property " + props;
  }
  return cmd + " --replay '" + sched + "'";
}

// Replays the schedule, prints the interleaving, writes the trace; returns whether it violated.
bool show_replay(const RunOptions& o, const CheckOptions& co, const Loaded& in, const model::Schedule& s) {
  (void)in;
  std::vector<std::pair<std::string, std::string>> meta{{"schedule", s.str()}};
  model::Execution ex;
  try {
    ex = model::replay(co.cfg.setup, s, o.sim.trace_path, meta);
  } catch (const trace::TraceWriteError& e) {
    std::fprintf(stderr, "gmpsim: %s\n", e.what());
    std::exit(1);
  }
  // From a little before the first departure from the default order to a little after the
  // violation: the part of the run the schedule is about.
  constexpr size_t kContext = 12;
  size_t from = 0, to = ex.log.size();
  if (co.show != 0) {
    if (!s.picks.empty()) from = s.picks.front().first > kContext ? s.picks.front().first - kContext : 0;
    if (ex.end == model::Execution::End::Violation) to = std::min(to, ex.violation.step + kContext);
  }
  std::printf("\ninterleaving (steps %zu to %zu of %zu; time is the checker's clock):\n", from, to, ex.log.size());
  std::fputs(model::format_interleaving(ex, from, to, co.show).c_str(), stdout);
  std::printf("run: %s after %llu steps, %u preemptions\n", ex.how.c_str(), static_cast<unsigned long long>(ex.steps),
              ex.preemptions);
  if (ex.end == model::Execution::End::Violation) {
    std::printf("VIOLATION %s at step %llu: %s\n", model::property_name(ex.violation.property),
                static_cast<unsigned long long>(ex.violation.step), ex.violation.message.c_str());
  }
  if (!o.sim.trace_path.empty()) std::printf("trace: %s\n", o.sim.trace_path.c_str());
  return ex.end == model::Execution::End::Violation;
}

}  // namespace

int cmd_check(int argc, char** argv) {
  RunOptions o;
  CheckOptions co;
  model::CheckConfig& c = co.cfg;
  bool preemptions_set = false;
  parse_sim_args("check", argc, argv, o, [&](Args& a) {
    const std::string& f = a.flag();
    if (f == "--strategy") {
      const std::string v = a.value();
      if (v == "dpor")
        c.strategy = model::StrategyKind::Dpor;
      else if (v == "bounded")
        c.strategy = model::StrategyKind::Bounded;
      else if (v == "pct")
        c.strategy = model::StrategyKind::Pct;
      else if (v == "random")
        c.strategy = model::StrategyKind::Random;
      else if (v == "plain")
        c.strategy = model::StrategyKind::Plain;
      else
        usage_error("--strategy: expected dpor, bounded, pct, random or plain, got '" + v + "'");
    } else if (f == "--preemptions") {
      c.preemptions = static_cast<int>(parse_uint(f, a.value(), 0, 1000));
      preemptions_set = true;
    } else if (f == "--depth") {
      c.depth = static_cast<uint32_t>(parse_uint(f, a.value(), 1, 100));
    } else if (f == "--max-executions") {
      c.max_executions = parse_uint(f, a.value(), 1, UINT64_MAX);
    } else if (f == "--time-limit") {
      c.time_limit = static_cast<double>(parse_duration(f, a.value(), 1'000'000, 1'000'000'000LL * 3600 * 24 * 365,
                                                        "of at least 1ms and at most a year")) /
                     1e9;
    } else if (f == "--jobs") {
      c.jobs = static_cast<uint32_t>(parse_uint(f, a.value(), 1, 1024));
    } else if (f == "--shard") {
      const std::string v = a.value();
      const size_t slash = v.find('/');
      if (slash == std::string::npos) usage_error("--shard: expected I/N (0 <= I < N), got '" + v + "'");
      c.shards = static_cast<uint32_t>(parse_uint(f, v.substr(slash + 1), 1, 1'000'000));
      c.shard = static_cast<uint32_t>(parse_uint(f, v.substr(0, slash), 0, c.shards - 1));
    } else if (f == "--max-steps") {
      c.setup.max_steps = parse_uint(f, a.value(), 100, 1'000'000'000);
    } else if (f == "--sysmon-rounds") {
      c.setup.daemon_rounds = static_cast<uint32_t>(parse_uint(f, a.value(), 0, 1000));
    } else if (f == "--time") {
      const std::string v = a.value();
      if (v != "strict" && v != "free") usage_error("--time: expected free or strict, got '" + v + "'");
      c.setup.strict_time = v == "strict";
    } else if (f == "--property") {
      try {
        c.setup.properties = model::parse_properties(a.value());
      } catch (const std::invalid_argument& e) {
        usage_error(std::string("--property: ") + e.what());
      }
    } else if (f == "--estimate") {
      c.estimate_runs = static_cast<uint32_t>(parse_uint(f, a.value(), 0, 100'000));
      co.estimate_set = true;
    } else if (f == "--no-shrink") {
      c.shrink = false;
    } else if (f == "--show") {
      co.show = parse_uint(f, a.value(), 0, 1'000'000'000);
    } else if (f == "--mutant") {
      const std::string v = a.value();
      try {
        rt::setActiveMutant(rt::mutantFromName(v));
      } catch (const std::logic_error& e) {  // an unknown name, or a build without mutants
        usage_error(std::string("--mutant: ") + e.what());
      }
      co.mutant = v;
    } else if (f == "--replay") {
      co.replay = a.value();
      co.replaying = true;
    } else {
      return false;
    }
    return true;
  });
  if (c.strategy == model::StrategyKind::Plain && !preemptions_set) c.preemptions = -1;
  if (o.procs.size() != 1) usage_error("check: --procs takes one value");
  if (o.cores.size() != 1 || o.cores.front() != 0)
    usage_error("check: --cores plays no part under the checker (time is a choice)");
  if (o.seeds != 1) usage_error("check: --seeds is for gmpsim sweep");
  if (o.sim.jitter != 0 || o.sim.schedtrace_ns != 0) usage_error("check: --jitter and --schedtrace are for gmpsim run");
  const engine::SimConfig defaults;
  if (o.sim.event_limit != defaults.event_limit)
    usage_error("check: --max-events is for gmpsim run; the checker's bound is --max-steps");
  if (o.sim.time_limit != defaults.time_limit) {
    if (!c.setup.strict_time) usage_error("check: --max-time bounds executions under --time strict only");
    c.setup.max_time = o.sim.time_limit;
  }
  if (o.sim.asyncpreemptoff) usage_error("check: --asyncpreemptoff is for gmpsim run");
  model::Schedule sched;
  if (co.replaying) {
    try {
      sched = model::Schedule::parse(co.replay);
    } catch (const model::ScheduleError& e) {
      std::fprintf(stderr, "gmpsim: --replay: %s\n", e.what());
      return 2;
    }
  }
  const Loaded in = load_inputs(o);
  c.setup.scenario = &in.scenario;
  c.setup.profile = &in.profile;
  c.setup.procs = static_cast<int32_t>(o.procs.front());
  c.setup.seed = o.seed;
  c.search_seed = o.seed;
  if (!co.estimate_set && (c.strategy == model::StrategyKind::Dpor || c.strategy == model::StrategyKind::Bounded))
    c.estimate_runs = 20;

  if (co.replaying) {
    std::printf("gmpsim check: replaying %s on %s, %d Ps\n", co.replay.c_str(), o.scenario_path.c_str(), c.setup.procs);
    try {
      return show_replay(o, co, in, sched) ? 3 : 0;
    } catch (const model::ScheduleError& e) {
      std::fprintf(stderr, "gmpsim: %s\n", e.what());
      return 2;
    }
  }

  std::string props;
  for (uint32_t b = 1; b <= model::kAssertions; b <<= 1) {
    if ((c.setup.properties & b) != 0)
      props += (props.empty() ? "" : ", ") + std::string(model::property_name(static_cast<model::Property>(b)));
  }
  std::printf("gmpsim check: %s, %d Ps, strategy %s", o.scenario_path.c_str(), c.setup.procs,
              model::strategy_name(c.strategy));
  if (c.strategy == model::StrategyKind::Bounded || (c.strategy == model::StrategyKind::Plain && preemptions_set)) {
    std::printf(" (at most %d preemptions)", c.preemptions);
  }
  if (c.strategy == model::StrategyKind::Pct) std::printf(" (depth %u)", c.depth);
  std::printf(", seed %llu", static_cast<unsigned long long>(o.seed));
  if (!co.mutant.empty()) std::printf(", mutant %s", co.mutant.c_str());
  if (c.shards > 1) std::printf(", shard %u/%u", c.shard, c.shards);
  std::printf("\nproperties: %s; at most %llu steps an execution, ", props.c_str(),
              static_cast<unsigned long long>(c.setup.max_steps));
  if (c.setup.strict_time) {
    std::printf("strict time: waits end in deadline order, up to %g ms of virtual time\n",
                static_cast<double>(c.setup.max_time) / 1e6);
  } else {
    std::printf("sysmon's waits end by choice %u times\n", c.setup.daemon_rounds);
    size_t timed = 0;
    for (const scenario::Assertion& x : in.scenario.assertions) {
      timed += x.kind == scenario::AssertKind::StartLatency || x.kind == scenario::AssertKind::MaxRunnableLatency;
    }
    if (timed != 0 && (c.setup.properties & model::kAssertions) != 0) {
      std::printf("note: the scenario's %zu latency assertion%s %s checked under --time strict only\n", timed,
                  timed == 1 ? "" : "s", timed == 1 ? "is" : "are");
    }
  }
  std::fflush(stdout);
  if (isatty(STDERR_FILENO) != 0) {
    c.progress = [](uint64_t n, uint64_t states, double s) {
      std::fprintf(stderr, "\rcheck: %llu executions, %llu states, %.1f s, %.0f/s   ",
                   static_cast<unsigned long long>(n), static_cast<unsigned long long>(states), s,
                   static_cast<double>(n) / std::max(s, 1e-9));
    };
  }
  model::CheckReport rep;
  try {
    rep = model::run_check(c);
  } catch (const std::runtime_error& e) {
    if (isatty(STDERR_FILENO) != 0) std::fputs("\r\033[K", stderr);
    std::fprintf(stderr, "gmpsim: %s\n", e.what());
    return 1;
  }
  if (isatty(STDERR_FILENO) != 0) std::fputs("\r\033[K", stderr);
  if (rep.estimate_plain > 0) {
    std::printf(
        "estimate (before the search, %u random executions, Knuth's estimator): %s executions by plain enumeration, "
        "%s by DPOR\n",
        c.estimate_runs, fmt_count(rep.estimate_plain).c_str(), fmt_count(rep.estimate_dpor).c_str());
  }
  if (c.strategy == model::StrategyKind::Pct) {
    std::printf(
        "PCT: each execution finds a given bug of depth %u with probability at least %.3g (1/(n k^(d-1)), n=%u "
        "threads, "
        "k=%llu steps)\n",
        c.depth, rep.pct_bound, rep.max_threads, static_cast<unsigned long long>(rep.max_steps_seen));
  }
  std::printf(
      "executions %llu (%llu cut short by sleep sets or bounds, %llu at the step limit), quiescent points tested "
      "%llu, distinct states %llu%s, %.2f s, %.0f executions/s, %.0f states/s, search %s\n",
      static_cast<unsigned long long>(rep.executions), static_cast<unsigned long long>(rep.pruned),
      static_cast<unsigned long long>(rep.step_limited), static_cast<unsigned long long>(rep.quiescent),
      static_cast<unsigned long long>(rep.states), rep.states_truncated ? " (capped)" : "", rep.seconds,
      static_cast<double>(rep.executions) / std::max(rep.seconds, 1e-9),
      static_cast<double>(rep.states) / std::max(rep.seconds, 1e-9),
      rep.complete ? "complete" : (rep.found ? "stopped at the first violation" : "incomplete"));
  if (rep.found && c.shrink) std::printf("shrinking took %.2f s\n", rep.shrink_seconds);
  if (rep.step_limited != 0) {
    std::printf(
        "warning: %llu executions did not end within %llu steps; in the first, the program's goroutines were:%s\n"
        "hint: the checker explores programs that end; give endless loops a count, or raise --max-steps if the "
        "program is merely long\n",
        static_cast<unsigned long long>(rep.step_limited), static_cast<unsigned long long>(c.setup.max_steps),
        rep.unbounded.empty() ? " (none left)" : rep.unbounded.c_str());
  }
  if (!rep.found) {
    std::printf("no violation found\n");
    return 0;
  }
  const model::Found& f = *rep.found;
  std::printf(
      "\nVIOLATION %s (found in %s %llu): %s\n", model::property_name(f.violation.property),
      c.strategy == model::StrategyKind::Pct || c.strategy == model::StrategyKind::Random ? "execution" : "share",
      static_cast<unsigned long long>(f.execution), f.violation.message.c_str());
  std::printf("schedule: %s (%zu departures from the default order, %u preemptions, %llu steps",
              f.schedule.str().c_str(), f.schedule.picks.size(), f.preemptions,
              static_cast<unsigned long long>(f.schedule.steps));
  if (c.shrink) {
    std::printf("; shrunk from %zu departures, %u preemptions, %llu steps in %u replays", f.original.picks.size(),
                f.original_preemptions, static_cast<unsigned long long>(f.original.steps), f.shrink_runs);
  }
  std::printf(")\nreplay: %s\n", replay_command(o, co, f.schedule.str()).c_str());
  show_replay(o, co, in, f.schedule);
  return 3;
}

}  // namespace gmp::cli
