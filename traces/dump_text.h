// A trace as text, one event a line: the simplest exporter, for reading a trace in a terminal or
// diffing two.
#pragma once

#include <cstdio>
#include <string>

namespace gmp::trace {

// Writes every event of the trace at `path` to `out`; returns the number of events. Throws
// TraceFormatError on bad input.
uint64_t dump_text(const std::string& path, std::FILE* out);

}  // namespace gmp::trace
