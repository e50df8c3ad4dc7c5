// Fuzzes the cost-profile loader (sim/cost/profile.h) from memory: parse and check. A
// ProfileError is the expected answer to bad text; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/cost/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gmp::cost::Profile p = gmp::cost::parse_profile(text, "fuzz.textproto");
    (void)p.machine.cores();
  } catch (const gmp::cost::ProfileError&) {
  }
  return 0;
}
