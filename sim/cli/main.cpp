// gmpsim: the command-line entry point.
#include <google/protobuf/stubs/logging.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "sim/cli/memory_limit.h"
#include "sim/runtime/mutants.h"
#include "traces/output_file.h"

namespace {

const char kRunUsage[] =
    "  gmpsim run SCENARIO [--procs N] [--cores N] [--profile F] [--seed S] [--trace OUT]\n"
    "                      [--schedtrace DUR] [--asyncpreemptoff] [--max-time DUR] [--max-events N]\n"
    "                      [--check-determinism] [--events] [--jitter DUR]\n"
    "                      [--gogc N|off] [--memlimit SIZE|off] [--gctrace]\n"
    "                      [--cpu-quota CPUS] [--cpu-period DUR] [--cpu-burst DUR] [--cpuset LIST]\n"
    "                      [--godebug containermaxprocs=0,updatemaxprocs=0]\n";
const char kSweepUsage[] =
    "  gmpsim sweep SCENARIO --procs 1,2,4,8,16 [--cores 4,16,64] [--seeds K] [--profile F] [--svg OUT]\n"
    "                        [--gogc 50,100,off] [--memlimit 64MiB,off] [--cpu-quota 0.5,1,1.5]\n"
    "                        [--cpu-period DUR] [--cpu-burst DUR] [--cpuset LIST] [--godebug ...]\n"
    "                        [--jobs N]   (runs N simulations at once; default: one per CPU)\n"
    "                        [--shard I/N -o PART]\n"
    "      prints a table per metric and `go test -bench` lines; --svg also writes a chart there.\n"
    "      --shard I/N runs share I of N of the runs (those numbered I-1, I-1+N, ...; I counts from\n"
    "      1, as Slurm's --array=1-N and seq N give) and writes their results to PART (-o or --part;\n"
    "      -o alone: every run) instead of printing; --svg then goes to --merge\n"
    "  gmpsim sweep --merge PART... [--svg OUT]\n"
    "      reads the N parts of one sweep (in any order) and prints what the unsplit sweep prints:\n"
    "      tables, bench lines, failed runs on stderr, its exit status, and with --svg its chart;\n"
    "      parts of another sweep, a shard missing or given twice, or a damaged part: exit status 2\n"
    "      (docs/sweeps.md: Slurm array jobs, GNU parallel)\n";
const char kReplayUsage[] =
    "  gmpsim replay TRACE... [--mode shared|pinned] [--procs 1,2,4,8] [--cores LIST] [-o SCENARIO]\n"
    "                [--traced-cores N] [--cpu-time DUR[,DUR...]] [--no-fit] [the flags of sweep]\n"
    "      derives a scenario from the trace, or several traces of one program combined (each\n"
    "      goroutine's median work), cleaned of the tracer's goroutines and of OS waits (more\n"
    "      goroutines running than --traced-cores; running time above each trace's --cpu-time);\n"
    "      shared mode (the default) replays worker pools as items through one channel. Writes\n"
    "      SCENARIO (default: next to the first trace, its name + .replay.textproto) and sweeps it:\n"
    "      the recorded run as a what-if at other GOMAXPROCS and core counts; the chart goes next to\n"
    "      SCENARIO (go123.replay.textproto: go123-sweep.svg) unless --svg says where (docs/replay.md);\n"
    "      --jobs N runs the what-if's points in parallel; --shard I/N --part PART writes a share of\n"
    "      them to PART (-o is SCENARIO here), and gmpsim replay --merge PART... [--svg OUT] prints\n"
    "      the what-if's tables as the unsplit replay does\n";
const char kCalibrateUsage[] =
    "  gmpsim calibrate [--go PATH] [--cpus 1,2,4] [--count K] [--benchtime D] [--profile BASE] [-o PROFILE]\n"
    "                   [--suite DIR] [--heldout DIR|none] [--measured FILE] [--measured-heldout FILE]\n"
    "                   [--params LIST] [--placement spread|affine] [--jobs N] [--max-evaluations N]\n"
    "                   [--regularize L] [--no-cross-validate] [--cv-evaluations N] [--gc-weight W]\n"
    "      fits the cost profile to this machine: runs sim/calibration's Go benchmarks (built once with\n"
    "      go test -c in a temporary folder, run once per repetition and GOMAXPROCS, interleaved) with the\n"
    "      given Go, sets them against their paired scenarios, fits (pulled toward the base's values by\n"
    "      --regularize, default 0.05), cross-validates by leaving out one benchmark at a time (each fit\n"
    "      --cv-evaluations runs, default 60), reports the held-out error,\n"
    "      and writes PROFILE with PROFILE.suite.txt and PROFILE.heldout.txt (the measurements; with\n"
    "      --measured FILE the fit reads saved go test -bench output instead, and PROFILE cites it;\n"
    "      --cpus given with it keeps only the points at those GOMAXPROCS values);\n"
    "      --placement sets the OS placement of the fitted machine (affine: its os_* costs are fitted too);\n"
    "      runs carry GODEBUG=gctrace=1, and the GC cycles per op and GC CPU share are targets too,\n"
    "      weighted by --gc-weight (default 0.5; 0: ns/op alone)\n";
const char kStealUsage[] =
    "  gmpsim steal [--procs N] [--producers N] [--gs N] [--seed S] [--schedules K] [--replay SCHEDULE]\n";
const char kTraceUsage[] =
    "  gmpsim trace FILE          print a trace, one event a line\n"
    "  gmpsim trace validate FILE check that its events are consistent (exit status 3 if not)\n"
    "  gmpsim trace stats FILE [--json] [--top N]   scheduling latency, P utilisation, counts\n"
    "  gmpsim trace critical-path FILE   the chain of goroutines and wake-ups that set the run's length\n"
    "  gmpsim trace diff A B      two traces' statistics side by side\n"
    "  gmpsim trace import IN -o OUT [--format auto|v1|v2]\n"
    "      convert a Go execution trace (Go 1.11 to 1.27) into a trace of gmpsim's schema\n"
    "  gmpsim trace export IN --format perfetto|chrome -o OUT [--axis auto|time|steps]\n"
    "      write a trace for Perfetto (TrackEvent protobuf) or chrome://tracing (JSON); a\n"
    "      counterexample of gmpsim check is placed one nanosecond per step (--axis auto)\n";
const char kNotes[] =
    "PROFILE is a file or a builtin name (default, m1pro, m1pro-fitted, epyc-vm, epyc-vm-fitted).\n"
    "Runs stop at --max-time (default 60s of virtual time, at most 1e18ns) or --max-events (default\n"
    "2000000000) with exit status 2.\n"
    "--jitter (at most 1s) adds up to DUR to every operation's cost, drawn from the seed, to stress\n"
    "the port under varied interleavings. run takes one --procs and --cores value, sweep a list.\n"
    "--gogc (GOGC: off or 0 to 1000000, default 100) and --memlimit (GOMEMLIMIT: off or bytes with an\n"
    "optional B, KiB, MiB, GiB or TiB suffix, default off) are read as Go reads its environment; run\n"
    "and check take one value each, sweep a list of each (columns of its tables). run --gctrace\n"
    "prints a GODEBUG=gctrace=1 line per GC cycle.\n"
    "--procs auto is Go's default GOMAXPROCS (from the cores and the quota, kept current by sysmon);\n"
    "sweep takes auto among its values. The process's cgroup: --cpu-quota CPUS (e.g. 2.5; 0: no\n"
    "limit; sweep takes a list, a column of its tables), --cpu-period DUR (1ms to 1s, default 100ms;\n"
    "quota times period at least 1ms), --cpu-burst DUR (at most the quota per period), --cpuset LIST\n"
    "(cores such as 0-3,8). --godebug sets GODEBUG's containermaxprocs and updatemaxprocs (0 or 1).\n"
    "--trace and --svg replace a regular file through a temporary file next to it, follow a symbolic\n"
    "link to one, and write straight into a character device or FIFO (/dev/null, /dev/stdout). A run\n"
    "that fails (deadlock, fatal error, a limit) still writes its trace, up to where it stopped.\n"
    "Exit status: 0 ok, 1 bad input or an unwritable output, 2 bad usage or a failed run (Go's exit\n"
    "status 2), 3 a failed check (determinism, or a property violated under gmpsim check), 4 a run\n"
    "that ended normally but violated one of the scenario's assertions (each is printed with its\n"
    "position), 70 an internal error.\n";

void print_usage(const char* which, bool notes) {
  std::fputs("usage:\n", stdout);
  std::fputs(which, stdout);
  if (notes) std::fputs(kNotes, stdout);
}

// Protobuf logs some problems itself (on stderr, before our own diagnostic). Its parse errors
// reach us through the error collectors, so its own log lines are dropped; a fatal one ends the
// program as an internal error.
void protobuf_log(google::protobuf::LogLevel level, const char* filename, int line, const std::string& message) {
  if (level != google::protobuf::LOGLEVEL_FATAL) return;
  std::fprintf(stderr, "gmpsim: internal error: protobuf %s:%d: %s\n", filename, line, message.c_str());
  std::fflush(stderr);
  std::_Exit(70);
}

// --help or -h anywhere among a command's arguments.
bool wants_help(int argc, char** argv) {
  for (int i = 0; i < argc; i++) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

#ifdef GMP_MUTANTS
// A build with GMP_MUTANTS takes GMP_MUTANT=name from the environment (docs/mutants.md): every
// simulation of this run uses that mutant. Hidden on purpose: the flag that selects one is
// `gmpsim check --mutant`. Returns false, having said why, for an unknown name.
bool select_mutant_from_env() {
  const char* name = std::getenv("GMP_MUTANT");
  if (name == nullptr || *name == '\0') return true;
  try {
    gmp::rt::setActiveMutant(gmp::rt::mutantFromName(name));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "gmpsim: GMP_MUTANT: %s\n", e.what());
    return false;
  }
  if (gmp::rt::activeMutantSetting() != gmp::rt::Mutant::None) {
    std::fprintf(stderr, "gmpsim: mutant %s is active (GMP_MUTANT)\n", name);
  }
  return true;
}
#endif

int dispatch(int argc, char** argv) {
  if (argc < 2) gmp::cli::usage_error("missing command");
  const std::string cmd = argv[1];
  struct Command {
    const char* name;
    const char* usage;
    bool simulates;  // takes the flags kNotes describes
    int (*run)(int, char**);
  };
  static const std::string kCheckUsage = gmp::cli::check_usage();
  static const Command kCommands[] = {
      {"run", kRunUsage, true, gmp::cli::cmd_run},
      {"sweep", kSweepUsage, true, gmp::cli::cmd_sweep},
      {"replay", kReplayUsage, true, gmp::cli::cmd_replay},
      {"calibrate", kCalibrateUsage, false, gmp::cli::cmd_calibrate},
      {"steal", kStealUsage, false, gmp::cli::cmd_steal},
      {"check", kCheckUsage.c_str(), false, gmp::cli::cmd_check},
      {"trace", kTraceUsage, false, gmp::cli::cmd_trace},
  };
  for (const Command& c : kCommands) {
    if (cmd != c.name) continue;
    if (wants_help(argc - 2, argv + 2)) {
      print_usage(c.usage, c.simulates);
      return 0;
    }
    return c.run(argc - 2, argv + 2);
  }
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fputs("usage:\n", stdout);
    for (const Command& c : kCommands) std::fputs(c.usage, stdout);
    std::fputs(kNotes, stdout);
    return 0;
  }
  gmp::cli::usage_error("unknown command '" + cmd + "'");
}

}  // namespace

int main(int argc, char** argv) {
  gmp::cli::limit_memory_to_machine();
  google::protobuf::SetLogHandler(&protobuf_log);
  gmp::trace::remove_temp_files_on_signals();
  // Bad input is reported where it is found, with its own message and status; running out of
  // memory is reported as such (whatever was being written is removed as the exception unwinds:
  // nothing is left half-written); anything else that escapes is a bug, reported as one rather
  // than as an abort.
  try {
#ifdef GMP_MUTANTS
    if (!select_mutant_from_env()) return 2;
#endif
    return dispatch(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    const uint64_t limit = gmp::cli::memory_limit();
    std::fprintf(stderr, "gmpsim: out of memory");
    if (limit != 0) {
      std::fprintf(stderr, " (the limit is %.1f GiB: the machine's memory, or ulimit -v)",
                   static_cast<double>(limit) / (1 << 30));
    }
    std::fprintf(stderr, "\n");
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "gmpsim: internal error: %s\n", e.what());
    return 70;
  }
}
