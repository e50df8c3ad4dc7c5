// The 16-byte header of a Go execution trace, "go 1.N trace" padded with NUL bytes, and which of
// the two formats it announces.
//
// Protocol:
//   - parse_go_header reads the header at the start of `data`; bad bytes or a version that no
//     importer reads throw TraceFormatError (offset 0) naming what was found, the version number
//     included.
//   - Versions 1.11 to 1.21 are the first format (go_trace_v1.h); 1.22, 1.23, 1.25 and 1.26 the
//     second (go_trace_v2.h): the versions Go's own parser lists (Go 1.24 wrote 1.23 traces,
//     Go 1.27 writes 1.26 traces).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gmp::trace::go {

inline constexpr size_t kHeaderBytes = 16;

enum class GoFormat { kV1, kV2 };

struct GoHeader {
  int minor = 0;  // N of "go 1.N trace"
  GoFormat format = GoFormat::kV2;
};

GoHeader parse_go_header(const std::string& path, std::string_view data);

}  // namespace gmp::trace::go
