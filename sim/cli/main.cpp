// gmpsim: the command-line entry point.
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "sim/cli/memory_limit.h"

namespace {

const char kHelp[] =
    "usage:\n"
    "  gmpsim run SCENARIO [--procs N] [--cores N] [--profile F] [--seed S] [--trace OUT]\n"
    "                      [--schedtrace DUR] [--asyncpreemptoff] [--max-time DUR] [--max-events N]\n"
    "                      [--check-determinism] [--events] [--jitter DUR]\n"
    "  gmpsim sweep SCENARIO --procs 1,2,4,8,16 [--cores 4,16,64] [--seeds K] [--profile F] [--svg OUT]\n"
    "                        [--jobs N]   (runs N simulations at once; default: one per CPU)\n"
    "  gmpsim steal [--procs N] [--producers N] [--gs N] [--seed S] [--schedules K] [--replay SCHEDULE]\n"
    "  gmpsim trace FILE          print a trace, one event a line\n"
    "PROFILE is a file or a builtin name (default, m1pro, epyc-vm). Runs stop at --max-time (default\n"
    "60s of virtual time) or --max-events (default 2000000000) with exit status 2. --jitter adds up to\n"
    "DUR to every operation's cost, drawn from the seed, to stress the port under varied interleavings.\n";

int dispatch(int argc, char** argv) {
  if (argc < 2) gmp::cli::usage_error("missing command");
  const std::string cmd = argv[1];
  if (cmd == "run") return gmp::cli::cmd_run(argc - 2, argv + 2);
  if (cmd == "sweep") return gmp::cli::cmd_sweep(argc - 2, argv + 2);
  if (cmd == "steal") return gmp::cli::cmd_steal(argc - 2, argv + 2);
  if (cmd == "trace") return gmp::cli::cmd_trace(argc - 2, argv + 2);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fputs(kHelp, stdout);
    return 0;
  }
  gmp::cli::usage_error("unknown command '" + cmd + "'");
}

}  // namespace

int main(int argc, char** argv) {
  gmp::cli::limit_memory_to_machine();
  try {
    return dispatch(argc, argv);
  } catch (const std::bad_alloc&) {
    // Whatever was being written is removed as the exception unwinds (the trace writer's temporary
    // file); nothing is left half-written.
    const uint64_t limit = gmp::cli::memory_limit();
    std::fprintf(stderr, "gmpsim: out of memory");
    if (limit != 0) std::fprintf(stderr, " (the limit is %.1f GiB: the machine's memory, or ulimit -v)", static_cast<double>(limit) / (1 << 30));
    std::fprintf(stderr, "\n");
    return 1;
  }
}
