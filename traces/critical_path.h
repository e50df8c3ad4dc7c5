// The critical path of a run (`gmpsim trace critical-path`): the chain of goroutine intervals and
// wake-up edges that sets how long the run took.
//
// The graph. Each goroutine's life (timeline.h) is a chain of nodes, one at every change of state
// and one at every moment it created or readied another goroutine; an edge joins consecutive nodes
// and weighs the time between them, labelled with the state the goroutine was in. A creation or a
// wake-up is an edge of weight 0 from the creator's or waker's node at that moment to the first
// node of the runnable interval it began. A blocked interval that ended because another goroutine
// readied it has no edge of its own: the time it stands for is the waker's, so the path goes
// through the waker. A blocked interval ended by a timer, the netpoller or an unknown waker keeps
// its edge (the wait itself is on the path).
//
// The path is the longest path, in that DAG, into the node where the run ends: the last goroutine
// to stop running (main, for a program that exits). Boost.Graph's dag_shortest_paths finds it
// (weights negated) from a source joined to every node without a predecessor. Its edges cover
// the run from their first node to the end without gaps, so the shares of running time say what a
// faster core would shorten, and the shares of runnable time what more Ps would. Every chain that
// reaches back to the trace's start is as long as any other; what makes the path the one that
// matters is that a woken goroutine's wait is crossed only through its waker. Between chains still
// equal (a goroutine waiting for a P while the one holding it runs) the first edge built wins, so
// the answer is deterministic.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "traces/timeline.h"

namespace gmp::trace {

struct PathSegment {
  int64_t g = -1;
  uint32_t process = 0;  // g's (several processes: each numbers its own Gs)
  GState state = GState::Running;  // what g was doing
  int64_t t0 = 0, t1 = 0;
  int64_t p = -1;     // Running: the P
  std::string wait;   // Blocked: the reason
  int64_t woke = -1;  // the G this segment's goroutine readied or created at t1, if the path goes on there
  uint32_t woke_process = 0;
};

struct CriticalPath {
  int64_t end_g = -1;                 // the goroutine whose end is the run's end
  uint32_t end_process = 0;           // its process
  int64_t t_begin = 0, t_end = 0;     // of the path
  int64_t span = 0;                   // of the whole trace
  std::vector<PathSegment> segments;  // in time order, merged where consecutive and alike
};

// A trace whose creations and wake-ups lead in a circle (only an inconsistent one can: a goroutine
// that readies itself, or wake-ups out of order) has no longest path; critical_path throws this
// then, saying so, rather than an error of the graph library's.
class CriticalPathError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

CriticalPath critical_path(const Timeline& tl);

// The path for a terminal: each segment with its share, then the shares by goroutine and by state.
std::string critical_path_text(const CriticalPath& cp);

}  // namespace gmp::trace
