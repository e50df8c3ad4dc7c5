// Fuzzes the importer of Go execution traces of the second format (Go 1.22 and later), as
// `gmpsim trace import --format v2` uses it (fuzz_go_trace.h says how).
#include "tests/fuzz/fuzz_go_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz_go_trace(data, size, gmp::trace::go::FormatChoice::kV2);
}
