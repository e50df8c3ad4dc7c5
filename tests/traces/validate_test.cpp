// The trace validator (traces/validate.h): a consistent story passes, and each rule it states
// catches the event that breaks it.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <string>
#include <vector>

#include "traces/validate.h"
#include "tests/temp_dir.h"
#include "tests/traces/event_of.h"
#include "tests/view/gc_trace.h"

using namespace gmp::trace;
using gmp::trace::test::Ev;
using gmp::trace::test::make;

namespace {

// The issues a sequence raises, joined by newlines; "" when consistent.
std::string check(std::initializer_list<Ev> evs, bool from_start = true) {
  Validator v(Validator::Options{from_start, 20});
  for (const Ev& x : evs) v.on_event(make(x));
  std::string out;
  for (const ValidationIssue& i : v.issues()) out += "event " + std::to_string(i.index) + ": " + i.what + "\n";
  return out;
}

// M0 holds P0 and runs G1, which creates G2.
#define PROLOGUE                                                                                 \
  Ev{KIND_P_ACQUIRE, -1, 0, 0}, Ev{KIND_GO_CREATE, 1, 0, 0}, Ev{KIND_GO_START, 1, 0, 0}, \
      Ev{KIND_GO_CREATE, 2, 0, 0}

}  // namespace

TEST_CASE("a consistent trace passes validation") {
  CHECK(check({PROLOGUE, Ev{KIND_GO_PARK, 1, 0, 0}, Ev{KIND_GO_START, 2, 0, 0}, Ev{KIND_GO_UNPARK, 1, 0, 0},
               Ev{KIND_GO_SYSCALL_ENTER, 2, 0, 0}, Ev{KIND_P_RELEASE, -1, 1, 0, REASON_RETAKE, 0},
               Ev{KIND_P_HANDOFF, -1, 1, 0}, Ev{KIND_P_ACQUIRE, -1, 2, 0}, Ev{KIND_GO_START, 1, 2, 0},
               Ev{KIND_GO_SYSCALL_EXIT, 2, 0, -1, REASON_EXITSYSCALL_NO_P}, Ev{KIND_GO_EXIT, 1, 2, 0},
               Ev{KIND_GO_START, 2, 2, 0}, Ev{KIND_GO_SYSCALL_ENTER, 2, 2, 0},
               Ev{KIND_GO_SYSCALL_EXIT, 2, 2, 0, REASON_EXITSYSCALL_FAST}, Ev{KIND_GO_STOP, 2, 2, 0}}) == "");
}

TEST_CASE("each rule of the validator catches the event that breaks it") {
  CHECK(check({PROLOGUE, Ev{KIND_GO_START, 1, 0, 0}}) == "event 4: KIND_GO_START: G1 is running, not runnable\n");
  CHECK(check({PROLOGUE, Ev{KIND_GO_START, 2, 1, 0}}).find("P0 starts G2 while it runs G1") != std::string::npos);
  CHECK(check({PROLOGUE, Ev{KIND_GO_START, 2, 0, 0}}).find("M0 starts G2 while it runs G1") != std::string::npos);
  CHECK(check({PROLOGUE, Ev{KIND_GO_UNPARK, 2, 0, 0}}).find("G2 is runnable, not waiting") != std::string::npos);
  CHECK(check({PROLOGUE, Ev{KIND_GO_PARK, 2, 0, 0}}).find("G2 is runnable, not running") != std::string::npos);
  CHECK(check({PROLOGUE, Ev{KIND_GO_CREATE, 2, 0, 0}}).find("G2 created again") != std::string::npos);
  CHECK(check({PROLOGUE, Ev{KIND_P_ACQUIRE, -1, 1, 0}}).find("M1 takes P0, which M0 holds") != std::string::npos);
  CHECK(check({PROLOGUE, Ev{KIND_P_ACQUIRE, -1, 0, 1}}).find("M0 takes P1 but holds P0") != std::string::npos);
  CHECK(check({PROLOGUE, Ev{KIND_P_RELEASE, -1, 1, 0}}).find("P0 released by M1, but M0 holds it") !=
        std::string::npos);
  CHECK(check({PROLOGUE, Ev{KIND_P_RELEASE, -1, 0, 0}}).find("P0 released while G1 runs on it") !=
        std::string::npos);
  CHECK(check({PROLOGUE, Ev{KIND_P_HANDOFF, -1, 0, 0}}).find("P0 handed off while M0 holds it") !=
        std::string::npos);
  CHECK(check({PROLOGUE, Ev{KIND_GO_SYSCALL_EXIT, 1, 0, 0}}).find("G1 is running, not in a system call") !=
        std::string::npos);
  CHECK(check({Ev{KIND_GO_START, 7, 0, -1}}).find("G7 was never created") != std::string::npos);
  CHECK(check({PROLOGUE, Ev{KIND_GO_PARK, 1, 0, 0, REASON_UNSPECIFIED, -1, 5},
               Ev{KIND_GO_START, 2, 0, 0, REASON_UNSPECIFIED, -1, 4}})
            .find("time goes back from 5 to 4") != std::string::npos);
}

TEST_CASE("a trace that starts mid-run may show Gs, Ms and Ps first in any state") {
  // An imported trace: G5 runs on M3 holding P1 before any event says so.
  CHECK(check({Ev{KIND_GO_PARK, 5, 3, 1}, Ev{KIND_GO_UNPARK, 5, 2, 0}, Ev{KIND_P_RELEASE, -1, 3, 1},
               Ev{KIND_P_ACQUIRE, -1, 3, 1}, Ev{KIND_GO_START, 5, 3, 1}},
              false) == "");
  CHECK(check({Ev{KIND_GO_PARK, 5, 3, 1}}, true).find("G5 was never created") != std::string::npos);
}

namespace {

constexpr Reason R0 = REASON_UNSPECIFIED;

// A GC cycle on M0/P0 while G1 runs there: sweep termination's pause, G1's mark assist (it parks
// inside and resumes), sweeping, mark termination's pause, the heap counters.
#define GC_CYCLE(n, t)                                                                                         \
  Ev{KIND_STW_BEGIN, 1, 0, 0, R0, -1, t, 0, -1, STW_REASON_GC_SWEEP_TERM},                                    \
      Ev{KIND_GC_BEGIN, 1, 0, 0, R0, -1, t + 1, 0, n},                                                        \
      Ev{KIND_STW_END, 1, 0, 0, R0, -1, t + 2, 0, -1, STW_REASON_GC_SWEEP_TERM},                              \
      Ev{KIND_HEAP_GOAL, -1, 0, 0, R0, -1, t + 3, 0, 8 << 20}, Ev{KIND_GC_MARK_ASSIST_BEGIN, 1, 0, 0, R0, -1, t + 4}, \
      Ev{KIND_GO_PARK, 1, 0, 0, R0, -1, t + 5}, Ev{KIND_GO_START, 2, 0, 0, R0, -1, t + 6},                       \
      Ev{KIND_GO_UNPARK, 1, 0, 0, R0, -1, t + 7}, Ev{KIND_GO_STOP, 2, 0, 0, R0, -1, t + 8},                      \
      Ev{KIND_GO_START, 1, 0, 0, R0, -1, t + 9}, Ev{KIND_GC_MARK_ASSIST_END, 1, 0, 0, R0, -1, t + 10},          \
      Ev{KIND_STW_BEGIN, 1, 0, 0, R0, -1, t + 11, 0, -1, STW_REASON_GC_MARK_TERM},                             \
      Ev{KIND_GC_END, 1, 0, 0, R0, -1, t + 12, 0, n},                                                          \
      Ev{KIND_STW_END, 1, 0, 0, R0, -1, t + 13, 0, -1, STW_REASON_GC_MARK_TERM},                               \
      Ev{KIND_GC_SWEEP_BEGIN, -1, 0, 0, R0, -1, t + 14}, Ev{KIND_GC_SWEEP_END, -1, 0, 0, R0, -1, t + 15, 0, 4096}, \
      Ev{KIND_HEAP_ALLOC, -1, 0, 0, R0, -1, t + 16, 0, 1 << 20}

// The issues of PROLOGUE, a cycle, then `tail`.
std::string check_gc(std::initializer_list<Ev> tail, bool from_start = true) {
  std::vector<Ev> all{PROLOGUE, GC_CYCLE(1, 10)};
  for (const Ev& x : tail) all.push_back(x);
  Validator v(Validator::Options{from_start, 20});
  for (const Ev& x : all) v.on_event(make(x));
  std::string out;
  for (const ValidationIssue& i : v.issues()) out += "event " + std::to_string(i.index) + ": " + i.what + "\n";
  return out;
}

}  // namespace

TEST_CASE("a trace with GC cycles, pauses, assists and sweeping passes validation") {
  CHECK(check({PROLOGUE, GC_CYCLE(1, 10), GC_CYCLE(2, 100)}) == "");
  // Cycle numbers may skip (a trace that stopped recording for a while), not go back.
  CHECK(check({PROLOGUE, GC_CYCLE(3, 10), GC_CYCLE(7, 100)}) == "");
  // An imported trace may begin inside a cycle, a pause, an assist or a sweep.
  CHECK(check({Ev{KIND_GC_MARK_ASSIST_END, 5, 3, 1}, Ev{KIND_GC_SWEEP_END, -1, 3, 1, R0, -1, 1, 0, 10},
               Ev{KIND_STW_END, -1, 3, 1, R0, -1, 2, 0, -1, STW_REASON_GC_MARK_TERM},
               Ev{KIND_GC_END, -1, 3, 1, R0, -1, 3, 0, 4}, Ev{KIND_GC_BEGIN, -1, 3, 1, R0, -1, 4, 0, 5}},
              false) == "");
  // Go restates at a trace's start the assist of a G that is not on an M (GCMarkAssistActive of a
  // runnable G: a real Go 1.23 trace had it); the G's next event says where it is.
  CHECK(check({Ev{KIND_P_ACQUIRE, -1, 3, 1}, Ev{KIND_GC_MARK_ASSIST_BEGIN, 5, -1, -1, R0, -1, 1},
               Ev{KIND_GO_START, 5, 3, 1, R0, -1, 2}, Ev{KIND_GC_MARK_ASSIST_END, 5, 3, 1, R0, -1, 3}},
              false) == "");
}

TEST_CASE("each GC rule of the validator catches the event that breaks it") {
  const size_t n = 4 + 17;  // PROLOGUE and one cycle: the next event's index
  auto at = [&](const char* what) { return "event " + std::to_string(n) + ": " + what + "\n"; };
  // Cycles: one at a time, numbers increase, an END closes the open cycle.
  CHECK(check_gc({Ev{KIND_GC_BEGIN, -1, 0, 0, R0, -1, 50, 0, 2}, Ev{KIND_GC_BEGIN, -1, 0, 0, R0, -1, 51, 0, 3}}) ==
        "event 22: KIND_GC_BEGIN: GC cycle 3 begins while cycle 2 runs\n");
  CHECK(check_gc({Ev{KIND_GC_BEGIN, -1, 0, 0, R0, -1, 50, 0, 1}}) ==
        at("KIND_GC_BEGIN: GC cycle 1 after cycle 1: numbers must increase"));
  CHECK(check_gc({Ev{KIND_GC_END, -1, 0, 0, R0, -1, 50, 0, 1}}) == at("KIND_GC_END: no GC cycle is running"));
  CHECK(check_gc({Ev{KIND_GC_BEGIN, -1, 0, 0, R0, -1, 50, 0, 2}, Ev{KIND_GC_END, -1, 0, 0, R0, -1, 51, 0, 3}}) ==
        "event 22: KIND_GC_END: ends GC cycle 3, but cycle 2 runs\n");
  CHECK(check_gc({Ev{KIND_GC_BEGIN, -1, 0, 0, R0, -1, 50}}) == at("KIND_GC_BEGIN: no value"));
  // Pauses: no nesting, an END of the BEGIN's reason, from the stopping M.
  CHECK(check_gc({Ev{KIND_STW_BEGIN, 1, 0, 0, R0, -1, 50, 0, -1, STW_REASON_GC_SWEEP_TERM},
                  Ev{KIND_STW_BEGIN, 1, 0, 0, R0, -1, 51, 0, -1, STW_REASON_READ_MEM_STATS}}) ==
        "event 22: KIND_STW_BEGIN: the world is already stopped (STW_REASON_GC_SWEEP_TERM)\n");
  CHECK(check_gc({Ev{KIND_STW_END, 1, 0, 0, R0, -1, 50, 0, -1, STW_REASON_GC_SWEEP_TERM}}) ==
        at("KIND_STW_END: the world is not stopped"));
  CHECK(check_gc({Ev{KIND_STW_BEGIN, 1, 0, 0, R0, -1, 50, 0, -1, STW_REASON_READ_MEM_STATS},
                  Ev{KIND_STW_END, 1, 0, 0, R0, -1, 51, 0, -1, STW_REASON_GC_MARK_TERM}}) ==
        "event 22: KIND_STW_END: restarts the world stopped for STW_REASON_READ_MEM_STATS with reason "
        "STW_REASON_GC_MARK_TERM\n");
  CHECK(check_gc({Ev{KIND_STW_BEGIN, 1, 0, 0, R0, -1, 50, 0, -1, STW_REASON_READ_MEM_STATS},
                  Ev{KIND_STW_END, -1, 4, -1, R0, -1, 51, 0, -1, STW_REASON_READ_MEM_STATS}}) ==
        "event 22: KIND_STW_END: M4 restarts the world M0 stopped\n");
  // Assists: on a running G, no nesting, over before it exits.
  CHECK(check_gc({Ev{KIND_GC_MARK_ASSIST_BEGIN, 2, 0, 0, R0, -1, 50}}) ==
        at("KIND_GC_MARK_ASSIST_BEGIN: G2 is runnable, not running"));
  CHECK(check_gc({Ev{KIND_GC_MARK_ASSIST_BEGIN, 1, 0, 0, R0, -1, 50},
                  Ev{KIND_GC_MARK_ASSIST_BEGIN, 1, 0, 0, R0, -1, 51}}) ==
        "event 22: KIND_GC_MARK_ASSIST_BEGIN: G1 is already in a mark assist\n");
  CHECK(check_gc({Ev{KIND_GC_MARK_ASSIST_END, 1, 0, 0, R0, -1, 50}}) ==
        at("KIND_GC_MARK_ASSIST_END: G1 is not in a mark assist"));
  CHECK(check_gc({Ev{KIND_GC_MARK_ASSIST_BEGIN, 1, 0, 0, R0, -1, 50}, Ev{KIND_GO_EXIT, 1, 0, 0, R0, -1, 51}}) ==
        "event 22: KIND_GO_EXIT: G1 exits during its mark assist\n");
  // Sweeping: a span of its M.
  CHECK(check_gc({Ev{KIND_GC_SWEEP_BEGIN, -1, 0, 0, R0, -1, 50}, Ev{KIND_GC_SWEEP_BEGIN, -1, 0, 0, R0, -1, 51}}) ==
        "event 22: KIND_GC_SWEEP_BEGIN: M0 is already sweeping\n");
  CHECK(check_gc({Ev{KIND_GC_SWEEP_END, -1, 0, 0, R0, -1, 50, 0, 1}}) == at("KIND_GC_SWEEP_END: M0 is not sweeping"));
  CHECK(check_gc({Ev{KIND_GC_SWEEP_BEGIN, -1, -1, 0, R0, -1, 50}}) == at("KIND_GC_SWEEP_BEGIN: no M"));
  // Counters carry a non-negative value.
  CHECK(check_gc({Ev{KIND_HEAP_ALLOC, -1, 0, 0, R0, -1, 50}}) == at("KIND_HEAP_ALLOC: no value"));
  CHECK(check_gc({Ev{KIND_HEAP_GOAL, -1, 0, 0, R0, -1, 50, 0, 0}}) == "");
}

TEST_CASE("the viewer's and exporters' GC test trace passes validation from the start") {
  TempDir dir("gmp_validate");
  gmp::view::testing::write_gc_trace(dir.file("gc.trace"));
  const Validator v = validate_file(dir.file("gc.trace"));
  for (const ValidationIssue& i : v.issues()) INFO(i.index << ": " << i.what);
  CHECK(v.issue_count() == 0);
  CHECK(v.events() == 25);
}

// Issue 25: several processes share the trace, each with its own ids.
TEST_CASE("the validator keeps the ids of each process apart") {
  // Process 1 has a G1, M0 and P0 of its own while process 0's M0 holds P0 and runs its G1.
  CHECK(check({PROLOGUE, Ev{KIND_P_ACQUIRE, -1, 0, 0, REASON_UNSPECIFIED, -1, 0, 1},
               Ev{KIND_GO_CREATE, 1, 0, 0, REASON_UNSPECIFIED, -1, 0, 1},
               Ev{KIND_GO_START, 1, 0, 0, REASON_UNSPECIFIED, -1, 0, 1},
               Ev{KIND_GO_PARK, 1, 0, 0, REASON_UNSPECIFIED, -1, 0, 1}, Ev{KIND_GO_STOP, 1, 0, 0}}) == "");
  // A G that only process 1 created is unknown to process 0.
  CHECK(check({Ev{KIND_P_ACQUIRE, -1, 0, 0}, Ev{KIND_GO_CREATE, 5, 0, 0, REASON_UNSPECIFIED, -1, 0, 1},
               Ev{KIND_GO_START, 5, 0, 0}}) == "event 2: KIND_GO_START: G5 was never created\n");
  // Process 1's issues name it.
  CHECK(check({Ev{KIND_GO_START, 7, 0, 0, REASON_UNSPECIFIED, -1, 0, 1}}).find("process 1: G7 was never created") !=
        std::string::npos);
}

TEST_CASE("throttling alternates per M and leaves its G running") {
  CHECK(check({PROLOGUE, Ev{KIND_THROTTLE_BEGIN, -1, 0, 0}, Ev{KIND_THROTTLE_END, -1, 0, 0},
               Ev{KIND_GO_PARK, 1, 0, 0}}) == "");
  CHECK(check({PROLOGUE, Ev{KIND_THROTTLE_BEGIN, -1, 0, 0}, Ev{KIND_THROTTLE_BEGIN, -1, 0, 0}}) ==
        "event 5: KIND_THROTTLE_BEGIN: M0 is already throttled\n");
  CHECK(check({PROLOGUE, Ev{KIND_THROTTLE_END, -1, 0, 0}}) == "event 4: KIND_THROTTLE_END: M0 is not throttled\n");
  // Process 1's M0 is another thread.
  CHECK(check({PROLOGUE, Ev{KIND_THROTTLE_BEGIN, -1, 0, 0},
               Ev{KIND_THROTTLE_BEGIN, -1, 0, -1, REASON_UNSPECIFIED, -1, 0, 1}}) == "");
  CHECK(check({PROLOGUE, Ev{KIND_THROTTLE_BEGIN}}) == "event 4: KIND_THROTTLE_BEGIN: no M\n");
}

TEST_CASE("an event on a P that PROCS removed is reported until GOMAXPROCS grows again") {
  const Ev shrink{KIND_PROCS, -1, 0, 0, REASON_UNSPECIFIED, -1, 0, 0, 1};
  const Ev grow{KIND_PROCS, -1, 0, 0, REASON_UNSPECIFIED, -1, 0, 0, 2};
  CHECK(check({PROLOGUE, shrink, Ev{KIND_P_ACQUIRE, -1, 1, 1}}) == "event 5: KIND_P_ACQUIRE: P1 is gone: GOMAXPROCS is 1\n");
  CHECK(check({PROLOGUE, shrink, grow, Ev{KIND_P_ACQUIRE, -1, 1, 1}}) == "");
  // Another process's P1 is not gone.
  CHECK(check({PROLOGUE, shrink, Ev{KIND_P_ACQUIRE, -1, 1, 1, REASON_UNSPECIFIED, -1, 0, 1}}) == "");
  CHECK(check({PROLOGUE, Ev{KIND_PROCS, -1, 0, 0}}) == "event 4: KIND_PROCS: no value\n");
  CHECK(check({PROLOGUE, Ev{KIND_PROCS, -1, 0, 0, REASON_UNSPECIFIED, -1, 0, 0, 0}}) ==
        "event 4: KIND_PROCS: GOMAXPROCS 0 is below 1\n");
}
