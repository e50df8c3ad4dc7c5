#include "model/execution.h"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <unordered_map>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

#include "model/fingerprint.h"
#include "model/recorder.h"
#include "model/properties.h"
#include "sim/simulation/simulation.h"
#include "sim/runtime/runtime.h"
#include "sim/workload/interpreter.h"

namespace gmp::model {

const char* property_name(Property p) {
  switch (p) {
    case kThrow:
      return "throw";
    case kDeadlock:
      return "deadlock";
    case kGConservation:
      return "g-conservation";
    case kWorkConservation:
      return "work-conservation";
    case kLostWakeup:
      return "lost-wakeup";
    case kLivelock:
      return "livelock";
    case kAssertions:
      return "assertions";
    case kStwCompletes:
      return "stw-completes";
    case kStranding:
      return "stranding";
    case kStarvation:
      return "starvation";
    default:
      return "?";
  }
}

uint32_t parse_properties(const std::string& list) {
  static constexpr Property all[] = {kThrow,    kDeadlock,   kGConservation, kWorkConservation, kLostWakeup,
                                     kLivelock, kAssertions, kStwCompletes,  kStranding,        kStarvation};
  uint32_t bits = 0;
  size_t i = 0;
  while (i <= list.size()) {
    const size_t comma = std::min(list.find(',', i), list.size());
    const std::string name = list.substr(i, comma - i);
    bool found = name == "all" || name == "default";
    if (name == "all") bits |= kDefaultProperties;
    if (name == "default") bits |= kDefaultProperties;
    for (Property p : all) {
      if (name == property_name(p)) {
        bits |= p;
        found = true;
      }
    }
    if (!found) {
      throw std::invalid_argument(
          "unknown property '" + name +
          "' (known: throw, deadlock, g-conservation, work-conservation, lost-wakeup, livelock, "
          "assertions, stw-completes, stranding, starvation, default, all)");
    }
    i = comma + 1;
  }
  return bits;
}

namespace {
constexpr uint64_t kZero = 0x9e3779b97f4a7c15ULL;  // stands for a fingerprint of 0 in the table
// The slot a fingerprint's probe starts at, for a table of 2^bits slots (multiplicative hashing,
// so that fingerprints with equal low bits spread).
size_t home(uint64_t fp, size_t mask) { return static_cast<size_t>((fp * 0xff51afd7ed558ccdULL) >> 17) & mask; }
}  // namespace

void StateSet::add(uint64_t fp) {
  if (fp == 0) fp = kZero;
  if (table_.empty()) table_.assign(1024, 0);
  const size_t mask = table_.size() - 1;
  size_t i = home(fp, mask);
  for (; table_[i] != 0; i = (i + 1) & mask) {
    if (table_[i] == fp) return;
  }
  if (fingerprints.size() >= max_states) {
    truncated = true;
    return;
  }
  table_[i] = fp;
  fingerprints.push_back(fp);
  if (fingerprints.size() * 2 > table_.size()) grow();
}

void StateSet::grow() {
  std::vector<uint64_t> old(table_.size() * 2, 0);
  old.swap(table_);
  const size_t mask = table_.size() - 1;
  for (uint64_t fp : old) {
    if (fp == 0) continue;
    size_t i = home(fp, mask);
    while (table_[i] != 0) i = (i + 1) & mask;
    table_[i] = fp;
  }
}

uint32_t resolve_process(const scenario::Scenario& sc, const std::string& name) {
  if (name == "all") return kAllProcesses;
  std::string names;
  for (size_t i = 0; i < sc.processes.size(); i++) {
    if (sc.processes[i].name == name) return static_cast<uint32_t>(i);
    names += (names.empty() ? "" : ", ") + sc.processes[i].name;
  }
  if (sc.processes.empty())
    throw std::invalid_argument("the scenario declares no processes (it is one): only 'all' fits");
  throw std::invalid_argument("no process '" + name + "' in the scenario (its processes: " + names + ", or all)");
}

std::string process_label(const scenario::Scenario& sc, uint32_t process) {
  if (process == kAllProcesses) return "all";
  return process < sc.processes.size() ? sc.processes[process].name : "";
}

namespace {

// The program a process runs: its own, or the scenario's with one process.
const scenario::Scenario& program_of(const scenario::Scenario& sc, uint32_t process) {
  if (process < sc.processes.size() && sc.processes[process].program) return *sc.processes[process].program;
  return sc;
}

// The size of the strongly connected component of the state `fp` in the graph of the states an
// execution went through (`path`, one fingerprint per step): the cycle it was caught in.
size_t livelock_cycle(const std::vector<uint64_t>& path, uint64_t fp) {
  std::unordered_map<uint64_t, uint32_t> index;  // looked up, never iterated
  std::vector<uint32_t> seq;
  seq.reserve(path.size());
  for (uint64_t f : path) seq.push_back(index.emplace(f, static_cast<uint32_t>(index.size())).first->second);
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph g(index.size());
  for (size_t i = 1; i < seq.size(); i++) boost::add_edge(seq[i - 1], seq[i], g);
  std::vector<int> comp(index.size());
  boost::strong_components(g, boost::make_iterator_property_map(comp.begin(), boost::get(boost::vertex_index, g)));
  const auto it = index.find(fp);
  if (it == index.end()) return 0;
  const int c = comp[it->second];
  size_t n = 0;
  for (int x : comp) n += x == c ? 1 : 0;
  return n;
}

// What a scenario's execution tests and keeps at each point, beside the Recorder: the properties
// at quiescent points, the stranding that work conservation follows, the fingerprints (distinct
// states, livelock) and, with ExecOptions::log, every step.
class PropertyMonitor final : public Monitor {
 public:
  PropertyMonitor(const CheckSetup& setup, const ExecOptions& opt, Execution& ex)
      : setup_(setup), opt_(opt), ex_(ex) {}

  void started(rt::Runtime& r, uint32_t process) override {
    if (runtimes_.size() <= process) {
      runtimes_.resize(process + 1, nullptr);
      fresh_.resize(process + 1, true);
      stranding_.resize(process + 1,
                        StrandingMonitor(setup_.strict_time, setup_.stranding_steps, setup_.stranding_ns));
      starvation_.resize(process + 1, StarvationMonitor(setup_.starvation_ns));
    }
    runtimes_[process] = &r;
  }

  void thread_created(uint32_t tid, uint32_t, bool daemon, uint32_t) override {
    if (daemon_.size() <= tid) daemon_.resize(tid + 1, false);
    daemon_[tid] = daemon;
  }

  bool before_pick(uint64_t steps, std::span<const engine::Step> enabled, const engine::PointInfo& info,
                   bool choice) override {
    if (opt_.log && !ex_.log.empty()) fill_post(ex_.log.back());
    if (setup_.deadline && ((steps + ex_.forced) & 1023) == 0 && std::chrono::steady_clock::now() >= *setup_.deadline) {
      timed_out_ = true;  // ends the run; execute() reports it as cut, not as a violation
      return true;
    }
    if (steps + ex_.forced + 1 == setup_.max_steps) ex_.unbounded = where_goroutines_are();
    // The properties of each checked process at its quiescent points: tested once after each of
    // its steps (another process's steps leave its state as it was).
    for (uint32_t p = 0; p < runtimes_.size(); p++) {
      if (!checked(p) || !fresh_[p] || !info.of(p).quiescent) continue;
      fresh_[p] = false;
      ex_.quiescent++;
      if (test_quiescent(p, info.of(p))) return true;
    }
    if (stranded_ != nullptr && follow_stranding(info)) return true;
    // Stranding and starvation, at every point (their cheap tests come first). A work-conservation
    // stranding found at a quiescent point is being measured (stranded_): it is the report.
    if ((setup_.properties & kStranding) != 0 && stranded_ == nullptr) {
      for (uint32_t p = 0; p < runtimes_.size(); p++) {
        if (!checked(p) || runtimes_[p] == nullptr) continue;
        std::string why = stranding_[p].at(*runtimes_[p], ex_.steps, info.now);
        if (why.empty()) continue;
        ex_.violation = Violation{kStranding, about(p) + why, ex_.steps};
        violated_ = true;
        return true;
      }
    }
    if (setup_.strict_time && (setup_.properties & kStarvation) != 0) {
      for (uint32_t p = 0; p < runtimes_.size(); p++) {
        if (!checked(p) || runtimes_[p] == nullptr) continue;
        std::string why = starvation_[p].at(*runtimes_[p], info.now);
        if (why.empty()) continue;
        ex_.violation = Violation{kStarvation, about(p) + why, ex_.steps};
        violated_ = true;
        return true;
      }
    }
    if (choice && (opt_.states != nullptr || (setup_.properties & kLivelock) != 0)) {
      const uint64_t fp = state(enabled);
      if (opt_.states != nullptr) opt_.states->add(fp);
      if ((setup_.properties & kLivelock) != 0 && livelock(fp, enabled, info)) return true;
    }
    return false;
  }

  // After an unfair cycle, the step of the enabled thread that stepped least recently (round robin,
  // livelock); after pass_time, the end of the wait due first.
  size_t forced(std::span<const engine::Step> enabled) override {
    if (round_robin_) {
      size_t best = 0;
      for (size_t i = 1; i < enabled.size(); i++) {
        if (last_step(enabled[i].tid) < last_step(enabled[best].tid)) best = i;
      }
      return best;
    }
    if (!pass_time_) return SIZE_MAX;
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < enabled.size(); i++) {
      if (enabled[i].kind == engine::StepKind::Timeout && (best == SIZE_MAX || enabled[i].deadline < enabled[best].deadline))
        best = i;
    }
    // The engine offers the waits due first at the point after the request (or every thread
    // waits, and it offers them anyway); a point where it was asked and offered none ends it.
    if (best != SIZE_MAX || pass_asked_) pass_time_ = pass_asked_ = false;
    return best;
  }

  bool pass_time() override {
    pass_asked_ = pass_time_;
    return pass_time_;
  }

  void taken(const engine::Step& s, const engine::PointInfo& info, size_t enabled) override {
    prev_progress_ = s.tid >= daemon_.size() || !daemon_[s.tid];
    prev_user_ = s.kind == engine::StepKind::Timeout && s.user;
    if (!window_.empty() && window_.back().taken == kNoThread) window_.back().taken = s.tid;
    if (last_.size() <= s.tid) last_.resize(s.tid + 1, -1);
    last_[s.tid] = static_cast<int64_t>(ex_.steps);
    if (s.process < fresh_.size()) {
      fresh_[s.process] = true;
      if (s.g != nullptr) stranding_[s.process].took(s.g->m);
    }
    if (opt_.log) log(s, info, enabled);
  }

  bool violated() const { return violated_; }
  bool timed_out() const { return timed_out_; }

 private:
  bool checked(uint32_t p) const { return setup_.process == kAllProcesses || p == setup_.process; }

  // The state the search counts and follows: the checked process's runtime and enabled steps; with
  // every process checked, each runtime's in turn.
  uint64_t state(std::span<const engine::Step> enabled) const {
    const bool sym = setup_.symmetric_states;
    if (setup_.process != kAllProcesses) return fingerprint(*runtimes_[setup_.process], enabled, sym);
    uint64_t h = fingerprint(*runtimes_[0], enabled, sym);
    for (size_t p = 1; p < runtimes_.size(); p++) h = h * 0x100000001b3ULL ^ fingerprint(*runtimes_[p], {}, sym);
    return h;
  }

  // "process b: " before a message about one process of several.
  std::string about(uint32_t p) const {
    return setup_.scenario->processes.empty() ? "" : "process " + process_label(*setup_.scenario, p) + ": ";
  }

  // Tests the properties of process p's quiescent state; true if one fails (the execution then ends).
  bool test_quiescent(uint32_t proc, const engine::PointInfo& info) {
    const rt::Runtime* rtm = runtimes_[proc];
    const uint32_t props = setup_.properties;
    std::string why;
    Property p = kThrow;
    // A stop-the-world stuck for good is tested first: what else is wrong in that state (a
    // count left by the goroutine that holds the stop up, say) follows from it.
    if ((props & kStwCompletes) != 0 && !(why = check_stw_completes(*rtm, info)).empty()) {
      p = kStwCompletes;
    } else if ((props & kGConservation) != 0 &&
               (!(why = check_g_conservation(*rtm)).empty() || !(why = check_accounting(*rtm)).empty())) {
      p = kGConservation;
    } else if ((props & kLostWakeup) != 0 && !(why = check_lost_wakeup(*rtm, info)).empty()) {
      p = kLostWakeup;
    } else if ((props & kWorkConservation) != 0 && !(why = check_timer_conservation(*rtm)).empty()) {
      p = kWorkConservation;
    } else if ((props & kWorkConservation) != 0 && stranded_ == nullptr &&
               !(why = check_work_conservation(*rtm)).empty()) {
      // Not the end of the execution: it goes on, to measure how long the stranding lasts.
      ex_.violation = Violation{kWorkConservation, about(proc) + why, ex_.steps};
      stranded_at_ = info.now;
      stranded_ = first_queued(*rtm);
      return false;
    }
    if (why.empty()) return false;
    ex_.violation = Violation{p, about(proc) + why, ex_.steps};
    violated_ = true;
    return true;
  }

  // Livelock: the same state comes back again and again, through steps of threads other than
  // daemons, while no user code ends a compute or a system call. A bounded loop of the scheduler
  // (stealWork's tries, a CAS retried) brings a state back a few times at most, since its
  // counters are not part of the fingerprint; coming back
  // kLivelockVisits times means nothing bounds the loop. The cycle itself is measured afterwards
  // (livelock_cycle) over the execution's own sequence of states.
  //
  // Only a fair cycle is the program's livelock (weak fairness): over the stretch of the run from
  // the state's first visit to its last, every thread enabled at every point takes a step in it
  // (the end of a timed wait enabled throughout counts as such a thread's step), and under strict
  // time no thread other than a daemon waits with a deadline throughout (where waits end only when
  // no thread can step, a cycle of steps at one instant starves every wait; in real time the
  // steps take time and the wait ends). A cycle that is not fair is the policy's, and the run is
  // let out of it: the threads take turns (round robin, forced) until user code ends a wait, or
  // under strict time the wait due first ends. The run goes on, and a cycle it cannot leave that
  // way comes back fair.
  bool livelock(uint64_t fp, std::span<const engine::Step> enabled, const engine::PointInfo& info) {
    path_.push_back(fp);
    if (prev_user_) restart_window();  // user code moved on: what came before is no cycle
    Point pt;
    pt.fp = fp;
    pt.first = static_cast<uint32_t>(window_tids_.size());
    pt.n = static_cast<uint32_t>(enabled.size());
    for (const engine::Step& e : enabled) window_tids_.push_back(e.tid);
    const engine::PointInfo& mine = setup_.process == kAllProcesses ? info : info.of(setup_.process);
    pt.waiting = mine.user_running + mine.timed_parked;
    window_.push_back(pt);
    if (!prev_progress_) return false;
    Visits& v = visits_.try_emplace(fp, Visits{0, static_cast<uint32_t>(window_.size() - 1)}).first->second;
    if (++v.n < kLivelockVisits || window_.size() < hold_until_ || v.n < livelock_visits()) return false;
    if (!fair(v.first)) {
      ex_.unfair_cycles++;
      if (pass_time_) {
        restart_window();  // the clock moves on: what came before is no cycle
      } else {
        // Round robin from here until the run makes progress: the starved thread steps at once,
        // and a cycle the program cannot leave comes back with every thread stepping in it. The
        // next stretch is judged once the run has gone as far again (the tests then cost a run's
        // length times the log of it).
        round_robin_ = true;
        hold_until_ = window_.size() + (window_.size() - v.first);
      }
      return false;
    }
    ex_.violation = Violation{kLivelock, "", ex_.steps};
    livelock_fp_ = fp;
    livelock_visits_ = livelock_visits();
    violated_ = true;
    return true;
  }

  // Whether the stretch of the window from point `from` to the last is a fair cycle. If a thread
  // enabled throughout took no step in it, it is not (livelock() then turns round robin on); nor,
  // under strict time, if a thread other than a daemon waited with a deadline throughout (time is
  // then let pass at the next point: pass_time).
  bool fair(uint32_t from) {
    // The threads enabled at every point of the stretch (each point's threads ascend).
    const Point& f = window_[from];
    std::vector<uint32_t> always(window_tids_.begin() + f.first, window_tids_.begin() + f.first + f.n);
    std::vector<uint32_t> stepped;
    uint32_t waiting = UINT32_MAX;
    for (size_t i = from; i < window_.size(); i++) {
      const Point& pt = window_[i];
      const auto b = window_tids_.begin() + pt.first, e = b + pt.n;
      std::erase_if(always, [&](uint32_t t) { return !std::binary_search(b, e, t); });
      if (pt.taken != kNoThread) stepped.push_back(pt.taken);
      waiting = std::min(waiting, pt.waiting);
    }
    std::sort(stepped.begin(), stepped.end());
    for (uint32_t t : always) {
      if (!std::binary_search(stepped.begin(), stepped.end(), t)) return false;
    }
    if (setup_.strict_time && waiting > 0) {
      pass_time_ = true;
      return false;
    }
    return true;
  }

  // The returns that make a loop unbounded: kLivelockVisits, or 8 per P where that is more. The
  // runtime's own loops over the Ps bring a state back once per P and round, without a change the
  // fingerprint sees (procresize runs p.init on every P, stealWork makes four rounds over allp,
  // each step at the same line and only the index and the pMask bits moving), so at 200 Ps and
  // more the start alone came back 200 times. 8 per P is twice stealWork's four rounds; up to
  // 25 Ps the constant decides, as before.
  uint32_t livelock_visits() const {
    size_t ps = 0;
    for (const rt::Runtime* r : runtimes_) {
      if (r != nullptr) ps = std::max(ps, r->allp.size());
    }
    return static_cast<uint32_t>(std::max<size_t>(kLivelockVisits, 8 * ps));
  }

  void restart_window() {
    visits_.clear();
    window_.clear();
    window_tids_.clear();
    hold_until_ = 0;
    round_robin_ = false;
  }

  int64_t last_step(uint32_t tid) const { return tid < last_.size() ? last_[tid] : -1; }

 public:
  static constexpr uint32_t kLivelockVisits = 200;
  std::vector<uint64_t> path_;  // the fingerprint at every point, with kLivelock
  uint64_t livelock_fp_ = 0;
  uint32_t livelock_visits_ = kLivelockVisits;  // the returns that made the livelock reported

 private:
  static constexpr uint32_t kNoThread = UINT32_MAX;
  struct Visits {
    uint32_t n;      // visits since the window began
    uint32_t first;  // the window's point of the first of them
  };
  std::unordered_map<uint64_t, Visits> visits_;  // looked up, never iterated
  // The points since the last progress (user code ending a wait), for fairness: each point's
  // enabled threads (a stretch of window_tids_), the thread that took its step, and how many
  // threads other than daemons waited with a deadline there.
  struct Point {
    uint64_t fp = 0;
    uint32_t first = 0, n = 0;
    uint32_t taken = kNoThread;
    uint32_t waiting = 0;
  };
  std::vector<Point> window_;
  std::vector<uint32_t> window_tids_;
  size_t hold_until_ = 0;           // no stretch is judged before the window is this long
  bool round_robin_ = false;        // forced(): an unfair cycle was found since the window began
  std::vector<int64_t> last_;       // by thread: the step it last took; -1: none
  bool pass_time_ = false;          // strict time: let the wait due first end (pass_time)
  bool pass_asked_ = false;         // the engine asked at this point, and offers those waits

  // For a run that reaches the step limit: where each of the program's goroutines is, and the
  // scenario loop it is in, so that the user can see what does not end.
  std::string where_goroutines_are() const {
    std::string out;
    for (uint32_t p = 0; p < runtimes_.size(); p++) {
      if (checked(p)) out += where_goroutines_are(p);
    }
    return out;
  }

  std::string where_goroutines_are(uint32_t proc) const {
    const scenario::Scenario& sc = program_of(*setup_.scenario, proc);
    const rt::Runtime* rtm = runtimes_[proc];
    std::string out;
    for (const rt::g* gp : rtm->allgs) {
      const uint32_t st = gp->atomicstatus.peek() & ~rt::_Gscan;
      if (rt::isSystemGoroutine(gp) || gp->task == nullptr || st == rt::_Gdead || st == rt::_Gidle) continue;
      const auto* t = static_cast<const workload::Task*>(gp->task);
      if (t->func < 0 || static_cast<size_t>(t->func) >= sc.funcs.size()) continue;
      const scenario::Function& f = sc.funcs[static_cast<size_t>(t->func)];
      const int32_t pc = std::clamp<int32_t>(t->pc, 0, std::max<int32_t>(static_cast<int32_t>(f.code.size()) - 1, 0));
      out += "\n  " + about(proc) + "G" + std::to_string(gp->goid) + " (" + f.name + ")";
      if (!f.code.empty()) out += " at " + sc.source + ":" + std::to_string(f.code[static_cast<size_t>(pc)].line);
      for (const scenario::Loop& l : sc.loops) {
        if (l.func != t->func || pc < l.begin || pc >= l.end) continue;
        const int32_t line = f.code[static_cast<size_t>(l.begin)].line;
        out += ", in the " + std::string(l.kind == scenario::LoopKind::Forever ? "endless " : "") + "loop at " +
               sc.source + ":" + std::to_string(line);
      }
    }
    return out;
  }

  static const rt::g* first_queued(const rt::Runtime& r) {
    for (const rt::p* pp : r.allp) {
      const uint32_t h = pp->runqhead.peek(), t = pp->runqtail.peek();
      if (h != t) return pp->runq[h % rt::kRunqSize].peek();
      if (const rt::g* n = pp->runnext.peek()) return n;
    }
    return r.sched.runq.head();
  }

  // The stranded G waits until it runs; then the violation says for how long.
  bool follow_stranding(const engine::PointInfo& info) {
    if ((stranded_->atomicstatus.peek() & ~rt::_Gscan) == rt::_Grunnable) return false;
    const double us = static_cast<double>(info.now - stranded_at_) / 1e3;
    char buf[96];
    std::snprintf(buf, sizeof buf, "; G%lld waited %.3f us of virtual time more, until step %llu, before it ran",
                  static_cast<long long>(stranded_->goid), us, static_cast<unsigned long long>(ex_.steps));
    ex_.violation.message += buf;
    stranded_ = nullptr;
    violated_ = true;
    return true;
  }

  void log(const engine::Step& s, const engine::PointInfo& info, size_t n) {
    LoggedStep l;
    l.step = s;
    l.now = info.now;
    l.enabled = static_cast<uint32_t>(n);
    l.forced = ex_.forced;
    if (const rt::g* gp = s.g) {
      l.g = gp->goid;
      if (const rt::m* mp = gp->m) {
        l.m = mp->id;
        if (mp->p != nullptr) l.p = mp->p->id;
      }
    }
    ex_.log.push_back(l);
  }

  // An access's cell, read right after it was taken: no other thread has run since (the thread
  // that took it is the one stopping now), so this is the value it read or left.
  static void fill_post(LoggedStep& l) {
    const engine::Step& s = l.step;
    if (s.kind != engine::StepKind::Access || s.obj == nullptr || l.has_post) return;
    if (s.size == 4) l.post = *static_cast<const uint32_t*>(s.obj);
    if (s.size == 8) l.post = *static_cast<const uint64_t*>(s.obj);
    l.has_post = s.size == 4 || s.size == 8;
  }

  const CheckSetup& setup_;
  const ExecOptions& opt_;
  Execution& ex_;
  std::vector<rt::Runtime*> runtimes_;  // by process
  std::vector<bool> fresh_;             // by process: it took a step since its last test
  std::vector<StrandingMonitor> stranding_;  // by process (kStranding)
  std::vector<StarvationMonitor> starvation_;  // by process (kStarvation, strict time)
  std::vector<bool> daemon_;
  bool prev_progress_ = false;
  bool prev_user_ = false;
  bool violated_ = false;
  bool timed_out_ = false;
  const rt::g* stranded_ = nullptr;
  int64_t stranded_at_ = 0;
};

// The first violation of an assertion that this search checks. Latency assertions measure the
// clock, which under free time says only that a wait ended no earlier than its deadline (any wait
// may end late), so they are checked under strict time only.
const workload::AssertionViolation* first_checked(const CheckSetup& setup, const scenario::Scenario& program,
                                                  const std::vector<workload::AssertionViolation>& vs) {
  for (const workload::AssertionViolation& v : vs) {
    const scenario::AssertKind k = program.assertions[static_cast<size_t>(v.index)].kind;
    const bool timed = k == scenario::AssertKind::StartLatency || k == scenario::AssertKind::MaxRunnableLatency;
    if (setup.strict_time || !timed) return &v;
  }
  return nullptr;
}

// The first violated assertion of a checked process, and "process b: " for one of several.
std::pair<const workload::AssertionViolation*, std::string> first_assertion(const CheckSetup& setup,
                                                                            const engine::SimResult& r) {
  const scenario::Scenario& sc = *setup.scenario;
  if (sc.processes.empty() || r.processes.empty()) return {first_checked(setup, sc, r.violations), ""};
  for (uint32_t p = 0; p < sc.processes.size() && p < r.processes.size(); p++) {
    if (setup.process != kAllProcesses && p != setup.process) continue;
    if (const auto* v = first_checked(setup, program_of(sc, p), r.processes[p].violations))
      return {v, "process " + sc.processes[p].name + ": "};
  }
  return {nullptr, ""};
}

}  // namespace

Execution execute(const CheckSetup& setup, Policy& policy, const ExecOptions& opt) {
  Execution ex;
  PropertyMonitor mon(setup, opt, ex);
  Recorder rec(policy, &mon, ex, setup.process);
  engine::SimConfig cfg;
  cfg.procs = setup.procs;
  cfg.seed = setup.seed;
  cfg.gc = setup.gc;
  cfg.procs_auto = setup.procs_auto;
  cfg.containermaxprocs = setup.containermaxprocs;
  cfg.updatemaxprocs = setup.updatemaxprocs;
  cfg.cgroup = setup.cgroup;
  cfg.event_limit = setup.max_steps;
  cfg.chooser = &rec;
  cfg.daemon_rounds = setup.daemon_rounds;
  cfg.strict_time = setup.strict_time;
  cfg.time_limit = setup.max_time;
  cfg.trace_path = opt.trace_path;
  cfg.trace_metadata = opt.trace_metadata;
  const engine::SimResult r = engine::simulate(*setup.scenario, *setup.profile, cfg);
  using Stop = engine::Engine::Stop;
  switch (r.stop) {
    case Stop::AllExited:
      ex.how = "every thread exited";
      break;
    case Stop::Exit:
      ex.how = "the program exited (status " + std::to_string(r.exit_code) + ")";
      break;
    case Stop::Deadlock:
    case Stop::Livelock:
      ex.how = r.message;
      break;
    case Stop::EventLimit:
      ex.how = r.message;
      break;
    case Stop::TimeLimit:
      ex.how = r.message;
      break;
    case Stop::Fatal:
      ex.how = r.message;
      break;
    case Stop::Stopped:
      ex.how = "stopped by the checker";
      break;
  }
  if (mon.violated() && ex.violation.property == kLivelock) {
    const size_t n = livelock_cycle(mon.path_, mon.livelock_fp_);
    ex.violation.message = "the run came back to the same state " + std::to_string(mon.livelock_visits_) +
                           " times through steps of Ms, going round a cycle of " + std::to_string(n) +
                           " states (a strongly connected component of its state graph) with no progress; the "
                           "cycle is fair: every thread that could step throughout it took steps in it" +
                           (setup.strict_time ? ", and no thread but a daemon waited with a deadline" : "");
  }
  if (ex.pruned) {
    ex.end = Execution::End::Pruned;
  } else if (mon.timed_out()) {
    ex.end = Execution::End::TimeLimit;
    ex.how = "cut at the check's time limit after " + std::to_string(ex.steps) + " steps";
  } else if (mon.violated()) {
    ex.end = Execution::End::Violation;
  } else if (r.stop == Stop::Fatal && (setup.properties & kThrow) != 0) {
    ex.end = Execution::End::Violation;
    ex.violation = Violation{kThrow, r.message, ex.steps};
  } else if (r.stop == Stop::Deadlock && (setup.properties & kDeadlock) != 0) {
    ex.end = Execution::End::Violation;
    ex.violation = Violation{kDeadlock, r.message, ex.steps};
  } else if (r.stop == Stop::Livelock && (setup.properties & kLivelock) != 0) {
    // A spin-wait that nothing can end (the choice driver held it, and no other thread can move,
    // or each release found the same values again with no other goroutine moving): the program
    // would spin there forever. Without the livelock property the run ends here.
    ex.end = Execution::End::Violation;
    ex.violation = Violation{kLivelock, r.message, ex.steps};
  } else if (const auto [v, who] = first_assertion(setup, r); (setup.properties & kAssertions) != 0 && v != nullptr) {
    ex.end = Execution::End::Violation;
    ex.violation = Violation{kAssertions, who + v->assertion + ": " + v->detail, ex.steps};
  } else if (r.stop == Stop::EventLimit || r.stop == Stop::TimeLimit) {
    ex.end = Execution::End::StepLimit;
  } else if (!ex.violation.message.empty()) {  // a stranding that never ended
    ex.end = Execution::End::Violation;
    ex.violation.message += "; it was still waiting when the execution ended";
  }
  policy.finish(ex);
  return ex;
}

}  // namespace gmp::model
