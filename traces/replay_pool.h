// Worker pools in a trace, for replay's shared mode (derive_scenario.h, ReplayMode::Shared): which
// goroutines share one work source, and the items of work each of them took from it.
//
// Detection. Goroutines of the program (main aside) with the same start function (GLife::start_fn)
// are a candidate. A member's pulls are the points where it got an item:
//   - forward: a wait at a receive (chan receive or select) ended by another goroutine of the
//     program, its feeder (the item was handed to it);
//   - backward: it readied a goroutine blocked in a channel send (it took the item of a blocked
//     sender, or freed the buffered slot that sender waited for); that goroutine is a feeder too.
// The candidate is a pool when it has at least 2 members and at least one pull, all its forward
// pulls wait at one site (Interval::site: the park's first frame; in a trace without stacks the wait
// reason, with the same feeders standing for the same channel), every member that has feeders has
// the same ones (by start function, "G5" for one without), and no member does what an item cannot
// carry: a system call, a sleep (a wait nobody in the program ended), a wait ended by another
// member or at another receive, a go statement. A wait in a channel send ended by a goroutine
// outside the pool is back-pressure from the pool's output (a results channel full): it is not
// work, and is dropped.
//
// Items. A member's running time (t1 - t0 - Interval::off_cpu) is cut at each of its pulls; the
// stretch from one pull to the next is one item's work, with the wake-ups of goroutines outside the
// pool it made in between (results handed on) as the item's sends, done after its work. Where a
// member takes items without blocking (a buffered channel that is never empty), a stretch holds
// several: one between two pulls longer than 2x the median stretch (of those between two pulls) is
// taken as round(length / median) items of equal work and sends, at most kMaxStretchItems (64). The
// running time before a member's first pull (its prologue) and after its last (its epilogue) is one
// item when it lies between half and twice the median, else the member's own compute (with its
// wake-ups as its own sends), never split into shared items. When every member exited, a member's
// last wake-up before it exits, of a goroutine waiting in a WaitGroup's Wait, is its end (the
// WaitGroup's Done), not an item's send.
//
// Refused besides (the members stay pinned): a pool with more than 1,000,000 items; one whose end
// is waited more than once, whose end came before the feeders' last position, or with a member
// started after its first item was handed out (goroutines per request or batch); and of two pools in
// a chain (one's feeders or send targets are the other's members) the one with less work.
//
// Positions. Each pull names a point of a feeder's run: a forward pull the feeder's send that
// readied the member, a backward pull the end of the feeder's wait. Items are sent in the order
// they were taken; each goes at the last position at or before the time it was taken (the first
// position for those taken earlier).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "traces/timeline.h"

namespace gmp::trace {

struct PoolItem {
  int64_t t = 0;                     // when it was taken (the pull that began its stretch)
  int64_t member = -1;               // who took it in the trace
  int64_t ns = 0;                    // its work
  std::map<int64_t, int64_t> sends;  // wake-ups of goroutines outside the pool made after its work: target -> count
  size_t position = 0;               // in Pool::positions
};

// A point of a feeder's run where items are handed out.
struct FeedPosition {
  int64_t feeder = -1;
  int64_t t = 0;
  size_t wake = SIZE_MAX;      // forward: the feeder's wake-up of the member (index in Timeline::wakes)
  size_t interval = SIZE_MAX;  // backward: the feeder's wait that the member ended (its interval index)
};

struct PoolMember {
  int64_t g = -1;
  int64_t prologue_ns = 0, epilogue_ns = 0;  // running time before its first item and after its last
  bool exited = false;
  uint64_t items = 0;
  // Wake-ups of goroutines outside the pool made in its prologue and epilogue when they are its
  // own (not items): (the work before it in that stretch, target), in order.
  std::vector<std::pair<int64_t, int64_t>> prologue_sends, epilogue_sends;
};

struct Pool {
  std::string start_fn;
  std::string site;                       // the receive site, or the wait reason for a trace without stacks
  std::vector<PoolMember> members;        // by goid
  std::vector<int64_t> feeders;           // by goid
  std::vector<FeedPosition> positions;    // in time order
  std::vector<PoolItem> items;            // in the order taken
  int64_t median_ns = 0;                  // of the stretches between two pulls
  uint64_t stretches = 0;                 // stretches taken as one item or more
  uint64_t merged = 0, merged_items = 0;  // stretches taken as several items, and how many items they became
  uint64_t backpressure = 0;              // members' waits in a send dropped as back-pressure
  bool all_exited = false;                // every member exited: the replay waits for its end
  // Wake-ups the shared replay leaves out (index in Timeline::wakes): feeders' and others' readying
  // of members, and the members' ends.
  std::set<size_t> pull_wakes, dropped_wakes, end_wakes;
  // Waits of goroutines outside the pool that a member's end ended ((g, interval)): the replay
  // waits for all the pool's workers there.
  std::set<std::pair<int64_t, size_t>> end_waits;
  std::set<std::pair<int64_t, size_t>> dropped_waits;  // members' back-pressure waits (g, interval)
  size_t line = 0;                                     // its line in PoolAnalysis::lines
  int64_t work_ns() const;                             // items, prologues and epilogues
};

struct PoolAnalysis {
  std::vector<Pool> pools;
  std::vector<std::string> lines;  // one per pool and per candidate refused, with the reason
};

// The pools among `user` (the program's goroutines of `process`); `main` is never a member.
PoolAnalysis find_pools(const Timeline& tl, uint32_t process, const std::set<int64_t>& user, int64_t main);

}  // namespace gmp::trace
