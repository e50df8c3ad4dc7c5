#include "traces/import/go_header.h"

#include "traces/import/go_trace_v1.h"
#include "traces/import/go_trace_v2.h"
#include "traces/trace_reader.h"

namespace gmp::trace::go {

GoHeader parse_go_header(const std::string& path, std::string_view data) {
  static constexpr std::string_view kPrefix = "go 1.";
  static constexpr std::string_view kSuffix = " trace";
  if (data.size() < kHeaderBytes || data.substr(0, kPrefix.size()) != kPrefix) {
    throw TraceFormatError(path, 0, "not a Go execution trace: expected the header \"go 1.N trace\"");
  }
  size_t i = kPrefix.size();
  int minor = 0;
  while (i < 8 && data[i] >= '0' && data[i] <= '9') minor = minor * 10 + (data[i++] - '0');
  if (i == kPrefix.size() || data.substr(i, kSuffix.size()) != kSuffix) {
    throw TraceFormatError(path, 0, "not a Go execution trace: expected the header \"go 1.N trace\"");
  }
  for (i += kSuffix.size(); i < kHeaderBytes; i++) {
    if (data[i] != '\0') throw TraceFormatError(path, i, "bad Go trace header: expected NUL padding");
  }
  GoHeader h;
  h.minor = minor;
  if (v1_version_supported(minor)) {
    h.format = GoFormat::kV1;
  } else if (v2_version_supported(minor)) {
    h.format = GoFormat::kV2;
  } else {
    throw TraceFormatError(path, 0,
                           "unsupported Go trace version go 1." + std::to_string(minor) +
                               " (supported: 1.11 to 1.21, 1.22, 1.23, 1.25, 1.26)");
  }
  return h;
}

}  // namespace gmp::trace::go
