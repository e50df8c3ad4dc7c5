#include "traces/replay_pool.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

namespace gmp::trace {

int64_t Pool::work_ns() const {
  int64_t n = 0;
  for (const PoolItem& it : items) n += it.ns;
  for (const PoolMember& m : members) n += m.prologue_ns + m.epilogue_ns;
  return n;
}

namespace {

bool recv_wait(const Interval& iv) {
  return iv.wait == WAIT_REASON_CHAN_RECEIVE || iv.wait == WAIT_REASON_SELECT || iv.label == "chan receive" ||
         iv.label == "select";
}
bool send_wait(const Interval& iv) { return iv.wait == WAIT_REASON_CHAN_SEND || iv.label == "chan send"; }

// A wait in a WaitGroup's Wait: the simulator's wait reason, Go's name for it, or in a Go execution
// trace a semaphore wait ("sync", older Go "semacquire") that parked in WaitGroup's code or in
// sync.runtime_Semacquire, which of the sync package only WaitGroup.Wait calls (Mutex and RWMutex
// call their own variants).
bool waitgroup_wait(const Interval& iv) {
  if (iv.state != GState::Blocked) return false;
  if (iv.wait == WAIT_REASON_SYNC_WAITGROUP_WAIT || iv.label == "sync.WaitGroup.Wait") return true;
  const bool sema = iv.wait == WAIT_REASON_SEMACQUIRE || iv.label == "sync" || iv.label == "semacquire";
  return sema && (iv.site.find("WaitGroup") != std::string::npos || iv.site.rfind("sync.runtime_Semacquire ", 0) == 0);
}

std::string wait_name(const Interval& iv) {
  if (!iv.label.empty()) return iv.label;
  switch (iv.wait) {
    case WAIT_REASON_CHAN_RECEIVE:
      return "chan receive";
    case WAIT_REASON_CHAN_SEND:
      return "chan send";
    case WAIT_REASON_SELECT:
      return "select";
    default:
      return WaitReason_Name(iv.wait);
  }
}

// Where a wait is, as pools compare it: its site, else its wait reason.
std::string where(const Interval& iv) { return iv.site.empty() ? wait_name(iv) : iv.site; }

std::string ms(int64_t ns) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3f ms", static_cast<double>(ns) / 1e6);
  return b;
}

// A stretch of a member's running time: from a pull (or its start) to the next pull (or its end).
struct Stretch {
  int64_t t = 0;
  bool at_pull = false;
  int64_t work = 0;
  std::vector<std::pair<size_t, int64_t>> sends;  // (wake index, the stretch's work before it)
};

// The most items one stretch is split into, and the most items a pool may have (more: refused).
constexpr int64_t kMaxStretchItems = 64;
constexpr size_t kMaxPoolItems = 1000000;

class Finder {
 public:
  Finder(const Timeline& tl, uint32_t process, const std::set<int64_t>& user, int64_t main)
      : tl_(tl), proc_(process), user_(user), main_(main) {
    for (size_t w = 0; w < tl_.wakes.size(); w++) {
      const WakeEdge& x = tl_.wakes[w];
      if (x.process != proc_ || !user_.count(x.g)) continue;
      if (!x.create && x.by >= 0 && !user_.count(x.by)) by_runtime_.insert({x.g, x.interval});
      if (!user_.count(x.by) || x.by_interval == SIZE_MAX) continue;
      if (!x.create) woke_[{x.g, x.interval}] = w;
      if (x.create) created_at_.emplace(x.g, x.t);
      made_[{x.by, x.by_interval}].push_back(w);
    }
  }

  PoolAnalysis run() {
    std::map<std::string, std::vector<int64_t>> by_fn;
    for (int64_t g : user_) {
      if (g == main_) continue;
      const GLife& life = tl_.gs.at(GKey{proc_, g});
      if (!life.start_fn.empty()) by_fn[life.start_fn].push_back(g);
    }
    for (const auto& [fn, gs] : by_fn) {
      if (gs.size() >= 2) candidate(fn, gs);
    }
    unchain();
    return std::move(out_);
  }

 private:
  const GLife& life(int64_t g) const { return tl_.gs.at(GKey{proc_, g}); }

  std::string gname(int64_t g) const {
    const std::string& fn = life(g).start_fn;
    return "G" + std::to_string(g) + (fn.empty() ? std::string(g == main_ ? " (main)" : "") : " (" + fn + ")");
  }
  std::string feeder_key(int64_t g) const {
    const std::string& fn = life(g).start_fn;
    return fn.empty() ? "G" + std::to_string(g) : fn;
  }

  void refuse(const std::string& fn, size_t n, const std::string& why) {
    out_.lines.push_back(std::to_string(n) + " goroutines of " + fn + ": not pooled, " + why);
  }

  // The goroutines outside a pool that its members hand work or wake-ups to: its items' and its
  // members' own sends, and the waiters of its end.
  static std::set<int64_t> targets(const Pool& p) {
    std::set<int64_t> t;
    for (const PoolItem& it : p.items) {
      for (const auto& [h, c] : it.sends) t.insert(h);
    }
    for (const PoolMember& m : p.members) {
      for (const auto& [at, h] : m.prologue_sends) t.insert(h);
      for (const auto& [at, h] : m.epilogue_sends) t.insert(h);
    }
    for (const auto& [g, i] : p.end_waits) t.insert(g);
    return t;
  }

  // Whether pool a feeds, or sends to, a member of pool b.
  static bool touches(const Pool& a, const Pool& b) {
    std::set<int64_t> mb;
    for (const PoolMember& m : b.members) mb.insert(m.g);
    for (int64_t f : a.feeders) {
      if (mb.count(f)) return true;
    }
    for (int64_t h : targets(a)) {
      if (mb.count(h)) return true;
    }
    return false;
  }

  // Pools in a chain (one's members feed the other's, or its items wake them): a member replays
  // as a loop over its own pool's channel, so it can neither feed another pool nor be woken on its
  // own channel. The pools are kept by their work, largest first; one that touches a pool kept is
  // refused and stays pinned.
  void unchain() {
    std::vector<size_t> order(out_.pools.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return out_.pools[a].work_ns() > out_.pools[b].work_ns(); });
    std::vector<size_t> kept;
    std::vector<bool> keep(out_.pools.size(), true);
    for (size_t i : order) {
      const Pool& p = out_.pools[i];
      for (size_t k : kept) {
        const Pool& q = out_.pools[k];
        if (!touches(p, q) && !touches(q, p)) continue;
        out_.lines[p.line] = std::to_string(p.members.size()) + " goroutines of " + p.start_fn + ": not pooled, " +
                             (touches(p, q) ? "they feed or wake" : "they are fed or woken by") + " the pool of " +
                             q.start_fn + " (a chain of pools: the one with more work is pooled)";
        keep[i] = false;
        break;
      }
      if (keep[i]) kept.push_back(i);
    }
    std::vector<Pool> pools;
    for (size_t i = 0; i < out_.pools.size(); i++) {
      if (keep[i]) pools.push_back(std::move(out_.pools[i]));
    }
    out_.pools = std::move(pools);
  }

  // Work of a running interval between a and b, its off-CPU time taken out in proportion.
  static int64_t work(const Interval& iv, int64_t a, int64_t b) {
    const int64_t len = iv.t1 - iv.t0;
    if (len <= 0) return 0;
    auto off = [&](int64_t t) { return static_cast<int64_t>(static_cast<__int128>(iv.off_cpu) * (t - iv.t0) / len); };
    return (b - a) - (off(b) - off(a));
  }

  void candidate(const std::string& fn, const std::vector<int64_t>& gs) {
    const std::set<int64_t> members(gs.begin(), gs.end());
    Pool pool;
    pool.start_fn = fn;
    std::map<std::string, std::vector<int64_t>> sites;  // forward pulls' site -> members
    std::map<int64_t, std::set<std::string>> fed;       // member -> its feeders' keys
    std::set<int64_t> feeders;
    std::map<int64_t, std::vector<Stretch>> stretches;
    uint64_t pulls = 0;
    for (int64_t g : gs) {
      const GLife& l = life(g);
      std::vector<Stretch>& ss = stretches[g];
      ss.push_back({});
      ss.back().t = l.intervals.empty() ? 0 : l.intervals.front().t0;
      for (size_t i = 0; i < l.intervals.size(); i++) {
        const Interval& iv = l.intervals[i];
        const bool last = i + 1 == l.intervals.size();
        if (iv.state == GState::Syscall) return refuse(fn, gs.size(), gname(g) + " makes system calls");
        if (iv.state == GState::Blocked) {
          auto it = woke_.find({g, i + 1});
          if (it == woke_.end()) {
            if (last && iv.open_end) continue;            // blocked when the trace ended
            if (by_runtime_.count({g, i + 1})) continue;  // the runtime's goroutines ended it
            return refuse(fn, gs.size(),
                          gname(g) + " waits at " + where(iv) + " for a timer or the OS (" + wait_name(iv) +
                              "): an item cannot carry it");
          }
          const WakeEdge& x = tl_.wakes[it->second];
          if (members.count(x.by)) {
            return refuse(fn, gs.size(), gname(g) + " waits at " + where(iv) + " for another member, " + gname(x.by));
          }
          if (recv_wait(iv)) {
            sites[where(iv)].push_back(g);
            fed[g].insert(feeder_key(x.by));
            feeders.insert(x.by);
            pool.pull_wakes.insert(it->second);
            pool.positions.push_back({x.by, x.t, it->second, SIZE_MAX});
            ss.push_back({x.t, true, 0, {}});
            pulls++;
          } else if (send_wait(iv)) {
            pool.backpressure++;
            pool.dropped_waits.insert({g, i});
            pool.dropped_wakes.insert(it->second);
          } else {
            return refuse(fn, gs.size(),
                          gname(g) + " also waits at " + where(iv) + " (" + wait_name(iv) + ") for " + gname(x.by) +
                              ": not an item pull");
          }
          continue;
        }
        if (iv.state != GState::Running) continue;
        int64_t at = iv.t0;
        if (auto it = made_.find({g, i}); it != made_.end()) {
          for (size_t w : it->second) {
            const WakeEdge& x = tl_.wakes[w];
            const int64_t t = std::clamp(x.t, at, iv.t1);
            ss.back().work += work(iv, at, t);
            at = t;
            if (x.create) return refuse(fn, gs.size(), gname(g) + " starts goroutines");
            if (members.count(x.g)) return refuse(fn, gs.size(), gname(g) + " readies another member, " + gname(x.g));
            const std::vector<Interval>& hv = life(x.g).intervals;
            if (x.interval >= 1 && x.interval - 1 < hv.size() && hv[x.interval - 1].state == GState::Blocked &&
                send_wait(hv[x.interval - 1])) {
              // It took an item its feeder was blocked sending (or freed the slot it waited for).
              fed[g].insert(feeder_key(x.g));
              feeders.insert(x.g);
              pool.positions.push_back({x.g, x.t, SIZE_MAX, x.interval - 1});
              pool.pull_wakes.insert(w);
              ss.push_back({t, true, 0, {}});
              pulls++;
            } else {
              ss.back().sends.push_back({w, ss.back().work});
            }
          }
        }
        ss.back().work += work(iv, at, iv.t1);
      }
    }
    if (pulls == 0) {
      return refuse(fn, gs.size(), "no member waited for an item another goroutine handed it");
    }
    if (sites.size() > 1) {
      std::string s;
      for (const auto& [site, who] : sites) {
        std::set<int64_t> u(who.begin(), who.end());
        s += (s.empty() ? "" : "; ") + site + " (";
        bool first = true;
        for (int64_t g : u) s += (first ? "G" : ", G") + std::to_string(g), first = false;
        s += ")";
      }
      return refuse(fn, gs.size(), "they wait at different sites: " + s);
    }
    const std::set<std::string>* ref = nullptr;
    for (const auto& [g, keys] : fed) {
      if (ref != nullptr && *ref != keys) {
        auto list = [](const std::set<std::string>& k) {
          std::string s;
          for (const std::string& x : k) s += (s.empty() ? "" : ", ") + x;
          return s;
        };
        return refuse(fn, gs.size(),
                      "fed by different senders: G" + std::to_string(fed.begin()->first) + " by " + list(*ref) + ", G" +
                          std::to_string(g) + " by " + list(keys));
      }
      ref = &keys;
    }
    for (int64_t f : feeders) {
      if (members.count(f)) return refuse(fn, gs.size(), "a member feeds the others (" + gname(f) + ")");
    }
    pool.site = sites.empty() ? std::string("chan send (taken from blocked senders)") : sites.begin()->first;
    pool.feeders.assign(feeders.begin(), feeders.end());

    // The median item: stretches between two pulls, else all that began at a pull.
    std::vector<int64_t> works;
    for (const auto& [g, ss] : stretches) {
      for (size_t k = 1; k + 1 < ss.size(); k++) works.push_back(ss[k].work);
    }
    if (works.empty()) {
      for (const auto& [g, ss] : stretches) {
        for (size_t k = 1; k < ss.size(); k++) works.push_back(ss[k].work);
      }
    }
    if (works.empty()) return refuse(fn, gs.size(), "no stretch of work follows a pull");
    std::sort(works.begin(), works.end());
    const int64_t med = std::max<int64_t>(1, works[(works.size() - 1) / 2]);
    pool.median_ns = med;

    bool all_exited = true;
    for (int64_t g : gs) all_exited &= life(g).exited;
    pool.all_exited = all_exited;
    for (int64_t g : gs) {
      const GLife& l = life(g);
      std::vector<Stretch>& ss = stretches[g];
      PoolMember m{g, 0, 0, l.exited, 0, {}, {}};
      // Its end: the last wake-up it made before exiting, of a goroutine waiting on a WaitGroup. Only
      // when every member exited: otherwise the replay has no end to wait for and it stays a send.
      if (all_exited && !ss.back().sends.empty()) {
        const auto [w, before] = ss.back().sends.back();
        const WakeEdge& x = tl_.wakes[w];
        const std::vector<Interval>& hv = life(x.g).intervals;
        if (x.interval >= 1 && x.interval - 1 < hv.size() && waitgroup_wait(hv[x.interval - 1])) {
          pool.end_wakes.insert(w);
          pool.end_waits.insert({x.g, x.interval - 1});
          ss.back().sends.pop_back();
        }
      }
      for (size_t k = 0; k < ss.size(); k++) {
        const Stretch& s = ss[k];
        const bool interior = s.at_pull && k + 1 < ss.size();
        int64_t n = 1;
        if (interior) {
          if (s.work > 2 * med)
            n = std::min<int64_t>(kMaxStretchItems,
                                  std::llround(static_cast<double>(s.work) / static_cast<double>(med)));
        } else if (s.work > 2 * med) {
          n = 0;  // a long prologue or epilogue: the member's own, not split into shared items
        } else {
          n = s.work * 2 >= med || !s.sends.empty() ? 1 : 0;  // sends need an item to carry them
        }
        if (n == 0) {
          (k == 0 ? m.prologue_ns : m.epilogue_ns) += s.work;
          for (const auto& [w, before] : s.sends) {
            (k == 0 ? m.prologue_sends : m.epilogue_sends).push_back({before, tl_.wakes[w].g});
          }
          continue;
        }
        pool.stretches++;
        if (n > 1) {
          pool.merged++;
          pool.merged_items += static_cast<uint64_t>(n);
        }
        if (pool.items.size() + static_cast<size_t>(n) > kMaxPoolItems) {
          return refuse(fn, gs.size(),
                        "more than " + std::to_string(kMaxPoolItems) + " items (median item " + ms(med) + ")");
        }
        std::map<int64_t, int64_t> total;
        for (const auto& [w, before] : s.sends) total[tl_.wakes[w].g]++;
        for (int64_t j = 0; j < n; j++) {
          PoolItem it;
          it.t = s.t;
          it.member = g;
          it.ns = s.work / n + (j == 0 ? s.work % n : 0);
          for (const auto& [h, c] : total) {
            const int64_t share = c / n + (j < c % n ? 1 : 0);
            if (share > 0) it.sends[h] = share;
          }
          pool.items.push_back(it);
          m.items++;
        }
      }
      pool.members.push_back(m);
    }
    // Wake-ups of members that were not pulls (back-pressure, a close's) are left out.
    for (size_t w = 0; w < tl_.wakes.size(); w++) {
      const WakeEdge& x = tl_.wakes[w];
      if (x.process == proc_ && members.count(x.g) && !x.create && !pool.pull_wakes.count(w))
        pool.dropped_wakes.insert(w);
    }
    std::stable_sort(pool.items.begin(), pool.items.end(), [](const PoolItem& a, const PoolItem& b) {
      return std::tie(a.t, a.member) < std::tie(b.t, b.member);
    });
    std::stable_sort(pool.positions.begin(), pool.positions.end(),
                     [](const FeedPosition& a, const FeedPosition& b) { return a.t < b.t; });
    size_t p = 0;
    for (PoolItem& it : pool.items) {
      while (p + 1 < pool.positions.size() && pool.positions[p + 1].t <= it.t) p++;
      it.position = p;
    }
    // A pool replays as one channel closed after the feeders' last item and one WaitGroup waited
    // once: goroutines started and waited for per request or per batch are not one.
    if (pool.end_waits.size() > 1) {
      return refuse(fn, gs.size(),
                    "their end is waited for " + std::to_string(pool.end_waits.size()) +
                        " times (a WaitGroup per batch of them?)");
    }
    if (!pool.items.empty()) {
      const int64_t first = pool.positions[pool.items.front().position].t;
      for (int64_t g : gs) {
        if (auto c = created_at_.find(g); c != created_at_.end() && c->second > first) {
          return refuse(fn, gs.size(),
                        gname(g) + " was started after the first item was handed out (at " +
                            ms(c->second - tl_.t_begin) + " of the trace, the first item at " +
                            ms(first - tl_.t_begin) + ")");
        }
      }
    }
    for (size_t w : pool.end_wakes) {
      if (tl_.wakes[w].t < pool.positions.back().t) {
        return refuse(fn, gs.size(),
                      "their end woke " + gname(tl_.wakes[w].g) + " before the feeders handed out their last item");
      }
    }
    std::string fs;
    for (int64_t f : pool.feeders) fs += (fs.empty() ? "" : ", ") + gname(f);
    std::string line = std::to_string(gs.size()) + " goroutines of " + fn + " blocked at " + pool.site + ", fed by " +
                       fs + ": pooled, " + std::to_string(pool.items.size()) + " items, median item " + ms(med);
    if (pool.merged > 0) {
      line += "; " + std::to_string(pool.merged) + " of " + std::to_string(pool.stretches) +
              " stretches held several items (taken as " + std::to_string(pool.merged_items) + ", by the median)";
    }
    if (pool.backpressure > 0) {
      line += "; " + std::to_string(pool.backpressure) + " waits in a send dropped as back-pressure";
    }
    pool.line = out_.lines.size();
    out_.lines.push_back(line);
    out_.pools.push_back(std::move(pool));
  }

  const Timeline& tl_;
  uint32_t proc_;
  const std::set<int64_t>& user_;
  int64_t main_;
  std::set<std::pair<int64_t, size_t>> by_runtime_;                 // (g, interval begun): the runtime woke it
  std::map<std::pair<int64_t, size_t>, size_t> woke_;               // (g, interval begun) -> its wake-up
  std::map<int64_t, int64_t> created_at_;                           // g -> when the program started it
  std::map<std::pair<int64_t, size_t>, std::vector<size_t>> made_;  // (g, interval) -> wake-ups it made
  PoolAnalysis out_;
};

}  // namespace

PoolAnalysis find_pools(const Timeline& tl, uint32_t process, const std::set<int64_t>& user, int64_t main) {
  return Finder(tl, process, user, main).run();
}

}  // namespace gmp::trace
