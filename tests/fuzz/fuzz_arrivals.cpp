// Fuzzes the reader of arrival files (sim/scenario/arrivals.h), a conn's `arrivals:` file: a
// diagnostic is the expected answer to bad text; anything else is a bug. The first byte chooses the
// declaration it is read for (a single connection, or an array of 1 to 127), the rest is the file.
// Whatever it accepts must be in order per connection, within the bounds, and no more than the cap.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sim/scenario/arrivals.h"
#include "sim/scenario/limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool array = (data[0] & 0x80) != 0;
  const int64_t conns = array ? std::max<int64_t>(data[0] & 0x7f, 1) : 1;
  constexpr int64_t kCap = 10000;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const gmp::scenario::ArrivalTimes a = gmp::scenario::parse_arrivals(text, "fuzz.arrivals", conns, array, kCap);
  if (!a.errors.empty()) return 0;
  if (a.first.size() != static_cast<size_t>(conns) + 1 || a.first.back() != static_cast<int64_t>(a.times.size()) ||
      static_cast<int64_t>(a.times.size()) > kCap) {
    std::abort();
  }
  for (int64_t e = 0; e < conns; e++) {
    for (int64_t i = a.first[static_cast<size_t>(e)]; i < a.first[static_cast<size_t>(e) + 1]; i++) {
      const int64_t t = a.times[static_cast<size_t>(i)];
      if (t < 0 || t > gmp::scenario::kMaxDurationNs) std::abort();
      if (i > a.first[static_cast<size_t>(e)] && t < a.times[static_cast<size_t>(i) - 1]) std::abort();
    }
  }
  return 0;
}
