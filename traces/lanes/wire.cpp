// The protobuf wire format of gmp.trace.Event, decoded by hand (see wire.h). Field numbers are the
// generated ones, so a schema change that moves or drops a field the viewer reads changes or breaks
// this code at build time.
#include "traces/lanes/wire.h"

#include "traces/trace.pb.h"

namespace gmp::lanes {

namespace {

using trace::Event;

// The fields the decoder reads: all are varints but the label. One of them in another wire type
// makes the record invalid; any other field is skipped whatever its type.
bool reads(uint32_t field) {
  switch (field) {
    case Event::kTsFieldNumber:
    case Event::kKindFieldNumber:
    case Event::kGFieldNumber:
    case Event::kMFieldNumber:
    case Event::kPFieldNumber:
    case Event::kReasonFieldNumber:
    case Event::kQueueFieldNumber:
    case Event::kPeerGFieldNumber:
    case Event::kPeerMFieldNumber:
    case Event::kPeerPFieldNumber:
    case Event::kCountFieldNumber:
    case Event::kWaitReasonFieldNumber:
    case Event::kSignalFieldNumber:
    case Event::kUserOpFieldNumber:
    case Event::kObjectFieldNumber:
    case Event::kPhaseFieldNumber:
    case Event::kLabelFieldNumber:
    case Event::kStepFieldNumber:
    case Event::kStwReasonFieldNumber:
    case Event::kGcWorkerModeFieldNumber:
    case Event::kValueFieldNumber:
    case Event::kProcessFieldNumber: return true;
    default: return false;
  }
}

}  // namespace

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
        if (reads(field)) return false;
        continue;
      case 5:  // fixed32
        if (end - p < 4) return false;
        p += 4;
        if (reads(field)) return false;
        continue;
      case 2: {  // length-delimited
        p = read_varint(p, end, v);
        if (p == nullptr || v > static_cast<uint64_t>(end - p)) return false;
        if (field == Event::kLabelFieldNumber) {
          out.label = std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(v));
        } else if (reads(field)) {
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
      case Event::kTsFieldNumber: out.ts = i64; break;
      case Event::kKindFieldNumber: out.kind = i32; break;
      case Event::kGFieldNumber:
        out.g = i64;
        out.has |= kHasG;
        break;
      case Event::kMFieldNumber:
        out.m = i64;
        out.has |= kHasM;
        break;
      case Event::kPFieldNumber:
        out.p = i64;
        out.has |= kHasP;
        break;
      case Event::kReasonFieldNumber: out.reason = i32; break;
      case Event::kQueueFieldNumber: out.queue = i32; break;
      case Event::kPeerGFieldNumber:
        out.peer_g = i64;
        out.has |= kHasPeerG;
        break;
      case Event::kPeerMFieldNumber:
        out.peer_m = i64;
        out.has |= kHasPeerM;
        break;
      case Event::kPeerPFieldNumber:
        out.peer_p = i64;
        out.has |= kHasPeerP;
        break;
      case Event::kCountFieldNumber:
        out.count = i64;
        out.has |= kHasCount;
        break;
      case Event::kWaitReasonFieldNumber: out.wait_reason = i32; break;
      case Event::kSignalFieldNumber:
        out.signal = i32;
        out.has |= kHasSignal;
        break;
      case Event::kUserOpFieldNumber: out.user_op = i32; break;
      case Event::kObjectFieldNumber:
        out.object = v;
        out.has |= kHasObject;
        break;
      case Event::kPhaseFieldNumber: out.phase = i32; break;
      case Event::kLabelFieldNumber: return false;  // a string sent as a varint
      case Event::kStepFieldNumber:
        out.step = v;
        out.has |= kHasStep;
        break;
      case Event::kStwReasonFieldNumber: out.stw_reason = i32; break;
      case Event::kGcWorkerModeFieldNumber: out.gc_worker_mode = i32; break;
      case Event::kValueFieldNumber:
        out.value = i64;
        out.has |= kHasValue;
        break;
      case Event::kProcessFieldNumber: out.process = v; break;
      default: break;  // a field the viewer does not read, or of a later schema
    }
  }
  return p == end;
}

}  // namespace gmp::lanes
