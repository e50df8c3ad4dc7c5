// gmpsim replay TRACE [--mode shared|pinned] [--procs 1,2,4,8] [--cores LIST] [-o SCENARIO] [the flags of gmpsim sweep]
// Derives a scenario from the trace (traces/derive_scenario.h), writes it where users can read
// and edit it, and sweeps it over GOMAXPROCS and core counts: a recorded run replayed as a what-if.
//
// The fit (unless --no-fit): sim/simulation/replay_fit.h.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "sim/simulation/replay_fit.h"
#include "traces/derive_scenario.h"
#include "traces/output_file.h"
#include "traces/timeline.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace gmp::cli {

int cmd_replay(int argc, char** argv) {
  if (argc < 1 || argv[0][0] == '-') usage_error("replay: expected TRACE first, then the flags");
  const std::string trace_path = argv[0];
  std::string out_path, profile;
  bool procs_given = false, svg_given = false, fit = true;
  trace::DeriveOptions derive_opt;  // --mode: shared (the default) or pinned
  std::vector<std::string> rest;  // everything else goes to gmpsim sweep as it is
  for (int i = 1; i < argc; i++) {
    const std::string arg = argv[i];
    if (arg == "-o" || arg == "--out") {
      if (i + 1 >= argc || argv[i + 1][0] == '\0') usage_error("replay: " + arg + " needs a file name");
      out_path = argv[++i];
    } else if (arg.rfind("--out=", 0) == 0) {
      out_path = arg.substr(6);
      if (out_path.empty()) usage_error("replay: --out needs a file name");
    } else if (arg == "--mode" || arg.rfind("--mode=", 0) == 0) {
      std::string m;
      if (arg == "--mode") {
        if (i + 1 >= argc) usage_error("replay: --mode needs shared or pinned");
        m = argv[++i];
      } else {
        m = arg.substr(7);
      }
      if (m == "shared") {
        derive_opt.mode = trace::ReplayMode::Shared;
      } else if (m == "pinned") {
        derive_opt.mode = trace::ReplayMode::Pinned;
      } else {
        usage_error("replay: --mode is shared or pinned, not \"" + m + "\"");
      }
    } else if (arg == "--no-fit") {
      fit = false;
    } else {
      procs_given |= arg == "--procs" || arg.rfind("--procs=", 0) == 0;
      svg_given |= arg == "--svg" || arg.rfind("--svg=", 0) == 0;
      if (arg == "--profile" && i + 1 < argc) profile = argv[i + 1];
      if (arg.rfind("--profile=", 0) == 0) profile = arg.substr(10);
      rest.push_back(arg);
    }
  }
  trace::Timeline tl;
  try {
    tl = trace::build_timeline(trace_path);
  } catch (const trace::TraceFormatError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  if (out_path.empty()) {
    const size_t slash = trace_path.find_last_of('/');
    std::string base = trace_path.substr(slash == std::string::npos ? 0 : slash + 1);
    if (const size_t dot = base.find('.'); dot != std::string::npos && dot > 0) base = base.substr(0, dot);
    out_path = base + ".replay.textproto";
  }
  // Written unfitted first, so that an unwritable output is reported before the fit's run.
  trace::DerivedScenario d;
  try {
    d = trace::derive_scenario(tl, trace_path, derive_opt);
  } catch (const trace::DeriveError& e) {
    std::fprintf(stderr, "gmpsim replay: %s: %s\n", trace_path.c_str(), e.what());
    return 1;
  }
  try {
    trace::write_output_file(out_path, d.text);
    if (fit) {
      RunOptions o;
      o.profile = profile;
      const engine::FittedScenario f = engine::derive_fitted(
          tl, trace_path, load_profile_option(o), sim_config(o, 1, 0, 1), out_path + ".fit.trace", derive_opt.mode);
      if (f.fitted) {
        d = f.derived;
        trace::write_output_file(out_path, d.text);
        std::printf(
            "replay: fitted at GOMAXPROCS %d: the replay ran its goroutines %.3f ms against the trace's %.3f ms; "
            "%lld ns taken out next to each of %llu operations\n",
            d.procs, static_cast<double>(f.replay_running_ns) / 1e6, static_cast<double>(d.running_ns) / 1e6,
            static_cast<long long>(f.overhead_ns), static_cast<unsigned long long>(d.sync_ops));
      }
    }
  } catch (const trace::OutputError& e) {
    std::fprintf(stderr, "gmpsim: cannot write %s\n", e.what());
    return 1;
  } catch (const trace::TraceWriteError& e) {
    std::fprintf(stderr, "gmpsim: %s\n", e.what());
    return 1;
  }
  std::printf(
      "replay: %s -> %s: %llu goroutines (%llu of the runtime left out), %llu operations; the trace ran "
      "%.3f ms at GOMAXPROCS %d\n\n",
      trace_path.c_str(), out_path.c_str(), static_cast<unsigned long long>(d.goroutines),
      static_cast<unsigned long long>(d.runtime_gs), static_cast<unsigned long long>(d.ops),
      static_cast<double>(d.span) / 1e6, d.procs);
  for (const std::string& line : d.pools) std::printf("replay: pool: %s\n", line.c_str());
  if (!d.pools.empty()) std::printf("\n");
  std::fflush(stdout);
  std::vector<std::string> args{out_path};
  // The chart goes next to the derived scenario (go123.textproto or go123.replay.textproto:
  // go123-sweep.svg), unless --svg says where.
  if (!svg_given) {
    std::string stem = out_path;
    for (const std::string ext : {".textproto", ".replay"}) {
      if (stem.size() > ext.size() && stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0) {
        stem.resize(stem.size() - ext.size());
      }
    }
    args.push_back("--svg");
    args.push_back(stem + "-sweep.svg");
  }
  if (!procs_given) {
    std::set<int64_t> procs{1, 2, 4, 8};
    if (d.procs > 0) procs.insert(d.procs);
    std::string list;
    for (int64_t p : procs) list += (list.empty() ? "" : ",") + std::to_string(p);
    args.push_back("--procs");
    args.push_back(list);
  }
  args.insert(args.end(), rest.begin(), rest.end());
  std::vector<char*> av;
  for (std::string& s : args) av.push_back(s.data());
  return cmd_sweep(static_cast<int>(av.size()), av.data());
}

}  // namespace gmp::cli
