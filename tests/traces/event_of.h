// A small event for the trace tests that feed a validator or state machine directly: its kind and
// ids, written in the order a test reads them ({KIND, g, m, p, reason, peer_m, ts, process}; -1 for
// an absent id), and make() turning it into the schema's Event.
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
  return e;
}

}  // namespace gmp::trace::test
