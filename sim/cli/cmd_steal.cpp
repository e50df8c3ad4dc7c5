// gmpsim steal [--procs N] [--producers N] [--gs N] [--seed S] [--schedules K] [--replay SCHEDULE]
//   Ps put, get and steal Gs concurrently through the ported run-queue code, as threads under the
//   checker (model/queue_check.h) with random schedules; prints what each P did and checks that
//   every G was taken exactly once. A schedule is gmpsim check's ("STEP:THREAD,.../STEPS") and
//   replays exactly with --replay.
#include <cstdio>
#include <string>

#include "model/policies.h"
#include "model/queue_check.h"
#include "sim/cli/commands.h"
#include "sim/cli/flags.h"

namespace gmp::cli {

namespace {

// What a stale schedule was recorded with, for ReplayPolicy's errors.
constexpr const char* kRecordedWith = "other --procs, --producers, --gs, --seed or gmpsim";

void print_run(const gmp::model::QueueCheckConfig& cfg, const gmp::model::QueueCheckResult& r) {
  std::printf("seed %llu: %s, %llu steps, %llu context switches\n", static_cast<unsigned long long>(cfg.seed),
              gmp::model::outcome_name(r.run.outcome), static_cast<unsigned long long>(r.run.steps),
              static_cast<unsigned long long>(r.run.switches));
  std::printf("  %-3s %6s %8s %6s %8s %7s %7s %9s %8s %8s %9s\n", "P", "puts", "runnext", "gets", "inherit",
              "steals", "stolen", "from-next", "glob-put", "glob-get", "ring-full");
  for (size_t i = 0; i < r.per_p.size(); i++) {
    const auto& s = r.per_p[i];
    std::printf("  %-3zu %6llu %8llu %6llu %8llu %7llu %7llu %9llu %8llu %8llu %9llu\n", i,
                static_cast<unsigned long long>(s.puts), static_cast<unsigned long long>(s.runnext_puts),
                static_cast<unsigned long long>(s.local_gets), static_cast<unsigned long long>(s.inherit_gets),
                static_cast<unsigned long long>(s.steals), static_cast<unsigned long long>(s.stolen),
                static_cast<unsigned long long>(s.runnext_steals), static_cast<unsigned long long>(s.global_puts),
                static_cast<unsigned long long>(s.global_gets),
                static_cast<unsigned long long>(s.overflows));
  }
  std::printf("  left queued at the end: %llu; Gs taken exactly once: %s of %llu\n",
              static_cast<unsigned long long>(r.drained),
              r.ok() ? "all" : std::to_string(r.total_gs - r.errors.size()).c_str(),
              static_cast<unsigned long long>(r.total_gs));
  for (size_t i = 0; i < r.errors.size() && i < 10; i++) std::printf("  violation: %s\n", r.errors[i].c_str());
}

std::string replay_command(const gmp::model::QueueCheckConfig& cfg, const gmp::model::Schedule& s) {
  std::string cmd = "gmpsim steal --procs " + std::to_string(cfg.procs);
  if (cfg.producers != 0) cmd += " --producers " + std::to_string(cfg.producers);
  return cmd + " --gs " + std::to_string(cfg.gs) + " --seed " + std::to_string(cfg.seed) + " --replay '" + s.str() +
         "'";
}

}  // namespace

int cmd_steal(int argc, char** argv) {
  gmp::model::QueueCheckConfig cfg;
  uint64_t schedules = 1;
  std::string replay;
  bool have_replay = false;
  for (int i = 0; i < argc; i++) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage_error(a + ": missing value");
      return argv[++i];
    };
    if (a == "--procs") cfg.procs = static_cast<int32_t>(parse_uint("--procs", value(), 2, 64));
    else if (a == "--gs") cfg.gs = static_cast<int32_t>(parse_uint("--gs", value(), 1, 1000000));
    else if (a == "--producers") cfg.producers = static_cast<int32_t>(parse_uint("--producers", value(), 1, 64));
    else if (a == "--seed") cfg.seed = parse_uint("--seed", value(), 0, UINT64_MAX);
    else if (a == "--schedules") schedules = parse_uint("--schedules", value(), 1, 1000000);
    else if (a == "--replay") { replay = value(); have_replay = true; }
    else usage_error("steal: unknown flag '" + a + "'");
  }
  if (have_replay) {
    // A schedule that does not parse, or does not fit this configuration (it picks a thread that
    // cannot run at its step, or the run ends at another step), is bad input: exit 2 with the
    // reason, as for any bad flag value.
    try {
      gmp::model::ReplayPolicy policy(gmp::model::Schedule::parse(replay), /*strict=*/true, kRecordedWith);
      const auto r = gmp::model::run_queue_check(cfg, policy);
      print_run(cfg, r);
      return r.ok() ? 0 : 1;
    } catch (const gmp::model::ScheduleError& e) {
      usage_error(std::string("--replay: ") + e.what());
    }
  }
  uint64_t failures = 0;
  const uint64_t first = cfg.seed;
  for (uint64_t k = 0; k < schedules; k++) {
    cfg.seed = first + k;
    gmp::model::RandomPolicy policy(cfg.seed);
    const auto r = gmp::model::run_queue_check(cfg, policy);
    if (k == 0 || !r.ok()) print_run(cfg, r);
    if (!r.ok()) {
      failures++;
      std::printf("  replay with: %s\n", replay_command(cfg, r.run.schedule).c_str());
    }
  }
  if (schedules > 1) {
    std::printf("%llu schedules (seeds %llu..%llu): %llu with a violation\n",
                static_cast<unsigned long long>(schedules), static_cast<unsigned long long>(first),
                static_cast<unsigned long long>(first + schedules - 1), static_cast<unsigned long long>(failures));
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace gmp::cli
