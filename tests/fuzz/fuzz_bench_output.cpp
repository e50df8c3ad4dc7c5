// Fuzzes the reader of go test -bench output (sim/calibration/bench_output.h), which gmpsim
// calibrate reads from a saved measurement file (--measured): a BenchOutputError is the expected
// answer to bad text; anything else is a bug. Whatever it reads must summarise. The same text
// also goes through the GC measurement file reader (gctrace lines, "# point:" sections).
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/calibration/bench_output.h"
#include "sim/calibration/gc_measurements.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& [key, samples] : gmp::calibration::parse_bench_output(text, "fuzz.txt")) {
      (void)gmp::calibration::summarize(samples);
    }
  } catch (const gmp::calibration::BenchOutputError&) {  // GCTraceError too
  }
  // The same text as the GC validation's measurement file (gc_measurements.h).
  try {
    const gmp::calibration::GCMeasurements m = gmp::calibration::read_gc_measurements(text, "fuzz.txt");
    for (const auto& [key, s] : m.points) (void)gmp::calibration::summarize(s.cycles_per_op);
  } catch (const gmp::calibration::BenchOutputError&) {  // GCMeasurementError, GCTraceError too
  }
  return 0;
}
