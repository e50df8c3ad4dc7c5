// gmpsim trace: tools on trace files.
//   gmpsim trace FILE             prints a trace as text, one event a line
//   gmpsim trace validate FILE    checks that its events tell a consistent story (traces/validate.h)
//   gmpsim trace stats FILE [--json] [--top N]   latency, utilisation, counts (traces/stats.h)
//   gmpsim trace critical-path FILE              what set the run's length (traces/critical_path.h)
//   gmpsim trace diff A B                        two traces' statistics side by side
//   gmpsim trace import IN -o OUT [--format auto|v1|v2]   a Go execution trace into the schema
//                                                (traces/import/go_import.h)
//   gmpsim trace export IN --format perfetto|chrome -o OUT [--axis auto|time|steps]
//                                                Perfetto or Chrome JSON (traces/export/export.h)
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "traces/critical_path.h"
#include "traces/export/export.h"
#include "traces/dump_text.h"
#include "traces/import/go_import.h"
#include "traces/lanes/model.h"
#include "traces/stats.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "traces/validate.h"

namespace gmp::cli {

namespace {

const char* one_file(const char* cmd, int argc, char** argv) {
  if (argc != 1) usage_error(std::string(cmd) + ": expected exactly one FILE");
  if (argv[0][0] == '-' && argv[0][1] == '-') usage_error(std::string(cmd) + ": unknown flag '" + argv[0] + "'");
  return argv[0];
}

// Exit status: 0 consistent, 3 not, 1 unreadable.
int cmd_validate(int argc, char** argv) {
  const std::string path = one_file("trace validate", argc, argv);
  const trace::Validator v = trace::validate_file(path);
  for (const trace::ValidationIssue& i : v.issues()) {
    std::printf("%s: event %llu at %lld ns: %s\n", path.c_str(), static_cast<unsigned long long>(i.index),
                static_cast<long long>(i.ts), i.what.c_str());
  }
  if (v.issue_count() > v.issues().size()) {
    std::printf("... and %llu more\n", static_cast<unsigned long long>(v.issue_count() - v.issues().size()));
  }
  std::printf("%s: %llu events, %zu Gs, %zu Ms, %zu Ps: %s\n", path.c_str(),
              static_cast<unsigned long long>(v.events()), v.gs(), v.ms(), v.ps(),
              v.issue_count() == 0 ? "consistent" : (std::to_string(v.issue_count()) + " inconsistencies").c_str());
  return v.issue_count() == 0 ? 0 : 3;
}

int cmd_stats(int argc, char** argv) {
  std::string path;
  bool json = false;
  size_t top = 10;
  Args a(argc, argv);
  while (!a.done()) {
    const std::string arg = a.next();
    if (!a.is_flag()) {
      if (!path.empty()) usage_error("trace stats: expected one FILE");
      path = arg;
    } else if (a.flag() == "--json") {
      json = true;
    } else if (a.flag() == "--top") {
      top = parse_uint(a.flag(), a.value(), 0, 1'000'000);
    } else {
      usage_error("trace stats: unknown flag '" + a.flag() + "'");
    }
  }
  if (path.empty()) usage_error("trace stats: expected one FILE");
  const trace::TraceStats s = trace::compute_stats(trace::build_timeline(path));
  std::fputs((json ? trace::stats_json(s) : trace::stats_text(s, top)).c_str(), stdout);
  return 0;
}

int cmd_critical_path(int argc, char** argv) {
  const std::string path = one_file("trace critical-path", argc, argv);
  try {
    std::fputs(trace::critical_path_text(trace::critical_path(trace::build_timeline(path))).c_str(), stdout);
  } catch (const trace::CriticalPathError& e) {
    std::fprintf(stderr, "gmpsim: trace critical-path: %s: %s\n", path.c_str(), e.what());
    return 1;
  }
  return 0;
}

int cmd_diff(int argc, char** argv) {
  if (argc != 2 || argv[0][0] == '-' || argv[1][0] == '-') usage_error("trace diff: expected two FILEs");
  const trace::TraceStats a = trace::compute_stats(trace::build_timeline(argv[0]));
  const trace::TraceStats b = trace::compute_stats(trace::build_timeline(argv[1]));
  std::fputs(trace::stats_diff(a, b, argv[0], argv[1]).c_str(), stdout);
  return 0;
}

int cmd_trace_import(int argc, char** argv) {
  Args a(argc, argv);
  std::string in, out;
  trace::go::FormatChoice format = trace::go::FormatChoice::kAuto;
  while (!a.done()) {
    const std::string arg = a.next();
    if (!a.is_flag() && !(arg == "-o")) {
      if (!in.empty()) usage_error("trace import: one input only, got '" + in + "' and '" + arg + "'");
      in = arg;
    } else if (arg == "-o" || a.flag() == "--out") {
      if (arg == "-o") {
        if (a.done()) usage_error("trace import: -o: expected a file name");
        out = a.next();
      } else {
        out = a.value();
      }
      if (out.empty()) usage_error("trace import: -o: expected a file name");
    } else if (a.flag() == "--format") {
      const std::string f = a.value();
      if (f == "auto") {
        format = trace::go::FormatChoice::kAuto;
      } else if (f == "v1") {
        format = trace::go::FormatChoice::kV1;
      } else if (f == "v2") {
        format = trace::go::FormatChoice::kV2;
      } else {
        usage_error("trace import: --format: expected auto, v1 or v2, got '" + f + "'");
      }
    } else {
      usage_error("trace import: unknown flag '" + a.flag() + "'");
    }
  }
  if (in.empty()) usage_error("trace import: missing the Go trace IN");
  if (out.empty()) usage_error("trace import: missing -o OUT");
  try {
    trace::go::ImportResult r = trace::go::import_go_trace(in, out, format);
    std::fprintf(stderr, "%s: go %s trace, %llu Go events, %llu events written to %s\n", in.c_str(),
                 r.go_version.c_str(), static_cast<unsigned long long>(r.go_events),
                 static_cast<unsigned long long>(r.events_written), out.c_str());
  } catch (const trace::TraceFormatError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const trace::TraceWriteError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const trace::OutputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}

int cmd_trace_export(int argc, char** argv) {
  Args a(argc, argv);
  std::string in, out, format;
  lanes::LoadOptions opt;
  while (!a.done()) {
    const std::string arg = a.next();
    if (!a.is_flag() && !(arg == "-o")) {
      if (!in.empty()) usage_error("trace export: one input only, got '" + in + "' and '" + arg + "'");
      in = arg;
    } else if (arg == "-o" || a.flag() == "--out") {
      if (arg == "-o") {
        if (a.done()) usage_error("trace export: -o: expected a file name");
        out = a.next();
      } else {
        out = a.value();
      }
      if (out.empty()) usage_error("trace export: -o: expected a file name");
    } else if (a.flag() == "--format") {
      format = a.value();
      if (format != "perfetto" && format != "chrome") {
        usage_error("trace export: --format: expected perfetto or chrome, got '" + format + "'");
      }
    } else if (a.flag() == "--axis") {
      const std::string v = a.value();
      if (v == "auto") {
        opt.axis = lanes::LoadOptions::Axis::Auto;
      } else if (v == "time") {
        opt.axis = lanes::LoadOptions::Axis::Time;
      } else if (v == "steps") {
        opt.axis = lanes::LoadOptions::Axis::Steps;
      } else {
        usage_error("trace export: --axis: expected auto, time or steps, got '" + v + "'");
      }
    } else {
      usage_error("trace export: unknown flag '" + a.flag() + "'");
    }
  }
  if (in.empty()) usage_error("trace export: missing the trace IN");
  if (format.empty()) usage_error("trace export: missing --format perfetto|chrome");
  if (out.empty()) usage_error("trace export: missing -o OUT");
  try {
    const lanes::Model m = lanes::load_trace(in, opt);
    const exporter::ExportCounts n =
        format == "perfetto" ? exporter::export_perfetto(m, out) : exporter::export_chrome_json(m, out);
    std::fprintf(stderr, "%s: %llu tracks, %llu slices, %llu counter values, %llu instants, %llu flows written to %s\n",
                 in.c_str(), static_cast<unsigned long long>(n.tracks), static_cast<unsigned long long>(n.slices),
                 static_cast<unsigned long long>(n.counter_values), static_cast<unsigned long long>(n.instants),
                 static_cast<unsigned long long>(n.flows), out.c_str());
  } catch (const trace::OutputError& e) {
    std::fprintf(stderr, "gmpsim: trace export: cannot write %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int cmd_trace(int argc, char** argv) {
  try {
    if (argc >= 1 && std::strcmp(argv[0], "validate") == 0) return cmd_validate(argc - 1, argv + 1);
    if (argc >= 1 && std::strcmp(argv[0], "stats") == 0) return cmd_stats(argc - 1, argv + 1);
    if (argc >= 1 && std::strcmp(argv[0], "critical-path") == 0) return cmd_critical_path(argc - 1, argv + 1);
    if (argc >= 1 && std::strcmp(argv[0], "diff") == 0) return cmd_diff(argc - 1, argv + 1);
    // "import" is the subcommand, unless it is the only argument and names a file.
    if (argc >= 1 && std::strcmp(argv[0], "import") == 0 && (argc >= 2 || access("import", F_OK) != 0)) {
      return cmd_trace_import(argc - 1, argv + 1);
    }
    if (argc >= 1 && std::strcmp(argv[0], "export") == 0 && (argc >= 2 || access("export", F_OK) != 0)) {
      return cmd_trace_export(argc - 1, argv + 1);
    }
    trace::dump_text(one_file("trace", argc, argv), stdout);
  } catch (const trace::TraceFormatError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace gmp::cli
