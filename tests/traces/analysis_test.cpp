// The trace analyses (traces/timeline.h, stats.h, critical_path.h) on small traces whose figures
// are worked out by hand.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <initializer_list>
#include <string>

#include "traces/critical_path.h"
#include "traces/derive_scenario.h"
#include "traces/stats.h"
#include "traces/trace_writer.h"
#include "tests/temp_dir.h"
#include "tests/traces/two_process_trace.h"
#include "traces/timeline.h"

using namespace gmp::trace;

namespace {

struct Ev {
  int64_t ts;
  Kind kind;
  int64_t g = -1, m = -1, p = -1;
  int64_t peer_g = -1;
  Reason reason = REASON_UNSPECIFIED;
  const char* label = "";
  int64_t value = -1;  // Event.value, -1: absent
  StwReason stw = STW_REASON_UNSPECIFIED;
};

// Writes the events as a simulated trace with `ps` Ps and reads it back as a Timeline.
Timeline timeline_of(std::initializer_list<Ev> evs, int32_t ps = 2) {
  const std::string path = (std::filesystem::temp_directory_path() / "gmp_analysis_test.gmptrace").string();
  Header h;
  h.set_producer("analysis test");
  h.set_num_ps(ps);
  h.set_clock(CLOCK_VIRTUAL);
  {
    TraceWriter w(path, h);
    for (const Ev& x : evs) {
      Event e;
      e.set_ts(x.ts);
      e.set_kind(x.kind);
      if (x.g >= 0) e.set_g(x.g);
      if (x.m >= 0) e.set_m(x.m);
      if (x.p >= 0) e.set_p(x.p);
      if (x.peer_g >= 0) e.set_peer_g(x.peer_g);
      e.set_reason(x.reason);
      e.set_label(x.label);
      if (x.value >= 0) e.set_value(x.value);
      e.set_stw_reason(x.stw);
      w.write(e);
    }
    w.close();
  }
  Timeline tl = build_timeline(path);
  std::filesystem::remove(path);
  return tl;
}

// G1 runs on P0 from 0, creates G2 at 10 and blocks on a channel at 20. G2 waits for a P until
// 30, runs on P1 until 100, when it readies G1 and exits. G1 waits until 110 and runs on P0 until
// 120, when it exits.
Timeline handoff() {
  return timeline_of({
      {0, KIND_GO_CREATE, 1, 0, 0},
      {0, KIND_GO_START, 1, 0, 0},
      {10, KIND_GO_CREATE, 2, 0, 0, 1},
      {20, KIND_GO_PARK, 1, 0, 0, -1, REASON_PARK, "chan receive"},
      {30, KIND_GO_START, 2, 1, 1},
      {100, KIND_GO_UNPARK, 1, 1, 1, 2},
      {100, KIND_GO_EXIT, 2, 1, 1},
      {110, KIND_GO_START, 1, 0, 0},
      {120, KIND_GO_EXIT, 1, 0, 0},
  });
}

}  // namespace

TEST_CASE("stats: latency, utilisation and time in each state, worked by hand") {
  const TraceStats s = compute_stats(handoff());
  CHECK(s.span == 120);
  CHECK(s.gs == 2);
  // Waits: G1 0 (created and started at 0) and 10 (110 - 100); G2 20 (30 - 10).
  CHECK(s.latency.n == 3);
  CHECK(s.latency.max == 20);
  CHECK(s.latency.p50 == 10);
  CHECK(s.latency.mean == Approx(10.0));
  REQUIRE(s.utilisation.size() == 2);
  CHECK(s.utilisation[0] == Approx(30.0 / 120));  // G1: 0-20 and 110-120
  CHECK(s.utilisation[1] == Approx(70.0 / 120));  // G2: 30-100
  REQUIRE(s.per_g.size() == 2);
  CHECK(s.per_g[0].running == 30);
  CHECK(s.per_g[0].blocked == 80);
  CHECK(s.per_g[0].runnable == 10);
  CHECK(s.per_g[1].running == 70);
  CHECK(s.per_g[1].runnable == 20);
  const std::string json = stats_json(s);
  CHECK(json.find("\"p50_ns\": 10") != std::string::npos);
  CHECK(json.find("\"span_ns\": 120") != std::string::npos);
}

TEST_CASE("stats: GC cycles, pauses by reason, assists, sweeping and the heap, worked by hand") {
  constexpr Reason R0 = REASON_UNSPECIFIED;
  const Timeline tl = timeline_of({
      {0, KIND_GO_CREATE, 1, 0, 0},
      {0, KIND_GO_START, 1, 0, 0},
      {100, KIND_STW_BEGIN, 1, 0, 0, -1, R0, "", -1, STW_REASON_GC_SWEEP_TERM},
      {110, KIND_GC_BEGIN, 1, 0, 0, -1, R0, "", 1},
      {130, KIND_STW_END, 1, 0, 0, -1, R0, "", -1, STW_REASON_GC_SWEEP_TERM},  // a 30 ns pause
      {135, KIND_HEAP_GOAL, -1, 0, 0, -1, R0, "", 4 << 20},
      {140, KIND_HEAP_ALLOC, -1, 0, 0, -1, R0, "", 1 << 20},
      {200, KIND_GC_MARK_ASSIST_BEGIN, 1, 0, 0},
      {260, KIND_GC_MARK_ASSIST_END, 1, 0, 0},  // 60 ns of assist
      {300, KIND_GC_SWEEP_BEGIN, -1, 0, 0},
      {340, KIND_GC_SWEEP_END, -1, 0, 0, -1, R0, "", 8192},  // 40 ns of sweeping
      {400, KIND_STW_BEGIN, 1, 0, 0, -1, R0, "", -1, STW_REASON_GC_MARK_TERM},
      {410, KIND_GC_END, 1, 0, 0, -1, R0, "", 1},  // the cycle: 110 to 410
      {450, KIND_STW_END, 1, 0, 0, -1, R0, "", -1, STW_REASON_GC_MARK_TERM},  // 50 ns
      {460, KIND_HEAP_ALLOC, -1, 0, 0, -1, R0, "", 3 << 20},
      {500, KIND_STW_BEGIN, 1, 0, 0, -1, R0, "", -1, STW_REASON_READ_MEM_STATS},
      {520, KIND_STW_END, 1, 0, 0, -1, R0, "", -1, STW_REASON_READ_MEM_STATS},  // 20 ns
      {600, KIND_GC_MARK_ASSIST_BEGIN, 1, 0, 0},  // open when the trace ends at 700: 100 ns
      {610, KIND_GC_BEGIN, 1, 0, 0, -1, R0, "", 2},  // open too: not a whole cycle
      {700, KIND_HEAP_ALLOC, -1, 0, 0, -1, R0, "", 2 << 20},
  });
  REQUIRE(tl.gc_cycles.size() == 2);
  CHECK((tl.gc_cycles[0].n == 1 && tl.gc_cycles[0].t0 == 110 && tl.gc_cycles[0].t1 == 410));
  CHECK((tl.gc_cycles[1].open_end && tl.gc_cycles[1].t1 == 700));
  const TraceStats s = compute_stats(tl);
  const GcSummary& g = s.gc;
  CHECK(g.any);
  CHECK((g.cycles.n == 1 && g.cycles.total == 300 && g.cycles.max == 300));
  CHECK((g.stw.n == 3 && g.stw.total == 100 && g.stw.max == 50));
  REQUIRE(g.stw_by_reason.size() == 3);
  CHECK(g.stw_by_reason.at(STW_REASON_GC_SWEEP_TERM).total == 30);
  CHECK(g.stw_by_reason.at(STW_REASON_GC_MARK_TERM).total == 50);
  CHECK(g.stw_by_reason.at(STW_REASON_READ_MEM_STATS).total == 20);
  CHECK((g.assists.n == 2 && g.assists.total == 160 && g.assist_by_g.at(1) == 160));
  CHECK((g.sweeps.n == 1 && g.sweeps.total == 40 && g.swept_bytes == 8192));
  CHECK((g.heap_samples == 3 && g.heap_max == 3 << 20 && g.heap_last == 2 << 20));
  CHECK((g.goal_samples == 1 && g.goal_last == 4 << 20));
  const std::string text = stats_text(s);
  CHECK(text.find("GC: 1 cycles, mean 300ns") != std::string::npos);
  CHECK(text.find("stop-the-world: 3 pauses, total 100ns, max 50ns; gc_mark_term 1 (total 50ns, max 50ns)") !=
        std::string::npos);
  CHECK(text.find("mark assists: 2, total 160ns; longest: G1 160ns") != std::string::npos);
  CHECK(text.find("sweeping: 1 stretches, total 40ns, 8.0 KiB swept") != std::string::npos);
  const std::string json = stats_json(s);
  CHECK(json.find("\"gc_cycles\": {\"n\": 1, \"total_ns\": 300,") != std::string::npos);
  CHECK(json.find("\"stw_pauses\": {\"n\": 3, \"total_ns\": 100,") != std::string::npos);
  CHECK(json.find("\"read_mem_stats\": {\"n\": 1, \"total_ns\": 20,") != std::string::npos);
  CHECK(json.find("\"by_g\": {\"1\": 160}") != std::string::npos);
}

TEST_CASE("stats: a trace without GC events prints no GC lines, and its JSON has the GC's keys at zero") {
  const TraceStats s = compute_stats(handoff());
  CHECK_FALSE(s.gc.any);
  CHECK(stats_text(s).find("GC") == std::string::npos);
  CHECK(stats_text(s).find("stop-the-world") == std::string::npos);
  const std::string json = stats_json(s);
  CHECK(json.find("\"gc_cycles\": {\"n\": 0, \"total_ns\": 0, \"mean_ns\": 0.0, \"max_ns\": 0}") !=
        std::string::npos);
  CHECK(json.find("\"stw_pauses\": {\"n\": 0,") != std::string::npos);
}

TEST_CASE("critical path: through the waker, not the blocked time") {
  const CriticalPath cp = critical_path(handoff());
  CHECK(cp.end_g == 1);
  CHECK(cp.t_begin == 0);
  CHECK(cp.t_end == 120);
  // G1 runs 0-10 and creates G2; G2 waits 10-30, runs 30-100 and readies G1; G1 waits 100-110
  // and runs 110-120. G1's blocked 20-100 is not on it: G2's work is what it waited for.
  REQUIRE(cp.segments.size() == 5);
  CHECK((cp.segments[0].g == 1 && cp.segments[0].state == GState::Running && cp.segments[0].t1 == 10));
  CHECK(cp.segments[0].woke == 2);
  CHECK((cp.segments[1].g == 2 && cp.segments[1].state == GState::Runnable && cp.segments[1].t1 == 30));
  CHECK((cp.segments[2].g == 2 && cp.segments[2].state == GState::Running && cp.segments[2].t1 == 100));
  CHECK(cp.segments[2].woke == 1);
  CHECK((cp.segments[3].g == 1 && cp.segments[3].state == GState::Runnable && cp.segments[3].t1 == 110));
  CHECK((cp.segments[4].g == 1 && cp.segments[4].state == GState::Running && cp.segments[4].t1 == 120));
  CHECK(critical_path_text(cp).find("G2 70.0") == std::string::npos);  // shares are of 120
}

TEST_CASE("critical path: a wait that nobody ended, a timer's, is on it") {
  // G1 sleeps 10-90 (a timer readies it: no waker) while G2, created at 5, runs 5-50 and exits.
  const CriticalPath cp = critical_path(timeline_of({
      {0, KIND_GO_CREATE, 1, 0, 0},
      {0, KIND_GO_START, 1, 0, 0},
      {5, KIND_GO_CREATE, 2, 0, 0, 1},
      {10, KIND_GO_PARK, 1, 0, 0, -1, REASON_PARK, "sleep"},
      {10, KIND_GO_START, 2, 0, 0},
      {50, KIND_GO_EXIT, 2, 0, 0},
      {90, KIND_GO_UNPARK, 1, -1, -1},
      {90, KIND_GO_START, 1, 0, 0},
      {95, KIND_GO_EXIT, 1, 0, 0},
  }));
  // G1 runs 0-10, sleeps 10-90, runs 90-95 (its zero-length wait for a P is left out).
  REQUIRE(cp.segments.size() == 3);
  CHECK((cp.segments[0].g == 1 && cp.segments[0].state == GState::Running && cp.segments[0].t1 == 10));
  CHECK((cp.segments[1].state == GState::Blocked && cp.segments[1].wait == "sleep" && cp.segments[1].t1 == 90));
  CHECK((cp.segments[2].g == 1 && cp.segments[2].state == GState::Running && cp.segments[2].t1 == 95));
}

TEST_CASE("critical path: a blocked wait that another goroutine ended is never on it") {
  // G1 blocks at 20; G2 appears at 50 with no known creator, runs 60-100 and readies G1, which
  // runs 100-120. Through G1's own blocked time the path would reach back to 0; it must go through
  // G2 instead, and so begin at 50.
  const CriticalPath cp = critical_path(timeline_of({
      {0, KIND_GO_CREATE, 1, 0, 0},
      {0, KIND_GO_START, 1, 0, 0},
      {20, KIND_GO_PARK, 1, 0, 0, -1, REASON_PARK, "chan receive"},
      {50, KIND_GO_CREATE, 2, 1, 1},
      {60, KIND_GO_START, 2, 1, 1},
      {100, KIND_GO_UNPARK, 1, 1, 1, 2},
      {100, KIND_GO_EXIT, 2, 1, 1},
      {100, KIND_GO_START, 1, 0, 0},
      {120, KIND_GO_EXIT, 1, 0, 0},
  }));
  CHECK(cp.t_begin == 50);
  REQUIRE(cp.segments.size() == 3);
  CHECK((cp.segments[0].g == 2 && cp.segments[0].state == GState::Runnable));
  CHECK((cp.segments[1].g == 2 && cp.segments[1].state == GState::Running && cp.segments[1].woke == 1));
  CHECK((cp.segments[2].g == 1 && cp.segments[2].state == GState::Running));
}

TEST_CASE("critical path: an inconsistent trace whose wake-ups lead in a circle is refused, saying so") {
  // G5 readies itself: its wake-up edge leads back into the interval it was made in.
  const Timeline tl = timeline_of({
      {19845, KIND_GO_CREATE, 5, 3},
      {21338, KIND_GO_UNPARK, 5, 2, 3, 5},
  });
  CHECK_THROWS_WITH(critical_path(tl), Catch::Contains("lead in a circle"));
}

TEST_CASE("replay: a derived scenario turns running time into compute and wake-ups into channels") {
  const std::string text = derive_scenario(handoff(), "handoff.trace").text;
  // G1 runs 10 ns, starts G2, runs 10 ns more and waits for G2's wake-up; G2 runs 70 ns and sends.
  CHECK(text.find("chan { name: \"wake_g1\" cap: 1 }") != std::string::npos);
  const std::string main_fn = "func {\n  name: \"main\"\n"
                              "  op { add { wg: \"exited\" n: 1 } }\n"
                              "  op { compute { ns: 10 } }\n"
                              "  op { go { func: \"g2\" } }\n"
                              "  op { compute { ns: 10 } }\n"
                              "  op { recv { chan: \"wake_g1\" } }\n"
                              "  op { compute { ns: 10 } }\n"
                              "  op { wait { wg: \"exited\" } }\n}\n";
  CHECK(text.find(main_fn) != std::string::npos);
  const std::string g2 = "func {\n  name: \"g2\"\n"
                         "  op { compute { ns: 70 } }\n"
                         "  op { send { chan: \"wake_g1\" } }\n"
                         "  op { done { wg: \"exited\" } }\n}\n";
  CHECK(text.find(g2) != std::string::npos);
}

TEST_CASE("replay: a short system call is kernel work on the CPU, a long one a sleep") {
  // G1 makes a 700 ns call, computes 10 ns, then makes a 50 us call.
  const Timeline tl = timeline_of({
      {0, KIND_GO_CREATE, 1, 0, 0},
      {0, KIND_GO_START, 1, 0, 0},
      {10, KIND_GO_SYSCALL_ENTER, 1, 0, 0},
      {710, KIND_GO_SYSCALL_EXIT, 1, 0, 0},
      {720, KIND_GO_SYSCALL_ENTER, 1, 0, 0},
      {50720, KIND_GO_SYSCALL_EXIT, 1, 0, 0},
      {50730, KIND_GO_EXIT, 1, 0, 0},
  });
  const std::string text = derive_scenario(tl, "syscalls.trace").text;
  CHECK(text.find("op { syscall { ns: 700 on_cpu: true } }") != std::string::npos);
  CHECK(text.find("op { syscall { ns: 50000 } }") != std::string::npos);
}

// Issue 25: a trace of two processes (tests/traces/two_process_trace.h).
TEST_CASE("timeline and stats: two processes keep their G1s apart and count the throttling") {
  TempDir dir;
  gmp::trace::testing::write_two_process_trace(dir.file("t"));
  const Timeline tl = build_timeline(dir.file("t"));
  REQUIRE(tl.gs.size() == 3);  // G1 of each, G2 of loadgen
  CHECK(tl.gs.at(GKey{0, 1}).intervals.back().t0 == 120);  // the server's G1 stops at 120
  CHECK(tl.gs.at(GKey{1, 1}).intervals.back().t0 == 130);  // loadgen's at 130
  CHECK(tl.p_busy.at({0, 0}) == 110);
  CHECK(tl.p_busy.at({1, 0}) == 120);
  CHECK(tl.p_busy.at({1, 1}) == 40);
  REQUIRE(tl.throttles.size() == 1);
  CHECK(tl.throttles[0].t0 == 50);
  CHECK(tl.throttles[0].t1 == 80);
  CHECK(tl.throttles[0].process == 0);
  REQUIRE(tl.procs.size() == 1);
  CHECK(tl.procs[0].value == 2);
  const TraceStats s = compute_stats(tl);
  REQUIRE(s.processes.size() == 2);
  CHECK(s.processes[0].name == "server");
  CHECK(s.processes[0].gs == 1);
  CHECK(s.processes[1].gs == 2);
  CHECK(s.processes[0].throttle.stretches.n == 1);
  CHECK(s.processes[0].throttle.stretches.total == 30);
  CHECK(s.processes[0].throttle.periods == 1);
  CHECK(s.processes[1].throttle.stretches.n == 0);
  CHECK(s.processes[1].throttle.procs_last == 2);
  // The span is 140 ns: the server's P0 ran 110 of it, loadgen's P0 120 and P1 40.
  REQUIRE(s.processes[1].utilisation.size() == 2);
  CHECK(s.processes[0].utilisation[0] == Approx(110.0 / 140));
  CHECK(s.processes[1].utilisation[1] == Approx(40.0 / 140));
  const std::string json = stats_json(s);
  CHECK(json.find("\"processes\": [") != std::string::npos);
  CHECK(json.find("\"name\": \"loadgen\"") != std::string::npos);
  CHECK(json.find("{\"process\": 1, \"g\": 1,") != std::string::npos);
  const std::string text = stats_text(s);
  CHECK(text.find("process 0 server: 1 goroutines, 1 Ps, quota 0.50 CPUs") != std::string::npos);
  CHECK(text.find("throttled: 1 stretches of Ms, total 30ns") != std::string::npos);
  // The critical path ends with loadgen's G2, the last to stop, and names its process.
  const CriticalPath cp = critical_path(tl);
  CHECK(cp.end_g == 2);
  CHECK(cp.end_process == 1);
  CHECK(critical_path_text(cp).find("ending with G2@1") != std::string::npos);
}

TEST_CASE("replay refuses a trace of several processes and names them") {
  TempDir dir;
  gmp::trace::testing::write_two_process_trace(dir.file("t"));
  const Timeline tl = build_timeline(dir.file("t"));
  CHECK_THROWS_WITH(derive_scenario(tl, "t"), Catch::Contains("the trace has 2 processes (server, loadgen)"));
}
