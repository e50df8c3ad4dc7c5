// The schema's state machine (traces/state_machine.h): what each kind's rule says, the transitions
// the machine reports, who holds each P, and the Gs, Ms and Ps of different processes kept apart.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "traces/state_machine.h"
#include "tests/traces/event_of.h"

using namespace gmp::trace;
using gmp::trace::test::Ev;
using gmp::trace::test::make;

namespace {

// Each event's G state after it, with "!" for each issue it raised.
std::string walk(StateMachine& sm, const std::vector<Ev>& evs) {
  std::string out;
  for (const Ev& x : evs) {
    const Transition& t = sm.apply(make(x));
    out += gstatus_name(t.g_after);
    out += std::string(static_cast<size_t>(t.n_issues), '!');
    out += ";";
  }
  return out;
}

}  // namespace

TEST_CASE("state machine: each G kind's rule, what it needs and what it leaves") {
  using S = GStatus;
  struct Want {
    Kind kind;
    Reason reason;
    S need, to;
  };
  for (const Want& w : {Want{KIND_GO_CREATE, REASON_NEWPROC, S::None, S::Runnable},
                        Want{KIND_GO_START, REASON_SCHEDULE, S::Runnable, S::Running},
                        Want{KIND_GO_STOP, REASON_GOSCHED, S::Running, S::Runnable},
                        Want{KIND_GO_PARK, REASON_PARK, S::Running, S::Waiting},
                        Want{KIND_GO_UNPARK, REASON_READY, S::Waiting, S::Runnable},
                        Want{KIND_GO_EXIT, REASON_GOEXIT, S::Running, S::Dead},
                        Want{KIND_GO_SYSCALL_ENTER, REASON_SYSCALL, S::Running, S::Syscall},
                        Want{KIND_GO_SYSCALL_EXIT, REASON_EXITSYSCALL_FAST, S::Syscall, S::Running},
                        Want{KIND_GO_SYSCALL_EXIT, REASON_EXITSYSCALL_NO_P, S::Syscall, S::Runnable},
                        Want{KIND_P_ACQUIRE, REASON_STARTM, S::None, S::None},
                        Want{KIND_RUNQ_PUT, REASON_READY, S::None, S::None}}) {
    INFO(Kind_Name(w.kind) << " " << Reason_Name(w.reason));
    const Rule r = rule(w.kind, w.reason);
    CHECK(r.need == w.need);
    CHECK(r.to == w.to);
  }
  // A syscall exit that found no P leaves its M idle and takes no P; with one, both run the G.
  CHECK(rule(KIND_GO_SYSCALL_EXIT, REASON_EXITSYSCALL_NO_P).m_seg == Seg::Idle);
  CHECK_FALSE(rule(KIND_GO_SYSCALL_EXIT, REASON_EXITSYSCALL_NO_P).takes_p);
  CHECK(rule(KIND_GO_SYSCALL_EXIT, REASON_EXITSYSCALL_IDLE_P).takes_p);
  CHECK(rule(KIND_GO_SYSCALL_EXIT, REASON_EXITSYSCALL_IDLE_P).p_seg == Seg::Running);
  // A P released into a system call stays off the idle list and keeps its segment.
  CHECK(rule(KIND_P_RELEASE, REASON_SYSCALL).p_idle == PIdle::Busy);
  CHECK(rule(KIND_P_RELEASE, REASON_SYSCALL).p_seg == Seg::Keep);
  CHECK(rule(KIND_P_RELEASE, REASON_STOPM).p_idle == PIdle::Idle);
  CHECK(rule(KIND_P_RELEASE, REASON_RETAKE).holder_is_peer_m);
  CHECK(rule(KIND_P_RELEASE, REASON_RETAKE).instant == Instant::Retake);
  // The edges.
  CHECK(rule(KIND_GO_CREATE, 0).edge == Edge::Create);
  CHECK(rule(KIND_GO_UNPARK, 0).edge == Edge::Ready);
  CHECK(rule(KIND_STEAL, 0).edge == Edge::Steal);
  CHECK(rule(KIND_M_WAKEUP, 0).edge == Edge::Wakeup);
  // A kind this schema does not have moves nothing.
  const Rule unknown = rule(99, 0);
  CHECK_FALSE(unknown.moves_g());
  CHECK(unknown.own == POwn::None);
  CHECK(unknown.m_seg == Seg::Keep);
  CHECK(unknown.edge == Edge::None);
}

TEST_CASE("state machine: the transitions of a G, and a move its state does not allow") {
  StateMachine sm(StateMachine::Options{true});
  CHECK(walk(sm, {{KIND_P_ACQUIRE, -1, 0, 0},
                  {KIND_GO_CREATE, 1, 0, 0},
                  {KIND_GO_START, 1, 0, 0},
                  {KIND_GO_SYSCALL_ENTER, 1, 0, 0},
                  {KIND_GO_SYSCALL_EXIT, 1, 0, 0, REASON_EXITSYSCALL_FAST},
                  {KIND_GO_PARK, 1, 0, 0},
                  {KIND_GO_UNPARK, 1, 0, 0},
                  {KIND_GO_START, 1, 0, 0},
                  {KIND_GO_SYSCALL_ENTER, 1, 0, 0},
                  {KIND_GO_SYSCALL_EXIT, 1, 0, -1, REASON_EXITSYSCALL_NO_P},
                  {KIND_GO_START, 1, 0, 0},
                  {KIND_GO_EXIT, 1, 0, 0}}) ==
        "none;runnable;running;in a system call;running;waiting;runnable;running;in a system call;runnable;running;"
        "dead;");
  // A G that parks while runnable is reported and stays runnable; one that starts while waiting is
  // reported but runs.
  StateMachine sm2(StateMachine::Options{true});
  CHECK(walk(sm2, {{KIND_P_ACQUIRE, -1, 0, 0},
                   {KIND_GO_CREATE, 1, 0, 0},
                   {KIND_GO_PARK, 1, 0, 0},
                   {KIND_GO_START, 1, 0, 0},
                   {KIND_GO_PARK, 1, 0, 0},
                   {KIND_GO_START, 1, 0, 0}}) == "none;runnable;runnable!;running;waiting;running!;");
  const Transition& t = sm2.apply(make({KIND_GO_UNPARK, 1, 0, 0}));
  REQUIRE(t.n_issues == 1);
  CHECK(t.g_before == GStatus::Running);
  CHECK(t.issues[0].code == Issue::Code::WrongState);
  CHECK(t.issues[0].text() == "G1 is running, not waiting");
}

TEST_CASE("state machine: who holds each P") {
  StateMachine sm(StateMachine::Options{true});
  sm.apply(make({KIND_P_ACQUIRE, -1, 3, 1}));
  CHECK(sm.holder(0, 1) == 3);
  // sysmon (M9) retakes P1 from M3, which sits in a system call.
  sm.apply(make({KIND_GO_CREATE, 5, 3, 1}));
  sm.apply(make({KIND_GO_START, 5, 3, 1}));
  sm.apply(make({KIND_GO_SYSCALL_ENTER, 5, 3, 1}));
  CHECK(sm.apply(make({KIND_P_RELEASE, -1, 9, 1, REASON_RETAKE, 3})).n_issues == 0);
  CHECK(sm.holder(0, 1) == -1);
  // M3 returns from the system call with P2, which it now holds.
  CHECK(sm.apply(make({KIND_GO_SYSCALL_EXIT, 5, 3, 2, REASON_EXITSYSCALL_IDLE_P})).n_issues == 0);
  CHECK(sm.holder(0, 2) == 3);
  CHECK(sm.holder(0, 7) == -1);  // never named
  // Mid-run, a G that starts on a P nobody holds shows who holds it; from the start it is an issue.
  StateMachine mid(StateMachine::Options{false});
  CHECK(mid.apply(make({KIND_GO_START, 1, 4, 0})).n_issues == 0);
  CHECK(mid.holder(0, 0) == 4);
  StateMachine from_start(StateMachine::Options{true});
  from_start.apply(make({KIND_GO_CREATE, 1, 4, -1}));
  const Transition& t = from_start.apply(make({KIND_GO_START, 1, 4, 0}));
  REQUIRE(t.n_issues == 1);
  CHECK(t.issues[0].text() == "G1 starts on P0, which M4 does not hold");
  CHECK(from_start.holder(0, 0) == -1);
}

TEST_CASE("state machine: the same ids in two processes are different Gs, Ms and Ps") {
  StateMachine sm(StateMachine::Options{true});
  const std::vector<Ev> one = {{KIND_P_ACQUIRE, -1, 0, 0}, {KIND_GO_CREATE, 1, 0, 0}, {KIND_GO_START, 1, 0, 0}};
  for (uint32_t process : {0u, 1u}) {
    for (Ev x : one) {
      x.process = process;
      x.m = process;  // M0 holds P0 in process 0, M1 holds P0 in process 1
      CHECK(sm.apply(make(x)).n_issues == 0);
    }
  }
  CHECK(sm.gs() == 2);
  CHECK(sm.ps() == 2);
  CHECK(sm.holder(0, 0) == 0);
  CHECK(sm.holder(1, 0) == 1);
  // G1 of process 1 parks; G1 of process 0 still runs.
  CHECK(sm.apply(make({KIND_GO_PARK, 1, 1, 0, REASON_PARK, -1, 0, 1})).n_issues == 0);
  CHECK(sm.apply(make({KIND_GO_STOP, 1, 0, 0})).g_before == GStatus::Running);
}
