// Fuzzes the scenario language's front end: text -> protobuf text-format parse -> checks ->
// compile (sim/scenario/scenario.h), from memory. It does not simulate: the work per input is
// bounded by its length. A ScenarioError is the expected answer to bad text; anything else (a
// crash, another exception, a sanitizer report) is a bug. Arrival files are turned off: a made-up
// `arrivals` path is an error rather than a read of whatever file it names (the arrival-file
// reader has its own tests, tests/scenario/errors_test.cpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/scenario/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)gmp::scenario::parse_scenario(text, "fuzz.textproto", {.arrival_files = false});
  } catch (const gmp::scenario::ScenarioError&) {
  }
  return 0;
}
