#include "traces/import/go_trace_v1.h"

#include "traces/trace_reader.h"

namespace gmp::trace::go {

bool v1_version_supported(int minor) { return minor == 11 || minor == 19 || minor == 21; }

std::unique_ptr<GoTraceReader> make_v1_reader(const std::string& path, std::string_view) {
  throw TraceFormatError(path, 0, "the first Go trace format is not supported yet");
}

std::string_view v1_type_name(uint8_t) { return ""; }

}  // namespace gmp::trace::go
