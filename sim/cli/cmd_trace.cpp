// gmpsim trace FILE: prints a trace as text, one event a line.
#include <cstdio>
#include <string>

#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "traces/dump_text.h"
#include "traces/trace_reader.h"

namespace gmp::cli {

int cmd_trace(int argc, char** argv) {
  if (argc != 1) usage_error("trace: expected exactly one FILE");
  if (argv[0][0] == '-' && argv[0][1] == '-') usage_error(std::string("trace: unknown flag '") + argv[0] + "'");
  try {
    trace::dump_text(argv[0], stdout);
  } catch (const trace::TraceFormatError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace gmp::cli
