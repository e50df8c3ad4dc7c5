// The protobuf wire format of gmp.trace.Event, decoded by hand (see wire.h).
#include "traces/lanes/wire.h"

namespace gmp::lanes {

bool decode_event(const uint8_t* bytes, size_t n, WireEvent& out) {
  out = WireEvent{};
  const uint8_t* p = bytes;
  const uint8_t* const end = bytes + n;
  while (p < end) {
    uint64_t key;
    p = read_varint(p, end, key);
    if (p == nullptr) return false;
    const uint32_t field = static_cast<uint32_t>(key >> 3);
    const uint32_t wire = key & 7;
    if (field == 0) return false;
    uint64_t v = 0;
    switch (wire) {
      case 0:  // varint
        p = read_varint(p, end, v);
        if (p == nullptr) return false;
        break;
      case 1:  // fixed64
        if (end - p < 8) return false;
        p += 8;
        if (field <= 18) return false;  // every known field is a varint or bytes
        continue;
      case 5:  // fixed32
        if (end - p < 4) return false;
        p += 4;
        if (field <= 18) return false;
        continue;
      case 2: {  // length-delimited
        p = read_varint(p, end, v);
        if (p == nullptr || v > static_cast<uint64_t>(end - p)) return false;
        if (field == 17) {
          out.label = std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(v));
        } else if (field <= 18) {
          return false;
        }
        p += v;
        continue;
      }
      default: return false;
    }
    const auto i64 = static_cast<int64_t>(v);
    const auto i32 = static_cast<int32_t>(v);
    switch (field) {
      case 1: out.ts = i64; break;
      case 2: out.kind = i32; break;
      case 3:
        out.g = i64;
        out.has |= kHasG;
        break;
      case 4:
        out.m = i64;
        out.has |= kHasM;
        break;
      case 5:
        out.p = i64;
        out.has |= kHasP;
        break;
      case 6: out.reason = i32; break;
      case 7: out.queue = i32; break;
      case 8:
        out.peer_g = i64;
        out.has |= kHasPeerG;
        break;
      case 9:
        out.peer_m = i64;
        out.has |= kHasPeerM;
        break;
      case 10:
        out.peer_p = i64;
        out.has |= kHasPeerP;
        break;
      case 11:
        out.count = i64;
        out.has |= kHasCount;
        break;
      case 12: out.wait_reason = i32; break;
      case 13:
        out.signal = i32;
        out.has |= kHasSignal;
        break;
      case 14: out.user_op = i32; break;
      case 15:
        out.object = v;
        out.has |= kHasObject;
        break;
      case 16: out.phase = i32; break;
      case 17: return false;  // a string sent as a varint
      case 18:
        out.step = v;
        out.has |= kHasStep;
        break;
      default: break;         // a field of a later schema
    }
  }
  return p == end;
}

}  // namespace gmp::lanes
