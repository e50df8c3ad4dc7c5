// A small event for the trace tests that feed a validator or state machine directly: its kind and
// ids, written in the order a test reads them ({KIND, g, m, p, reason, peer_m, ts, process, value,
// stw_reason}; -1 for an absent id or value), and make() turning it into the schema's Event.
#pragma once

#include <cstdint>

#include "traces/trace.pb.h"

namespace gmp::trace::test {

struct Ev {
  Kind kind;
  int64_t g = -1, m = -1, p = -1;
  Reason reason = REASON_UNSPECIFIED;
  int64_t peer_m = -1;
  int64_t ts = 0;
  uint32_t process = 0;
  int64_t value = -1;  // Event.value, -1: absent
  StwReason stw = STW_REASON_UNSPECIFIED;
};

inline Event make(const Ev& x) {
  Event e;
  e.set_kind(x.kind);
  e.set_ts(x.ts);
  if (x.g >= 0) e.set_g(x.g);
  if (x.m >= 0) e.set_m(x.m);
  if (x.p >= 0) e.set_p(x.p);
  if (x.peer_m >= 0) e.set_peer_m(x.peer_m);
  e.set_reason(x.reason);
  e.set_process(x.process);
  if (x.value >= 0) e.set_value(x.value);
  e.set_stw_reason(x.stw);
  return e;
}

}  // namespace gmp::trace::test
