// The body of the two Go-trace importer fuzz targets (fuzz_go_trace_v1.cpp, fuzz_go_trace_v2.cpp):
// the input is the whole Go trace, read as `gmpsim trace import --format` reads it
// (traces/import/go_import.h); each event it converts is serialized and parsed back. A
// TraceFormatError is the expected answer to bad bytes; anything else (a crash, a hang, a sanitizer
// report, an event that does not parse back) is a bug.
#pragma once

#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "traces/import/go_import.h"
#include "traces/trace_reader.h"

inline int fuzz_go_trace(const uint8_t* data, size_t size, gmp::trace::go::FormatChoice format) {
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
        "fuzz", in, format, [](const gmp::trace::Header&) {},
        [&](const gmp::trace::Event& e) {
          buf.clear();
          if (!e.SerializeToString(&buf) || !back.ParseFromString(buf)) std::abort();
        });
  } catch (const gmp::trace::TraceFormatError&) {
  }
  return 0;
}
