// Go's text encoding of second-format execution traces (the .test files of Go's
// internal/trace/testdata/tests, written by its testgen package): a txtar archive with an
// "expect" file (SUCCESS, or FAILURE and a quoted regular expression for the error) and a
// "trace" file, one event a line ("Trace Go1.22", then "EventBatch gen=1 m=0 time=0 size=5",
// stack frames on indented lines, string data as `data="..."`).
//
// parse_text_trace turns such a file into the binary trace that Go's tests feed its parser;
// bad text throws std::runtime_error naming the line.
#pragma once

#include <string>

namespace gmp::trace::go {

struct TextTrace {
  bool expect_failure = false;
  std::string error_pattern;  // the FAILURE regular expression, unquoted
  std::string binary;         // the trace bytes, header included
};

TextTrace parse_text_trace(const std::string& text);

}  // namespace gmp::trace::go
