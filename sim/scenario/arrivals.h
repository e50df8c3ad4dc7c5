// Arrival files (ConnDecl's `arrivals`): the times at which a connection's requests arrive, one per
// line, as a text file beside the scenario.
//
// Format: each line holds a time, in integer nanoseconds ("1500") or as a duration string
// ("1.5us"), counted from the moment the connection opens (the run's start, or its accept by a
// listener); for a connection array an optional second column gives the connection's index, and a
// line without one is an arrival on every connection of the array. `#` starts a comment; blank
// lines are skipped. Each connection's times must not decrease. Columns count bytes, from 1.
//
// Only regular files of at most textproto::kMaxFileBytes are read: a FIFO, a device (/dev/zero) or
// a directory is refused before it is opened for reading, so that no path can make the loader
// wait or read without end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/error.h"

namespace gmp::scenario {

struct ArrivalTimes {
  // Connection e's times are times[first[e]] .. times[first[e+1] - 1], in order; first has one entry
  // per connection and one more.
  std::vector<int64_t> times;
  std::vector<int64_t> first;
  std::string unreadable;  // why the file could not be read (for the scenario's field); empty if it was
  std::vector<Diagnostic> errors;  // a bad line, at its position in the file (at most one)
};

// Reads the arrival times in `path` for `conns` connections (1 for a single connection, which takes
// no index column). At most max_arrivals times in all (over every connection) are accepted.
ArrivalTimes read_arrivals(const std::string& path, int64_t conns, bool array, int64_t max_arrivals);
// The same for the text of such a file (errors name `path`); what read_arrivals does once the
// file is read, and what tests/fuzz/fuzz_arrivals.cpp fuzzes.
ArrivalTimes parse_arrivals(std::string_view text, const std::string& path, int64_t conns, bool array,
                            int64_t max_arrivals);

}  // namespace gmp::scenario
