// Fuzzes the importer of Go execution traces of the first format (Go 1.11 to 1.21), as
// `gmpsim trace import --format v1` uses it (fuzz_go_trace.h says how).
#include "tests/fuzz/fuzz_go_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz_go_trace(data, size, gmp::trace::go::FormatChoice::kV1);
}
