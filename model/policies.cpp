#include "model/policies.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

namespace gmp::model {

// ---- Random ----

// Uniform among the threads that are not in a timed wait, and one time in kTimeoutOdds uniform
// among all: a wait that ends as soon as it can be chosen would cut every compute short, and the
// states where every M has settled (quiescent) would hardly ever come.
bool RandomPolicy::begin(uint64_t index) {
  rng_ = SplitMix64(execution_seed(seed_, index));
  return true;
}

size_t RandomPolicy::pick(uint64_t, std::span<const engine::Step> enabled, uint32_t) {
  constexpr uint64_t kTimeoutOdds = 16;
  size_t running = 0;
  for (const engine::Step& s : enabled) running += s.kind != engine::StepKind::Timeout ? 1 : 0;
  if (running == 0 || rng_.next() % kTimeoutOdds == 0) return static_cast<size_t>(rng_.next() % enabled.size());
  uint64_t k = rng_.next() % running;
  for (size_t i = 0; i < enabled.size(); i++) {
    if (enabled[i].kind != engine::StepKind::Timeout && k-- == 0) return i;
  }
  return 0;
}

// ---- PCT ----

PctPolicy::PctPolicy(uint64_t seed, uint32_t depth, uint64_t steps)
    : seed_(seed), steps_(steps), rng_(seed), depth_(std::max<uint32_t>(depth, 1)) {
  reset(seed);
}

bool PctPolicy::begin(uint64_t index) {
  reset(execution_seed(seed_, index));
  return true;
}

void PctPolicy::reset(uint64_t seed) {
  rng_ = SplitMix64(seed);
  change_.clear();
  priority_.clear();
  yielding_ = UINT32_MAX;
  const uint64_t k = std::max<uint64_t>(steps_, 1);
  for (uint32_t i = 1; i < depth_; i++) change_.push_back(rng_.next() % k);
  std::sort(change_.begin(), change_.end());
}

void PctPolicy::thread_created(uint32_t tid, uint32_t, bool) {
  if (priority_.size() <= tid) priority_.resize(tid + 1, 0);
  // Above the depth-1 reserved priorities, in random order.
  priority_[tid] = depth_ + (rng_.next() >> 8);
}

size_t PctPolicy::pick(uint64_t step, std::span<const engine::Step> enabled, uint32_t current) {
  for (size_t i = 0; i < change_.size(); i++) {
    if (change_[i] == step && current < priority_.size()) priority_[current] = depth_ - 1 - i;
  }
  // The highest priority among the threads not in a timed wait; with every thread waiting, the
  // default rule's (the wait that ends first).
  size_t best = highest(enabled);
  if (best == SIZE_MAX) return default_pick(enabled, current);
  // osyield is sched_yield: the caller lets another runnable thread go first. Each yield of the
  // thread chosen gives one step to the highest-priority other thread, if one can step, before the
  // yield itself is taken; so a spin-wait (casgstatus waiting for sysmon to clear a _Gscan bit)
  // lets the thread it waits for make progress, as the OS would. With strict priorities alone it
  // would spin forever, and be reported as a livelock.
  if (enabled[best].kind == engine::StepKind::Yield) {
    const uint32_t t = enabled[best].tid;
    if (yielding_ != t) {
      const size_t other = highest(enabled, t);
      if (other != SIZE_MAX) {
        yielding_ = t;
        return other;
      }
    }
    yielding_ = UINT32_MAX;
  }
  return best;
}

size_t PctPolicy::highest(std::span<const engine::Step> enabled, uint32_t except) const {
  size_t best = SIZE_MAX;
  for (size_t i = 0; i < enabled.size(); i++) {
    if (enabled[i].kind == engine::StepKind::Timeout || enabled[i].tid == except) continue;
    const uint32_t t = enabled[i].tid;
    const uint64_t pt = t < priority_.size() ? priority_[t] : 0;
    if (best == SIZE_MAX) {
      best = i;
      continue;
    }
    const uint32_t b = enabled[best].tid;
    if (pt > (b < priority_.size() ? priority_[b] : 0)) best = i;
  }
  return best;
}

double PctPolicy::bound(uint32_t depth, uint32_t threads, uint64_t steps) {
  return 1.0 / (std::max<double>(threads, 1) *
                std::pow(std::max<double>(static_cast<double>(steps), 1), depth > 0 ? depth - 1 : 0));
}

// ---- Replay ----

size_t ReplayPolicy::pick(uint64_t step, std::span<const engine::Step> enabled, uint32_t current) {
  while (next_ < s_.picks.size() && s_.picks[next_].first < step) next_++;  // lenient: passed over
  if (next_ < s_.picks.size() && s_.picks[next_].first == step) {
    const uint32_t want = s_.picks[next_++].second;
    for (size_t i = 0; i < enabled.size(); i++) {
      if (enabled[i].tid == want) return i;
    }
    if (strict_) {
      std::string can;
      for (const engine::Step& e : enabled) can += (can.empty() ? "" : ", ") + std::to_string(e.tid);
      throw ScheduleError("replay: the schedule diverges at step " + std::to_string(step) + ": it picks thread " +
                          std::to_string(want) + ", which cannot run there (threads that can: " + can +
                          "); the schedule was recorded with " + recorded_with_);
    }
  }
  if (strict_ && s_.steps != 0 && step >= s_.steps) {
    throw ScheduleError("replay: the schedule ends at step " + std::to_string(s_.steps) +
                        " but the run goes on past it; the schedule was recorded with " + recorded_with_);
  }
  return default_pick(enabled, current);
}

void ReplayPolicy::finish(const Recorded& run) {
  if (strict_ && s_.steps != 0 && run.steps != s_.steps) {
    throw ScheduleError("replay: the run ended at step " + std::to_string(run.steps) + " but the schedule has " +
                        std::to_string(s_.steps) + " steps; the schedule was recorded with " + recorded_with_);
  }
}

// ---- DPOR ----

namespace {
uint64_t bit(uint32_t t) { return uint64_t{1} << t; }

bool same_step(const engine::Step& a, const engine::Step& b) {
  return a.kind == b.kind && a.op == b.op && a.write == b.write && a.obj == b.obj && a.clock == b.clock &&
         a.target == b.target && a.site.line() == b.site.line();
}

size_t index_of(std::span<const engine::Step> enabled, uint32_t t) {
  for (size_t i = 0; i < enabled.size(); i++) {
    if (enabled[i].tid == t) return i;
  }
  return SIZE_MAX;
}

constexpr uint64_t kClockKey = 1;
constexpr uint64_t kSignalKey = 2;  // + the thread: its pending-signal cell
}  // namespace

Dpor::Dpor(int preemption_bound, bool reduce) : bound_(preemption_bound), reduce_(reduce) {}

void Dpor::set_prefix(const std::vector<uint32_t>& tids) {
  nodes_.clear();
  fixed_ = tids.size();
  for (uint32_t t : tids) {
    Node n;
    n.chosen = t;
    n.fixed = true;
    nodes_.push_back(n);
  }
}

void Dpor::set_symmetry(std::vector<uint32_t> classes) {
  if (classes.size() > kMaxThreads) classes.resize(kMaxThreads);
  classes_ = std::move(classes);
}

uint64_t Dpor::symmetric_allowed(uint64_t mask) const {
  uint64_t out = mask;
  for (uint64_t c = mask & ~started_mask_; c != 0; c &= c - 1) {
    const auto u = static_cast<uint32_t>(std::countr_zero(c));
    if (u >= classes_.size() || classes_[u] == kNoClass) continue;
    for (uint32_t t = 0; t < u; t++) {
      if (classes_[t] == classes_[u] && (started_mask_ & bit(t)) == 0) {
        out &= ~bit(u);
        break;
      }
    }
  }
  return out;
}

uint32_t Dpor::symmetric_predecessor(uint32_t p) const {
  if (p >= classes_.size() || classes_[p] == kNoClass) return kNoClass;
  for (uint32_t t = p; t-- > 0;) {
    if (classes_[t] == classes_[p]) return t;
  }
  return kNoClass;
}

void Dpor::set_random(uint64_t seed) {
  random_ = true;
  random_seed_ = seed;
  rng_ = SplitMix64(seed);
}

bool Dpor::begin(uint64_t index) {
  if (random_) rng_ = SplitMix64(execution_seed(random_seed_, index));
  return next();
}

// A preemption: switching away from a thread that could go on (not one that just began to wait).
bool Dpor::preempts(const Node& n, uint32_t t) const {
  if (t == n.current) return false;
  const size_t c = index_of(n.enabled, n.current);
  return c != SIZE_MAX && n.enabled[c].kind != engine::StepKind::Timeout;
}

bool Dpor::next() {
  tvc_.clear();
  tev_.clear();
  objs_.clear();
  started_mask_ = 0;
  first_.clear();
  if (!started_ || random_) {
    started_ = true;
    if (random_) nodes_.resize(fixed_);
    return true;
  }
  for (size_t k = nodes_.size(); k-- > fixed_;) {
    Node& n = nodes_[k];
    for (uint64_t cand = n.backtrack & ~n.done & ~n.sleep & n.enabled_mask; cand != 0; cand &= cand - 1) {
      const auto t = static_cast<uint32_t>(std::countr_zero(cand));
      if (bound_ >= 0 && preempts(n, t) && n.preemptions + 1 > static_cast<uint32_t>(bound_)) continue;
      nodes_.resize(k + 1);
      n.chosen = t;
      n.done |= bit(t);
      return true;
    }
  }
  return false;
}

void Dpor::thread_created(uint32_t tid, uint32_t parent, bool) {
  if (tid >= kMaxThreads) {
    throw std::runtime_error("check: the scenario starts more than " + std::to_string(kMaxThreads) +
                             " threads (Ms); the checker follows at most that many");
  }
  if (tvc_.size() <= tid) tvc_.resize(tid + 1, Clock{});
  tvc_[tid] = parent < tvc_.size() ? tvc_[parent] : Clock{};
}

uint64_t Dpor::sleep_into(const Node& prev, std::span<const engine::Step> enabled) const {
  const uint64_t asleep = prev.sleep | (prev.done & ~bit(prev.chosen));
  const size_t ei = index_of(prev.enabled, prev.chosen);
  if (asleep == 0 || ei == SIZE_MAX) return 0;
  const engine::Step& e = prev.enabled[ei];
  uint64_t out = 0;
  for (uint64_t c = asleep; c != 0; c &= c - 1) {
    const auto u = static_cast<uint32_t>(std::countr_zero(c));
    const size_t pu = index_of(prev.enabled, u), nu = index_of(enabled, u);
    if (pu == SIZE_MAX || nu == SIZE_MAX) continue;
    if (engine::dependent(prev.enabled[pu], e) || !same_step(prev.enabled[pu], enabled[nu])) continue;
    out |= bit(u);
  }
  return out;
}

size_t Dpor::pick(uint64_t step, std::span<const engine::Step> enabled, uint32_t current) {
  uint64_t mask = 0;
  for (const engine::Step& s : enabled) {
    if (s.tid >= kMaxThreads) throw std::runtime_error("check: more than 64 threads");
    mask |= bit(s.tid);
  }
  if (!classes_.empty()) {
    // Symmetry holds back the threads whose lower classmates have not started; should that leave
    // nothing (a class declared wrongly: its lowest unstarted thread blocked), the search goes on
    // with every enabled thread, which is the search without symmetry here.
    const uint64_t allowed = symmetric_allowed(mask);
    if (allowed != 0) {
      const size_t at = static_cast<size_t>(step);
      const bool fresh = at >= nodes_.size() || (nodes_[at].fixed && nodes_[at].enabled_mask == 0);
      if (fresh) sym_skipped_ += static_cast<uint64_t>(std::popcount(mask & ~allowed));
      mask = allowed;
    }
  }
  const size_t i = static_cast<size_t>(step);
  if (i < nodes_.size() && (!nodes_[i].fixed || nodes_[i].enabled_mask != 0)) {
    Node& n = nodes_[i];
    if (n.enabled_mask != mask) {
      throw std::logic_error("check: an execution did not repeat itself at step " + std::to_string(i) +
                             ": the run is not deterministic");
    }
    n.enabled.assign(enabled.begin(), enabled.end());  // this execution's addresses
  } else {
    Node fresh;
    Node& n = i < nodes_.size() ? nodes_[i] : fresh;
    const uint32_t pinned = n.chosen;
    n.enabled.assign(enabled.begin(), enabled.end());
    n.enabled_mask = mask;
    n.current = current;
    if (i > 0) {
      const Node& prev = nodes_[i - 1];
      n.sleep = reduce_ ? sleep_into(prev, enabled) : 0;
      n.preemptions = prev.preemptions + (preempts(prev, prev.chosen) ? 1 : 0);
    }
    if (n.fixed) {
      // A pinned step: its subtree is this search's share. The threads below it at this node are
      // other shares, explored as if before it (the order a single search would take).
      if ((mask & bit(pinned)) == 0) throw std::logic_error("check: a pinned prefix does not fit the run");
      if ((n.sleep & bit(pinned)) != 0) return engine::kStopRun;  // covered by an earlier share
      if (bound_ >= 0 && preempts(n, pinned) && n.preemptions + 1 > static_cast<uint32_t>(bound_))
        return engine::kStopRun;
      n.done = mask & (bit(pinned) | (bit(pinned) - 1));
      n.backtrack = mask;
    } else {
      uint64_t cand = mask & ~n.sleep;
      if (cand == 0) return engine::kStopRun;  // every enabled thread sleeps: nothing new below
      uint32_t t = 0;
      if (random_) {
        // Estimating a bounded tree: the walk stays within the bound (tree_estimate), and takes the
        // default rule's step but one time in kDepartOdds, as a bounded search's executions follow
        // the default order between their few departures (a uniform walk would spend the bound in
        // its first steps).
        constexpr uint64_t kDepartOdds = 8;
        cand &= within_bound(n);
        if (cand == 0) return engine::kStopRun;
        if (bound_ >= 0 && rng_.next() % kDepartOdds != 0) {
          t = enabled[default_pick(enabled, current, cand)].tid;
        } else {
          uint32_t k = static_cast<uint32_t>(rng_.next() % static_cast<uint64_t>(std::popcount(cand)));
          uint64_t c = cand;
          while (k-- > 0) c &= c - 1;
          t = static_cast<uint32_t>(std::countr_zero(c));
        }
      } else {
        t = enabled[default_pick(enabled, current, cand)].tid;
      }
      if (bound_ >= 0 && preempts(n, t) && n.preemptions + 1 > static_cast<uint32_t>(bound_)) return engine::kStopRun;
      n.chosen = t;
      n.done = bit(t);
      n.backtrack = reduce_ ? bit(t) : mask;
      nodes_.push_back(std::move(fresh));
    }
  }
  Node& n = nodes_[i];
  const size_t idx = index_of(enabled, n.chosen);
  if ((started_mask_ & bit(n.chosen)) == 0) {
    started_mask_ |= bit(n.chosen);
    if (first_.size() <= n.chosen) first_.resize(n.chosen + 1, -1);
    first_[n.chosen] = static_cast<int64_t>(i);
  }
  if (reduce_ || random_) analyse(i, enabled[idx]);
  return idx;
}

// Source-DPOR's backtracking (Abdulla, Aronis, Jonsson, Sagonas, POPL 2014): for a race between
// step j and step i of thread p, the branch to add before j is one that starts the reversal: a
// thread whose first step among v.i (v: the steps after j that do not happen after j) has no
// happens-before predecessor in v. If one such thread is already in j's backtrack set, nothing is
// added. (Adding p itself, Flanagan-Godefroid's rule, is not enough once sleep sets are on: p may
// sleep before j while the reversal must start with another thread's step; the DPOR unit test
// shows the outcome that is then lost.)
void Dpor::add_race(size_t j, size_t i, uint32_t p, const Clock& ci) {
  Node& nj = nodes_[j];
  if (nj.fixed) return;  // every thread there is some share's
  const uint32_t tj = nj.chosen;
  const uint32_t lj = nj.vc[tj];  // j is tj's lj-th step
  // The step of thread r with local number k (1-based), as a node index.
  auto at = [&](uint32_t r, uint32_t k) -> int64_t { return k == 0 ? -1 : static_cast<int64_t>(tev_[r][k - 1]); };
  auto initial = [&](uint32_t q, const Clock& vk) {
    for (uint32_t r = 0; r < tev_.size(); r++) {
      if (r != q && at(r, vk[r]) > static_cast<int64_t>(j)) return false;  // a predecessor lies in v
    }
    return true;
  };
  uint64_t initials = 0;
  for (uint32_t q = 0; q < tev_.size(); q++) {
    // q's first step after j; it is in v unless it happens after j, and then all of q's later are too.
    const auto& ev = tev_[q];
    const auto it = std::upper_bound(ev.begin(), ev.end(), static_cast<uint32_t>(j));
    if (it != ev.end() && *it < i) {
      const Node& nk = nodes_[*it];
      if (nk.vc[tj] >= lj) continue;  // happens after j
      if (initial(q, nk.vc)) initials |= bit(q);
    } else if (q == p && initial(p, ci)) {
      initials |= bit(p);  // p's step i is the first of p in v.i
    }
  }
  initials &= nj.enabled_mask;
  if (initials == 0) {
    nj.backtrack |= nj.enabled_mask;  // not expected; all of them is always safe
    return;
  }
  if ((initials & nj.backtrack) != 0) return;
  nj.backtrack |= bit(static_cast<uint32_t>(std::countr_zero(initials)));
}

void Dpor::analyse(size_t i, const engine::Step& s) {
  const uint32_t p = s.tid;
  if (tvc_.size() <= p) tvc_.resize(p + 1, Clock{});
  if (tev_.size() < tvc_.size()) tev_.resize(tvc_.size());
  struct Key {
    uint64_t key;
    bool write;
  };
  Key keys[4];
  size_t nk = 0;
  if (s.obj != nullptr) keys[nk++] = {static_cast<uint64_t>(reinterpret_cast<uintptr_t>(s.obj)), s.write};
  if (s.clock) keys[nk++] = {kClockKey, s.kind == engine::StepKind::Timeout};
  keys[nk++] = {kSignalKey + p, false};
  if (s.kind == engine::StepKind::Signal) keys[nk++] = {kSignalKey + s.target, true};

  // Races: every earlier step this one depends on that does not happen before it. All of them,
  // not only the latest: with sleep sets, the branch that would reveal an older race once the
  // latest is reversed may never run, so each is given its backtrack point here.
  Clock c = tvc_[p];
  if (!classes_.empty() && p < first_.size() && first_[p] == static_cast<int64_t>(i)) {
    // p's first step. Under symmetry it comes after its class predecessor's first step in every
    // execution searched, as if that step had started p: p's clock starts from it.
    const uint32_t q = symmetric_predecessor(p);
    if (q != kNoClass && q < first_.size() && first_[q] >= 0) {
      const Clock& qc = nodes_[static_cast<size_t>(first_[q])].vc;
      for (size_t t = 0; t < kMaxThreads; t++) c[t] = std::max(c[t], qc[t]);
    }
  }
  const Clock before = c;
  races_.clear();
  auto race = [&](uint32_t j) {
    const Node& nj = nodes_[j];
    const uint32_t q = nj.chosen;
    if (q != p && nj.vc[q] > before[q]) races_.push_back(j);
  };
  auto join = [&](uint32_t j) {
    for (size_t t = 0; t < kMaxThreads; t++) c[t] = std::max(c[t], nodes_[j].vc[t]);
  };
  for (size_t k = 0; k < nk; k++) {
    Obj& o = objs_[keys[k].key];
    for (uint32_t j : o.writes) race(j);
    if (keys[k].write) {
      for (uint32_t j : o.all_reads) race(j);
    }
    // Happens-before: the last write and, for a write, the reads since dominate the rest.
    if (o.last_write >= 0) join(static_cast<uint32_t>(o.last_write));
    if (keys[k].write) {
      for (uint32_t j : o.reads) join(j);
    }
  }
  c[p]++;
  tvc_[p] = c;
  nodes_[i].vc = c;
  if (tev_.size() <= p) tev_.resize(p + 1);
  tev_[p].push_back(static_cast<uint32_t>(i));
  std::sort(races_.begin(), races_.end());
  races_.erase(std::unique(races_.begin(), races_.end()), races_.end());
  for (uint32_t j : races_) add_race(j, i, p, c);
  for (size_t k = 0; k < nk; k++) {
    Obj& o = objs_[keys[k].key];
    if (keys[k].write) {
      o.last_write = static_cast<int64_t>(i);
      o.reads.clear();
      o.writes.push_back(static_cast<uint32_t>(i));
    } else {
      o.reads.push_back(static_cast<uint32_t>(i));
      o.all_reads.push_back(static_cast<uint32_t>(i));
    }
  }
}

uint64_t Dpor::within_bound(const Node& n) const {
  if (bound_ < 0 || n.preemptions < static_cast<uint32_t>(bound_)) return n.enabled_mask;
  uint64_t out = 0;
  for (const engine::Step& e : n.enabled) {
    if (!preempts(n, e.tid)) out |= bit(e.tid);
  }
  return out;
}

double Dpor::tree_estimate() const {
  double prod = 1;
  for (size_t k = fixed_; k < nodes_.size(); k++) {
    prod *= std::popcount((nodes_[k].backtrack & within_bound(nodes_[k])) | bit(nodes_[k].chosen));
    if (prod > 1e300) return 1e300;
  }
  return prod;
}

}  // namespace gmp::model
