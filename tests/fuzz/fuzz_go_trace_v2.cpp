// Fuzzes the importer of Go execution traces of the second format (Go 1.22 and later) as
// `gmpsim trace import --format v2` uses it (traces/import/go_import.h): the input is the whole Go trace; its events
// are converted into the schema and each is serialized and parsed back. A TraceFormatError is the expected answer to
// bad bytes; anything else (a crash, a hang, a sanitizer report, an event that does not parse back) is a bug.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "traces/import/go_import.h"
#include "traces/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Protobuf logs every string field with bad UTF-8; the check below reports it as a failure.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string buf;
  gmp::trace::Event back;
  try {
    gmp::trace::go::convert_go_trace(
        "fuzz", in, gmp::trace::go::FormatChoice::kV2, [](const gmp::trace::Header&) {},
        [&](const gmp::trace::Event& e) {
          buf.clear();
          if (!e.SerializeToString(&buf) || !back.ParseFromString(buf)) std::abort();
        });
  } catch (const gmp::trace::TraceFormatError&) {
  }
  return 0;
}
