// A small trace whose every segment, counter, arrow and marker is known, for the viewer's tests:
// 2 Ps, Ms 0 and 1 (and sysmon M2), Gs 1 to 3, 1400 ns.
//   P0: g1 runs [100,500), g3 [510,800), g3 in syscall [800,900), g3 [900,1000), g1 [1200,1400)
//   P1: spinning [150,200), g2 runs [250,600) and [750,1100)
//   M1: spinning [150,200), g2 [250,600), parked [620,700), g2 [750,1100)
//   arrows: steals P0->P1 at 200 and 720, M0 wakes M1 at 660 (it runs at 700), g2 unparked on P0
//   at 650 starts on P1 at 750; a preemption request marker on P0 at 700.
#pragma once

#include <string>

#include "traces/trace_writer.h"

namespace gmp::view::testing {

// The header of the viewer tests' hand-written traces: 2 Ps, 2 Ms, virtual clock.
inline gmp::trace::Header two_p_header(const std::string& producer) {
  gmp::trace::Header h;
  h.set_producer(producer);
  h.set_num_ps(2);
  h.set_num_ms(2);
  h.set_clock(gmp::trace::CLOCK_VIRTUAL);
  return h;
}

// An event of kind k at ts; g, m, p are left out when negative.
inline gmp::trace::Event test_event(int64_t ts, gmp::trace::Kind k, int64_t g, int64_t m, int64_t p) {
  gmp::trace::Event e;
  e.set_ts(ts);
  e.set_kind(k);
  if (g >= 0) e.set_g(g);
  if (m >= 0) e.set_m(m);
  if (p >= 0) e.set_p(p);
  return e;
}

inline void write_small_trace(const std::string& path, const std::string& producer = "gmpview test") {
  using namespace gmp::trace;
  TraceWriter w(path, two_p_header(producer));
  auto ev = test_event;
  auto put = [&](int64_t ts, int64_t g, int64_t p, Queue q) {
    Event e = ev(ts, KIND_RUNQ_PUT, g, 0, p);
    e.set_queue(q);
    w.write(e);
  };
  w.write(ev(0, KIND_P_ACQUIRE, -1, 0, 0));
  w.write(ev(0, KIND_P_ACQUIRE, -1, 1, 1));
  for (int64_t g = 1; g <= 3; ++g) {
    Event c = ev(g * 10, KIND_GO_CREATE, g, 0, 0);
    c.set_peer_g(g == 1 ? 0 : 1);
    w.write(c);
    put(g * 10, g, 0, g == 1 ? QUEUE_RUNNEXT : QUEUE_LOCAL);
  }
  w.write(ev(100, KIND_GO_START, 1, 0, 0));
  w.write(ev(150, KIND_M_SPIN_START, -1, 1, 1));
  Event steal = ev(200, KIND_STEAL, 2, 1, 1);
  steal.set_peer_p(0);
  steal.set_count(1);
  steal.set_queue(QUEUE_LOCAL);
  w.write(steal);
  w.write(ev(200, KIND_M_SPIN_STOP, -1, 1, 1));
  w.write(ev(250, KIND_GO_START, 2, 1, 1));
  Event stop = ev(500, KIND_GO_STOP, 1, 0, 0);
  stop.set_reason(REASON_PREEMPT_COOPERATIVE);
  w.write(stop);
  put(500, 1, 0, QUEUE_LOCAL);
  w.write(ev(510, KIND_GO_START, 3, 0, 0));
  Event park = ev(600, KIND_GO_PARK, 2, 1, 1);
  park.set_wait_reason(WAIT_REASON_CHAN_RECEIVE);
  w.write(park);
  w.write(ev(610, KIND_P_RELEASE, -1, 1, 1));
  w.write(ev(620, KIND_M_SLEEP, -1, 1, -1));
  Event unpark = ev(650, KIND_GO_UNPARK, 2, 0, 0);
  unpark.set_peer_g(3);
  w.write(unpark);
  put(650, 2, 0, QUEUE_RUNNEXT);
  Event wake = ev(660, KIND_M_WAKEUP, -1, 0, 0);
  wake.set_peer_m(1);
  wake.set_peer_p(1);
  wake.set_reason(REASON_WAKEP);
  w.write(wake);
  w.write(ev(700, KIND_P_ACQUIRE, -1, 1, 1));
  Event req = ev(700, KIND_PREEMPT_REQUEST, 3, 2, 0);
  req.set_peer_m(0);
  req.set_reason(REASON_SYSMON);
  w.write(req);
  Event steal2 = ev(720, KIND_STEAL, 2, 1, 1);
  steal2.set_peer_p(0);
  steal2.set_count(1);
  steal2.set_queue(QUEUE_RUNNEXT);
  w.write(steal2);
  w.write(ev(750, KIND_GO_START, 2, 1, 1));
  w.write(ev(800, KIND_GO_SYSCALL_ENTER, 3, 0, 0));
  Event sx = ev(900, KIND_GO_SYSCALL_EXIT, 3, 0, 0);
  sx.set_reason(REASON_EXITSYSCALL_FAST);
  w.write(sx);
  w.write(ev(1000, KIND_GO_EXIT, 3, 0, 0));
  w.write(ev(1100, KIND_GO_EXIT, 2, 1, 1));
  w.write(ev(1200, KIND_GO_START, 1, 0, 0));
  w.write(ev(1400, KIND_GO_EXIT, 1, 0, 0));
  w.close();
}

}  // namespace gmp::view::testing
