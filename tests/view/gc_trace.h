// A small trace with one GC cycle whose every span and counter is known, for the GC tests of the
// viewer, the lane model and the exporters: 2 Ps, Ms 0 and 1, Gs 1 and 2, 800 ns.
//   G1 runs on M0/P0 [100,800), G2 on M1/P1 [110,210) and [240,700).
//   pauses: GC_SWEEP_TERM [200,230) and GC_MARK_TERM [500,520), both stopped by G1 on M0
//   cycle 1 [220,510); G2's mark assist [300,400); M0 sweeps [600,650), 65536 bytes
//   heap: 4 MiB at 150, 5 MiB at 350, 2 MiB at 660; goal: 4 MiB at 150, 8 MiB at 520
// It passes the validator from the start (every G is created in it).
#pragma once

#include <string>

#include "tests/view/small_trace.h"
#include "traces/trace_writer.h"

namespace gmp::view::testing {

inline void write_gc_trace(const std::string& path) {
  using namespace gmp::trace;
  TraceWriter w(path, two_p_header("gc test"));
  auto ev = test_event;
  auto value = [&](int64_t ts, Kind k, int64_t v) {
    Event e = ev(ts, k, -1, 0, 0);
    e.set_value(v);
    w.write(e);
  };
  auto stw = [&](int64_t ts, Kind k, StwReason r) {
    Event e = ev(ts, k, 1, 0, 0);
    e.set_stw_reason(r);
    w.write(e);
  };
  constexpr int64_t MiB = 1 << 20;
  w.write(ev(0, KIND_P_ACQUIRE, -1, 0, 0));
  w.write(ev(0, KIND_P_ACQUIRE, -1, 1, 1));
  w.write(ev(10, KIND_GO_CREATE, 1, 0, 0));
  Event c2 = ev(20, KIND_GO_CREATE, 2, 0, 0);
  c2.set_peer_g(1);
  w.write(c2);
  w.write(ev(100, KIND_GO_START, 1, 0, 0));
  w.write(ev(110, KIND_GO_START, 2, 1, 1));
  value(150, KIND_HEAP_ALLOC, 4 * MiB);
  value(150, KIND_HEAP_GOAL, 4 * MiB);
  stw(200, KIND_STW_BEGIN, STW_REASON_GC_SWEEP_TERM);
  Event stop = ev(210, KIND_GO_STOP, 2, 1, 1);
  stop.set_reason(REASON_PREEMPT_COOPERATIVE);
  w.write(stop);
  value(220, KIND_GC_BEGIN, 1);
  stw(230, KIND_STW_END, STW_REASON_GC_SWEEP_TERM);
  w.write(ev(240, KIND_GO_START, 2, 1, 1));
  w.write(ev(300, KIND_GC_MARK_ASSIST_BEGIN, 2, 1, 1));
  value(350, KIND_HEAP_ALLOC, 5 * MiB);
  w.write(ev(400, KIND_GC_MARK_ASSIST_END, 2, 1, 1));
  stw(500, KIND_STW_BEGIN, STW_REASON_GC_MARK_TERM);
  value(510, KIND_GC_END, 1);
  stw(520, KIND_STW_END, STW_REASON_GC_MARK_TERM);
  value(520, KIND_HEAP_GOAL, 8 * MiB);
  w.write(ev(600, KIND_GC_SWEEP_BEGIN, 1, 0, 0));
  Event swept = ev(650, KIND_GC_SWEEP_END, 1, 0, 0);
  swept.set_value(65536);
  w.write(swept);
  value(660, KIND_HEAP_ALLOC, 2 * MiB);
  w.write(ev(700, KIND_GO_EXIT, 2, 1, 1));
  w.write(ev(800, KIND_GO_EXIT, 1, 0, 0));
  w.close();
}

}  // namespace gmp::view::testing
