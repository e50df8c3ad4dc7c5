// The trace validator (traces/validate.h): a consistent story passes, and each rule it states
// catches the event that breaks it.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <string>

#include "traces/validate.h"
#include "tests/traces/event_of.h"

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
