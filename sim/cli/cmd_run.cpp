// gmpsim run SCENARIO [--procs N] [--cores N] [--profile F] [--seed S] [--trace OUT]
//                     [--schedtrace DUR] [--asyncpreemptoff] [--max-time DUR] [--max-events N]
//                     [--check-determinism] [--events] [--gogc N|off] [--memlimit SIZE|off]
//                     [--gctrace]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "sim/cli/report.h"
#include "traces/output_file.h"
#include "traces/trace_writer.h"

namespace gmp::cli {

namespace {
// A trace that cannot be written (no such folder, a full disk) ends the command with the writer's
// message, which names the file; the writer leaves nothing half-written behind. A machine that
// cannot hold the cgroups (a cpuset past its cores, a quota above them) is refused before the run
// writes anything.
engine::SimResult simulate(const Loaded& in, const engine::SimConfig& cfg) {
  try {
    return engine::simulate(in.scenario, in.profile, cfg);
  } catch (const engine::SimConfigError& e) {
    end_progress();
    usage_error(std::string("run: ") + e.what());
  } catch (const trace::TraceWriteError& e) {
    end_progress();
    std::fprintf(stderr, "gmpsim: %s\n", e.what());
    std::exit(1);
  }
}
}  // namespace

int cmd_run(int argc, char** argv) {
  RunOptions o;
  bool check = false;
  bool all_events = false;
  bool gctrace = false;
  parse_sim_args("run", argc, argv, o, [&](Args& a) {
    if (a.flag() == "--events") return all_events = true;
    if (a.flag() == "--gctrace") return gctrace = true;
    if (a.flag() == "--check-determinism") return check = true;
    return false;
  });
  // A list, or several seeds, would silently run only the first: they are sweep's.
  if (o.procs.size() > 1) usage_error("run: --procs takes one value (a list is for gmpsim sweep)");
  if (o.cores.size() > 1) usage_error("run: --cores takes one value (a list is for gmpsim sweep)");
  if (o.seeds != 1) usage_error("run: --seeds is for gmpsim sweep (run takes one --seed)");
  single_gc_settings("run", o);
  if (check && !o.sim.trace_path.empty()) {
    // The check writes a second trace next to the first and compares the two files.
    try {
      if (trace::output_target(o.sim.trace_path).stream) {
        usage_error("run: --check-determinism compares trace files; --trace " + o.sim.trace_path +
                    " is a device or FIFO");
      }
    } catch (const trace::OutputError& e) {
      std::fprintf(stderr, "gmpsim: trace writer: cannot write %s\n", e.what());
      return 1;
    }
  }
  const Loaded in = load_inputs(o);
  engine::SimConfig cfg = sim_config(o, o.procs.front(), o.cores.front(), o.seed);
  cfg.progress = terminal_progress("run");
  const engine::SimResult r = simulate(in, cfg);
  end_progress();
  const std::string text = format_run(r, all_events, gctrace);
  if (check) {
    engine::SimConfig again = cfg;
    again.progress = terminal_progress("check");
    if (!again.trace_path.empty()) again.trace_path += ".check";
    const engine::SimResult r2 = simulate(in, again);
    end_progress();
    const std::string text2 = format_run(r2, all_events, gctrace);
    bool same = text == text2;
    std::string why = same ? "" : "the reports differ";
    // Every run writes its trace, a failed one too (up to where it stopped); a failure is reported
    // with its own status below.
    const bool traced = !cfg.trace_path.empty();
    if (same && traced && !files_equal(cfg.trace_path, again.trace_path)) {
      same = false;
      why = "the traces differ";
    }
    if (!again.trace_path.empty()) std::remove(again.trace_path.c_str());
    std::fputs(text.c_str(), stdout);
    if (!same) {
      std::fprintf(stderr, "gmpsim: determinism check failed: %s between two runs with seed %llu\n", why.c_str(),
                   static_cast<unsigned long long>(o.seed));
      return 3;
    }
    std::printf("determinism: two runs gave byte-identical output%s\n", traced ? " and traces" : "");
  } else {
    std::fputs(text.c_str(), stdout);
  }
  const int status = exit_status(r);
  if (status == kAssertionsViolated) {
    std::fflush(stdout);
    std::fprintf(stderr, "gmpsim: %s violated (see above)\n",
                 r.violations.size() == 1 ? "an assertion was" : "assertions were");
  }
  return status;
}

}  // namespace gmp::cli
