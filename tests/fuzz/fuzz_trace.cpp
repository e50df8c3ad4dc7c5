// Fuzzes the trace readers the way `gmpsim trace FILE`, `trace validate FILE` and `trace export`
// (and gmpview) use them: traces/dump_text.h and traces/validate.h over traces/trace_reader.h, and
// the lane model (traces/lanes/model.h) with both exporters. The input is the whole file; the
// validator must judge any events that parse, and the exporters write whatever model loads,
// without failing themselves. The readers take a path, so the input is written to a memory file
// (memfd) and opened through /proc/self/fd. A TraceFormatError is the expected answer to bad
// bytes; anything else is a bug. Text and exports go to /dev/null. Whatever replay would read it
// also cleans, combines (three copies) and derives, in both modes; the derived scenario must parse.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "sim/scenario/scenario.h"
#include "traces/dump_text.h"
#include "traces/export/export.h"
#include "traces/lanes/model.h"
#include "traces/trace_reader.h"
#include "traces/validate.h"
#include "traces/derive_scenario.h"
#include "traces/replay_clean.h"
#include "traces/replay_combine.h"
#include "traces/timeline.h"

namespace {

struct Files {
  int fd = -1;
  std::string path;
  std::FILE* null = nullptr;
  Files() {
    // Protobuf logs every string field with bad UTF-8 to stderr before failing the parse; the
    // reader reports the failure itself, and the log would slow the fuzzer to a crawl.
    google::protobuf::SetLogHandler(nullptr);
    fd = memfd_create("fuzz.trace", MFD_CLOEXEC);
    null = std::fopen("/dev/null", "w");
    if (fd < 0 || null == nullptr) {
      std::perror("fuzz_trace: memfd_create or /dev/null");
      std::abort();
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }
};

// Derives the replay of tl in both modes (a DeriveError is an answer); the derived scenario must be
// one the simulator takes: a ScenarioError there (an undeclared channel, say) is a bug.
void derive_and_parse(const gmp::trace::Timeline& tl) {
  for (const gmp::trace::ReplayMode mode : {gmp::trace::ReplayMode::Shared, gmp::trace::ReplayMode::Pinned}) {
    gmp::trace::DeriveOptions o;
    o.mode = mode;
    gmp::trace::DerivedScenario d;
    try {
      d = gmp::trace::derive_scenario(tl, "fuzz", o);
    } catch (const gmp::trace::DeriveError&) {
      continue;
    }
    try {
      (void)gmp::scenario::parse_scenario(d.text, "fuzz.replay");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fuzz_trace: the derived scenario (%s mode) does not parse: %s\n%s\n",
                   mode == gmp::trace::ReplayMode::Shared ? "shared" : "pinned", e.what(), d.text.c_str());
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Files files;
  if (ftruncate(files.fd, 0) != 0 || pwrite(files.fd, data, size, 0) != static_cast<ssize_t>(size)) {
    std::perror("fuzz_trace: writing the memory file");
    std::abort();
  }
  try {
    (void)gmp::trace::dump_text(files.path, files.null);
  } catch (const gmp::trace::TraceFormatError&) {
  }
  try {
    (void)gmp::trace::validate_file(files.path, 4);
  } catch (const gmp::trace::TraceFormatError&) {
  }
  try {
    const gmp::lanes::Model m = gmp::lanes::load_trace(files.path);
    (void)gmp::exporter::export_perfetto(m, "/dev/null");
    (void)gmp::exporter::export_chrome_json(m, "/dev/null");
  } catch (const gmp::trace::TraceFormatError&) {
  }
  // Replay's reading, cleaning, combining and derivation (traces/replay_clean.h, replay_combine.h,
  // derive_scenario.h): a message, a CombineError or a DeriveError are the expected answers.
  try {
    gmp::trace::Timeline tl;
    if (gmp::trace::read_replay_trace(files.path, tl).empty()) {
      gmp::trace::CleanOptions co;
      co.traced_cores = 1 + static_cast<int32_t>(size % 4);
      co.cpu_time_ns = static_cast<int64_t>(size) * 1000;
      (void)gmp::trace::clean_timeline(tl, co);
      const gmp::trace::Timeline both = gmp::trace::combine_timelines({tl, tl, tl}, {"a", "b", "c"});
      (void)gmp::trace::start_function_lines(both);
      derive_and_parse(tl);
      derive_and_parse(both);
    }
  } catch (const gmp::trace::TraceFormatError&) {
  } catch (const gmp::trace::CombineError&) {
  } catch (const gmp::trace::DeriveError&) {
  }
  return 0;
}
