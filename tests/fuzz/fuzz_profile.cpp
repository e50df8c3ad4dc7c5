// Fuzzes the cost-profile loader (sim/cost/profile.h) from memory: parse and check, and write
// what loaded back as text (profile_text), which must load to the same costs. A ProfileError is
// the expected answer to bad text; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sim/cost/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gmp::cost::Profile p = gmp::cost::parse_profile(text, "fuzz.textproto");
    (void)p.machine.cores();
    // What loads must write back as text that loads to the same costs (gmpsim calibrate's output).
    const gmp::cost::Profile q = gmp::cost::parse_profile(gmp::cost::profile_text(p, p.description), "again");
    for (size_t i = 0; i < gmp::cost::kNumParams; ++i) {
      if (q.ns[i] != p.ns[i]) std::abort();
    }
  } catch (const gmp::cost::ProfileError&) {
  }
  return 0;
}
