// gmpsim replay TRACE... [--mode shared|pinned] [--procs 1,2,4,8] [--cores LIST] [-o SCENARIO]
//               [--traced-cores N] [--cpu-time DURATION[,DURATION...]] [the flags of gmpsim sweep]
// Reads and checks each trace, cleans it (traces/replay_clean.h: the tracer's goroutines, OS
// waits), combines several into one (traces/replay_combine.h: each goroutine's median work),
// derives a scenario (traces/derive_scenario.h; shared mode pools goroutines that share a work
// source, traces/replay_pool.h), writes it where users can read and edit it (next to the first
// trace, under its whole name, unless -o says), and sweeps it over GOMAXPROCS and core counts: a
// recorded run replayed as a what-if. docs/replay.md.
//
// The what-if sweep takes sweep's flags: --jobs runs its points in parallel (the same output for
// any N), and --shard I/N --part PART writes a share of its runs to PART (sweep's -o, which names
// SCENARIO here); gmpsim replay --merge PART... (or gmpsim sweep --merge) prints the what-if's
// tables as the unsplit replay does, and --svg OUT its chart. Every shard derives and fits the
// scenario itself: that is one simulation, the sweep is the many.
//
// The fit (unless --no-fit): sim/simulation/replay_fit.h.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "sim/simulation/replay_fit.h"
#include "traces/derive_scenario.h"
#include "traces/output_file.h"
#include "traces/replay_clean.h"
#include "traces/replay_combine.h"
#include "traces/timeline.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "traces/validate.h"

namespace gmp::cli {

int cmd_replay(int argc, char** argv) {
  if (argc >= 1 && std::strcmp(argv[0], "--merge") == 0) return cmd_sweep(argc, argv);  // the what-if's parts
  if (argc < 1 || argv[0][0] == '-') usage_error("replay: expected TRACE first, then the flags");
  std::vector<std::string> traces;
  int i = 0;
  for (; i < argc && argv[i][0] != '-'; i++) traces.push_back(argv[i]);
  std::string out_path, profile;
  bool procs_given = false, svg_given = false, split = false, shard_given = false, fit = true;
  int32_t traced_cores = 0;
  std::vector<int64_t> cpu_times;
  trace::DeriveOptions derive_opt;  // --mode: shared (the default) or pinned
  std::vector<std::string> rest;  // everything else goes to gmpsim sweep as it is
  for (; i < argc; i++) {
    const std::string arg = argv[i];
    auto value = [&](const std::string& flag) -> std::string {
      if (arg.rfind(flag + "=", 0) == 0) return arg.substr(flag.size() + 1);
      if (i + 1 >= argc) usage_error("replay: " + flag + " needs a value");
      return argv[++i];
    };
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
    } else if (arg == "--traced-cores" || arg.rfind("--traced-cores=", 0) == 0) {
      traced_cores = static_cast<int32_t>(parse_uint("--traced-cores", value("--traced-cores"), 1, 1 << 20));
    } else if (arg == "--cpu-time" || arg.rfind("--cpu-time=", 0) == 0) {
      for (const std::string& t : split_list(value("--cpu-time"))) {
        cpu_times.push_back(parse_duration("--cpu-time", t, 1, int64_t{1} << 60, "that is positive, at most 2^60 ns"));
      }
    } else {
      procs_given |= arg == "--procs" || arg.rfind("--procs=", 0) == 0;
      svg_given |= arg == "--svg" || arg.rfind("--svg=", 0) == 0;
      split |= arg == "--part" || arg.rfind("--part=", 0) == 0;
      shard_given |= arg == "--shard" || arg.rfind("--shard=", 0) == 0;
      if (arg == "--profile" && i + 1 < argc) profile = argv[i + 1];
      if (arg.rfind("--profile=", 0) == 0) profile = arg.substr(10);
      rest.push_back(arg);
    }
  }
  // Checked before any trace is read: here -o names the derived scenario, so the part is --part's.
  if (shard_given && !split) usage_error("replay: --shard needs --part PART, the file its share of the what-if runs goes to");
  if (!cpu_times.empty() && cpu_times.size() != traces.size()) {
    usage_error("replay: --cpu-time needs one duration per trace (" + std::to_string(traces.size()) + "), got " +
                std::to_string(cpu_times.size()));
  }
  // Read, check and clean every trace before anything is written.
  std::vector<trace::Timeline> tls(traces.size());
  std::vector<trace::CleanReport> cleaned;
  std::vector<std::string> no_cores;  // the traces whose cores nothing says
  for (size_t k = 0; k < traces.size(); k++) {
    if (const std::string err = trace::read_replay_trace(traces[k], tls[k]); !err.empty()) {
      std::fprintf(stderr, "gmpsim replay: %s\n", err.c_str());
      return 1;
    }
    trace::CleanOptions co;
    // The traced machine's cores: --traced-cores, else the trace's header; never this machine's,
    // so that the replay of a trace is the same wherever it runs.
    co.traced_cores = traced_cores > 0 ? traced_cores : trace::header_cores(tls[k]);
    if (co.traced_cores <= 0) no_cores.push_back(traces[k]);
    if (!cpu_times.empty()) co.cpu_time_ns = cpu_times[k];
    cleaned.push_back(trace::clean_timeline(tls[k], co));
  }
  trace::Timeline tl;
  std::string source = traces.front();
  std::vector<std::string> header, notes, combine_warnings;
  trace::CombineReport comb;
  if (traces.size() > 1) {
    try {
      tl = trace::combine_timelines(tls, traces, &comb);
    } catch (const trace::CombineError& e) {
      std::fprintf(stderr, "gmpsim replay: %s\n", e.what());
      return 1;
    }
    source = traces[comb.median] + " (the median span of " + std::to_string(traces.size()) + " traces)";
    header.push_back("Combined from " + std::to_string(traces.size()) +
                     " traces, each goroutine's work the median over them (traces/replay_combine.h):");
    for (size_t k = 0; k < traces.size(); k++) {
      const std::string line = traces[k] + ": span " + trace::ms_text(comb.spans[k]) +
                               (k == comb.median ? " (the median: its structure is replayed)" : "");
      header.push_back("  " + line);
      notes.push_back("replay: " + line);
    }
    notes.push_back("replay: " + std::to_string(comb.matched) + " of " + std::to_string(comb.goroutines) +
                    " goroutines matched in every trace; their work " + trace::ms_text(comb.work_before) +
                    " in the median trace, " + trace::ms_text(comb.work_after) + " as the median over the traces");
    combine_warnings = comb.warnings;
    tls.clear();
  } else {
    tl = std::move(tls.front());
    tls.clear();
  }
  header.push_back("The program's goroutines by start function (count x function: running time less OS waits):");
  for (const std::string& l : trace::start_function_lines(tl)) header.push_back("  " + l);
  std::vector<std::string> warnings;
  for (size_t k = 0; k < cleaned.size(); k++) {
    for (const std::string& w : cleaned[k].warnings) warnings.push_back((traces.size() > 1 ? traces[k] + ": " : "") + w);
  }
  warnings.insert(warnings.end(), combine_warnings.begin(), combine_warnings.end());
  if (!no_cores.empty()) {
    std::string which = traces.size() == 1 ? "the trace does" : "the traces do";
    if (no_cores.size() < traces.size()) {
      which.clear();
      for (const std::string& t : no_cores) which += (which.empty() ? "" : ", ") + t;
      which += no_cores.size() == 1 ? " does" : " do";
    }
    notes.push_back("replay: the traced machine's cores are not known (" + which +
                    " not say them): no running time taken out where more goroutines ran than cores; "
                    "--traced-cores N gives them");
  }
  if (out_path.empty()) out_path = trace::replay_output_path(traces.front());
  // Written unfitted first, so that an unwritable output is reported before the fit's run.
  trace::DerivedScenario d;
  try {
    d = trace::derive_scenario(tl, source, derive_opt);
  } catch (const trace::DeriveError& e) {
    std::fprintf(stderr, "gmpsim replay: %s: %s\n", source.c_str(), e.what());
    return 1;
  }
  try {
    trace::write_output_file(out_path, trace::add_header_comments(d.text, header));
    if (fit) {
      RunOptions o;
      o.profile = profile;
      const engine::FittedScenario f = engine::derive_fitted(tl, source, load_profile_option(o),
                                                             sim_config(o, 1, 0, 1), out_path + ".fit.trace", derive_opt.mode);
      if (f.fitted) {
        d = f.derived;
        trace::write_output_file(out_path, trace::add_header_comments(d.text, header));
        notes.push_back("");
        char buf[400];
        std::snprintf(buf, sizeof buf,
                      "replay: fitted at GOMAXPROCS %d: the replay ran its goroutines %.3f ms against the trace's %.3f ms; "
                      "%lld ns taken out next to each of %llu operations",
                      d.procs, static_cast<double>(f.replay_running_ns) / 1e6, static_cast<double>(d.running_ns) / 1e6,
                      static_cast<long long>(f.overhead_ns), static_cast<unsigned long long>(d.sync_ops));
        notes.back() = buf;
      } else if (!f.not_fitted.empty()) {
        warnings.push_back("not fitted: " + f.not_fitted);
      }
    }
  } catch (const trace::OutputError& e) {
    std::fprintf(stderr, "gmpsim: cannot write %s\n", e.what());
    return 1;
  } catch (const trace::TraceWriteError& e) {
    std::fprintf(stderr, "gmpsim: %s\n", e.what());
    return 1;
  }
  warnings.insert(warnings.end(), d.warnings.begin(), d.warnings.end());
  for (const std::string& n : notes) std::printf("%s\n", n.c_str());
  std::printf(
      "replay: %s -> %s: %llu goroutines (%llu of the runtime left out; %llu of the tracer left out (%s of running)), "
      "%llu operations; the trace ran %.3f ms at GOMAXPROCS %d\n",
      source.c_str(), out_path.c_str(), static_cast<unsigned long long>(d.goroutines),
      static_cast<unsigned long long>(d.runtime_gs), static_cast<unsigned long long>(d.tracer_gs),
      trace::ms_text(d.tracer_running_ns).c_str(), static_cast<unsigned long long>(d.ops),
      static_cast<double>(d.span) / 1e6, d.procs);
  for (const std::string& line : d.pools) std::printf("replay: pool: %s\n", line.c_str());
  for (const std::string& w : warnings) std::printf("warning: %s\n", w.c_str());
  std::printf("\n");
  std::fflush(stdout);
  std::vector<std::string> args{out_path};
  // The chart goes next to the derived scenario (go123.textproto or go123.replay.textproto:
  // go123-sweep.svg), unless --svg says where; a split sweep's goes with --merge.
  if (!svg_given && !split) {
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
