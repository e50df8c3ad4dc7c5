#include "traces/derive_scenario.h"

#include "traces/replay_pool.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <utility>
#include <set>
#include <vector>

#include "sim/scenario/limits.h"
#include "traces/replay_clean.h"

namespace gmp::trace {

bool runtime_wait_reason(const std::string& label) {
  // Go's wait reasons (the simulator's traces) and the block reasons of Go's execution traces
  // ("system goroutine wait", "GC background sweeper wait"). A program's goroutine waits for the
  // collector too (an assist's "GC assist wait", runtime.GC's "wait for GC cycle"): not listed.
  static const char* const kRuntime[] = {
      "force gc (idle)",        "GC sweep wait",          "GC scavenge wait",           "GOMAXPROCS updater (idle)",
      "finalizer wait",         "GC worker (idle)",       "trace reader (blocked)",     "cleanup wait",
      "timer goroutine (idle)", "system goroutine wait", "GC background sweeper wait",
  };
  for (const char* r : kRuntime) {
    if (label == r) return true;
  }
  return false;
}

namespace {

struct Op {
  enum Kind {
    Compute,
    Go,
    Send,
    Recv,
    Sleep,
    Syscall,
    Gosched,
    Add,
    Done,
    Wait,
    Alloc,
    Release,
    // Shared mode (replay_pool.h): an item sent on pool `target`'s channel (ns: its value); the
    // channel's close; a member's loop over it; the pool's WaitGroups (ns: 0 its end, 1 its feeders;
    // Add: aux the count); starting the pool's closer.
    Item,
    Close,
    PoolRange,
    PoolAdd,
    PoolDone,
    PoolWait,
    GoCloser
  } kind;
  int64_t ns = 0;       // Alloc, Release: bytes
  int64_t target = -1;  // Go: the goroutine started; Send, Recv: whose wake channel (-1: "never");
                        // Alloc: 1 to retain it
  int64_t aux = 0;      // PoolAdd: the count
};

// What the heap counter says a goroutine did at one point of its run: `release` bytes of the live
// heap became garbage, then it allocated `bytes`, of which `retain` stay reachable.
struct HeapOp {
  int64_t t = 0;
  int64_t bytes = 0, retain = 0, release = 0;
};

class Deriver {
 public:
  Deriver(const Timeline& tl, const DeriveOptions& opt, uint32_t process) : tl_(tl), opt_(opt), proc_(process) {}

  DerivedScenario run(const std::string& source) {
    classify();
    index_wakes();
    derive_heap();
    if (opt_.mode == ReplayMode::Shared) shared_setup();
    for (int64_t g : user_) {
      if (member_pool_.count(g) != 0) {
        derive_member(g);
      } else {
        derive(g);
      }
    }
    for (auto& [g, ops] : ops_) take_overhead(ops);
    return format(source);
  }

 private:
  bool user(int64_t g) const { return g >= 0 && user_.count(g) != 0; }

  void classify() {
    for (const auto& [key, life] : tl_.gs) {
      const int64_t id = key.g;  // one process (derive_scenario refuses several)
      if (key.process != proc_) continue;
      if (tracer_goroutine(life)) {  // the tracer's: left out, counted (replay_clean.h)
        tracer_.insert(id);
        continue;
      }
      (runtime_goroutine(tl_, key, life) ? runtime_ : user_).insert(id);
    }
    main_ = user_.count(1) != 0 ? 1 : (user_.empty() ? -1 : *user_.begin());
  }

  void index_wakes() {
    for (size_t w = 0; w < tl_.wakes.size(); w++) {
      const WakeEdge& x = tl_.wakes[w];
      if (user(x.g) && !x.create && runtime_.count(x.by) != 0) by_runtime_.insert({x.g, x.interval});
      if (!user(x.g) || !user(x.by) || x.by_interval == SIZE_MAX) continue;
      made_[{x.by, x.by_interval}].push_back(w);
      if (x.create) {
        created_.insert(x.g);
      } else {
        woken_by_[{x.g, x.interval}] = x.by;
        sends_[x.g]++;
      }
    }
  }

  // ---- The heap (traces/derive_scenario.h says what and why).

  // The program's goroutine that made the heap counter rise at sample s: the G it names, else the
  // one running on its M then, else main.
  int64_t allocator(const HeapSample& s) {
    if (user(s.g)) return s.g;
    if (s.m >= 0) {
      if (running_on_.empty()) {
        for (int64_t g : user_) {
          for (const Interval& iv : tl_.gs.at(GKey{proc_, g}).intervals) {
            if (iv.state == GState::Running && iv.m >= 0) running_on_[iv.m].push_back({iv.t0, iv.t1, g});
          }
        }
        for (auto& [m, v] : running_on_) std::sort(v.begin(), v.end());
      }
      if (auto it = running_on_.find(s.m); it != running_on_.end()) {
        const auto& v = it->second;
        auto at = std::upper_bound(v.begin(), v.end(), std::array<int64_t, 3>{s.t, INT64_MAX, INT64_MAX});
        if (at != v.begin() && (*std::prev(at))[1] >= s.t) return (*std::prev(at))[2];
      }
    }
    return main_;
  }

  // Where in g's life a heap operation at t goes: the running interval it falls in, else the next
  // one (at its start), else the last one (at its end); {SIZE_MAX, t} if g never ran.
  std::pair<size_t, int64_t> place(int64_t g, int64_t t) const {
    const std::vector<Interval>& iv = tl_.gs.at(GKey{proc_, g}).intervals;
    size_t i = 0;
    while (i < iv.size() && iv[i].t1 < t) i++;  // intervals are contiguous and in time order
    if (i < iv.size() && iv[i].state == GState::Running && iv[i].t0 <= t) return {i, t};
    for (size_t j = i; j < iv.size(); j++) {
      if (iv[j].state == GState::Running) return {j, iv[j].t0};
    }
    for (size_t j = std::min(i, iv.size()); j-- > 0;) {
      if (iv[j].state == GState::Running) return {j, iv[j].t1};
    }
    return {SIZE_MAX, t};
  }

  // Allocation from the heap counter's rises, the live heap from its value at each cycle's end.
  void derive_heap() {
    const std::vector<HeapSample>& h = tl_.heap;
    if (h.empty() || main_ < 0) return;
    // A heap counter no machine has: refused, so that the sums and differences below stay far
    // from int64's end.
    for (const HeapSample& x : h) {
      if (x.bytes < 0 || x.bytes > kMaxHeapBytes) {
        throw DeriveError("the trace's heap counter reads " + std::to_string(x.bytes) + " bytes at " +
                          std::to_string(x.t) + " ns: a replay takes 0 to " + std::to_string(kMaxHeapBytes));
      }
    }
    struct Entry {
      int64_t g;
      HeapOp op;
    };
    std::vector<Entry> entries;
    // The heap the program had when the trace began: main allocates it first.
    if (h[0].bytes > 0) entries.push_back({main_, HeapOp{tl_.t_begin, h[0].bytes, 0, 0}});
    for (size_t i = 1; i < h.size(); i++) {
      const int64_t d = h[i].bytes - h[i - 1].bytes;
      if (d > 0) entries.push_back({allocator(h[i]), HeapOp{h[i].t, d, 0, 0}});
    }
    // Cycle by cycle: the heap marked at its end (the counter's last value by then, which mark
    // termination sets to the marked heap) is what stays reachable. More than before: the cycle's
    // first allocations are retained until it is reached; less: the difference is released
    // before its first allocation.
    int64_t live = 0, carried = 0;
    size_t e = 0;
    for (const int64_t end : tl_.gc_ends) {
      auto last = std::upper_bound(h.begin(), h.end(), end, [](int64_t t, const HeapSample& s) { return t < s.t; });
      const size_t first = e;
      while (e < entries.size() && entries[e].op.t <= end) e++;
      if (last == h.begin()) continue;
      const int64_t marked = std::prev(last)->bytes;
      if (carried > 0 && first < e) entries[first].op.release += std::exchange(carried, 0);
      if (marked > live) {
        for (size_t j = first; j < e && live < marked; j++) {
          const int64_t r = std::min(marked - live, entries[j].op.bytes);
          entries[j].op.retain = r;
          live += r;
        }
      } else if (marked < live) {
        if (first < e) {
          entries[first].op.release += live - marked;
        } else {
          carried += live - marked;
        }
        live = marked;
      }
    }
    if (carried > 0 && e < entries.size()) entries[e].op.release += std::exchange(carried, 0);
    if (carried > 0) end_release_ = carried;  // main releases it last
    for (const Entry& x : entries) {
      heap_.alloc_bytes += static_cast<uint64_t>(x.op.bytes);
      heap_.retained += x.op.retain - x.op.release;
      const auto [i, t] = place(x.g, x.op.t);
      HeapOp op = x.op;
      op.t = t;
      if (i == SIZE_MAX) {
        unplaced_.push_back(op);
      } else {
        heap_at_[{x.g, i}].push_back(op);
      }
    }
    heap_.retained -= end_release_;
  }

  void alloc(std::vector<Op>& ops, int64_t bytes, bool retain) {
    if (bytes <= 0) return;
    const int64_t r = retain ? 1 : 0;
    if (!ops.empty() && ops.back().kind == Op::Alloc && ops.back().target == r) {
      ops.back().ns = sat_add(ops.back().ns, bytes);
    } else {
      ops.push_back({Op::Alloc, bytes, r});
    }
  }

  void heap_op(std::vector<Op>& ops, const HeapOp& h) {
    if (h.release > 0) ops.push_back({Op::Release, h.release, -1});
    alloc(ops, h.retain, true);
    alloc(ops, h.bytes - h.retain, false);
  }

  void compute(std::vector<Op>& ops, int64_t ns) {
    if (ns <= 0) return;
    if (!ops.empty() && ops.back().kind == Op::Compute) {
      ops.back().ns = sat_add(ops.back().ns, ns);
    } else {
      ops.push_back({Op::Compute, ns, -1});
    }
  }

  void derive(int64_t g) {
    const GLife& life = tl_.gs.at(GKey{proc_, g});
    std::vector<Op>& ops = ops_[g];
    if (g != main_ && created_.count(g) == 0) {
      // Started by main at the beginning; it appeared in the trace at its first interval's start.
      orphans_.push_back(g);
      if (!life.intervals.empty() && life.intervals.front().t0 > tl_.t_begin) {
        ops.push_back({Op::Sleep, life.intervals.front().t0 - tl_.t_begin, -1});
      }
    }
    for (size_t i = 0; i < life.intervals.size(); i++) {
      const Interval& iv = life.intervals[i];
      const int64_t d = iv.t1 - iv.t0;
      const bool last = i + 1 == life.intervals.size();
      switch (iv.state) {
        case GState::Running: {
          // Its wake-ups of others and its heap operations, in time order (wake-ups first at a tie).
          std::vector<std::pair<int64_t, size_t>> marks;  // (time, index: wakes, then heap ops)
          const std::vector<size_t>* wakes = nullptr;
          const std::vector<HeapOp>* heap = nullptr;
          if (auto it = made_.find({g, i}); it != made_.end()) wakes = &it->second;
          if (auto it = heap_at_.find({g, i}); it != heap_at_.end()) heap = &it->second;
          const size_t nw = wakes != nullptr ? wakes->size() : 0;
          for (size_t k = 0; k < nw; k++) marks.push_back({tl_.wakes[(*wakes)[k]].t, k});
          for (size_t k = 0; heap != nullptr && k < heap->size(); k++) marks.push_back({(*heap)[k].t, nw + k});
          std::stable_sort(marks.begin(), marks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
          int64_t at = iv.t0;
          // Its work: the running time less what the OS held it off its core (replay_clean.h),
          // spread evenly over the interval.
          const auto work = [&](int64_t ns) {
            return iv.off_cpu == 0 || d <= 0 ? ns
                                             : static_cast<int64_t>(static_cast<__int128>(ns) * (d - iv.off_cpu) / d);
          };
          for (const auto& [t, k] : marks) {
            compute(ops, work(std::clamp(t, at, iv.t1) - at));
            at = std::clamp(t, at, iv.t1);
            if (k < nw) {
              const size_t w = (*wakes)[k];
              const WakeEdge& x = tl_.wakes[w];
              if (auto p = fwd_pos_.find(w); p != fwd_pos_.end()) {
                feed(ops, g, p->second);
              } else if (dropped_wakes_.count(w) == 0) {
                ops.push_back({x.create ? Op::Go : Op::Send, 0, x.g});
              }
            } else {
              heap_op(ops, (*heap)[k - nw]);
            }
          }
          compute(ops, work(iv.t1 - at));
          break;
        }
        case GState::Runnable:
          if (iv.reason == REASON_GOSCHED && i > 0) ops.push_back({Op::Gosched, 0, -1});
          break;
        case GState::Blocked:
          if (auto p = back_pos_.find({g, i}); p != back_pos_.end()) {
            feed(ops, g, p->second);  // it waited to hand an item to the pool: the channel decides now
          } else if (auto e = end_waits_.find({g, i}); e != end_waits_.end()) {
            ops.push_back({Op::PoolWait, 0, static_cast<int64_t>(e->second)});
          } else if (auto it = woken_by_.find({g, i + 1}); !last && it != woken_by_.end()) {
            ops.push_back({Op::Recv, 0, g});
          } else if (!last && by_runtime_.count({g, i + 1}) != 0) {
            // The runtime's own goroutines ended it (main waiting for them to start, say): the
            // simulated runtime does that again by itself.
          } else if (!last || !iv.open_end) {
            ops.push_back({Op::Sleep, timer_wait(d), -1});
          } else if (g != main_) {
            ops.push_back({Op::Recv, 0, -1});  // blocked for good
            never_ = true;
          }
          break;
        case GState::Syscall:
          ops.push_back({Op::Syscall, d, -1});
          break;
      }
    }
    // Whoever exited before the program ended in the trace does so in the replay too: main waits
    // for them before it returns (the trace cannot say what it waited on, only that they ended).
    if (g != main_ && life.exited) {
      ops.push_back({Op::Done, 0, -1});
      exited_++;
    }
  }

  // ---- Shared mode: pools (traces/replay_pool.h) pull their items from one channel each.

  struct PoolPlan {
    Pool pool;
    std::vector<int64_t> targets;           // goroutines outside the pool its items wake, by goid
    std::vector<int64_t> base;              // per target: the largest count in one item, plus 1
    int64_t scale = 1;                      // the product of the bases: value = ns * scale + counts
    std::vector<std::vector<size_t>> at;    // per position: its items
    std::vector<std::vector<HeapOp>> heap;  // per position: the members' heap operations made there
    std::map<int64_t, size_t> last;         // per feeder: its last position
    size_t last_pos = 0;                    // the last position with items, or the last of all
  };

  void shared_setup() {
    PoolAnalysis pa = find_pools(tl_, proc_, user_, main_);
    for (size_t k = 0; k < pa.pools.size(); k++) {
      PoolPlan plan;
      plan.pool = std::move(pa.pools[k]);
      const Pool& pool = plan.pool;
      // The counts of each target's wake-ups an item carries, mixed radix under its work.
      std::map<int64_t, int64_t> most;
      int64_t longest = 1;
      for (const PoolItem& it : pool.items) {
        longest = std::max(longest, it.ns);
        for (const auto& [h, c] : it.sends) most[h] = std::max(most[h], c);
      }
      bool fits = true;
      for (const auto& [h, c] : most) {
        plan.targets.push_back(h);
        plan.base.push_back(c + 1);
        if (plan.scale > (int64_t{1} << 40) / (c + 1)) fits = false;
        plan.scale *= fits ? c + 1 : 1;
      }
      if (!fits || longest > (int64_t{1} << 62) / plan.scale) {
        pa.lines[pool.line] = std::to_string(pool.members.size()) + " goroutines of " + pool.start_fn +
                              ": not pooled, their items wake too many goroutines to carry as values";
        continue;
      }
      const int64_t id = static_cast<int64_t>(plans_.size()) + 1;
      plan.at.resize(pool.positions.size());
      plan.heap.resize(pool.positions.size());
      for (size_t i = 0; i < pool.items.size(); i++) plan.at[pool.items[i].position].push_back(i);
      for (size_t p = 0; p < pool.positions.size(); p++) {
        plan.last[pool.positions[p].feeder] = p;
        if (!plan.at[p].empty() || p + 1 == pool.positions.size()) plan.last_pos = p;
      }
      for (const PoolMember& m : pool.members) member_pool_[m.g] = static_cast<size_t>(id);
      for (size_t p = 0; p < pool.positions.size(); p++) {
        const FeedPosition& fp = pool.positions[p];
        if (fp.wake != SIZE_MAX) fwd_pos_[fp.wake] = {static_cast<size_t>(id), p};
        if (fp.interval != SIZE_MAX) back_pos_[{fp.feeder, fp.interval}] = {static_cast<size_t>(id), p};
      }
      dropped_wakes_.insert(pool.dropped_wakes.begin(), pool.dropped_wakes.end());
      if (pool.all_exited) dropped_wakes_.insert(pool.end_wakes.begin(), pool.end_wakes.end());
      dropped_wakes_.insert(pool.pull_wakes.begin(), pool.pull_wakes.end());
      if (pool.all_exited) {
        for (const auto& w : pool.end_waits) end_waits_[w] = static_cast<size_t>(id);
      }
      // The members' heap operations are made by the feeder as it hands out the items of that time.
      for (const PoolMember& m : pool.members) {
        sends_.erase(m.g);
        for (auto it = heap_at_.lower_bound({m.g, 0}); it != heap_at_.end() && it->first.first == m.g;) {
          for (const HeapOp& h : it->second) {
            size_t p = 0;
            while (p + 1 < pool.positions.size() && pool.positions[p + 1].t <= h.t) p++;
            plan.heap[p].push_back(h);
          }
          it = heap_at_.erase(it);
        }
      }
      sync_ops_ += pool.items.size();  // each item's receive, and its sends
      for (const PoolItem& it : pool.items) {
        for (const auto& [h, c] : it.sends) sync_ops_ += static_cast<uint64_t>(c);
      }
      plans_.push_back(std::move(plan));
    }
    pools_ = std::move(pa.lines);
  }

  // What feeder g does at position pos of a pool: the members' heap operations of that time, then
  // each item's value, then the close (or its part of it) after its last position.
  void feed(std::vector<Op>& ops, int64_t g, std::pair<size_t, size_t> at) {
    PoolPlan& plan = plans_[at.first - 1];
    const auto id = static_cast<int64_t>(at.first);
    for (const HeapOp& h : plan.heap[at.second]) heap_op(ops, h);
    for (size_t i : plan.at[at.second]) ops.push_back({Op::Item, value(plan, plan.pool.items[i]), id});
    if (plan.pool.feeders.size() == 1 && at.second == plan.last_pos) ops.push_back({Op::Close, 0, id});
    if (plan.pool.feeders.size() > 1 && plan.last.at(g) == at.second) ops.push_back({Op::PoolDone, 1, id});
  }

  // An item's value: its work, less the fitted cost of its receive and its sends, then the counts.
  int64_t value(const PoolPlan& plan, const PoolItem& it) const {
    int64_t n = 1;
    for (const auto& [h, c] : it.sends) n += c;
    int64_t v = std::max<int64_t>(1, it.ns - opt_.op_overhead_ns * n);
    for (size_t j = 0; j < plan.targets.size(); j++) {
      auto c = it.sends.find(plan.targets[j]);
      v = v * plan.base[j] + (c == it.sends.end() ? 0 : c->second);
    }
    return v;
  }

  void derive_member(int64_t g) {
    const GLife& life = tl_.gs.at(GKey{proc_, g});
    const size_t id = member_pool_.at(g);
    const Pool& pool = plans_[id - 1].pool;
    std::vector<Op>& ops = ops_[g];
    if (created_.count(g) == 0) {
      orphans_.push_back(g);
      if (!life.intervals.empty() && life.intervals.front().t0 > tl_.t_begin) {
        ops.push_back({Op::Sleep, life.intervals.front().t0 - tl_.t_begin, -1});
      }
    }
    const auto m =
        std::find_if(pool.members.begin(), pool.members.end(), [&](const PoolMember& x) { return x.g == g; });
    // Its prologue and epilogue are its own, with the wake-ups made in them.
    const auto own = [&](int64_t ns, const std::vector<std::pair<int64_t, int64_t>>& sends) {
      int64_t done = 0;
      for (const auto& [before, h] : sends) {
        compute(ops, before - done);
        done = std::max(done, before);
        ops.push_back({Op::Send, 0, h});
      }
      compute(ops, ns - done);
    };
    own(m->prologue_ns, m->prologue_sends);
    ops.push_back({Op::PoolRange, 0, static_cast<int64_t>(id)});
    own(m->epilogue_ns, m->epilogue_sends);
    if (pool.all_exited && !pool.end_waits.empty()) ops.push_back({Op::PoolDone, 0, static_cast<int64_t>(id)});
    if (life.exited) {
      ops.push_back({Op::Done, 0, -1});
      exited_++;
    }
  }

  // Takes the fitted cost of each operation out of the compute next to it: the one before it, or
  // for a receive the one after it (the rest of the receive runs once the goroutine is woken).
  void take_overhead(std::vector<Op>& ops) {
    for (size_t i = 0; i < ops.size(); i++) {
      const Op::Kind k = ops[i].kind;
      if (k != Op::Go && k != Op::Send && k != Op::Recv && k != Op::Syscall && k != Op::Sleep && k != Op::Gosched &&
          k != Op::Item) {
        continue;
      }
      sync_ops_++;
      if (opt_.op_overhead_ns <= 0) continue;
      const size_t at = k == Op::Recv ? i + 1 : i - 1;
      if ((k == Op::Recv || i > 0) && at < ops.size() && ops[at].kind == Op::Compute) {
        ops[at].ns = std::max<int64_t>(1, ops[at].ns - opt_.op_overhead_ns);
      }
    }
  }

  // A timer wait of d ns, as the replay should ask for it. An idle M waits for the next timer in
  // epoll_wait, whose timeout is whole milliseconds (netpoll rounds a remainder up to 1 ms), so a
  // wait that ended just past a whole millisecond most likely asked for at most that millisecond.
  // Replaying it as d would round it up once more, a millisecond late; it is replayed as the
  // whole milliseconds instead. kTimerRoundingSlackNs is how far past counts as "just": the wake-up
  // of the sleeping M and the goroutine's start (tens of us), not a sleep that asked for more.
  static int64_t timer_wait(int64_t d) {
    constexpr int64_t kMs = 1000000, kTimerRoundingSlackNs = 100000;
    return d >= kMs && d % kMs < kTimerRoundingSlackNs ? d - d % kMs : d;
  }

  // A pool member's loop: each item's work, then the wake-ups it carries (value = ns * scale +
  // the counts, mixed radix in plan.targets' order).
  static std::string range_loop(const PoolPlan& plan, int64_t id) {
    const std::string s = std::to_string(plan.scale);
    std::string t = "  op {\n    loop {\n      range: \"pool" + std::to_string(id) + "\"\n      var: \"v\"\n";
    t += "      op { compute { duration_expr: \"" + (plan.scale == 1 ? std::string("v") : "v / " + s) + "\" } }\n";
    int64_t below = plan.scale;
    for (size_t j = 0; j < plan.targets.size(); j++) {
      below /= plan.base[j];
      const std::string count =
          (below == 1 ? std::string("v") : "v / " + std::to_string(below)) + " % " + std::to_string(plan.base[j]);
      t += "      op { loop { count_expr: \"" + count + "\" op { send { chan: \"wake_g" +
           std::to_string(plan.targets[j]) + "\" } } } }\n";
    }
    return t + "    }\n  }\n";
  }

  // A duration the scenario language can hold (sim/scenario/limits.h: at most about 11.6 days);
  // past it the replay cannot be written, and DeriveError says where.
  int64_t bounded_ns(int64_t ns, int64_t g, const char* what) const {
    if (ns > scenario::kMaxDurationNs) {
      throw DeriveError(fname(g, main_) + " has a " + what + " of " + std::to_string(ns) +
                        " ns: a replay holds at most " + std::to_string(scenario::kMaxDurationNs) + " ns (about 11.6 days)");
    }
    return ns;
  }
  // Bytes of one allocation or release of the replay, as much as a heap counter may read (an
  // alloc op holds at most 1 TiB, so this is at most 1,024 ops).
  int64_t bounded_bytes(int64_t bytes, int64_t g) const {
    if (bytes > kMaxReplayBytes) {
      throw DeriveError(fname(g, main_) + " allocates or frees " + std::to_string(bytes) +
                        " bytes at once: a replay holds at most " + std::to_string(kMaxReplayBytes));
    }
    return bytes;
  }
  static constexpr int64_t kMaxHeapBytes = int64_t{1} << 50;  // 1 PiB
  static constexpr int64_t kMaxReplayBytes = kMaxHeapBytes;
  // The alloc ops for `bytes` allocated at once: a scenario's object is at most 1 GiB and an alloc
  // at most 1 TiB (sim/scenario/limits.h), so a larger amount is written as whole GiB objects, as
  // many alloc ops as needed, and one op for the rest.
  std::string alloc_text(int64_t bytes, bool retain, int64_t g) const {
    const std::string tail = std::string(retain ? " retain: true" : "") + " } }\n";
    std::string t;
    int64_t left = bounded_bytes(bytes, g);
    const int64_t per_op = scenario::kMaxAllocBytes / scenario::kMaxObjectBytes;  // whole objects in one op
    while (left >= scenario::kMaxObjectBytes) {
      const int64_t n = std::min(left / scenario::kMaxObjectBytes, per_op);
      t += "  op { alloc { bytes: " + std::to_string(scenario::kMaxObjectBytes) + " count: " + std::to_string(n) + tail;
      left -= n * scenario::kMaxObjectBytes;
    }
    if (left > 0) t += "  op { alloc { bytes: " + std::to_string(left) + " count: 1" + tail;
    return t;
  }

  // Text from the trace (its producer, a function's name) as it may stand in a comment line: a
  // byte that is not printable ASCII (a newline, a control character, bad UTF-8) becomes '?'.
  static std::string comment_text(std::string s) {
    for (char& c : s) {
      if (c < 0x20 || c > 0x7e) c = '?';
    }
    return s;
  }

  static std::string fname(int64_t g, int64_t main) { return g == main ? "main" : "g" + std::to_string(g); }

  DerivedScenario format(const std::string& source) {
    DerivedScenario out;
    out.span = tl_.t_end - tl_.t_begin;
    out.procs = tl_.header.num_ps();
    out.goroutines = user_.size();
    out.runtime_gs = runtime_.size();
    out.sync_ops = sync_ops_;
    out.alloc_bytes = heap_.alloc_bytes;
    out.retained_bytes = heap_.retained;
    out.trace_gc_cycles = tl_.gc_ends.size();
    out.pools = pools_;
    for (int64_t g : user_) {
      for (const Interval& iv : tl_.gs.at(GKey{proc_, g}).intervals) {
        if (iv.state == GState::Running) out.running_ns += iv.t1 - iv.t0 - iv.off_cpu;
      }
    }
    out.tracer_gs = tracer_.size();
    for (int64_t g : tracer_) {
      for (const Interval& iv : tl_.gs.at(GKey{proc_, g}).intervals) {
        if (iv.state == GState::Running) out.tracer_running_ns += iv.t1 - iv.t0;
      }
    }
    std::string& t = out.text;
    t += "# Derived by gmpsim replay from " + comment_text(source) + " (" + comment_text(tl_.header.producer()) + ", GOMAXPROCS " +
         std::to_string(out.procs) + ", " + std::to_string(out.span) + " ns, " + std::to_string(out.goroutines) +
         " goroutines of the program; " + std::to_string(out.runtime_gs) + " of the runtime's and " +
         std::to_string(out.tracer_gs) + " of the tracer's left out).\n";
    t += "# Each goroutine's running time is compute; its waits for another goroutine are receives on its\n"
         "# wake channel, on which the waker sends; other waits are sleeps, system calls syscalls.\n"
         "# traces/derive_scenario.h says how, and what a replay does not reproduce.\n";
    if (!plans_.empty()) {
      t += "# Shared work (traces/replay_pool.h): a pool's goroutines take their items from one channel, each\n"
           "# item's work in ns as its value (times the scale, plus the wake-ups it carries), sent by its feeders.\n";
      for (const PoolPlan& plan : plans_) t += "#   " + comment_text(pools_[plan.pool.line]) + "\n";
    }
    if (!tl_.heap.empty()) {
      t += "# Allocation from the trace's heap counter: " + std::to_string(out.alloc_bytes) +
           " bytes; the live heap kept as each GC cycle marked it, " + std::to_string(out.retained_bytes) +
           " bytes at the end (" + std::to_string(out.trace_gc_cycles) + " cycles in the trace).\n";
    }
    t += "\n";
    for (const auto& [g, n] : sends_) {
      t += "chan { name: \"wake_g" + std::to_string(g) + "\" cap: " + std::to_string(std::max<uint64_t>(n, 1)) + " }\n";
    }
    if (never_) t += "chan { name: \"never\" }  # nobody sends: a wait that never ended\n";
    for (size_t k = 0; k < plans_.size(); k++) {
      const Pool& pool = plans_[k].pool;
      const std::string id = std::to_string(k + 1);
      t += "chan { name: \"pool" + id + "\" cap: " + std::to_string(std::max<size_t>(pool.items.size(), 1)) +
           " }  # the items of " + std::to_string(pool.members.size()) + " goroutines of " + pool.start_fn + "\n";
      if (pool.all_exited && !pool.end_waits.empty()) {
        t += "waitgroup { name: \"pool" + id + "_end\" }  # its workers' ends\n";
      }
      if (pool.feeders.size() > 1) {
        t += "waitgroup { name: \"pool" + id + "_fed\" }  # its feeders' last items: then pool" + id +
             "_closer closes\n";
      }
    }
    if (exited_ != 0) t += "waitgroup { name: \"exited\" }  # the goroutines that ended before the program did\n";
    if (main_ < 0) {
      t += "\nfunc { name: \"main\" }\n";
      return out;
    }
    std::vector<Op>& main_ops = ops_[main_];
    std::vector<Op> start;
    for (int64_t g : orphans_) start.push_back({Op::Go, 0, g});
    for (const HeapOp& h : unplaced_) heap_op(start, h);  // heap operations of goroutines that never ran
    for (size_t k = 0; k < plans_.size(); k++) {
      const Pool& pool = plans_[k].pool;
      const auto id = static_cast<int64_t>(k + 1);
      if (pool.all_exited && !pool.end_waits.empty())
        start.push_back({Op::PoolAdd, 0, id, static_cast<int64_t>(pool.members.size())});
      if (pool.feeders.size() > 1) {
        start.push_back({Op::PoolAdd, 1, id, static_cast<int64_t>(pool.feeders.size())});
        start.push_back({Op::GoCloser, 0, id});
      }
    }
    main_ops.insert(main_ops.begin(), start.begin(), start.end());
    if (end_release_ > 0) main_ops.push_back({Op::Release, end_release_, -1});
    if (exited_ != 0) {
      main_ops.insert(main_ops.begin(), {Op::Add, static_cast<int64_t>(exited_), -1});
      main_ops.push_back({Op::Wait, 0, -1});
    }
    // main first, then the others by goid.
    std::vector<int64_t> order{main_};
    for (int64_t g : user_) {
      if (g != main_) order.push_back(g);
    }
    for (int64_t g : order) {
      t += "\nfunc {\n  name: \"" + fname(g, main_) + "\"\n";
      for (const Op& op : ops_[g]) {
        out.ops++;
        switch (op.kind) {
          case Op::Compute:
            t += "  op { compute { ns: " + std::to_string(bounded_ns(op.ns, g, "running time")) + " } }\n";
            break;
          case Op::Go:
            t += "  op { go { func: \"" + fname(op.target, main_) + "\" } }\n";
            break;
          case Op::Send:
            t += "  op { send { chan: \"wake_g" + std::to_string(op.target) + "\" } }\n";
            break;
          case Op::Recv:
            t += op.target < 0 ? std::string("  op { recv { chan: \"never\" } }\n")
                               : "  op { recv { chan: \"wake_g" + std::to_string(op.target) + "\" } }\n";
            break;
          case Op::Sleep:
            t += "  op { sleep { ns: " + std::to_string(bounded_ns(op.ns, g, "wait")) + " } }\n";
            break;
          case Op::Syscall:
            t += "  op { syscall { ns: " + std::to_string(bounded_ns(op.ns, g, "system call")) + (op.ns < kOnCpuSyscallNs ? " on_cpu: true" : "") +
                 " } }\n";
            break;
          case Op::Gosched:
            t += "  op { gosched {} }\n";
            break;
          case Op::Add:
            t += "  op { add { wg: \"exited\" n: " + std::to_string(op.ns) + " } }\n";
            break;
          case Op::Done:
            t += "  op { done { wg: \"exited\" } }\n";
            break;
          case Op::Wait:
            t += "  op { wait { wg: \"exited\" } }\n";
            break;
          case Op::Alloc:
            out.alloc_ops++;
            t += alloc_text(op.ns, op.target == 1, g);
            break;
          case Op::Release:
            for (int64_t left = bounded_bytes(op.ns, g); left > 0; left -= std::min(left, scenario::kMaxAllocBytes)) {
              t += "  op { release { bytes: " + std::to_string(std::min(left, scenario::kMaxAllocBytes)) + " } }\n";
            }
            break;
          case Op::Item:
            t += "  op { send { chan: \"pool" + std::to_string(op.target) + "\" value: \"" + std::to_string(op.ns) +
                 "\" } }\n";
            break;
          case Op::Close:
            t += "  op { close { chan: \"pool" + std::to_string(op.target) + "\" } }\n";
            break;
          case Op::PoolRange:
            t += range_loop(plans_[static_cast<size_t>(op.target) - 1], op.target);
            break;
          case Op::PoolAdd:
            t += "  op { add { wg: \"pool" + std::to_string(op.target) + (op.ns == 0 ? "_end" : "_fed") +
                 "\" n: " + std::to_string(op.aux) + " } }\n";
            break;
          case Op::PoolDone:
            t += "  op { done { wg: \"pool" + std::to_string(op.target) + (op.ns == 0 ? "_end" : "_fed") + "\" } }\n";
            break;
          case Op::PoolWait:
            t += "  op { wait { wg: \"pool" + std::to_string(op.target) + "_end\" } }\n";
            break;
          case Op::GoCloser:
            t += "  op { go { func: \"pool" + std::to_string(op.target) + "_closer\" } }\n";
            break;
        }
      }
      t += "}\n";
    }
    for (size_t k = 0; k < plans_.size(); k++) {
      const std::string id = std::to_string(k + 1);
      if (plans_[k].pool.feeders.size() < 2) continue;
      t += "\nfunc {\n  name: \"pool" + id + "_closer\"\n  op { wait { wg: \"pool" + id +
           "_fed\" } }\n  op { close { chan: \"pool" + id + "\" } }\n}\n";
      out.ops += 2;
    }
    return out;
  }

  const Timeline& tl_;
  const DeriveOptions opt_;
  uint32_t proc_;  // the process whose program it derives
  uint64_t sync_ops_ = 0;
  std::set<int64_t> user_, runtime_, created_, tracer_;
  int64_t main_ = -1;
  std::map<std::pair<int64_t, size_t>, std::vector<size_t>> made_;  // (g, interval) -> wakes it made
  std::map<std::pair<int64_t, size_t>, int64_t> woken_by_;          // (g, interval begun) -> waker
  std::set<std::pair<int64_t, size_t>> by_runtime_;                 // (g, interval begun): the runtime woke it
  std::map<int64_t, uint64_t> sends_;                               // wakee -> sends to its channel
  std::map<int64_t, std::vector<Op>> ops_;
  // Shared mode: the pools replayed, their members (-> pool id, from 1), the feeders' positions
  // (forward: by wake index; backward: by the feeder's wait) -> (pool id, position), the wake-ups
  // left out, the waits for a pool's end, the report lines.
  std::vector<PoolPlan> plans_;
  std::map<int64_t, size_t> member_pool_;
  std::map<size_t, std::pair<size_t, size_t>> fwd_pos_;
  std::map<std::pair<int64_t, size_t>, std::pair<size_t, size_t>> back_pos_;
  std::set<size_t> dropped_wakes_;
  std::map<std::pair<int64_t, size_t>, size_t> end_waits_;
  std::vector<std::string> pools_;
  std::vector<int64_t> orphans_;
  bool never_ = false;
  std::map<std::pair<int64_t, size_t>, std::vector<HeapOp>> heap_at_;  // (g, running interval) -> heap ops
  std::vector<HeapOp> unplaced_;  // of goroutines that never ran: main makes them first
  int64_t end_release_ = 0;       // releases with no later allocation to go before: main's last op
  struct {
    uint64_t alloc_bytes = 0;
    int64_t retained = 0;
  } heap_;
  std::map<int64_t, std::vector<std::array<int64_t, 3>>> running_on_;  // M -> (t0, t1, g) of program Gs
  uint64_t exited_ = 0;  // goroutines other than main that ended in the trace
};

}  // namespace

DerivedScenario derive_scenario(const Timeline& tl, const std::string& source, const DeriveOptions& opt) {
  const std::vector<Process> procs = tl.processes();
  if (procs.size() > 1) {
    std::string names;
    for (const Process& p : procs) names += (names.empty() ? "" : ", ") + (p.name().empty() ? "process " + std::to_string(p.id()) : p.name());
    throw DeriveError("the trace has " + std::to_string(procs.size()) + " processes (" + names +
                      "); replay derives one program, from a trace of one process");
  }
  return Deriver(tl, opt, procs.front().id()).run(source);
}

}  // namespace gmp::trace
