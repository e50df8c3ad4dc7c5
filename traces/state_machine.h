// What each event kind of the schema (traces/trace.proto) means for the G, M and P it names,
// written once. Everything that follows a trace's state reads it from here: the validator
// (validate.h), the analyses' timeline (timeline.h), the viewer's lane model (lanes/model.h) and
// the Go importer's converter (import/go_import.h). A new kind is a new case of make_rule().
//
// Two layers:
//   - make_rule(kind, reason), looked up by rule(): the transition an event makes, read from its
//     kind and reason alone.
//     For its G: the state it needs and the state it leaves (GO_CREATE needs none: the G is new).
//     For its M and its P: the segment their lanes show from then on (or no change), P ownership
//     (acquired, released, handed off), spinning. What it produces: an edge between Gs, Ps or Ms
//     (created, readied, stolen, woken) or an instant on a lane (preemption, signal, handoff,
//     retake). Clients that show what the events say (the timeline's intervals, the lanes'
//     segments, arrows and markers) apply it to the event's own ids and fold it into their own
//     structures; rule() is a lookup in a table built at compile time, with no allocation.
//   - StateMachine: the state of every G, M and P of one trace, moved by the rules and checked
//     against them (what each transition requires: the validator's model below). apply(event)
//     returns a Transition: the G's state before and after and the checks the event failed, as
//     Issues with their operands; Issue::text() words them. The validator prints them; the Go
//     importer asks it which M holds a P, as the validator will see it.
//
// The model the machine checks, per G, M and P:
//   - A G is created once (GO_CREATE), then cycles through runnable, running, and waiting or in a
//     system call, and ends with GO_EXIT. Each G move needs its G in rule().need: GO_START a
//     runnable G, GO_STOP, GO_PARK, GO_EXIT and GO_SYSCALL_ENTER a running one, GO_UNPARK a
//     waiting one, GO_SYSCALL_EXIT one in a system call, which it leaves running on its M (with a
//     P, or with none) or, with EXITSYSCALL_NO_P, runnable. A move whose G is in another state is
//     reported and not made, except a start (Rule::always): a G that starts runs.
//   - An M runs at most one G at a time, and a G runs on the M it started on until it stops. A G
//     in a system call keeps its M.
//   - A P is held by at most one M, and an M holds at most one P: P_ACQUIRE needs both free;
//     P_RELEASE frees the P from its holder (m, or for a RETAKE by sysmon, peer_m); P_HANDOFF
//     passes on a P that no M holds; GO_SYSCALL_EXIT with a P (not EXITSYSCALL_NO_P) has its M take
//     that P. A G that starts with a P runs on the P its M holds, and a P runs one G at a time.
//   - Timestamps never decrease.
//   - Containers: THROTTLE_BEGIN .. THROTTLE_END is a stretch of its M's thread off the CPU (its
//     cgroup's quota spent); they alternate per M. Its G stays running in Go's view, so the G's
//     state does not move; the lanes show the M (and the P it names) as throttled. PROCS (value:
//     the new GOMAXPROCS, at least 1) removes the Ps at and above the count: until a later PROCS
//     raises it again, an event of that process naming such a P (Event.p) is reported. Before the
//     first PROCS nothing is checked against Header.num_ps (an imported trace may not say).
//   - The garbage collector (Rule::span, Rule::counter), per process: GC cycles (GC_BEGIN ..
//     GC_END) are numbered by `value`, increasing, at most one open at a time, and an END closes
//     the cycle that is open, with its number. Stop-the-world pauses (STW_BEGIN .. STW_END) do not
//     nest; the END has the BEGIN's stw_reason and comes from the M that stopped the world (Go
//     starts the world again on the stopping M). A G's mark assist (GC_MARK_ASSIST_BEGIN .. END)
//     begins and ends while it runs, does not nest, and is over before the G exits; it may park in
//     between. A BEGIN with no M (a trace's restatement of an assist under way for a G that is not
//     on an M: parked, or runnable) leaves the G's state to its own events. Sweeping (GC_SWEEP_BEGIN .. END) is a span of its M, which does not nest. HEAP_ALLOC
//     and HEAP_GOAL carry a non-negative value. An END whose BEGIN the trace does not show is
//     reported only when the trace starts with the run (from_start).
//     Not checked: that no G starts while the world is stopped. The STW span is wider than the
//     stop: Gs on other Ps run (and may start) until each sees the stop request after STW_BEGIN,
//     and the Ms that startTheWorldWithSema wakes take their Ps before STW_END (proc.go emits it
//     last), so a start inside the span is not a violation. The stopping M itself runs no other G
//     (MBusy catches that: its G runs throughout).
// A trace may begin in the middle of a run (an imported one does): a G, M or P seen for the first
// time is taken to be in whatever state its first event needs, unless the trace starts at the
// beginning of the run (Options::from_start, which the simulator's traces do: every G they show
// is created in them).
//
// States are keyed by (Event.process, id), so the Gs, Ms and Ps of several processes in one trace
// are apart; a one-process trace has process 0 throughout.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "traces/trace.pb.h"

namespace gmp::trace {

// A G's state. None: no state (a G not created yet, for Rule::need; no change, for Rule::to).
enum class GStatus : uint8_t { None, Runnable, Running, Waiting, Syscall, Dead };
// "runnable", "running", "waiting", "in a system call", "dead" ("none" for None).
const char* gstatus_name(GStatus s);

// The segment an M's or a P's lane shows after an event. Running and Syscall are the event's G's;
// a lane's gaps are its idle state (an M in the scheduler, a P that runs no G).
enum class Seg : uint8_t {
  Keep,      // no change
  Running,   // runs the event's G
  Syscall,   // the event's G is in a system call on it
  Spinning,  // looks for work
  Parked,    // an M asleep (notesleep), until its next event of another kind
  Idle,      // nothing: the segment it showed ends
  EndSpin,   // a Spinning segment ends (another one stays)
  Throttled,  // its thread is off the CPU, throttled by its cgroup (THROTTLE_BEGIN); what it showed
              // before (its G running, say) is put aside
  Unthrottle, // the Throttled segment ends and what it put aside goes on (THROTTLE_END)
};

// What an event does to its P's ownership.
enum class POwn : uint8_t {
  None,
  Acquire,  // its M takes its P (needs both)
  Release,  // the P's holder drops it: the event's M, or peer_m (Rule::holder_is_peer_m)
  Handoff,  // the P, which no M holds, is passed on
};

// Whether its P is on the idle list after it (the lanes' count of idle Ps).
enum class PIdle : uint8_t { Keep, Busy, Idle };

// The causal edge an event makes.
enum class Edge : uint8_t {
  None,
  Create,  // peer_g created g
  Ready,   // peer_g (or a timer, the netpoller: absent) readied g, which runs at its next start
  Steal,   // p took Gs from peer_p's queue
  Wakeup,  // m woke peer_m, or, with none named, whichever M next acquires the P passed (peer_p or p)
};

// The span of the garbage collector an event opens or closes (Rule::span_edge): a GC cycle and a
// stop-the-world pause (one at a time, per process), a mark assist (its G's), sweeping (its M's).
enum class GcSpan : uint8_t { None, Cycle, Stw, Assist, Sweep };
// The counter an event sets to its value.
enum class Counter : uint8_t { None, HeapAlloc, HeapGoal };

// A point in time an event marks on its lanes.
enum class Instant : uint8_t { None, PreemptRequest, SignalSend, SignalReceive, Handoff, Retake };

struct Rule {
  // Its G (Event.g): the state it needs (for a G seen first: the state it is taken to have been
  // in) and the state it leaves it in. to None: the event does not move its G; need None with a
  // `to`: it creates the G.
  GStatus need = GStatus::None, to = GStatus::None;
  // The move is made even when the G was not in `need` (it is still reported).
  bool always = false;
  // Its G waits in a run queue: it is runnable, which nothing checks (RUNQ_PUT).
  bool queues_g = false;
  // As its G leaves the system call to run, its M takes the event's P, if it names one.
  bool takes_p = false;
  POwn own = POwn::None;
  bool holder_is_peer_m = false;  // Release: the holder is peer_m (sysmon retaking a P), if named
  PIdle p_idle = PIdle::Keep;
  // The lanes of its M and of its P. Leaving Syscall also ends the Syscall segment of the P its G
  // left in the system call, if that is another one.
  Seg m_seg = Seg::Keep, p_seg = Seg::Keep;
  int8_t spin = 0;  // +1: its M starts spinning; -1: it stops (if it was)
  Edge edge = Edge::None;
  Instant instant = Instant::None;
  // The instant is on its P's lane, or with no P, on the lane of the M it targets (peer_m, else m).
  bool instant_on_target = false;
  // The garbage collector: the span it opens (+1) or closes (-1), the counter it sets.
  GcSpan span = GcSpan::None;
  int8_t span_edge = 0;
  Counter counter = Counter::None;
  // Containers: +1 its M is throttled from now on, -1 it runs again (THROTTLE_BEGIN / END).
  int8_t throttle = 0;
  // PROCS: its value is its process's GOMAXPROCS from now on (the Ps at and above it are gone).
  bool sets_procs = false;

  constexpr bool moves_g() const { return to != GStatus::None; }
  constexpr bool creates_g() const { return to != GStatus::None && need == GStatus::None; }
  // A start: its G leaves a run queue to run (what scheduling latency measures).
  constexpr bool starts_g() const { return need == GStatus::Runnable && to == GStatus::Running; }
};

// The table itself: the transition of an event of `kind` with `reason` (any values: unknown kinds
// do nothing). Each row below is one kind.
constexpr Rule make_rule(int kind, int reason) {
  using S = GStatus;
  Rule r;
  // A G that stops running leaves its M and its P idle.
  auto leaves_running = [&r](GStatus to) {
    r.need = S::Running;
    r.to = to;
    r.m_seg = r.p_seg = Seg::Idle;
  };
  switch (kind) {
    case KIND_GO_CREATE:
      r.to = S::Runnable;
      r.edge = Edge::Create;
      break;
    case KIND_GO_START:
      r.need = S::Runnable;
      r.to = S::Running;
      r.always = true;
      r.m_seg = r.p_seg = Seg::Running;
      break;
    case KIND_GO_STOP: leaves_running(S::Runnable); break;
    case KIND_GO_PARK: leaves_running(S::Waiting); break;
    case KIND_GO_EXIT: leaves_running(S::Dead); break;
    case KIND_GO_UNPARK:
      r.need = S::Waiting;
      r.to = S::Runnable;
      r.edge = Edge::Ready;
      break;
    case KIND_GO_SYSCALL_ENTER:
      r.need = S::Running;
      r.to = S::Syscall;
      r.m_seg = r.p_seg = Seg::Syscall;
      break;
    case KIND_GO_SYSCALL_EXIT:
      r.need = S::Syscall;
      if (reason == REASON_EXITSYSCALL_NO_P) {
        r.to = S::Runnable;  // to the global queue; its M stops
        r.m_seg = Seg::Idle;
      } else {
        r.to = S::Running;
        r.takes_p = true;
        r.m_seg = r.p_seg = Seg::Running;
      }
      break;
    case KIND_RUNQ_PUT: r.queues_g = true; break;
    case KIND_RUNQ_GET: break;
    case KIND_STEAL: r.edge = Edge::Steal; break;
    case KIND_P_ACQUIRE:
      r.own = POwn::Acquire;
      r.p_idle = PIdle::Busy;
      break;
    case KIND_P_RELEASE:
      r.own = POwn::Release;
      r.holder_is_peer_m = reason == REASON_RETAKE;
      if (reason == REASON_SYSCALL) {
        r.p_idle = PIdle::Busy;  // left in syscall state, not idle
      } else {
        r.p_idle = PIdle::Idle;
        r.p_seg = Seg::Idle;
      }
      if (reason == REASON_HANDOFFP) r.instant = Instant::Handoff;  // older producers' handoff
      if (reason == REASON_RETAKE) r.instant = Instant::Retake;
      break;
    case KIND_P_HANDOFF:
      r.own = POwn::Handoff;
      r.instant = Instant::Handoff;
      break;
    case KIND_M_CREATE: break;
    case KIND_M_SLEEP:
      r.m_seg = Seg::Parked;
      r.spin = -1;
      break;
    case KIND_M_WAKEUP: r.edge = Edge::Wakeup; break;
    case KIND_M_RESUME: break;  // any event of a parked M ends its Parked segment
    case KIND_M_SPIN_START:
      r.m_seg = r.p_seg = Seg::Spinning;
      r.spin = 1;
      break;
    case KIND_M_SPIN_STOP:
      r.m_seg = r.p_seg = Seg::EndSpin;
      r.spin = -1;
      break;
    case KIND_M_EXIT:
      r.m_seg = Seg::Idle;
      r.spin = -1;
      break;
    case KIND_PREEMPT_REQUEST:
      r.instant = reason == REASON_RETAKE ? Instant::Retake : Instant::PreemptRequest;
      r.instant_on_target = true;
      break;
    case KIND_SIGNAL_SEND:
      r.instant = Instant::SignalSend;
      r.instant_on_target = true;
      break;
    case KIND_SIGNAL_RECEIVE: r.instant = Instant::SignalReceive; break;
    case KIND_GC_BEGIN: r.span = GcSpan::Cycle, r.span_edge = 1; break;
    case KIND_GC_END: r.span = GcSpan::Cycle, r.span_edge = -1; break;
    case KIND_STW_BEGIN: r.span = GcSpan::Stw, r.span_edge = 1; break;
    case KIND_STW_END: r.span = GcSpan::Stw, r.span_edge = -1; break;
    case KIND_GC_MARK_ASSIST_BEGIN: r.span = GcSpan::Assist, r.span_edge = 1; break;
    case KIND_GC_MARK_ASSIST_END: r.span = GcSpan::Assist, r.span_edge = -1; break;
    case KIND_GC_SWEEP_BEGIN: r.span = GcSpan::Sweep, r.span_edge = 1; break;
    case KIND_GC_SWEEP_END: r.span = GcSpan::Sweep, r.span_edge = -1; break;
    case KIND_HEAP_ALLOC: r.counter = Counter::HeapAlloc; break;
    case KIND_HEAP_GOAL: r.counter = Counter::HeapGoal; break;
    case KIND_THROTTLE_BEGIN:
      r.throttle = 1;
      r.m_seg = r.p_seg = Seg::Throttled;
      break;
    case KIND_THROTTLE_END:
      r.throttle = -1;
      r.m_seg = r.p_seg = Seg::Unthrottle;
      break;
    case KIND_PROCS: r.sets_procs = true; break;
    default: break;  // ANNOTATION, RUN_END and kinds of a later schema move nothing
  }
  return r;
}

namespace detail {
struct RuleTable {
  // make_rule tests a reason only against Reason's values, so any other reason is as good as 0.
  Rule by[Kind_ARRAYSIZE][Reason_ARRAYSIZE];
  Rule none;
};
constexpr RuleTable make_rule_table() {
  RuleTable t{};
  for (int k = 0; k < Kind_ARRAYSIZE; ++k) {
    for (int r = 0; r < Reason_ARRAYSIZE; ++r) t.by[k][r] = make_rule(k, r);
  }
  return t;
}
inline constexpr RuleTable kRules = make_rule_table();
}  // namespace detail

// The rule of an event, as make_rule gives it, from a table built at compile time (the viewer's
// loader asks once per event).
inline const Rule& rule(int kind, int reason) {
  if (kind < 0 || kind >= Kind_ARRAYSIZE) return detail::kRules.none;
  if (reason < 0 || reason >= Reason_ARRAYSIZE) reason = REASON_UNSPECIFIED;
  return detail::kRules.by[kind][reason];
}

// A check an event failed, with its operands (ids, states, times) in a .. d.
struct Issue {
  enum class Code : uint8_t {
    TimeBack,          // a: the last time, b: this one
    NoG,               // the event names no G
    NoM,               // no M
    NoP,               // no P
    NeedsMAndP,        // P_ACQUIRE without both
    NeverCreated,      // a: the G (from_start)
    CreatedAgain,      // a: the G
    WrongState,        // a: the G, b: its GStatus, c: the GStatus the event needs
    StartsOnNoM,       // a: the G
    MBusy,             // a: the M, b: the G it starts, c: the G it runs
    PNotHeld,          // a: the G, b: the P, c: the M that starts it, d: the P's holder (-1: none)
    PBusy,             // a: the P, b: the G it starts, c: the G it runs
    RunsElsewhere,     // a: the G, b: its M, c: the event's M
    SyscallElsewhere,  // a: the G, b: the M of its system call, c: the event's M
    ReleasedByOther,   // a: the P, b: the releasing M, c: its holder (-1: none)
    ReleasedRunning,   // a: the P, b: the G running on it
    TakesButHolds,     // a: the M, b: the P it takes, c: the P it holds
    TakesHeld,         // a: the M, b: the P it takes, c: the M that holds it
    HandedOffHeld,     // a: the P, b: its holder
    NoValue,           // a GC cycle or a counter without Event.value
    NegativeValue,     // a: the value
    CycleOpen,         // a: the cycle still open, b: the one that begins
    CycleBack,         // a: the last cycle's number, b: this one's
    NoCycle,           // a GC_END while no cycle is open
    CycleOther,        // a: the open cycle, b: the one the END names
    StwNested,         // a: the StwReason of the pause in progress
    NotStopped,        // an STW_END while the world runs
    StwReasonOther,    // a: the BEGIN's StwReason, b: the END's
    StwElsewhere,      // a: the M that stopped the world, b: the event's M
    AssistAgain,       // a: the G
    NoAssist,          // a: the G
    ExitsInAssist,     // a: the G
    SweepAgain,        // a: the M
    NoSweep,           // a: the M
    ThrottledAgain,    // a: the M (THROTTLE_BEGIN of a throttled M)
    NotThrottled,      // a: the M (THROTTLE_END of one that is not; from_start)
    BadProcs,          // a: the value (PROCS without a value of at least 1)
    PGone,             // a: the P, b: its process's GOMAXPROCS (a P at or above it, after PROCS)
  };
  Code code = Code::TimeBack;
  int64_t a = 0, b = 0, c = 0, d = 0;

  // What went wrong, e.g. "G5 is running, not runnable".
  std::string text() const;
};

// What one event did (StateMachine::apply).
struct Transition {
  Rule rule;
  // Its G's state before (for a G seen first, the state it is taken to have been in) and after;
  // None when the event moved no G (or created it: before) or could not (no G, created again).
  GStatus g_before = GStatus::None;
  GStatus g_after = GStatus::None;
  static constexpr int kMaxIssues = 8;  // more than the checks one event can fail
  Issue issues[kMaxIssues];
  int n_issues = 0;
};

class StateMachine {
 public:
  struct Options {
    bool from_start = false;  // every G must be created in the trace before it does anything
  };
  explicit StateMachine(Options opt) : opt_(opt) {}

  // Checks `e` against the state and moves it. The result is valid until the next call.
  const Transition& apply(const Event& e);

  size_t gs() const { return gs_.size(); }
  size_t ms() const { return ms_.size(); }
  size_t ps() const { return ps_.size(); }
  // The M that holds P `p` of `process`, -1 if none (or the P was never named).
  int64_t holder(uint32_t process, int64_t p) const;

 private:
  // A G, M or P: its process and its id.
  struct Key {
    uint32_t process;
    int64_t id;
    bool operator<(const Key& o) const { return process != o.process ? process < o.process : id < o.id; }
  };
  struct G {
    GStatus state = GStatus::Runnable;
    int64_t m = -1;  // Running, Syscall: its M
    int64_t p = -1;  // Running: its P, if any
  };
  struct M {
    int64_t g = -1;  // the G it runs (or whose system call it is in)
    int64_t p = -1;  // the P it holds
  };
  struct P {
    int64_t m = -1;  // its holder
    int64_t g = -1;  // the G running on it
  };

  void issue(Issue::Code code, int64_t a = 0, int64_t b = 0, int64_t c = 0, int64_t d = 0);
  G& g_at(int64_t id) { return gs_[Key{process_, id}]; }
  M& m_at(int64_t id) { return ms_[Key{process_, id}]; }
  P& p_at(int64_t id) { return ps_[Key{process_, id}]; }
  void move_g(const Event& e, const Rule& r);
  // The G of e (the first time it is seen: in `assumed` state, or an issue if from_start).
  G* g_of(const Event& e, GStatus assumed);
  void start(const Event& e, G& g);
  void leave_running(const Event& e, G& g, GStatus to);
  void leave_syscall(const Event& e, G& g);
  void own_p(const Event& e, const Rule& r);
  void release_p(const Event& e, int64_t holder);
  void acquire_p(const Event& e);
  void gc(const Event& e, const Rule& r);
  void containers(const Event& e, const Rule& r);

  Options opt_;
  // Ordered maps: ids are sparse, and nothing here iterates in an order that depends on addresses.
  std::map<Key, G> gs_;
  std::map<Key, M> ms_;
  std::map<Key, P> ps_;
  // The collector's state of a process.
  struct Gc {
    int64_t cycle = -1;       // the open cycle's number, -1: none
    int64_t last_cycle = INT64_MIN;
    bool stopped = false;     // between STW_BEGIN and STW_END
    int32_t stw_reason = 0;
    int64_t stw_m = -1;       // the M that stopped the world
  };
  std::map<uint32_t, Gc> gc_;
  std::map<Key, bool> assisting_;  // by G: in a mark assist
  std::map<Key, bool> sweeping_;   // by M: sweeping
  std::map<Key, bool> throttled_;  // by M: throttled by its cgroup
  std::map<uint32_t, int64_t> procs_;  // by process: GOMAXPROCS since its last PROCS
  std::map<uint32_t, int64_t> procs_mover_;  // by process: the M of its last PROCS, until it releases its P
  uint32_t process_ = 0;  // the event being applied's
  int64_t last_ts_ = INT64_MIN;
  Transition t_;
};

}  // namespace gmp::trace
