// Checks that a trace tells a consistent story (`gmpsim trace validate`). Every producer must
// pass it: the simulator, the checker's counterexamples, the Go trace importer.
//
// The model the events are checked against, one state machine per G, M and P:
//   - A G is created once (GO_CREATE), then cycles through runnable, running, and waiting or in a
//     system call, and ends with GO_EXIT. GO_START needs a runnable G; GO_STOP, GO_PARK, GO_EXIT
//     and GO_SYSCALL_ENTER need the G running; GO_UNPARK needs it waiting; GO_SYSCALL_EXIT needs it
//     in a system call, and leaves it running on its M (with a P, or with none) or, with
//     EXITSYSCALL_NO_P, runnable.
//   - An M runs at most one G at a time, and a G runs on the M it started on until it stops. A G
//     in a system call keeps its M.
//   - A P is held by at most one M, and an M holds at most one P: P_ACQUIRE needs both free;
//     P_RELEASE frees the P from its holder (m, or for a RETAKE by sysmon, peer_m); P_HANDOFF
//     passes on a P that no M holds; GO_SYSCALL_EXIT with a P (not EXITSYSCALL_NO_P) has its M take
//     that P. A G that starts with a P runs on the P its M holds, and a P runs one G at a time.
//   - Timestamps never decrease.
// A trace may begin in the middle of a run (an imported one does): a G, M or P seen for the first
// time is taken to be in whatever state its first event needs, unless the trace starts at the
// beginning of the run (Options::from_start, which the simulator's traces do: every G they show
// is created in them).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "traces/trace.pb.h"

namespace gmp::trace {

struct ValidationIssue {
  uint64_t index = 0;  // the event's position in the trace, from 0
  int64_t ts = 0;
  std::string what;
};

class Validator {
 public:
  struct Options {
    bool from_start = false;  // every G must be created in the trace before it does anything
    size_t max_issues = 20;   // issues kept in full; the rest are counted
  };
  explicit Validator(Options opt) : opt_(opt) {}

  void on_event(const Event& e);

  uint64_t events() const { return index_; }
  const std::vector<ValidationIssue>& issues() const { return issues_; }
  uint64_t issue_count() const { return issue_count_; }
  size_t gs() const { return gs_.size(); }
  size_t ms() const { return ms_.size(); }
  size_t ps() const { return ps_.size(); }

 private:
  enum class GState : uint8_t { Runnable, Running, Waiting, Syscall, Dead };
  struct G {
    GState state = GState::Runnable;
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

  void issue(const Event& e, std::string what);
  // The G of e (the first time it is seen: in `assumed` state, or an issue if from_start).
  G* g_of(const Event& e, GState assumed);
  void start(const Event& e, G& g);
  void stop(const Event& e, G& g, GState to);
  void release_p(const Event& e, int64_t holder);
  void acquire_p(const Event& e);

  Options opt_;
  // Ordered maps: ids are sparse, and nothing here iterates in an order that depends on addresses.
  std::map<int64_t, G> gs_;
  std::map<int64_t, M> ms_;
  std::map<int64_t, P> ps_;
  std::vector<ValidationIssue> issues_;
  uint64_t issue_count_ = 0;
  uint64_t index_ = 0;
  int64_t last_ts_ = INT64_MIN;
};

// Reads and validates the trace at `path`; throws TraceFormatError on unreadable input.
Validator validate_file(const std::string& path, size_t max_issues = 20);

}  // namespace gmp::trace
