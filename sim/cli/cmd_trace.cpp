// gmpsim trace: tools on trace files.
//   gmpsim trace FILE             prints a trace as text, one event a line
//   gmpsim trace validate FILE    checks that its events tell a consistent story (traces/validate.h)
#include <cstdio>
#include <cstring>
#include <string>

#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "traces/dump_text.h"
#include "traces/trace_reader.h"
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
              v.issue_count() == 0 ? "consistent"
                                   : (std::to_string(v.issue_count()) + " inconsistencies").c_str());
  return v.issue_count() == 0 ? 0 : 3;
}

}  // namespace

int cmd_trace(int argc, char** argv) {
  try {
    if (argc >= 1 && std::strcmp(argv[0], "validate") == 0) return cmd_validate(argc - 1, argv + 1);
    trace::dump_text(one_file("trace", argc, argv), stdout);
  } catch (const trace::TraceFormatError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace gmp::cli
