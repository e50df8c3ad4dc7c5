// Decodes one serialized gmp.trace.Event (traces/trace.proto) straight from its bytes, without
// building a protobuf object: the viewer's loader reads millions of them.
//
// Protocol:
//   - decode_event(bytes, n, out) fills `out` from the protobuf wire format and returns true, or
//     returns false when the bytes are not a valid message (a varint or length runs past the end,
//     a wire type that does not exist, a field of the wrong wire type).
//   - Fields the viewer does not know (added by a later schema) are skipped, as protobuf does.
//   - `out.label` points into `bytes`; it is valid as long as they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "traces/varint.h"

namespace gmp::lanes {

struct WireEvent {
  int64_t ts = 0;
  int32_t kind = 0, reason = 0, queue = 0, wait_reason = 0, user_op = 0, phase = 0;
  int64_t g = 0, m = 0, p = 0, peer_g = 0, peer_m = 0, peer_p = 0, count = 0;
  uint64_t object = 0;
  int32_t signal = 0;
  uint64_t step = 0;  // the checker's step (kHasStep)
  int32_t stw_reason = 0, gc_worker_mode = 0;
  int64_t value = 0;  // kHasValue
  uint64_t process = 0;  // Event.process (0: the first, or the only one)
  std::string_view label;
  // Presence of the optional fields, one bit each (kHas*).
  uint32_t has = 0;
};

inline constexpr uint32_t kHasG = 1, kHasM = 2, kHasP = 4, kHasPeerG = 8, kHasPeerM = 16, kHasPeerP = 32,
                          kHasCount = 64, kHasSignal = 128, kHasObject = 256, kHasStep = 512,
                          kHasValue = 1024;

bool decode_event(const uint8_t* bytes, size_t n, WireEvent& out);

// Reads a varint at `p` (not past `end`); returns the byte after it, or nullptr if it is cut short
// or longer than 10 bytes. Bits past the 64th are dropped (traces/varint.h).
inline const uint8_t* read_varint(const uint8_t* p, const uint8_t* end, uint64_t& v) {
  trace::Varint x;
  const trace::VarintEnd r = trace::read_varint(p, end, x);
  v = x.value();
  return r == trace::VarintEnd::Done ? p : nullptr;
}

}  // namespace gmp::lanes
