// Reads Go execution traces of the second format (Go 1.22 and later: headers "go 1.22 trace" to
// "go 1.26 trace"; Go 1.27 still writes 1.26) into the format-neutral event stream of
// go_event.h.
//
// Protocol:
//   - The input is the whole file in memory (`data`, which must outlive the reader), header
//     included; `path` only names it in errors.
//   - The trace is read one generation at a time: its batches are indexed, its string, stack and
//     frequency tables built, then its events are merged across Ms in the order Go's parser
//     (internal/trace, reader.go and order.go) uses: the earliest event of each M's batch sequence
//     that the G, P and M states allow, sequence numbers deciding between Ms.
//   - Timestamps are Go's: ticks times the trace's frequency, nudged by 1 ns so that they
//     strictly increase along the stream, as Go's reader does.
//   - Errors (TraceFormatError) carry the byte offset of the batch or event at fault; an unknown
//     version names it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "traces/import/go_event.h"

namespace gmp::trace::go {

// Go's minor version of the second format that a reader supports (22, 23, 25, 26).
bool v2_version_supported(int minor);

std::unique_ptr<GoTraceReader> make_v2_reader(const std::string& path, std::string_view data);

// The wire shape of event type `type` in a trace of go 1.`minor`: its name (empty if that
// version has no such type), its number of varint arguments (the time delta included), whether
// stack frames (4 varints each, as many as the second argument says) or length-prefixed data
// follow. For writers of test traces (Go's text format).
struct V2Spec {
  std::string_view name;
  int args = 0;
  bool is_stack = false;
  bool has_data = false;
};
V2Spec v2_spec(int minor, uint8_t type);

// Names of the second format's event types (Go's names: "GoCreate", ...); "" if none.
std::string_view v2_type_name(uint8_t type);

}  // namespace gmp::trace::go
