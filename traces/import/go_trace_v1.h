// Reads Go execution traces of the first format (headers "go 1.11 trace", "go 1.19 trace" and
// "go 1.21 trace": Go 1.11 to 1.21) into the format-neutral event stream of go_event.h.
//
// Protocol:
//   - The input is the whole file in memory (`data`, which must outlive the reader), header
//     included; `path` only names it in errors.
//   - The whole trace is parsed first, as Go's parser does: raw events, the string and stack
//     tables, then the per-P batches are merged in the order Go's internal/trace (order.go)
//     gives them: by timestamp, with the per-G sequence numbers deciding transitions that cross
//     Ps; then the G and P states are checked as Go's parser checks them.
//   - Timestamps are ticks converted to nanoseconds with the trace's frequency.
//   - Errors (TraceFormatError) carry the byte offset of the event at fault.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "traces/import/go_event.h"

namespace gmp::trace::go {

// Go's minor version of the first format that a reader supports (11, 19, 21).
bool v1_version_supported(int minor);

std::unique_ptr<GoTraceReader> make_v1_reader(const std::string& path, std::string_view data);

// Names of the first format's event types (Go's names without "Ev": "GoCreate", ...); "" if none.
std::string_view v1_type_name(uint8_t type);

}  // namespace gmp::trace::go
