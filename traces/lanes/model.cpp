// Loads a trace into the columnar model (model.h): events, lanes, counters, arrows, latencies.
#include "traces/lanes/model.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <numeric>
#include <unordered_map>

#include "traces/lanes/wire.h"
#include "traces/state_machine.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace gmp::lanes {

using trace::TraceFormatError;

const char* state_name(State s) {
  switch (s) {
    case State::Running: return "running";
    case State::Syscall: return "in syscall";
    case State::Spinning: return "spinning";
    case State::Parked: return "parked";
    case State::Runnable: return "runnable";
    case State::Blocked: return "blocked";
    case State::Throttled: return "throttled";
    case State::Count_: break;
  }
  return "?";
}

const char* marker_name(MarkerKind k) {
  switch (k) {
    case MarkerKind::PreemptRequest: return "preemption request";
    case MarkerKind::SignalSend: return "signal sent";
    case MarkerKind::SignalReceive: return "signal received";
    case MarkerKind::Handoff: return "handoff";
    case MarkerKind::Retake: return "sysmon retake";
    case MarkerKind::Count_: break;
  }
  return "?";
}

const char* kind_name(int kind) {
  if (!trace::Kind_IsValid(kind)) return "KIND_?";
  return trace::Kind_Name(static_cast<trace::Kind>(kind)).c_str();
}

// ---- Counter ----------------------------------------------------------------------------------

int64_t Counter64::value_at(int64_t t) const {
  const auto it = std::upper_bound(ts.begin(), ts.end(), t);
  return it == ts.begin() ? 0 : v[static_cast<size_t>(it - ts.begin() - 1)];
}

void Counter64::build_levels() {
  lo.clear();
  hi.clear();
  const std::vector<int64_t>*below_lo = &v, *below_hi = &v;
  while (below_lo->size() > 16) {
    const size_t n = (below_lo->size() + 15) / 16;
    std::vector<int64_t> up_lo(n), up_hi(n);
    for (size_t j = 0; j < n; ++j) {
      const auto a = static_cast<ptrdiff_t>(j * 16), b = static_cast<ptrdiff_t>(std::min(below_lo->size(), j * 16 + 16));
      up_lo[j] = *std::min_element(below_lo->begin() + a, below_lo->begin() + b);
      up_hi[j] = *std::max_element(below_hi->begin() + a, below_hi->begin() + b);
    }
    lo.push_back(std::move(up_lo));
    hi.push_back(std::move(up_hi));
    below_lo = &lo.back();
    below_hi = &hi.back();
  }
}

std::pair<int64_t, int64_t> Counter64::min_max_range(size_t a, size_t b) const {
  int64_t mn = INT64_MAX, mx = INT64_MIN;
  // As Counter::max_range: single entries at the ragged ends, whole blocks of the level above between.
  const std::vector<int64_t>*l_lo = &v, *l_hi = &v;
  size_t k = 0;
  for (;;) {
    if (b - a <= 32 || k >= lo.size()) {
      for (size_t i = a; i < b; ++i) mn = std::min(mn, (*l_lo)[i]), mx = std::max(mx, (*l_hi)[i]);
      return {mn, mx};
    }
    for (; a % 16 != 0; ++a) mn = std::min(mn, (*l_lo)[a]), mx = std::max(mx, (*l_hi)[a]);
    while (b % 16 != 0) --b, mn = std::min(mn, (*l_lo)[b]), mx = std::max(mx, (*l_hi)[b]);
    a /= 16;
    b /= 16;
    l_lo = &lo[k];
    l_hi = &hi[k];
    ++k;
  }
}

int32_t Counter::value_at(int64_t t) const {
  const auto it = std::upper_bound(ts.begin(), ts.end(), t);
  return it == ts.begin() ? 0 : v[static_cast<size_t>(it - ts.begin()) - 1];
}

void Counter::build_levels() {
  levels.clear();
  const std::vector<int32_t>* below = &v;
  while (below->size() > 16) {
    std::vector<int32_t> up((below->size() + 15) / 16);
    for (size_t j = 0; j < up.size(); ++j) {
      const size_t a = j * 16, b = std::min(below->size(), a + 16);
      up[j] = *std::max_element(below->begin() + static_cast<ptrdiff_t>(a), below->begin() + static_cast<ptrdiff_t>(b));
    }
    levels.push_back(std::move(up));
    below = &levels.back();
  }
  max_value = v.empty() ? 0 : std::max(0, *std::max_element(v.begin(), v.end()));
}

int32_t Counter::max_in(int64_t t0, int64_t t1) const {
  if (ts.empty()) return 0;
  // Samples in force during [t0, t1): the one at or before t0, through the last before t1.
  auto first = std::upper_bound(ts.begin(), ts.end(), t0);
  if (first == ts.begin() && ts[0] >= t1) return 0;
  const size_t a = first == ts.begin() ? 0 : static_cast<size_t>(first - ts.begin()) - 1;
  const size_t b = static_cast<size_t>(std::lower_bound(ts.begin(), ts.end(), t1) - ts.begin());  // exclusive
  const int32_t m = max_range(a, std::max(b, a + 1));
  return first == ts.begin() ? std::max(0, m) : m;  // before the first sample the value is 0
}

int32_t Counter::max_range(size_t a, size_t b) const {
  int32_t best = INT32_MIN;
  // Walk up the pyramid: take single entries at the ragged ends, whole blocks in between.
  const std::vector<int32_t>* lvl = &v;
  size_t k = 0;
  for (;;) {
    if (b - a <= 32 || k >= levels.size()) {
      for (size_t i = a; i < b; ++i) best = std::max(best, (*lvl)[i]);
      return best;
    }
    while (a % 16 != 0) best = std::max(best, (*lvl)[a++]);
    while (b % 16 != 0) best = std::max(best, (*lvl)[--b]);
    a /= 16;
    b /= 16;
    lvl = &levels[k++];
  }
}

// ---- Lane ---------------------------------------------------------------------------------------

void Lane::build_grid() {
  grid.clear();
  if (segs.empty()) return;
  const size_t cells = std::max<size_t>(1, segs.size() / 32);
  grid_t0 = segs.front().start;
  const int64_t span = std::max<int64_t>(1, segs.back().end() - grid_t0);
  grid_dt = std::max<int64_t>(1, (span + static_cast<int64_t>(cells) - 1) / static_cast<int64_t>(cells));
  grid.resize(cells + 1);
  grid_busy.resize(cells + 1);
  grid_span.assign(cells, 0);
  size_t i = 0;
  int64_t busy = 0;  // Running time of segs[0 .. i)
  for (size_t c = 0; c <= cells; ++c) {
    const int64_t t = grid_t0 + static_cast<int64_t>(c) * grid_dt;
    while (i < segs.size() && segs[i].end() <= t) {
      if (segs[i].state() == State::Running) busy += segs[i].end() - segs[i].start;
      ++i;
    }
    grid[c] = static_cast<uint32_t>(i);
    grid_busy[c] = busy;
    if (i < segs.size() && segs[i].start < t && segs[i].state() == State::Running) grid_busy[c] += t - segs[i].start;
  }
  for (size_t c = 0; c < cells; ++c) {
    int64_t span = 0;
    for (size_t k = grid[c]; k < grid[c + 1]; ++k) {
      span = std::max(span, segs[k].end() - segs[k].start);
      if (k > 0) span = std::max(span, segs[k].start - segs[k - 1].end());
    }
    grid_span[c] = span;
  }
  grid.shrink_to_fit();
  grid_busy.shrink_to_fit();
  grid_span.shrink_to_fit();
}

int64_t Lane::busy_before_coarse(int64_t t) const {
  if (grid.empty() || t <= grid_t0) return 0;
  const size_t cells = grid.size() - 1;
  const int64_t c = (t - grid_t0) / grid_dt;
  if (c >= static_cast<int64_t>(cells)) return grid_busy[cells];
  const auto ci = static_cast<size_t>(c);
  const int64_t into = t - (grid_t0 + c * grid_dt);
  const double f = static_cast<double>(into) / static_cast<double>(grid_dt);
  return grid_busy[ci] + static_cast<int64_t>(f * static_cast<double>(grid_busy[ci + 1] - grid_busy[ci]));
}

size_t Lane::first_ending_after(int64_t t) const {
  if (grid.empty()) return 0;
  const size_t cells = grid.size() - 1;
  if (t < grid_t0) t = grid_t0 - 1;
  const int64_t c = (t - grid_t0) / grid_dt;
  if (c >= static_cast<int64_t>(cells)) return segs.size();
  const size_t cell = t < grid_t0 ? 0 : static_cast<size_t>(c);
  const auto lo = segs.begin() + grid[cell], hi = segs.begin() + grid[cell + 1];
  return static_cast<size_t>(std::upper_bound(lo, hi, t, [](int64_t v, const Segment& s) { return v < s.end(); }) -
                             segs.begin());
}

// ---- Model accessors ---------------------------------------------------------------------------

std::string Model::meta(const std::string& key) const {
  for (const auto& [k, v] : metadata) {
    if (k == key) return v;
  }
  return "";
}

const Lane* Model::lane(uint32_t ref) const {
  const uint32_t i = ref_index(ref);
  switch (ref_type(ref)) {
    case LaneType::P: return i < p_lanes.size() ? &p_lanes[i] : nullptr;
    case LaneType::M: return i < m_lanes.size() ? &m_lanes[i] : nullptr;
    case LaneType::G: return i < g_lanes.size() ? &g_lanes[i] : nullptr;
  }
  return nullptr;
}

namespace {

int find_lane(const std::vector<Lane>& lanes, int64_t id, uint16_t process) {
  const auto it = std::lower_bound(lanes.begin(), lanes.end(), std::pair<uint16_t, int64_t>{process, id},
                                   [](const Lane& l, const std::pair<uint16_t, int64_t>& v) {
                                     return l.process != v.first ? l.process < v.first : l.id < v.second;
                                   });
  return it != lanes.end() && it->id == id && it->process == process ? static_cast<int>(it - lanes.begin()) : -1;
}

}  // namespace

int Model::p_lane_index(int64_t p, uint16_t process) const { return find_lane(p_lanes, p, process); }
int Model::m_lane_index(int64_t m, uint16_t process) const { return find_lane(m_lanes, m, process); }

const GInfo* Model::find_g(int64_t goid, uint16_t process) const {
  const auto it = std::lower_bound(gs.begin(), gs.end(), std::pair<uint16_t, int64_t>{process, goid},
                                   [](const GInfo& g, const std::pair<uint16_t, int64_t>& v) {
                                     return g.process != v.first ? g.process < v.first : g.goid < v.second;
                                   });
  return it != gs.end() && it->goid == goid && it->process == process ? &*it : nullptr;
}

const ProcessGroup& Model::group(uint16_t process) const {
  for (const ProcessGroup& g : processes) {
    if (g.id == process) return g;
  }
  return processes.front();
}

int64_t Model::step(uint32_t ev) const {
  const EvExtra* x = extra(ev);
  return x != nullptr ? x->step : -1;
}

const EvExtra* Model::extra(uint32_t ev) const {
  const auto it =
      std::lower_bound(extras.begin(), extras.end(), ev, [](const EvExtra& x, uint32_t v) { return x.ev < v; });
  return it != extras.end() && it->ev == ev ? &*it : nullptr;
}

uint32_t Model::segment_event(const Lane& lane, const Segment& s) const {
  auto it = std::lower_bound(events.begin(), events.end(), s.start, [](const Ev& e, int64_t v) { return e.ts < v; });
  const auto first = it;
  for (; it != events.end() && it->ts == s.start; ++it) {
    if (process_of(static_cast<uint32_t>(it - events.begin())) != lane.process) continue;
    const bool mine = s.g() != kNoG ? it->g == s.g() : (lane.type == LaneType::M ? it->m == lane.id : it->p == lane.id);
    if (mine) return static_cast<uint32_t>(it - events.begin());
  }
  return first == events.end() ? kNoEv : static_cast<uint32_t>(first - events.begin());
}

uint16_t Model::peer_m(uint32_t ev) const {
  const EvExtra* x = extra(ev);
  return x != nullptr ? x->peer_m : kNoId;
}
uint16_t Model::peer_p(uint32_t ev) const {
  const EvExtra* x = extra(ev);
  return x != nullptr ? x->peer_p : kNoId;
}
int32_t Model::count(uint32_t ev) const {
  const EvExtra* x = extra(ev);
  return x != nullptr ? x->count : -1;
}

template <class T>
static size_t cap_bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

size_t Model::memory_bytes() const {
  size_t n = sizeof(Model) + cap_bytes(clock_ts) + cap_bytes(events) + cap_bytes(extras) + cap_bytes(arrows) +
             cap_bytes(latencies) + cap_bytes(gs);
  for (const auto& v : arrows_of_kind) n += cap_bytes(v);
  for (const auto& l : labels) n += sizeof(std::string) + l.capacity();
  for (const auto* lanes : {&p_lanes, &m_lanes, &g_lanes}) {
    n += cap_bytes(*lanes);
    for (const Lane& l : *lanes) {
      n += cap_bytes(l.segs) + cap_bytes(l.busy_before) + cap_bytes(l.markers) + cap_bytes(l.grid) +
           cap_bytes(l.grid_busy) + cap_bytes(l.grid_span);
    }
  }
  auto counter = [](const Counter& c) {
    size_t b = cap_bytes(c.ts) + cap_bytes(c.v) + cap_bytes(c.levels);
    for (const auto& l : c.levels) b += cap_bytes(l);
    return b;
  };
  n += counter(global_queue) + counter(spinning_ms) + counter(idle_ps) + cap_bytes(local_queues);
  for (const Counter& c : local_queues) n += counter(c);
  n += cap_bytes(mark_workers);
  for (const auto* v : {&assists_of_p, &workers_of_p, &assists_of_g}) {
    for (const auto& x : *v) n += cap_bytes(x);
  }
  for (const Counter64* c : {&heap_alloc, &heap_goal}) {
    for (size_t k = 0; k < c->lo.size(); ++k) n += cap_bytes(c->lo[k]) + cap_bytes(c->hi[k]);
  }
  n += cap_bytes(ev_process) + cap_bytes(throttles) + cap_bytes(processes);
  for (const ProcessGroup& g : processes) n += counter(g.gomaxprocs);
  n += cap_bytes(gc_cycles) + cap_bytes(stw_pauses) + cap_bytes(assists) + cap_bytes(sweeps) +
       cap_bytes(heap_alloc.ts) + cap_bytes(heap_alloc.v) + cap_bytes(heap_goal.ts) + cap_bytes(heap_goal.v);
  return n;
}

static Lane make_lane(LaneType t, int32_t id, uint16_t process = 0) {
  Lane l;
  l.type = t;
  l.process = process;
  l.id = id;
  return l;
}

// ---- Building ----------------------------------------------------------------------------------

namespace {

// The open segment of a lane.
struct Track {
  bool open = false;
  State st = State::Running;
  int32_t g = kNoG;
  int64_t start = 0;
  uint32_t ev = 0;
  // What a Throttled segment put aside, to go on after it.
  bool saved_open = false;
  State saved_st = State::Running;
  int32_t saved_g = kNoG;
};

void close_track(Lane& lane, Track& t, int64_t ts) {
  if (t.open) {
    constexpr int64_t kMaxDur = 0xffffffffLL;
    for (int64_t a = t.start; a < ts; a += kMaxDur)
      lane.segs.push_back(Segment::make(a, std::min(ts, a + kMaxDur), t.g, t.st));
  }
  t.open = false;
}

void set_track(Lane& lane, Track& t, int64_t ts, State st, int32_t g, uint32_t ev) {
  if (t.open && t.st == st && t.g == g) return;
  close_track(lane, t, ts);
  t.open = true;
  t.st = st;
  t.g = g;
  t.start = ts;
  t.ev = ev;
}

void finish_lane(Lane& l) {
  l.segs.shrink_to_fit();
  l.markers.shrink_to_fit();
  l.busy_before.assign(l.segs.size() / 16 + 1, 0);
  int64_t sum = 0;
  for (size_t i = 0; i < l.segs.size(); ++i) {
    if (i % 16 == 0) l.busy_before[i / 16] = sum;
    if (l.segs[i].state() == State::Running) sum += l.segs[i].end() - l.segs[i].start;
  }
  if (l.segs.size() % 16 == 0) l.busy_before.back() = sum;  // the block after the last one
  l.build_grid();
}

void push_sample(Counter& c, int64_t ts, int32_t v) {
  if (c.v.empty() ? v == 0 : c.v.back() == v) return;  // counters start at 0
  if (!c.ts.empty() && c.ts.back() == ts) {
    c.v.back() = v;
    if (c.v.size() >= 2 && c.v[c.v.size() - 2] == v) {
      c.v.pop_back();
      c.ts.pop_back();
    }
    return;
  }
  c.ts.push_back(ts);
  c.v.push_back(v);
}

void finish_counter(Counter& c) {
  c.ts.shrink_to_fit();
  c.v.shrink_to_fit();
  c.build_levels();
}

// An event with all its fields, while loading.
struct Full {
  int64_t ts;
  int32_t g, peer_g;
  int32_t count;
  uint16_t m, p, peer_m, peer_p;
  uint8_t kind, reason, queue, wait_reason;
  uint16_t process;
};

// Per-G state while loading: dense for small goids, a hash map beyond.
struct GLoad {
  int64_t runnable_since = -1;
  uint32_t pending_unpark = kNoEv;  // arrow index
  int32_t info = -1;                // index into Model::gs
};

class GTable {
 public:
  GLoad& at(int32_t g, uint16_t process) {
    if (process != 0) return others_[static_cast<uint64_t>(process) << 32 | static_cast<uint32_t>(g)];
    if (g < kDense) {
      if (static_cast<size_t>(g) >= dense_.size())
        dense_.resize(std::max<size_t>(static_cast<size_t>(g) + 1, dense_.size() * 2));
      return dense_[static_cast<size_t>(g)];
    }
    return sparse_[g];
  }

 private:
  static constexpr int32_t kDense = 1 << 24;
  std::vector<GLoad> dense_;
  std::unordered_map<int32_t, GLoad> sparse_;
  std::unordered_map<uint64_t, GLoad> others_;  // the Gs of processes other than 0
};

class Builder {
 public:
  Builder(Model& m, const std::string& path) : m_(m), path_(path) {
    p_lane_of_.assign(kNoId, -1);
    m_lane_of_.assign(kNoId, -1);
    for (const ProcessGroup& g : m_.processes) {
      for (int32_t p = 0; p < g.num_ps && p < kNoId; ++p) p_lane(g.id, static_cast<uint16_t>(p));
    }
  }

  void add(const WireEvent& w, uint64_t offset) {
    const uint32_t idx = static_cast<uint32_t>(m_.events.size());
    if (idx >= kMaxEvents) fail(offset, "the viewer holds at most " + std::to_string(kMaxEvents) + " events");
    Full e{};
    if (w.ts < -kMaxAbsTs || w.ts > kMaxAbsTs) {
      fail(offset, "timestamp " + std::to_string(w.ts) + " is outside the viewer's range of +-2^61 ns");
    }
    if (m_.events.empty()) first_ts_ = w.ts;
    e.ts = std::max(w.ts, last_ts_);  // timestamps never decrease; a producer bug must not break the sort
    if (e.ts - first_ts_ > kMaxSpan) {
      fail(offset, "the trace spans more than the viewer's 2^50 ns (13 days): " + std::to_string(e.ts - first_ts_) +
                       " ns since its first event");
    }
    if (m_.step_axis) {
      m_.clock_ts.push_back(w.ts);
      e.ts = idx;
    }
    last_ts_ = e.ts;
    e.g = (w.has & kHasG) ? goid(w.g, offset) : kNoG;
    e.peer_g = (w.has & kHasPeerG) ? goid(w.peer_g, offset) : kNoG;
    e.count = (w.has & kHasCount) ? static_cast<int32_t>(std::clamp<int64_t>(w.count, 0, INT32_MAX)) : -1;
    e.m = (w.has & kHasM) ? id16(w.m, "m", offset) : kNoId;
    e.p = (w.has & kHasP) ? id16(w.p, "p", offset) : kNoId;
    e.peer_m = (w.has & kHasPeerM) ? id16(w.peer_m, "peer_m", offset) : kNoId;
    e.peer_p = (w.has & kHasPeerP) ? id16(w.peer_p, "peer_p", offset) : kNoId;
    e.kind = static_cast<uint8_t>(std::clamp(w.kind, 0, 255));
    e.reason = static_cast<uint8_t>(std::clamp(w.reason, 0, 255));
    e.queue = static_cast<uint8_t>(std::clamp(w.queue, 0, 255));
    e.wait_reason = static_cast<uint8_t>(std::clamp(w.wait_reason, 0, 255));
    if (w.process >= kMaxProcesses) {
      fail(offset, "process " + std::to_string(w.process) + " is outside the viewer's range 0 to " +
                       std::to_string(kMaxProcesses - 1));
    }
    e.process = static_cast<uint16_t>(w.process);
    if (e.process != 0 && m_.ev_process.empty()) m_.ev_process.assign(idx, 0);
    if (!m_.ev_process.empty()) m_.ev_process.push_back(e.process);
    group_index(e.process);
    if ((w.has & (kHasSignal | kHasObject | kHasPeerM | kHasPeerP | kHasCount | kHasStep | kHasValue)) ||
        w.user_op != 0 || w.phase != 0 || w.stw_reason != 0 || w.gc_worker_mode != 0 || !w.label.empty()) {
      EvExtra x{};
      x.ev = idx;
      x.count = e.count;
      x.peer_m = e.peer_m;
      x.peer_p = e.peer_p;
      x.object = w.object;
      x.signal = w.signal;
      x.has_signal = (w.has & kHasSignal) != 0;
      x.has_object = (w.has & kHasObject) != 0;
      x.step = (w.has & kHasStep) ? static_cast<int64_t>(std::min<uint64_t>(w.step, INT64_MAX)) : -1;
      x.user_op = static_cast<uint8_t>(std::clamp(w.user_op, 0, 255));
      x.phase = static_cast<uint8_t>(std::clamp(w.phase, 0, 255));
      x.label = w.label.empty() ? kNoEv : intern(w.label);
      x.value = (w.has & kHasValue) ? std::max<int64_t>(w.value, 0) : -1;
      x.stw_reason = static_cast<uint8_t>(std::clamp(w.stw_reason, 0, 255));
      x.gc_worker_mode = static_cast<uint8_t>(std::clamp(w.gc_worker_mode, 0, 255));
      m_.extras.push_back(x);
    }
    if (idx == 0) {
      m_.t_begin = e.ts;
      push_sample(m_.idle_ps, e.ts, idle_);
    }
    m_.events.push_back(Ev{e.ts, e.g, e.peer_g, e.m, e.p, e.kind, e.reason, e.queue, e.wait_reason});
    apply(e, idx);
    const trace::Rule& r = trace::rule(e.kind, e.reason);
    if (r.span != trace::GcSpan::None || r.counter != trace::Counter::None) gc(e, r, w, idx);
    if (e.kind == trace::KIND_GO_START && w.gc_worker_mode != 0 && e.p != kNoId && e.g != kNoG) {
      m_.mark_workers.push_back(GcInterval{e.ts, e.ts, idx, kNoEv, -1, e.g, e.m, e.p, 0,
                                           static_cast<uint8_t>(std::clamp(w.gc_worker_mode, 0, 255)), e.process});
    }
    if (r.throttle != 0 && e.m != kNoId) throttle(e, r, idx);
    if (r.sets_procs && (w.has & kHasValue) && w.value >= 1) {
      push_sample(m_.processes[group_index(e.process)].gomaxprocs, e.ts,
                  static_cast<int32_t>(std::min<int64_t>(w.value, INT32_MAX)));
    }
  }

  // The group of a process, made when first seen (a process the header does not list).
  size_t group_index(uint16_t process) {
    if (process < group_of_.size() && group_of_[process] >= 0) return static_cast<size_t>(group_of_[process]);
    for (size_t i = 0; i < m_.processes.size(); ++i) {
      if (m_.processes[i].id == process) return remember_group(process, i);
    }
    ProcessGroup g;
    g.id = process;
    m_.processes.push_back(std::move(g));
    return remember_group(process, m_.processes.size() - 1);
  }
  size_t remember_group(uint16_t process, size_t i) {
    if (group_of_.size() <= process) group_of_.resize(process + 1u, -1);
    group_of_[process] = static_cast<int>(i);
    return i;
  }

  // An M's throttled stretch: BEGIN opens it, END closes it (one open per M).
  void throttle(const Full& e, const trace::Rule& r, uint32_t idx) {
    const uint32_t key = static_cast<uint32_t>(e.process) << 16 | e.m;
    auto it = throttle_open_.find(key);
    if (r.throttle > 0) {
      if (it != throttle_open_.end()) return;  // throttled again: the first stretch goes on
      throttle_open_[key] = m_.throttles.size();
      m_.throttles.push_back(GcInterval{e.ts, e.ts, idx, kNoEv, -1, kNoG, e.m, e.p, 0, 0, e.process});
      return;
    }
    if (it != throttle_open_.end()) {
      m_.throttles[it->second].end = e.ts;
      m_.throttles[it->second].end_ev = idx;
      throttle_open_.erase(it);
    } else {  // throttled before the trace began
      m_.throttles.push_back(GcInterval{m_.t_begin, e.ts, kNoEv, idx, -1, kNoG, e.m, e.p, 0, 0, e.process});
    }
  }

  // The collector's spans, paired BEGIN to END (cycles and pauses: one at a time; assists per G;
  // sweeps per M), and its counters.
  void gc(const Full& e, const trace::Rule& r, const WireEvent& w, uint32_t idx) {
    using trace::GcSpan;
    const int64_t value = (w.has & kHasValue) ? w.value : -1;
    if (r.counter != trace::Counter::None) {
      if (value < 0) return;
      Counter64& c = r.counter == trace::Counter::HeapAlloc ? m_.heap_alloc : m_.heap_goal;
      c.ts.push_back(e.ts);
      c.v.push_back(value);
      c.max_value = std::max(c.max_value, value);
      return;
    }
    std::vector<GcInterval>& out = r.span == GcSpan::Cycle    ? m_.gc_cycles
                                   : r.span == GcSpan::Stw    ? m_.stw_pauses
                                   : r.span == GcSpan::Assist ? m_.assists
                                                              : m_.sweeps;
    const int64_t id = r.span == GcSpan::Assist ? e.g : r.span == GcSpan::Sweep ? e.m : 0;
    const uint64_t key = static_cast<uint64_t>(r.span) << 56 | static_cast<uint64_t>(e.process) << 40 |
                         static_cast<uint64_t>(id & 0xffffffffff);
    auto it = gc_open_.find(key);
    if (r.span_edge > 0) {
      if (it != gc_open_.end()) out[it->second].end = e.ts;  // an unclosed one ends at the next BEGIN
      gc_open_[key] = out.size();
      out.push_back(GcInterval{e.ts, e.ts, idx, kNoEv, r.span == GcSpan::Cycle ? value : -1, e.g, e.m, e.p,
                               static_cast<uint8_t>(std::clamp(w.stw_reason, 0, 255)), 0, e.process});
      return;
    }
    if (it != gc_open_.end()) {
      GcInterval& iv = out[it->second];
      iv.end = e.ts;
      iv.end_ev = idx;
      if (r.span == GcSpan::Sweep) iv.value = value;
      gc_open_.erase(it);
    } else {  // it began before the trace did
      out.push_back(GcInterval{m_.t_begin, e.ts, kNoEv, idx, value, e.g, e.m, e.p,
                               static_cast<uint8_t>(std::clamp(w.stw_reason, 0, 255)), 0, e.process});
    }
  }

  void finish() {
    const int64_t end = m_.events.empty() ? 0 : m_.events.back().ts;
    m_.t_end = end;
    for (const auto& [key, at] : gc_open_) {
      const auto span = static_cast<trace::GcSpan>(key >> 56);
      std::vector<GcInterval>& out = span == trace::GcSpan::Cycle    ? m_.gc_cycles
                                     : span == trace::GcSpan::Stw    ? m_.stw_pauses
                                     : span == trace::GcSpan::Assist ? m_.assists
                                                                     : m_.sweeps;
      out[at].end = end;
    }
    for (const auto& [key, at] : throttle_open_) m_.throttles[at].end = end;
    for (auto* v : {&m_.gc_cycles, &m_.stw_pauses, &m_.assists, &m_.sweeps, &m_.throttles}) {
      std::stable_sort(v->begin(), v->end(), [](const GcInterval& a, const GcInterval& b) { return a.start < b.start; });
      v->shrink_to_fit();
    }
    // Cycles and pauses are one at a time: a malformed trace's that overlap are clipped, so each
    // list is a sequence of disjoint intervals (the exporters' slices must not overlap).
    for (auto* v : {&m_.gc_cycles, &m_.stw_pauses}) {
      std::vector<size_t> last(m_.processes.size() + kMaxProcesses, SIZE_MAX);  // by process: its previous one
      for (size_t i = 0; i < v->size(); ++i) {
        size_t& prev = last[(*v)[i].process];
        if (prev != SIZE_MAX) {
          (*v)[i].start = std::max((*v)[i].start, (*v)[prev].end);
          (*v)[i].end = std::max((*v)[i].end, (*v)[i].start);
        }
        prev = i;
      }
    }
    m_.heap_alloc.name = "heap";
    m_.heap_goal.name = "heap goal";
    m_.heap_alloc.build_levels();
    m_.heap_goal.build_levels();
    for (size_t i = 0; i < m_.p_lanes.size(); ++i) close_track(m_.p_lanes[i], p_track_[i], end);
    for (size_t i = 0; i < m_.m_lanes.size(); ++i) close_track(m_.m_lanes[i], m_track_[i], end);
    // Lanes sorted by id; arrows and local queues follow.
    auto order = [](std::vector<Lane>& lanes, std::vector<uint32_t>& remap) {
      std::vector<uint32_t> perm(lanes.size());
      std::iota(perm.begin(), perm.end(), 0u);
      std::stable_sort(perm.begin(), perm.end(), [&](uint32_t a, uint32_t b) {
        return lanes[a].process != lanes[b].process ? lanes[a].process < lanes[b].process : lanes[a].id < lanes[b].id;
      });
      remap.assign(lanes.size(), 0);
      std::vector<Lane> sorted;
      sorted.reserve(lanes.size());
      for (uint32_t i = 0; i < perm.size(); ++i) {
        remap[perm[i]] = i;
        sorted.push_back(std::move(lanes[perm[i]]));
      }
      lanes = std::move(sorted);
      return perm;
    };
    std::vector<uint32_t> p_remap, m_remap;
    const std::vector<uint32_t> p_perm = order(m_.p_lanes, p_remap);
    order(m_.m_lanes, m_remap);
    std::vector<Counter> queues;
    for (uint32_t i : p_perm) queues.push_back(std::move(m_.local_queues[i]));
    m_.local_queues = std::move(queues);
    auto remap = [&](uint32_t ref) {
      const uint32_t i = ref_index(ref);
      return ref_type(ref) == LaneType::P ? lane_ref(LaneType::P, p_remap[i]) : lane_ref(LaneType::M, m_remap[i]);
    };
    std::erase_if(m_.arrows, [](const Arrow& a) { return a.kind == ArrowKind::Count_; });
    for (Arrow& a : m_.arrows) {
      a.src = remap(a.src);
      a.dst = remap(a.dst);
    }
    std::stable_sort(m_.arrows.begin(), m_.arrows.end(), [](const Arrow& a, const Arrow& b) { return a.t0 < b.t0; });
    m_.arrows.shrink_to_fit();
    for (uint32_t i = 0; i < m_.arrows.size(); ++i) {
      m_.arrows_of_kind[static_cast<size_t>(m_.arrows[i].kind)].push_back(i);
    }
    for (auto& v : m_.arrows_of_kind) v.shrink_to_fit();
    for (Lane& l : m_.p_lanes) finish_lane(l);
    for (Lane& l : m_.m_lanes) finish_lane(l);
    gc_per_p();
    m_.global_queue.name = "global queue";
    m_.spinning_ms.name = "spinning Ms";
    m_.idle_ps.name = "idle Ps";
    finish_counter(m_.global_queue);
    finish_counter(m_.spinning_ms);
    finish_counter(m_.idle_ps);
    for (size_t i = 0; i < m_.local_queues.size(); ++i) {
      const Lane& l = m_.p_lanes[i];
      m_.local_queues[i].name = (l.process != 0 ? std::to_string(l.process) + "/" : std::string()) + "P" +
                                std::to_string(l.id) + " local queue";
      finish_counter(m_.local_queues[i]);
    }
    // The groups: by process id, each with its range of lanes.
    std::sort(m_.processes.begin(), m_.processes.end(),
              [](const ProcessGroup& a, const ProcessGroup& b) { return a.id < b.id; });
    for (ProcessGroup& g : m_.processes) {
      auto range = [&](const std::vector<Lane>& lanes, uint32_t& b, uint32_t& e) {
        b = static_cast<uint32_t>(std::lower_bound(lanes.begin(), lanes.end(), g.id,
                                                   [](const Lane& l, uint16_t v) { return l.process < v; }) -
                                  lanes.begin());
        e = static_cast<uint32_t>(std::upper_bound(lanes.begin(), lanes.end(), g.id,
                                                   [](uint16_t v, const Lane& l) { return v < l.process; }) -
                                  lanes.begin());
      };
      range(m_.p_lanes, g.p_begin, g.p_end);
      range(m_.m_lanes, g.m_begin, g.m_end);
      g.gomaxprocs.name = "GOMAXPROCS";
      finish_counter(g.gomaxprocs);
    }
    std::sort(m_.gs.begin(), m_.gs.end(), [](const GInfo& a, const GInfo& b) {
      return a.process != b.process ? a.process < b.process : a.goid < b.goid;
    });
    m_.gs.shrink_to_fit();
    m_.latencies.shrink_to_fit();
    m_.extras.shrink_to_fit();
    m_.events.shrink_to_fit();
    m_.clock_ts.shrink_to_fit();
  }

  // Each mark worker's run ends where its G's run on the P lane does (contiguous segments of that
  // G from the GO_START on); then the assists and worker runs are indexed by P lane.
  void gc_per_p() {
    for (GcInterval& w : m_.mark_workers) {
      const int li = m_.p_lane_index(w.p, w.process);
      if (li < 0) continue;
      const Lane& l = m_.p_lanes[static_cast<size_t>(li)];
      for (size_t i = l.first_ending_after(w.start); i < l.segs.size(); ++i) {
        const Segment& s = l.segs[i];
        if (s.start > w.end || s.g() != w.g || s.state() != State::Running) break;
        w.end = s.end();
      }
    }
    m_.mark_workers.shrink_to_fit();
    auto index = [&](const std::vector<GcInterval>& items, std::vector<std::vector<uint32_t>>& out) {
      out.assign(m_.p_lanes.size(), {});
      for (uint32_t i = 0; i < items.size(); ++i) {
        const int li = items[i].p == kNoId ? -1 : m_.p_lane_index(items[i].p, items[i].process);
        if (li >= 0) out[static_cast<size_t>(li)].push_back(i);
      }
      for (auto& v : out) v.shrink_to_fit();
    };
    index(m_.assists, m_.assists_of_p);
    index(m_.mark_workers, m_.workers_of_p);
  }

 private:
  [[noreturn]] void fail(uint64_t offset, const std::string& what) const {
    throw TraceFormatError(path_, offset, what);
  }

  int32_t goid(int64_t g, uint64_t offset) const {
    if (g < 0 || g > INT32_MAX)
      fail(offset, "goid " + std::to_string(g) + " is outside the viewer's range 0 to 2^31-1");
    return static_cast<int32_t>(g);
  }
  uint16_t id16(int64_t v, const char* field, uint64_t offset) const {
    if (v < 0 || v >= kNoId) {
      fail(offset, std::string(field) + " " + std::to_string(v) + " is outside the viewer's range 0 to 65534");
    }
    return static_cast<uint16_t>(v);
  }
  uint32_t intern(std::string_view s) {
    auto it = label_ids_.find(std::string(s));
    if (it != label_ids_.end()) return it->second;
    const auto id = static_cast<uint32_t>(m_.labels.size());
    m_.labels.emplace_back(s);
    label_ids_.emplace(m_.labels.back(), id);
    return id;
  }

  // The lane index of (process, id): dense for process 0, hashed for the others.
  static int& lane_slot(std::vector<int>& dense, std::unordered_map<uint32_t, int>& others, uint16_t process, uint16_t id) {
    if (process == 0) return dense[id];
    return others.try_emplace(static_cast<uint32_t>(process) << 16 | id, -1).first->second;
  }
  int p_lane(uint16_t process, uint16_t p) {
    if (p == kNoId) return -1;
    int& slot = lane_slot(p_lane_of_, p_lane_others_, process, p);
    if (slot < 0) {
      slot = static_cast<int>(m_.p_lanes.size());
      m_.p_lanes.push_back(make_lane(LaneType::P, p, process));
      p_track_.emplace_back();
      m_.local_queues.emplace_back();
      p_busy_.push_back(0);
      direct_.push_back(kNoG);
      local_.push_back(0);
      if (p >= m_.processes[group_index(process)].num_ps) {  // a P the header did not announce: idle until acquired
        ++idle_;
      }
    }
    return slot;
  }
  int m_lane(uint16_t process, uint16_t m) {
    if (m == kNoId) return -1;
    int& slot = lane_slot(m_lane_of_, m_lane_others_, process, m);
    if (slot < 0) {
      slot = static_cast<int>(m_.m_lanes.size());
      m_.m_lanes.push_back(make_lane(LaneType::M, m, process));
      m_track_.emplace_back();
      m_pending_.push_back(kNoEv);
      m_syscall_p_.push_back(-1);
      spinning_.push_back(0);
    }
    return slot;
  }

  void local_add(int pl, int64_t ts, int32_t d) {
    if (pl < 0) return;
    local_[static_cast<size_t>(pl)] = std::max(0, local_[static_cast<size_t>(pl)] + d);
    push_sample(m_.local_queues[static_cast<size_t>(pl)], ts, local_[static_cast<size_t>(pl)]);
  }
  void global_add(int64_t ts, int32_t d) {
    global_ = std::max(0, global_ + d);
    push_sample(m_.global_queue, ts, global_);
  }
  void set_p_idle(int pl, int64_t ts, trace::PIdle s) {
    if (pl < 0) return;
    uint8_t& busy = p_busy_[static_cast<size_t>(pl)];
    const uint8_t now = s == trace::PIdle::Busy;
    if (busy != now) {
      idle_ += now ? -1 : 1;
      push_sample(m_.idle_ps, ts, idle_);
    }
    busy = now;
  }
  void set_spinning(int ml, int64_t ts, bool on) {
    if (ml < 0 || spinning_[static_cast<size_t>(ml)] == on) return;
    spinning_[static_cast<size_t>(ml)] = on;
    spin_count_ += on ? 1 : -1;
    push_sample(m_.spinning_ms, ts, spin_count_);
  }
  void marker(int pl, int ml, const Full& e, uint32_t idx, MarkerKind k) {
    Lane* l = pl >= 0 ? &m_.p_lanes[static_cast<size_t>(pl)] : ml >= 0 ? &m_.m_lanes[static_cast<size_t>(ml)] : nullptr;
    if (l != nullptr) l->markers.push_back(Marker{e.ts, idx, k});
  }
  uint32_t arrow(int64_t t0, uint32_t src, uint32_t dst, uint32_t idx, ArrowKind k) {
    m_.arrows.push_back(Arrow{t0, t0, src, dst, idx, k});
    return static_cast<uint32_t>(m_.arrows.size() - 1);
  }
  // Lane `lane` (track t) shows what `seg` says from e on.
  [[gnu::always_inline]] static void segment(Lane& lane, Track& t, trace::Seg seg, const Full& e, uint32_t idx) {
    switch (seg) {
      case trace::Seg::Keep: break;
      case trace::Seg::Running: set_track(lane, t, e.ts, State::Running, e.g, idx); break;
      case trace::Seg::Syscall: set_track(lane, t, e.ts, State::Syscall, e.g, idx); break;
      case trace::Seg::Spinning: set_track(lane, t, e.ts, State::Spinning, kNoG, idx); break;
      case trace::Seg::Parked: set_track(lane, t, e.ts, State::Parked, kNoG, idx); break;
      case trace::Seg::Idle: close_track(lane, t, e.ts); break;
      case trace::Seg::EndSpin:
        if (t.st == State::Spinning) close_track(lane, t, e.ts);
        break;
      case trace::Seg::Throttled: {
        if (t.open && t.st == State::Throttled) break;
        t.saved_open = t.open;
        t.saved_st = t.st;
        t.saved_g = t.g;
        const bool runs = t.open && (t.st == State::Running || t.st == State::Syscall);
        set_track(lane, t, e.ts, State::Throttled, runs ? t.g : e.g, idx);
        break;
      }
      case trace::Seg::Unthrottle:
        if (t.open && t.st == State::Throttled) {
          close_track(lane, t, e.ts);
          if (t.saved_open) set_track(lane, t, e.ts, t.saved_st, t.saved_g, idx);
        }
        t.saved_open = false;
        break;
    }
  }
  void p_segment(int pl, trace::Seg seg, const Full& e, uint32_t idx) {
    if (pl >= 0) segment(m_.p_lanes[static_cast<size_t>(pl)], p_track_[static_cast<size_t>(pl)], seg, e, idx);
  }
  void m_segment(int ml, trace::Seg seg, const Full& e, uint32_t idx) {
    if (ml >= 0) segment(m_.m_lanes[static_cast<size_t>(ml)], m_track_[static_cast<size_t>(ml)], seg, e, idx);
  }
  void p_close(int pl, int64_t ts) {
    if (pl >= 0) close_track(m_.p_lanes[static_cast<size_t>(pl)], p_track_[static_cast<size_t>(pl)], ts);
  }
  void m_close(int ml, int64_t ts) {
    if (ml >= 0) close_track(m_.m_lanes[static_cast<size_t>(ml)], m_track_[static_cast<size_t>(ml)], ts);
  }

  GLoad& g_at(const Full& e, const trace::Rule& r, uint32_t idx) {
    GLoad& gl = gtab_.at(e.g, e.process);
    if (gl.info < 0) {
      gl.info = static_cast<int32_t>(m_.gs.size());
      m_.gs.push_back(GInfo{e.g, kNoEv, e.ts, e.process});
    }
    if (r.creates_g() && m_.gs[static_cast<size_t>(gl.info)].create_ev == kNoEv) {
      m_.gs[static_cast<size_t>(gl.info)].create_ev = idx;
    }
    return gl;
  }

  // What the event's kind means (trace::rule) for its G, its M's and P's lanes, P ownership,
  // spinning, edges and instants; then the run queues, which only the viewer counts.
  void apply(const Full& e, uint32_t idx) {
    using namespace trace;
    const Rule& r = rule(e.kind, e.reason);
    // An M named by peer_m of M_CREATE is new: its lane opens here.
    if (e.kind == KIND_M_CREATE) {
      const uint16_t created =
          e.peer_m != kNoId && lane_slot(m_lane_of_, m_lane_others_, e.process, e.peer_m) < 0 ? e.peer_m : e.m;
      m_lane(e.process, created);
    }
    const int ml = m_lane(e.process, e.m);
    const int pl = p_lane(e.process, e.p);
    if (ml >= 0) {
      const auto mi = static_cast<size_t>(ml);
      // Any event of a parked M but one that parks it means it runs again; a woken M's arrow
      // ends here.
      if (m_track_[mi].open && m_track_[mi].st == State::Parked && r.m_seg != Seg::Parked) m_close(ml, e.ts);
      if (m_pending_[mi] != kNoEv) {
        Arrow& a = m_.arrows[m_pending_[mi]];
        a.t1 = e.ts;
        a.dst = lane_ref(LaneType::M, static_cast<uint32_t>(ml));
        m_pending_[mi] = kNoEv;
      }
    }
    if (e.g != kNoG) move_g(g_at(e, r, idx), r, e, idx, pl, ml);
    if (r.need == GStatus::Syscall && ml >= 0) {
      // The P left in syscall state ends its Syscall segment here, unless sysmon retook it and
      // it has run something else since (its open segment is no longer this G's).
      const int old = m_syscall_p_[static_cast<size_t>(ml)];
      if (old >= 0 && old != pl) {
        const Track& t = p_track_[static_cast<size_t>(old)];
        if (t.open && t.st == State::Syscall && t.g == e.g) p_close(old, e.ts);
      }
      m_syscall_p_[static_cast<size_t>(ml)] = -1;
    }
    if (r.to == GStatus::Syscall && ml >= 0) m_syscall_p_[static_cast<size_t>(ml)] = pl;
    if (r.p_idle != PIdle::Keep) set_p_idle(pl, e.ts, r.p_idle);
    if (r.own == POwn::Acquire && pl >= 0 && ml >= 0) {
      // The M that acquires a P passed along by a wake-up is the one woken.
      auto it = p_pending_.find(pl);
      if (it != p_pending_.end()) {
        Arrow& a = m_.arrows[it->second];
        a.t1 = e.ts;
        a.dst = lane_ref(LaneType::M, static_cast<uint32_t>(ml));
        p_pending_.erase(it);
      }
    }
    if (r.spin != 0) set_spinning(ml, e.ts, r.spin > 0);
    if (r.p_seg != Seg::Keep) p_segment(pl, r.p_seg, e, idx);
    if (r.m_seg != Seg::Keep) m_segment(ml, r.m_seg, e, idx);
    if (r.edge != Edge::None) edge(r, e, idx, pl, ml);
    if (r.instant != Instant::None) {
      const int on_m = !r.instant_on_target ? ml : pl < 0 ? m_lane(e.process, e.peer_m != kNoId ? e.peer_m : e.m) : -1;
      marker(pl, on_m, e, idx, marker_kind(r.instant));
    }
    queues(e, r, pl);
  }

  // The G's runnable time, for scheduling latencies: from when it becomes runnable to its start.
  void move_g(GLoad& gl, const trace::Rule& r, const Full& e, uint32_t idx, int pl, int ml) {
    using trace::GStatus;
    switch (r.to) {
      case GStatus::None:
        if (r.queues_g && gl.runnable_since < 0) gl.runnable_since = e.ts;
        break;
      case GStatus::Runnable:
        if (gl.runnable_since < 0) gl.runnable_since = e.ts;
        break;
      case GStatus::Running:
        if (!r.starts_g()) break;
        if (gl.runnable_since >= 0) {
          const int64_t wait = std::min<int64_t>(e.ts - gl.runnable_since, kMaxLatency);
          m_.latencies.push_back(LatencySample{idx, static_cast<uint32_t>(wait)});
        }
        gl.runnable_since = -1;
        if (gl.pending_unpark != kNoEv) {  // the arrow of whoever readied it ends where it starts
          Arrow& a = m_.arrows[gl.pending_unpark];
          a.t1 = e.ts;
          a.dst = pl >= 0 ? lane_ref(LaneType::P, static_cast<uint32_t>(pl))
                          : lane_ref(LaneType::M, static_cast<uint32_t>(ml));
          if (pl < 0 && ml < 0) a.kind = ArrowKind::Count_;
          gl.pending_unpark = kNoEv;
        }
        break;
      case GStatus::Waiting:
      case GStatus::Dead:
      case GStatus::Syscall: gl.runnable_since = -1; break;
    }
  }

  // The arrows: an edge starts here, and ends at a later event (see model.h).
  void edge(const trace::Rule& r, const Full& e, uint32_t idx, int pl, int ml) {
    switch (r.edge) {
      case trace::Edge::None:
      case trace::Edge::Create: break;
      case trace::Edge::Ready:
        if (e.g != kNoG && (pl >= 0 || ml >= 0)) {
          GLoad& gl = gtab_.at(e.g, e.process);
          const uint32_t src = pl >= 0 ? lane_ref(LaneType::P, static_cast<uint32_t>(pl))
                                       : lane_ref(LaneType::M, static_cast<uint32_t>(ml));
          if (gl.pending_unpark != kNoEv) m_.arrows[gl.pending_unpark].kind = ArrowKind::Count_;
          gl.pending_unpark = arrow(e.ts, src, src, idx, ArrowKind::Unpark);
        }
        break;
      case trace::Edge::Steal: {
        const int victim = p_lane(e.process, e.peer_p);
        if (victim >= 0 && pl >= 0) {
          arrow(e.ts, lane_ref(LaneType::P, static_cast<uint32_t>(victim)),
                lane_ref(LaneType::P, static_cast<uint32_t>(pl)), idx, ArrowKind::Steal);
        }
        break;
      }
      case trace::Edge::Wakeup: {
        if (ml < 0) break;
        const uint32_t src = lane_ref(LaneType::M, static_cast<uint32_t>(ml));
        const int target = e.peer_m != kNoId ? m_lane(e.process, e.peer_m) : -1;
        if (target >= 0) {
          auto& pend = m_pending_[static_cast<size_t>(target)];
          if (pend != kNoEv) m_.arrows[pend].kind = ArrowKind::Count_;
          pend = arrow(e.ts, src, src, idx, ArrowKind::Wakeup);
        } else {
          const int tp = p_lane(e.process, e.peer_p != kNoId ? e.peer_p : e.p);
          if (tp >= 0) {
            auto [it, fresh] = p_pending_.try_emplace(tp, 0u);
            if (!fresh) m_.arrows[it->second].kind = ArrowKind::Count_;
            it->second = arrow(e.ts, src, src, idx, ArrowKind::Wakeup);
          }
        }
        break;
      }
    }
  }

  static MarkerKind marker_kind(trace::Instant i) {
    switch (i) {
      case trace::Instant::PreemptRequest: return MarkerKind::PreemptRequest;
      case trace::Instant::SignalSend: return MarkerKind::SignalSend;
      case trace::Instant::SignalReceive: return MarkerKind::SignalReceive;
      case trace::Instant::Handoff: return MarkerKind::Handoff;
      case trace::Instant::Retake:
      case trace::Instant::None: break;
    }
    return MarkerKind::Retake;
  }

  // Run-queue lengths, from the counts of RUNQ_PUT, RUNQ_GET and STEAL and the starts that take a
  // queued G (not one a steal or the global queue handed over directly).
  void queues(const Full& e, const trace::Rule& r, int pl) {
    using namespace trace;
    if (r.starts_g()) {
      if (pl >= 0) {
        auto& d = direct_[static_cast<size_t>(pl)];
        if (d != e.g) local_add(pl, e.ts, -1);
        d = kNoG;
      }
      return;
    }
    const int32_t n = std::max(e.count, 1);
    switch (e.kind) {
      case KIND_RUNQ_PUT:
        if (e.queue == QUEUE_GLOBAL) {
          global_add(e.ts, n);
          if (e.reason == REASON_RUNQ_OVERFLOW) local_add(pl, e.ts, -(n - 1));
        } else if (e.reason != REASON_KICKED_FROM_RUNNEXT) {
          local_add(pl, e.ts, n);
        }
        break;
      case KIND_RUNQ_GET:
        if (e.queue == QUEUE_GLOBAL) {
          global_add(e.ts, -n);
          local_add(pl, e.ts, n - 1);
        } else {
          local_add(pl, e.ts, -n);
        }
        if (pl >= 0) direct_[static_cast<size_t>(pl)] = e.g;
        break;
      case KIND_STEAL: {
        const int victim = p_lane(e.process, e.peer_p);
        local_add(victim, e.ts, -n);
        local_add(pl, e.ts, n - 1);
        if (pl >= 0) direct_[static_cast<size_t>(pl)] = e.g;
        break;
      }
      default: break;
    }
  }

  Model& m_;
  std::string path_;
  int64_t last_ts_ = INT64_MIN;
  int64_t first_ts_ = 0;
  // Bounds on time: within them no sum of a timestamp and a duration overflows, and a lane
  // segment longer than 2^32 ns splits into at most 2^18 pieces (a longer span would let a
  // two-event trace ask for billions).
  static constexpr int64_t kMaxAbsTs = int64_t{1} << 61, kMaxSpan = int64_t{1} << 50;
  std::vector<int> p_lane_of_, m_lane_of_;  // id -> lane index (process 0)
  std::unordered_map<uint32_t, int> p_lane_others_, m_lane_others_;  // process << 16 | id -> lane index
  std::vector<int> group_of_;                                         // process -> index in Model::processes
  std::map<uint32_t, size_t> throttle_open_;  // process << 16 | M -> its open stretch in Model::throttles
  std::vector<Track> p_track_, m_track_;
  std::vector<uint32_t> m_pending_;              // a wake-up arrow waiting for this M's next event
  std::unordered_map<int, uint32_t> p_pending_;  // a wake-up arrow waiting for this P's next acquire
  std::vector<int> m_syscall_p_;
  std::vector<uint8_t> spinning_;
  std::vector<uint8_t> p_busy_;  // 1: off the idle list (held, or left in a system call)
  std::vector<int32_t> direct_;   // the G a P took straight from a steal or the global queue
  std::vector<int32_t> local_;
  int32_t global_ = 0, spin_count_ = 0;
  int32_t idle_ = 0;
  GTable gtab_;
  std::unordered_map<std::string, uint32_t> label_ids_;
  std::map<uint64_t, size_t> gc_open_;  // the open GC spans by (span, G or M): index in their list

 public:
  void set_idle(int32_t n) { idle_ = n; }
};

// The file, mapped read-only for the loader.
struct Mapping {
  const uint8_t* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data != nullptr && size != 0) munmap(const_cast<uint8_t*>(data), size);
  }
};

}  // namespace

Model load_trace(const std::string& path, const LoadOptions& opt) {
  Model m;
  m.path = path;
  uint64_t start = 0;
  try {
    trace::TraceReader reader(path);  // magic, version, Header and their errors
    const trace::Header& h = reader.header();
    m.producer = h.producer();
    for (const auto& md : h.metadata()) m.metadata.emplace_back(md.key(), md.value());
    m.schema_version = h.schema_version();
    m.num_ps = std::clamp(h.num_ps(), 0, 65534);
    for (const trace::Process& p : h.processes()) {
      if (p.id() >= kMaxProcesses) {
        throw TraceFormatError(path, 0, "process " + std::to_string(p.id()) + " is outside the viewer's range 0 to " +
                                            std::to_string(kMaxProcesses - 1));
      }
      ProcessGroup g;
      g.id = static_cast<uint16_t>(p.id());
      g.name = p.name();
      g.num_ps = std::clamp(p.num_ps(), 0, 65534);
      g.cpu_quota = p.cpu_quota();
      g.cpu_period = p.cpu_period();
      m.processes.push_back(std::move(g));
    }
    if (m.processes.empty()) {
      ProcessGroup g;
      g.num_ps = m.num_ps;
      m.processes.push_back(std::move(g));
    }
    m.clock = h.clock();
    start = reader.offset();
    m.step_axis =
        opt.axis == LoadOptions::Axis::Steps || (opt.axis == LoadOptions::Axis::Auto && m.producer == "gmpsim check");
  } catch (const TraceFormatError& e) {
    if (e.problem().rfind("unsupported schema version", 0) != 0) throw;
    throw TraceFormatError(path, e.offset(),
                           e.problem() + "; this trace needs a gmpview that reads its schema version (this one reads " +
                               std::to_string(trace::kSchemaVersion) + ")");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw TraceFormatError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw TraceFormatError(path, 0, "cannot stat");
  }
  Mapping map;
  map.size = static_cast<size_t>(st.st_size);
  if (map.size > start) {
    void* p = mmap(nullptr, map.size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw TraceFormatError(path, 0, std::string("cannot map: ") + std::strerror(errno));
    }
    map.data = static_cast<const uint8_t*>(p);
    madvise(p, map.size, MADV_SEQUENTIAL);
  }
  ::close(fd);
  const uint8_t* const base = map.data;
  const uint8_t* const end = base != nullptr ? base + map.size : nullptr;  // no events: nothing mapped

  // First pass: count the records, so the event array is allocated once, at its size.
  size_t count = 0;
  for (const uint8_t* p = base ? base + start : nullptr; p != nullptr && p < end; ++count) {
    uint64_t len;
    const uint8_t* q = read_varint(p, end, len);
    if (q == nullptr || len > static_cast<uint64_t>(end - q)) break;
    p = q + len;
  }
  m.events.reserve(count);
  if (m.step_axis) m.clock_ts.reserve(count);

  Builder b(m, path);
  int32_t idle = 0;
  for (const ProcessGroup& g : m.processes) idle += g.num_ps;
  b.set_idle(idle);
  WireEvent w;
  uint64_t off = start;
  while (base != nullptr && off < map.size) {
    const uint8_t* p = base + off;
    uint64_t len = 0;
    const uint8_t* q = read_varint(p, end, len);
    if (q == nullptr) {
      const bool cut = end - p < 10;
      throw TraceFormatError(path, off,
                             cut ? "truncated: expected the length of an Event record, the file ends inside it"
                                 : "malformed length of an Event record: varint overflows 64 bits");
    }
    if (len > trace::kMaxRecordBytes) {
      throw TraceFormatError(path, off,
                             "malformed length of an Event record: " + std::to_string(len) +
                                 " bytes exceeds the limit of " + std::to_string(trace::kMaxRecordBytes));
    }
    if (len > static_cast<uint64_t>(end - q)) {
      throw TraceFormatError(path, off,
                             "truncated: an Event record declares " + std::to_string(len) +
                                 " bytes, the file ends after " + std::to_string(end - q));
    }
    if (!decode_event(q, len, w)) {
      throw TraceFormatError(path, off,
                             "unparsable record: an Event record of " + std::to_string(len) +
                                 " bytes is not a valid gmp.trace.Event message");
    }
    b.add(w, off);
    off = static_cast<uint64_t>(q + len - base);
  }
  b.finish();
  // The loader's temporaries (per-G state, the old capacity of shrunk arrays) go back to the
  // system, so what stays resident is the model.
  malloc_trim(0);
  return m;
}

// ---- G lanes -----------------------------------------------------------------------------------

void Model::build_g_lanes() {
  if (!g_lanes.empty() || gs.empty()) return;
  g_lanes.resize(gs.size());
  std::vector<Track> tracks(gs.size());
  for (size_t i = 0; i < gs.size(); ++i) g_lanes[i] = make_lane(LaneType::G, gs[i].goid, gs[i].process);
  auto lane_of = [&](int32_t g, uint16_t process) { return static_cast<size_t>(find_g(g, process) - gs.data()); };
  for (uint32_t i = 0; i < events.size(); ++i) {
    const Ev& e = events[i];
    if (e.g == kNoG) continue;
    const size_t li = lane_of(e.g, process_of(i));
    Lane& l = g_lanes[li];
    Track& t = tracks[li];
    const trace::Rule& r = trace::rule(e.kind, e.reason);
    if (r.queues_g) {
      set_track(l, t, e.ts, State::Runnable, e.g, i);
      continue;
    }
    switch (r.to) {
      case trace::GStatus::None: break;
      case trace::GStatus::Runnable: set_track(l, t, e.ts, State::Runnable, e.g, i); break;
      case trace::GStatus::Running: set_track(l, t, e.ts, State::Running, e.g, i); break;
      case trace::GStatus::Waiting: set_track(l, t, e.ts, State::Blocked, e.g, i); break;
      case trace::GStatus::Syscall: set_track(l, t, e.ts, State::Syscall, e.g, i); break;
      case trace::GStatus::Dead: close_track(l, t, e.ts); break;
    }
  }
  for (size_t i = 0; i < g_lanes.size(); ++i) {
    close_track(g_lanes[i], tracks[i], t_end);
    finish_lane(g_lanes[i]);
  }
  assists_of_g.assign(g_lanes.size(), {});
  for (uint32_t i = 0; i < assists.size(); ++i) {
    if (const GInfo* gi = find_g(assists[i].g, assists[i].process); gi != nullptr) assists_of_g[static_cast<size_t>(gi - gs.data())].push_back(i);
  }
}

// ---- Describing events -------------------------------------------------------------------------

namespace {

void append(std::string& out, const char* name, const char* value) {
  out += name;
  out += ": ";
  out += value;
  out += '\n';
}

void append_int(std::string& out, const char* name, int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  append(out, name, buf);
}

}  // namespace

void describe_event(const Model& m, uint32_t ev, std::string& out) {
  out.clear();
  if (ev >= m.events.size()) return;
  const Ev& e = m.events[ev];
  append_int(out, "event", ev);
  if (m.step_axis) {
    append_int(out, "ts (ns)", m.clock_ts[ev]);
  } else {
    append_int(out, "ts (ns)", e.ts);
  }
  append(out, "kind", kind_name(e.kind));
  if (e.reason != 0) {
    append(out, "reason",
           trace::Reason_IsValid(e.reason) ? trace::Reason_Name(static_cast<trace::Reason>(e.reason)).c_str() : "?");
  }
  if (const uint16_t pr = m.process_of(ev); pr != 0 || m.processes.size() > 1) {
    const ProcessGroup& g = m.group(pr);
    append(out, "process", (std::to_string(pr) + (g.name.empty() ? "" : " (" + g.name + ")")).c_str());
  }
  if (e.g != kNoG) append_int(out, "g", e.g);
  if (e.m != kNoId) append_int(out, "m", e.m);
  if (e.p != kNoId) append_int(out, "p", e.p);
  if (e.queue != 0) {
    append(out, "queue",
           trace::Queue_IsValid(e.queue) ? trace::Queue_Name(static_cast<trace::Queue>(e.queue)).c_str() : "?");
  }
  if (e.peer_g != kNoG) append_int(out, "peer_g", e.peer_g);
  const EvExtra* x = m.extra(ev);
  if (x != nullptr && x->peer_m != kNoId) append_int(out, "peer_m", x->peer_m);
  if (x != nullptr && x->peer_p != kNoId) append_int(out, "peer_p", x->peer_p);
  if (x != nullptr && x->count >= 0) append_int(out, "count", x->count);
  if (e.wait_reason != 0) {
    append(out, "wait_reason",
           trace::WaitReason_IsValid(e.wait_reason)
               ? trace::WaitReason_Name(static_cast<trace::WaitReason>(e.wait_reason)).c_str()
               : "?");
  }
  if (x != nullptr) {
    if (x->has_signal) append_int(out, "signal", x->signal);
    if (x->user_op != 0) {
      append(
          out, "user_op",
          trace::UserOp_IsValid(x->user_op) ? trace::UserOp_Name(static_cast<trace::UserOp>(x->user_op)).c_str() : "?");
    }
    if (x->has_object) append_int(out, "object", static_cast<int64_t>(x->object));
    if (x->step >= 0) append_int(out, "checker step", x->step);
    if (x->phase != 0) append_int(out, "phase", x->phase);
    if (x->label != kNoEv) append(out, "label", m.labels[x->label].c_str());
    if (x->stw_reason != 0) {
      append(out, "stw_reason",
             trace::StwReason_IsValid(x->stw_reason)
                 ? trace::StwReason_Name(static_cast<trace::StwReason>(x->stw_reason)).c_str()
                 : "?");
    }
    if (x->gc_worker_mode != 0) {
      append(out, "gc_worker_mode",
             trace::GcWorkerMode_IsValid(x->gc_worker_mode)
                 ? trace::GcWorkerMode_Name(static_cast<trace::GcWorkerMode>(x->gc_worker_mode)).c_str()
                 : "?");
    }
    if (x->value >= 0) append_int(out, "value", x->value);
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
}

}  // namespace gmp::lanes
