// Fuzzes the reader of go test -bench output (sim/calibration/bench_output.h), which gmpsim
// calibrate reads from a saved measurement file (--measured): a BenchOutputError is the expected
// answer to bad text; anything else is a bug. Whatever it reads must summarise.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/calibration/bench_output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& [key, samples] : gmp::calibration::parse_bench_output(text, "fuzz.txt")) {
      (void)gmp::calibration::summarize(samples);
    }
  } catch (const gmp::calibration::BenchOutputError&) {
  }
  return 0;
}
