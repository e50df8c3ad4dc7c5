// gmpsim check SCENARIO --procs N [--strategy NAME] [the strategy's flags] [--seed S]
//   [--max-executions N] [--time-limit DUR] [--jobs J] [--shard I/N] [--max-steps N]
//   [--sysmon-rounds N] [--time free|strict] [--max-time DUR] [--property LIST] [--no-shrink]
//   [--show N] [--trace OUT] [--replay SCHEDULE] [--process NAME|all]
// The strategies and their flags come from model/strategies.h's table: the flags parsed, the usage
// text and the errors for an unknown name are all read from it.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "model/execution.h"
#include "model/search.h"
#include "model/portfolio.h"
#include "model/strategies.h"
#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "sim/runtime/mutants.h"
#include "sim/scenario/settings.h"
#include "sim/simulation/simulation.h"
#include "traces/trace_writer.h"

namespace gmp::cli {

namespace {

// What gmpsim check was asked to do.
struct CheckOptions {
  // The command's defaults (auto, the default properties, a 60 s time limit so that a check run as
  // it comes ends) from model::command_defaults, which the mutation self-test uses too.
  CheckOptions() : cfg(model::command_defaults()) {}
  RunOptions run;         // the scenario, profile, --procs, --seed, --trace, and the limits of gmpsim run
  model::CheckConfig cfg;  // the search; its setup's scenario and profile are set once loaded
  model::StrategyParams strategy_flags;  // every strategy flag given, whichever strategy takes it
  std::string replay;
  bool replaying = false;
  size_t show = 80;
  std::string mutant;
  std::string process;  // --process as given; empty: the first process (or the schedule's)
  bool strategy_given = false;
};

// One of the strategies' flags (--preemptions, --depth, ...), parsed by the range its first
// declaration in the table gives; false if `f` is none of them.
bool parse_strategy_flag(Args& a, CheckOptions& co) {
  const std::string& f = a.flag();
  const model::StrategyParam* p = f.size() > 2 ? model::find_strategy_param(f.substr(2)) : nullptr;
  if (p == nullptr) return false;
  co.strategy_flags[p->name] = static_cast<int64_t>(
      parse_uint(f, a.value(), static_cast<uint64_t>(p->lo), static_cast<uint64_t>(p->hi)));
  return true;
}

// gmpsim check's own flags; false for one it does not know.
bool parse_check_flag(Args& a, CheckOptions& co) {
  model::CheckConfig& c = co.cfg;
  const std::string& f = a.flag();
  if (f == "--strategy") {
    const std::string v = a.value();
    if (model::find_strategy(v) == nullptr) {
      usage_error("--strategy: expected " + model::strategy_names() + ", got '" + v + "'");
    }
    c.strategy = v;
    co.strategy_given = true;
  } else if (parse_strategy_flag(a, co)) {
  } else if (f == "--max-executions") {
    c.max_executions = parse_uint(f, a.value(), 1, UINT64_MAX);
  } else if (f == "--time-limit") {
    const std::string v = a.value();
    c.time_limit = v == "0" ? 0
                            : static_cast<double>(parse_duration(f, v, 1'000'000, 1'000'000'000LL * 3600 * 24 * 365,
                                                                 "of at least 1ms and at most a year, or 0 for none")) /
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
  } else if (f == "--stranding-steps") {
    c.setup.stranding_steps = parse_uint(f, a.value(), 0, 1'000'000'000);
  } else if (f == "--stranding-time") {
    c.setup.stranding_ns = parse_duration(f, a.value(), 0, 1'000'000'000LL * 3600, "of at most an hour");
  } else if (f == "--starvation-time") {
    c.setup.starvation_ns = parse_duration(f, a.value(), 0, 1'000'000'000LL * 3600, "of at most an hour");
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
  } else if (f == "--process") {
    co.process = a.value();
    if (co.process.empty()) usage_error("--process: expected a process name or all");
  } else if (f == "--replay") {
    co.replay = a.value();
    co.replaying = true;
  } else {
    return false;
  }
  return true;
}

// Parses the command line; bad usage ends the program with status 2 (usage_error).
CheckOptions parse_check_args(int argc, char** argv) {
  CheckOptions co;
  RunOptions& o = co.run;
  model::CheckConfig& c = co.cfg;
  parse_sim_args("check", argc, argv, o, [&](Args& a) { return parse_check_flag(a, co); });
  // The strategy takes the flags it declares; the others' are accepted and play no part.
  for (const model::StrategyParam& p : model::find_strategy(c.strategy)->params) {
    const auto it = co.strategy_flags.find(p.name);
    if (it != co.strategy_flags.end()) c.params[p.name] = it->second;
  }
  if (c.strategy == "auto" && c.shards > 1) {
    usage_error(
        "check: --shard splits one strategy's shares or executions; the portfolio (--strategy auto, the default) "
        "runs several in turns, so name one strategy to shard (--strategy bounded, dpor, pct or random), or use "
        "--jobs");
  }
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
  c.setup.seed = o.seed;
  single_gc_settings("check", o);
  const engine::SimConfig sim = sim_config(o, o.procs.front(), 0, o.seed);
  c.setup.procs = sim.procs;
  c.setup.gc = sim.gc;
  c.setup.procs_auto = sim.procs_auto;
  c.setup.containermaxprocs = sim.containermaxprocs;
  c.setup.updatemaxprocs = sim.updatemaxprocs;
  c.setup.cgroup = sim.cgroup;
  c.search_seed = o.seed;
  return co;
}

std::string replay_command(const CheckOptions& co, const std::string& sched) {
  const RunOptions& o = co.run;
  const model::CheckConfig& c = co.cfg;
  std::string cmd = "gmpsim check " + o.scenario_path + " --procs " +
                    (c.setup.procs_auto ? std::string("auto") : std::to_string(c.setup.procs));
  if (!o.cpu_quota.empty()) cmd += " --cpu-quota " + scenario::cpus_text(o.cpu_quota.front());
  if (c.setup.cgroup.period != scenario::Cgroup{}.period) cmd += " --cpu-period " + std::to_string(c.setup.cgroup.period) + "ns";
  if (c.setup.cgroup.burst != 0) cmd += " --cpu-burst " + std::to_string(c.setup.cgroup.burst) + "ns";
  if (!c.setup.cgroup.cpuset.empty()) {
    std::string set;
    for (int32_t cpu : c.setup.cgroup.cpuset) set += (set.empty() ? "" : ",") + std::to_string(cpu);
    cmd += " --cpuset " + set;
  }
  if (c.setup.containermaxprocs != 1 || c.setup.updatemaxprocs != 1) {
    cmd += " --godebug containermaxprocs=" + std::to_string(c.setup.containermaxprocs) +
           ",updatemaxprocs=" + std::to_string(c.setup.updatemaxprocs);
  }
  if (!c.setup.scenario->processes.empty())
    cmd += " --process " + model::process_label(*c.setup.scenario, c.setup.process);
  if (!co.mutant.empty()) cmd += " --mutant " + co.mutant;
  if (!o.profile.empty()) cmd += " --profile " + o.profile;
  if (o.seed != 1) cmd += " --seed " + std::to_string(o.seed);
  if (!o.gogc.empty()) cmd += " --gogc " + gogc_text(c.setup.gc.gcPercent);
  if (!o.memlimit.empty()) cmd += " --memlimit " + memlimit_text(c.setup.gc.memoryLimit);
  if (c.setup.max_steps != model::CheckSetup{}.max_steps) cmd += " --max-steps " + std::to_string(c.setup.max_steps);
  if (c.setup.daemon_rounds != model::CheckSetup{}.daemon_rounds)
    cmd += " --sysmon-rounds " + std::to_string(c.setup.daemon_rounds);
  if (c.setup.strict_time) {
    cmd += " --time strict";
    if (c.setup.max_time != model::CheckSetup{}.max_time) cmd += " --max-time " + std::to_string(c.setup.max_time) + "ns";
  }
  if (c.setup.stranding_steps != model::kDefaultStrandingSteps)
    cmd += " --stranding-steps " + std::to_string(c.setup.stranding_steps);
  if (c.setup.stranding_ns != model::kDefaultStrandingNs)
    cmd += " --stranding-time " + std::to_string(c.setup.stranding_ns) + "ns";
  if (c.setup.starvation_ns != model::kDefaultStarvationNs)
    cmd += " --starvation-time " + std::to_string(c.setup.starvation_ns) + "ns";
  if (c.setup.properties != model::kDefaultProperties) {
    std::string props;
    for (uint32_t b = 1; b <= model::kLastProperty; b <<= 1) {
      if ((c.setup.properties & b) != 0)
        props += (props.empty() ? "" : ",") + std::string(model::property_name(static_cast<model::Property>(b)));
    }
    cmd += " --property " + props;
  }
  return cmd + " --replay '" + sched + "'";
}

// Replays the schedule, prints the interleaving, writes the trace; returns whether it violated.
bool show_replay(const CheckOptions& co, const model::Schedule& s) {
  const std::string& trace_path = co.run.sim.trace_path;
  std::vector<std::pair<std::string, std::string>> meta{{"schedule", s.str()}};
  if (!co.cfg.setup.scenario->processes.empty())
    meta.emplace_back("process", model::process_label(*co.cfg.setup.scenario, co.cfg.setup.process));
  model::Execution ex;
  try {
    ex = model::replay(co.cfg.setup, s, trace_path, meta);
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
  if (!trace_path.empty()) std::printf("trace: %s\n", trace_path.c_str());
  return ex.end == model::Execution::End::Violation;
}

// --replay: the schedule's run, strictly. 0, 3 on a violation, 2 for a schedule that does not fit.
int run_replay(const CheckOptions& co, const model::Schedule& sched) {
  std::printf("gmpsim check: replaying %s on %s, %d Ps\n", co.replay.c_str(), co.run.scenario_path.c_str(),
              co.cfg.setup.procs);
  try {
    return show_replay(co, sched) ? 3 : 0;
  } catch (const model::ScheduleError& e) {
    std::fprintf(stderr, "gmpsim: %s\n", e.what());
    return 2;
  }
}

// --process (and a replayed schedule's NAME@): the checked process. A scenario of several
// processes checks its first by default; a schedule recorded under one --process does not replay
// under another. False (after the error) when the two disagree or the name is unknown.
bool resolve_process(CheckOptions& co, model::Schedule& sched) {
  const scenario::Scenario& sc = *co.cfg.setup.scenario;
  std::string want = co.process;
  if (co.replaying && !sched.process.empty()) {
    if (sc.processes.empty()) {
      std::fprintf(stderr, "gmpsim: --replay: the schedule names process '%s', but the scenario has one process\n",
                   sched.process.c_str());
      return false;
    }
    if (!want.empty() && want != sched.process) {
      std::fprintf(stderr,
                   "gmpsim: --replay: the schedule was recorded with --process %s, not %s; its picks mean another "
                   "run under another --process\n",
                   sched.process.c_str(), want.c_str());
      return false;
    }
    want = sched.process;
  }
  if (want.empty() || (sc.processes.empty() && want == "all")) {
    co.cfg.setup.process = 0;
  } else {
    try {
      co.cfg.setup.process = model::resolve_process(sc, want);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "gmpsim: --process: %s\n", e.what());
      return false;
    }
  }
  if (!sc.processes.empty()) sched.process = model::process_label(sc, co.cfg.setup.process);
  return true;
}

// What the search is about to do: the scenario, the strategy and its parameters, the properties.
void print_heading(const CheckOptions& co, const scenario::Scenario& sc) {
  const model::CheckConfig& c = co.cfg;
  std::string props;
  for (uint32_t b = 1; b <= model::kLastProperty; b <<= 1) {
    if ((c.setup.properties & b) != 0)
      props += (props.empty() ? "" : ", ") + std::string(model::property_name(static_cast<model::Property>(b)));
  }
  const std::string heading = model::make_strategy(c.strategy, c.params, c.search_seed)->heading();
  std::string named = heading;  // " (at most 2 preemptions)"; the default says so
  if (!co.strategy_given) named = heading.rfind(" (", 0) == 0 ? " (the default: " + heading.substr(2) : " (the default)" + heading;
  std::printf("gmpsim check: %s, %d Ps, strategy %s%s", co.run.scenario_path.c_str(), c.setup.procs,
              c.strategy.c_str(), named.c_str());
  std::printf(", seed %llu", static_cast<unsigned long long>(co.run.seed));
  if (!co.mutant.empty()) std::printf(", mutant %s", co.mutant.c_str());
  if (c.shards > 1) std::printf(", shard %u/%u", c.shard, c.shards);
  if (!sc.processes.empty()) {
    if (c.setup.process == model::kAllProcesses) {
      std::printf("\nprocesses: all %zu; every process's steps are choices, and the properties hold for each runtime",
                  sc.processes.size());
    } else {
      std::printf(
          "\nprocess %s (--process; of %zu): only its steps are choices, the other processes' run in a fixed "
          "order (lowest thread first, whenever one can)",
          model::process_label(sc, c.setup.process).c_str(), sc.processes.size());
    }
  }
  std::printf("\nproperties: %s%s; at most %llu steps an execution (--max-steps), ", props.c_str(),
              c.setup.properties == model::kDefaultProperties ? " (the default set; --property all for every one)" : "",
              static_cast<unsigned long long>(c.setup.max_steps));
  if (c.setup.strict_time) {
    std::printf("strict time: waits end in deadline order, up to %g ms of virtual time\n",
                static_cast<double>(c.setup.max_time) / 1e6);
  } else {
    std::printf("free time; sysmon's waits end by choice %u times (--sysmon-rounds)\n", c.setup.daemon_rounds);
    size_t timed = 0;
    for (const scenario::Assertion& x : sc.assertions) {
      timed += x.kind == scenario::AssertKind::StartLatency || x.kind == scenario::AssertKind::MaxRunnableLatency;
    }
    if (timed != 0 && (c.setup.properties & model::kAssertions) != 0) {
      std::printf("note: the scenario's %zu latency assertion%s %s checked under --time strict only\n", timed,
                  timed == 1 ? "" : "s", timed == 1 ? "is" : "are");
    }
  }
  if (c.time_limit > 0) {
    std::printf("time limit: %g s for the search and its shrinking (--time-limit; 0: none)\n", c.time_limit);
  } else {
    std::printf("time limit: none (--time-limit 0)\n");
  }
  bool quota = c.setup.cgroup.quota >= 0 || !c.setup.cgroup.changes.empty();
  for (const scenario::ProcessSpec& p : sc.processes) quota |= p.cgroup.quota >= 0 || !p.cgroup.changes.empty();
  if (quota) {
    std::printf(
        "note: the checker enforces no cgroup CPU quota: its threads take no time, so none is throttled "
        "(docs/checker.md, \"Several processes\")\n");
  }
  std::fflush(stdout);
}

// The search's counts and, when it found one, the violation: its schedule and its interleaving.
// Returns the exit status: 0 when nothing was found, 3 when something was.
int print_report(const CheckOptions& co, const model::CheckReport& rep) {
  const model::CheckConfig& c = co.cfg;
  std::fputs(rep.strategy_summary.c_str(), stdout);
  std::printf(
      "executions %llu (%llu cut short by sleep sets or bounds, %llu at the step limit), quiescent points tested "
      "%llu, distinct states %llu%s, %.2f s, %.0f executions/s, %.0f states/s, search %s\n",
      static_cast<unsigned long long>(rep.executions), static_cast<unsigned long long>(rep.pruned),
      static_cast<unsigned long long>(rep.step_limited), static_cast<unsigned long long>(rep.quiescent),
      static_cast<unsigned long long>(rep.states), rep.states_truncated ? " (capped)" : "", rep.seconds,
      static_cast<double>(rep.executions) / std::max(rep.seconds, 1e-9),
      static_cast<double>(rep.states) / std::max(rep.seconds, 1e-9),
      rep.complete ? "complete" : (rep.found ? "stopped at the first violation" : "incomplete"));
  if (!rep.found) std::fputs(rep.meaning.c_str(), stdout);
  if (rep.found && c.shrink) std::printf("shrinking took %.2f s\n", rep.shrink_seconds);
  if (rep.time_cut != 0) std::printf("note: the time limit cut the execution that was running then\n");
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
  model::Schedule shown = f.schedule;  // with the process it chose for, when there are several
  if (!c.setup.scenario->processes.empty()) shown.process = model::process_label(*c.setup.scenario, c.setup.process);
  const std::string where =
      !f.found_by.empty() ? "found by " + f.found_by
                          : std::string("found in ") + (model::find_strategy(c.strategy)->exhaustive ? "share " : "execution ") +
                                std::to_string(f.execution);
  std::printf("\nVIOLATION %s (%s): %s\n", model::property_name(f.violation.property), where.c_str(),
              f.violation.message.c_str());
  std::printf("schedule: %s (%zu departures from the default order, %u preemptions, %llu steps", shown.str().c_str(),
              f.schedule.picks.size(), f.preemptions, static_cast<unsigned long long>(f.schedule.steps));
  if (c.shrink) {
    std::printf("; shrunk from %zu departures, %u preemptions, %llu steps in %u replays", f.original.picks.size(),
                f.original_preemptions, static_cast<unsigned long long>(f.original.steps), f.shrink_runs);
    if (f.shrink_cut) std::printf(", until the time limit stopped it");
  }
  std::printf(")\nreplay: %s\n", replay_command(co, shown.str()).c_str());
  show_replay(co, shown);
  return 3;
}

// Runs the search, with a progress line on a terminal. A scenario the checker cannot follow (too
// many threads, a run that does not repeat itself) ends the program with status 1.
model::CheckReport run_search(CheckOptions& co) {
  model::CheckConfig& c = co.cfg;
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (tty) {
    // One line, rewritten about once a second, cut to the terminal's width so that it never wraps.
    c.progress = [](uint64_t n, uint64_t states, double s, const std::string& detail) {
      winsize ws{};
      const size_t width = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 79;
      char buf[160];
      std::snprintf(buf, sizeof buf, "check %.0fs: %llu executions (%.0f/s), %llu states", s,
                    static_cast<unsigned long long>(n), static_cast<double>(n) / std::max(s, 1e-9),
                    static_cast<unsigned long long>(states));
      std::string line = buf;
      if (!detail.empty()) line += "; " + detail;
      if (line.size() > width) line.resize(width);
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
    };
  }
  model::CheckReport rep;
  try {
    rep = model::run_check(c);
  } catch (const engine::SimConfigError& e) {  // a cgroup the machine cannot hold, as run refuses it
    if (tty) std::fputs("\r\033[K", stderr);
    usage_error(std::string("check: ") + e.what());
  } catch (const std::runtime_error& e) {
    if (tty) std::fputs("\r\033[K", stderr);
    std::fprintf(stderr, "gmpsim: %s\n", e.what());
    std::exit(1);
  }
  if (tty) std::fputs("\r\033[K", stderr);
  return rep;
}

// Wraps `text` to lines of at most `width` characters, each starting with `indent`.
std::string wrapped(const std::string& text, const std::string& indent, size_t width) {
  std::string out, line = indent;
  size_t i = 0;
  while (i < text.size()) {
    const size_t sp = std::min(text.find(' ', i), text.size());
    const std::string word = text.substr(i, sp - i);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent;
    }
    line += (line.size() > indent.size() ? " " : "") + word;
    i = sp + 1;
  }
  return out + line + "\n";
}

}  // namespace

std::string check_usage() {
  std::string u = "  gmpsim check SCENARIO --procs N [--strategy " + model::strategy_names("|", "|") + "] [its flags]\n";
  u +=
      "                        [--seed S] [--max-executions N] [--time-limit DUR] [--jobs J] [--shard I/N]\n"
      "                        [--max-steps N] [--sysmon-rounds N] [--time free|strict] [--max-time DUR]\n"
      "                        [--property LIST] [--no-shrink] [--show N] [--trace OUT] [--replay SCHEDULE]\n"
      "                        [--stranding-steps N] [--stranding-time DUR] [--starvation-time DUR]\n"
      "                        [--profile F] [--gogc N|off] [--memlimit SIZE|off] [--process NAME|all]\n"
      "                        [--cpu-quota CPUS] [--cpu-period DUR] [--cpu-burst DUR] [--cpuset LIST]\n"
      "                        [--godebug containermaxprocs=0,updatemaxprocs=0]   (--procs auto: Go's default)\n"
      "                        [--mutant NAME]   (builds with GMP_MUTANTS only; docs/mutants.md)\n"
      "      explores the interleavings of the scenario's run, for at most --time-limit (default 60s,\n"
      "      shrinking included; 0: none); LIST: throw, deadlock, g-conservation,\n"
      "      work-conservation, lost-wakeup, livelock, assertions, stw-completes, stranding, starvation,\n"
      "      default (all of them), all. Stranding: a G queued behind a running one (or globally) while\n"
      "      a P idles and no M spins past --stranding-steps steps of the M holding it (default " +
      std::to_string(model::kDefaultStrandingSteps) + ") or, under\n"
      "      --time strict, --stranding-time (default " + std::to_string(model::kDefaultStrandingNs / 1000) +
      "us). Starvation (strict time only): a G runnable past\n"
      "      --starvation-time (default " + std::to_string(model::kDefaultStarvationNs / 1'000'000) +
      "ms: forcePreemptNS and sysmon's longest pause). Exit\n"
      "      status 3 when a property is violated (the schedule, its interleaving and --trace show it).\n"
      "      --process: with several processes, whose steps are choices and whose runtime the properties\n"
      "      are about (default: the first process declared); the others run in a fixed order; all: every\n"
      "      process's steps and runtimes.\n";
  std::string props;
  for (uint32_t b = 1; b <= model::kLastProperty; b <<= 1) {
    if ((model::kDefaultProperties & b) != 0)
      props += (props.empty() ? "" : ", ") + std::string(model::property_name(static_cast<model::Property>(b)));
  }
  const model::CheckSetup setup_defaults;
  u += wrapped("defaults: --strategy " + std::string(model::strategies().front().name) + " (" +
                   model::portfolio_members({}) + "); --time-limit " + std::to_string(static_cast<int>(model::kDefaultTimeLimitS)) +
                   "s; --property default (" + props + "); --max-steps " + std::to_string(setup_defaults.max_steps) +
                   "; --sysmon-rounds " + std::to_string(setup_defaults.daemon_rounds) +
                   "; --time free; --seed 1; --jobs 1; --max-executions: none for an exhaustive search or auto, "
                   "10000 for pct and random. --shard is refused with auto.",
               "      ", 100);
  u += "      strategies (the first is the default) and their flags:\n";
  for (const model::StrategyInfo& s : model::strategies()) {
    std::string head = "        " + std::string(s.name);
    for (const model::StrategyParam& p : s.params) head += " [--" + std::string(p.name) + " " + p.metavar + "]";
    const char* kind = std::string(s.name) == "auto" ? "" : s.exhaustive ? "exhaustive: " : "sampling: ";
    u += head + "\n" + wrapped(kind + std::string(s.help), "            ", 100);
  }
  std::vector<std::string> seen;
  for (const model::StrategyInfo& s : model::strategies()) {
    for (const model::StrategyParam& p : s.params) {
      if (std::find(seen.begin(), seen.end(), p.name) != seen.end()) continue;
      seen.emplace_back(p.name);
      // Its default in each strategy that takes it.
      std::string defaults;
      for (const model::StrategyInfo& t : model::strategies()) {
        for (const model::StrategyParam& q : t.params) {
          if (std::string(q.name) != p.name) continue;
          defaults += (defaults.empty() ? "" : ", ") + std::string(t.name) + " " +
                      (q.fallback < 0 ? "none" : std::to_string(q.fallback));
        }
      }
      u += "        --" + std::string(p.name) + " " + p.metavar + "\n" +
           wrapped(std::string(p.help) + " (" + std::to_string(p.lo) + " to " + std::to_string(p.hi) + "; default " +
                       defaults + ")",
                   "            ", 100);
    }
  }
  return u;
}

int cmd_check(int argc, char** argv) {
  CheckOptions co = parse_check_args(argc, argv);
  model::Schedule sched;
  if (co.replaying) {
    try {
      sched = model::Schedule::parse(co.replay);
    } catch (const model::ScheduleError& e) {
      std::fprintf(stderr, "gmpsim: --replay: %s\n", e.what());
      return 2;
    }
  }
  const Loaded in = load_inputs(co.run);
  co.cfg.setup.scenario = &in.scenario;
  co.cfg.setup.profile = &in.profile;
  if (!resolve_process(co, sched)) return 2;
  if (co.replaying) return run_replay(co, sched);
  print_heading(co, in.scenario);
  const model::CheckReport rep = run_search(co);
  return print_report(co, rep);
}

}  // namespace gmp::cli
