// A two-process trace written by hand (issue 25), for the trace, export and viewer tests. Both
// processes have a G1, an M0 and a P0 of their own: ids are each process's.
//   header: process 0 "server" (1 P, quota 0.5 CPUs per 100 ms), process 1 "loadgen" (1 P)
//   server:  M0 takes P0 at 0, G1 created at 0 runs on M0/P0 [10,120), throttled [50,80)
//   loadgen: M0 takes P0 at 0, G1 created at 0 runs on M0/P0 [10,130); GOMAXPROCS set to 2 at 90,
//            then M1 takes P1 at 100 and G2 (created at 95) runs on it [100,140)
// So the server's M0 and P0 show G1 running [10,50), throttled [50,80) (still G1), running
// [80,120); the trace ends at 140.
#pragma once

#include <string>

#include "traces/trace_writer.h"

namespace gmp::trace::testing {

inline Header two_process_header() {
  Header h;
  h.set_producer("two-process test");
  h.set_num_ps(1);
  h.set_num_ms(1);
  h.set_clock(CLOCK_VIRTUAL);
  Process* s = h.add_processes();
  s->set_id(0);
  s->set_name("server");
  s->set_num_ps(1);
  s->set_cpu_quota(0.5);
  s->set_cpu_period(100'000'000);
  Process* l = h.add_processes();
  l->set_id(1);
  l->set_name("loadgen");
  l->set_num_ps(1);
  return h;
}

// An event of kind k at ts of `process`; g, m, p left out when negative.
inline Event proc_event(int64_t ts, Kind k, uint32_t process, int64_t g, int64_t m, int64_t p) {
  Event e;
  e.set_ts(ts);
  e.set_kind(k);
  e.set_process(process);
  if (g >= 0) e.set_g(g);
  if (m >= 0) e.set_m(m);
  if (p >= 0) e.set_p(p);
  return e;
}

inline void write_two_process_trace(const std::string& path) {
  TraceWriter w(path, two_process_header());
  auto ev = proc_event;
  for (uint32_t pr : {0u, 1u}) {
    w.write(ev(0, KIND_P_ACQUIRE, pr, -1, 0, 0));
    w.write(ev(0, KIND_GO_CREATE, pr, 1, 0, 0));
  }
  w.write(ev(10, KIND_GO_START, 0, 1, 0, 0));
  w.write(ev(10, KIND_GO_START, 1, 1, 0, 0));
  w.write(ev(50, KIND_THROTTLE_BEGIN, 0, -1, 0, 0));
  w.write(ev(80, KIND_THROTTLE_END, 0, -1, 0, 0));
  Event procs = ev(90, KIND_PROCS, 1, -1, 0, 0);
  procs.set_value(2);
  w.write(procs);
  w.write(ev(95, KIND_GO_CREATE, 1, 2, 0, 0));
  w.write(ev(100, KIND_P_ACQUIRE, 1, -1, 1, 1));
  w.write(ev(100, KIND_GO_START, 1, 2, 1, 1));
  w.write(ev(120, KIND_GO_STOP, 0, 1, 0, 0));
  w.write(ev(130, KIND_GO_STOP, 1, 1, 0, 0));
  w.write(ev(140, KIND_GO_STOP, 1, 2, 1, 1));
  w.close();
}

}  // namespace gmp::trace::testing
