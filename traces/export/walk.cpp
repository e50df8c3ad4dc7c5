// The exporters' time-ordered walk over the lane model: see walk.h.
#include "traces/export/walk.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "traces/state_machine.h"

namespace gmp::exporter {

using lanes::Lane;
using lanes::Segment;
using lanes::State;

const char* group_name(Group g) {
  switch (g) {
    case Group::Ps: return "Ps";
    case Group::Ms: return "Ms";
    case Group::Scheduler: return "scheduler";
    case Group::GC: return "GC";
    case Group::Count_: break;
  }
  return "?";
}

std::string slice_name(int32_t g, State s) {
  switch (s) {
    case State::Running: return "G" + std::to_string(g);
    case State::Syscall: return "G" + std::to_string(g) + " syscall";
    default: return lanes::state_name(s);
  }
}

std::string stw_reason_name(int reason) {
  std::string n = trace::StwReason_IsValid(reason) ? trace::StwReason_Name(static_cast<trace::StwReason>(reason)) : "";
  if (n.rfind("STW_REASON_", 0) == 0) n = n.substr(11);
  for (char& c : n) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return n.empty() ? "unknown" : n;
}

std::string slice_name(const Track& t, const Item& it) {
  if (t.spans == nullptr || it.gc == nullptr) return slice_name(it.g, it.state);
  switch (static_cast<trace::GcSpan>(t.gc_span)) {
    case trace::GcSpan::Cycle: return it.gc->value >= 0 ? "GC " + std::to_string(it.gc->value) : "GC";
    case trace::GcSpan::Stw: return "STW " + stw_reason_name(it.gc->stw_reason);
    case trace::GcSpan::Assist: return "mark assist";
    case trace::GcSpan::Sweep: return "sweep";
    case trace::GcSpan::None: break;
  }
  return "?";
}

const char* arrow_name(lanes::ArrowKind k) {
  switch (k) {
    case lanes::ArrowKind::Steal: return "steal";
    case lanes::ArrowKind::Wakeup: return "M wake-up";
    case lanes::ArrowKind::Unpark: return "G wake-up";
    case lanes::ArrowKind::Count_: break;
  }
  return "?";
}

namespace {

// "server (GOMAXPROCS 2, quota 1.5 CPUs)".
std::string process_label(const lanes::ProcessGroup& g) {
  std::string s = g.name.empty() ? "process " + std::to_string(g.id) : g.name;
  s += " (GOMAXPROCS " + std::to_string(g.num_ps);
  if (g.cpu_quota > 0) {
    char q[32];
    std::snprintf(q, sizeof q, "%.4g", g.cpu_quota);
    s += std::string(", quota ") + q + " CPUs";
  }
  return s + ")";
}

}  // namespace

Walk::Walk(const lanes::Model& m) : m_(m) {
  per_process_ = m.processes.size() > 1;
  // The group of a process's track: its group, one process: the kind's.
  std::vector<uint32_t> gid_of(lanes::kMaxProcesses, 0);
  if (per_process_) {
    for (size_t k = 0; k < m.processes.size(); ++k) {
      gid_of[m.processes[k].id] = static_cast<uint32_t>(k);
      groups_.push_back(process_label(m.processes[k]));
    }
    groups_.push_back("machine");
  } else {
    const int n = static_cast<int>(m.has_gc() ? Group::Count_ : Group::GC);
    for (int g = 0; g < n; ++g) groups_.push_back(group_name(static_cast<Group>(g)));
  }
  auto gid = [&](Group g, uint16_t process) { return per_process_ ? gid_of[process] : static_cast<uint32_t>(g); };
  const uint32_t machine = per_process_ ? static_cast<uint32_t>(m.processes.size()) : static_cast<uint32_t>(Group::Scheduler);
  auto track = [&](Group g, uint16_t process, std::string name, bool counter, const Lane* l, const lanes::Counter* c) {
    Track t{g, gid(g, process), std::move(name), counter, l, c};
    tracks_.push_back(std::move(t));
  };
  for (const Lane& l : m.p_lanes) track(Group::Ps, l.process, "P" + std::to_string(l.id), false, &l, nullptr);
  for (const Lane& l : m.m_lanes) track(Group::Ms, l.process, "M" + std::to_string(l.id), false, &l, nullptr);
  const auto lanes_end = static_cast<uint32_t>(tracks_.size());
  for (size_t i = 0; i < m.local_queues.size(); ++i) {
    track(Group::Ps, m.p_lanes[i].process, per_process_ ? "P" + std::to_string(m.p_lanes[i].id) + " local queue"
                                                        : m.local_queues[i].name,
          true, nullptr, &m.local_queues[i]);
  }
  for (const lanes::Counter* c : {&m.global_queue, &m.spinning_ms, &m.idle_ps}) {
    tracks_.push_back(Track{Group::Scheduler, machine, c->name, true, nullptr, c});
  }
  for (const lanes::ProcessGroup& g : m.processes) {
    if (!g.gomaxprocs.ts.empty()) track(Group::Scheduler, g.id, g.gomaxprocs.name, true, nullptr, &g.gomaxprocs);
  }
  const auto counters_end = static_cast<uint32_t>(tracks_.size());
  if (m.has_gc()) {
    // Cycles and pauses by process, assists by G and sweeps by M, each a list of its own (ordered
    // maps: ids in order). One process: cycles and pauses are the model's own lists.
    std::map<uint16_t, std::vector<lanes::GcInterval>> cycles, pauses;
    std::map<std::pair<uint16_t, int32_t>, std::vector<lanes::GcInterval>> by_g;
    std::map<std::pair<uint16_t, uint16_t>, std::vector<lanes::GcInterval>> by_m;
    if (per_process_) {
      for (const lanes::GcInterval& iv : m.gc_cycles) cycles[iv.process].push_back(iv);
      for (const lanes::GcInterval& iv : m.stw_pauses) pauses[iv.process].push_back(iv);
    }
    for (const lanes::GcInterval& iv : m.assists) by_g[{iv.process, iv.g}].push_back(iv);
    for (const lanes::GcInterval& iv : m.sweeps) by_m[{iv.process, iv.m}].push_back(iv);
    gc_split_.reserve(cycles.size() + pauses.size() + by_g.size() + by_m.size());  // the tracks point into it
    auto add = [&](uint16_t process, const std::string& name, const std::vector<lanes::GcInterval>* v, trace::GcSpan k) {
      Track t{Group::GC, gid(Group::GC, process), name, false, nullptr, nullptr};
      t.spans = v;
      t.gc_span = static_cast<uint8_t>(k);
      tracks_.push_back(t);
    };
    // A track's slices must not overlap (only a malformed trace's could): each starts where the
    // one before it ended, at the earliest.
    auto clip = [](std::vector<lanes::GcInterval>& v) {
      for (size_t i = 1; i < v.size(); ++i) {
        v[i].start = std::max(v[i].start, v[i - 1].end);
        v[i].end = std::max(v[i].end, v[i].start);
      }
    };
    if (!per_process_) {
      if (!m.gc_cycles.empty()) add(0, "GC cycles", &m.gc_cycles, trace::GcSpan::Cycle);
      if (!m.stw_pauses.empty()) add(0, "stop-the-world", &m.stw_pauses, trace::GcSpan::Stw);
    }
    for (auto* split : {&cycles, &pauses}) {
      for (auto& [process, v] : *split) {
        clip(v);
        gc_split_.push_back(std::move(v));
        const bool cyc = split == &cycles;
        add(process, cyc ? "GC cycles" : "stop-the-world", &gc_split_.back(), cyc ? trace::GcSpan::Cycle : trace::GcSpan::Stw);
      }
    }
    for (auto& [key, v] : by_g) {
      clip(v);
      gc_split_.push_back(std::move(v));
      add(key.first, (key.second == lanes::kNoG ? std::string("no G") : "G" + std::to_string(key.second)) + " mark assist",
          &gc_split_.back(), trace::GcSpan::Assist);
    }
    for (auto& [key, v] : by_m) {
      clip(v);
      gc_split_.push_back(std::move(v));
      add(key.first, (key.second == lanes::kNoId ? std::string("no M") : "M" + std::to_string(key.second)) + " sweeping",
          &gc_split_.back(), trace::GcSpan::Sweep);
    }
    for (const lanes::Counter64* c : {&m.heap_alloc, &m.heap_goal}) {
      if (c->ts.empty()) continue;
      Track t{Group::GC, per_process_ ? machine : static_cast<uint32_t>(Group::GC), c->name, true, nullptr, nullptr};
      t.values64 = c;
      tracks_.push_back(t);
    }
  }
  for (uint32_t t = 0; t < tracks_.size(); ++t) {
    if (t < lanes_end) {
      cursors_.push_back(Cursor{Src::Segments, t});
      cursors_.push_back(Cursor{Src::Markers, t});
    } else if (t < counters_end) {
      cursors_.push_back(Cursor{Src::Samples, t});
    } else {
      cursors_.push_back(Cursor{tracks_[t].counter ? Src::Samples64 : Src::GcSpans, t});
    }
  }
  cursors_.push_back(Cursor{Src::ArrowsOut, 0});
  cursors_.push_back(Cursor{Src::ArrowsIn, 0});
  arrows_by_t1_.resize(m.arrows.size());
  for (uint32_t i = 0; i < arrows_by_t1_.size(); ++i) arrows_by_t1_[i] = i;
  std::stable_sort(arrows_by_t1_.begin(), arrows_by_t1_.end(),
                   [&](uint32_t a, uint32_t b) { return m.arrows[a].t1 < m.arrows[b].t1; });
  heads_.resize(cursors_.size());
  for (uint32_t c = 0; c < cursors_.size(); ++c) push(c);
}

namespace {

// The track of an arrow's end (lanes::lane_ref), or -1 for a lane the walk has no track for.
int64_t arrow_track(const lanes::Model& m, uint32_t ref) {
  const uint32_t i = lanes::ref_index(ref);
  switch (lanes::ref_type(ref)) {
    case lanes::LaneType::P: return i < m.p_lanes.size() ? static_cast<int64_t>(i) : -1;
    case lanes::LaneType::M: return i < m.m_lanes.size() ? static_cast<int64_t>(m.p_lanes.size() + i) : -1;
    case lanes::LaneType::G: break;
  }
  return -1;
}

bool same_slice(const Segment& a, const Segment& b) { return a.end() == b.start && a.bits == b.bits; }

}  // namespace

// Fills `out` with cursor c's next item; false when it has none left. Arrow ends on lanes without
// a track are skipped by advance(), never returned here.
bool Walk::peek(const Cursor& c, Item& out) const {
  out = Item{};
  out.track = c.track;
  switch (c.src) {
    case Src::Segments: {
      const std::vector<Segment>& segs = tracks_[c.track].lane->segs;
      if (c.i >= segs.size()) return false;
      const Segment& s = segs[c.i];
      out.g = s.g();
      out.state = s.state();
      if (c.in_slice) {
        out.type = Item::SliceEnd;
        out.ts = segs[c.last].end();
      } else {
        size_t last = c.i;
        while (last + 1 < segs.size() && same_slice(segs[last], segs[last + 1])) ++last;
        out.type = Item::SliceBegin;
        out.ts = s.start;
        out.end = segs[last].end();
      }
      return true;
    }
    case Src::Markers: {
      const std::vector<lanes::Marker>& mk = tracks_[c.track].lane->markers;
      if (c.i >= mk.size()) return false;
      out.type = Item::Instant;
      out.ts = mk[c.i].ts;
      out.marker = mk[c.i].kind;
      out.ev = mk[c.i].ev;
      return true;
    }
    case Src::Samples: {
      const lanes::Counter& k = *tracks_[c.track].values;
      if (c.i >= k.ts.size()) return false;
      out.type = Item::Counter;
      out.ts = k.ts[c.i];
      out.value = k.v[c.i];
      return true;
    }
    case Src::GcSpans: {
      const std::vector<lanes::GcInterval>& v = *tracks_[c.track].spans;
      if (c.i >= v.size()) return false;
      out.type = c.in_slice ? Item::SliceEnd : Item::SliceBegin;
      out.ts = c.in_slice ? v[c.i].end : v[c.i].start;
      out.end = v[c.i].end;
      out.g = v[c.i].g;
      out.gc = &v[c.i];
      return true;
    }
    case Src::Samples64: {
      const lanes::Counter64& k = *tracks_[c.track].values64;
      if (c.i >= k.ts.size()) return false;
      out.type = Item::Counter;
      out.ts = k.ts[c.i];
      out.value = k.v[c.i];
      return true;
    }
    case Src::ArrowsOut:
    case Src::ArrowsIn: {
      const bool in = c.src == Src::ArrowsIn;
      if (c.i >= m_.arrows.size()) return false;
      const uint32_t ai = in ? arrows_by_t1_[c.i] : static_cast<uint32_t>(c.i);
      const lanes::Arrow& a = m_.arrows[ai];
      const int64_t t = arrow_track(m_, in ? a.dst : a.src);
      out.type = in ? Item::FlowIn : Item::FlowOut;
      out.ts = in ? a.t1 : a.t0;
      out.track = static_cast<uint32_t>(t);
      out.arrow = a.kind;
      out.flow = ai + 1ull;
      out.ev = a.ev;
      return true;
    }
  }
  return false;
}

void Walk::advance(Cursor& c) {
  if (c.src == Src::Segments) {
    const std::vector<Segment>& segs = tracks_[c.track].lane->segs;
    if (!c.in_slice) {
      c.last = c.i;
      while (c.last + 1 < segs.size() && same_slice(segs[c.last], segs[c.last + 1])) ++c.last;
      c.in_slice = true;
    } else {
      c.i = c.last + 1;
      c.in_slice = false;
    }
    return;
  }
  if (c.src == Src::GcSpans) {
    if (!c.in_slice) {
      c.in_slice = true;
    } else {
      ++c.i;
      c.in_slice = false;
    }
    return;
  }
  ++c.i;
}

bool Walk::before(const Item& a, const Item& b) {
  if (a.ts != b.ts) return a.ts < b.ts;
  if (a.type != b.type) return a.type < b.type;
  if (a.track != b.track) return a.track < b.track;
  return a.flow < b.flow;
}

// Puts cursor c on the heap with its next item, skipping arrows that have an end on no track or
// never got their far end (so both ends of every flow that is written are written).
void Walk::push(uint32_t c) {
  Cursor& cur = cursors_[c];
  if (cur.src == Src::ArrowsOut || cur.src == Src::ArrowsIn) {
    while (cur.i < m_.arrows.size()) {
      const uint32_t ai = cur.src == Src::ArrowsIn ? arrows_by_t1_[cur.i] : static_cast<uint32_t>(cur.i);
      const lanes::Arrow& a = m_.arrows[ai];
      // An arrow whose far end never came stays where it began (gmpview draws nothing for it).
      const bool unfinished = a.src == a.dst && a.t0 == a.t1;
      if (!unfinished && arrow_track(m_, a.src) >= 0 && arrow_track(m_, a.dst) >= 0) break;
      ++cur.i;
    }
  }
  if (!peek(cur, heads_[c])) return;
  heap_.push_back(c);
  std::push_heap(heap_.begin(), heap_.end(), [&](uint32_t a, uint32_t b) { return before(heads_[b], heads_[a]); });
}

bool Walk::next(Item& out) {
  if (heap_.empty()) return false;
  const auto cmp = [&](uint32_t a, uint32_t b) { return before(heads_[b], heads_[a]); };
  std::pop_heap(heap_.begin(), heap_.end(), cmp);
  const uint32_t c = heap_.back();
  heap_.pop_back();
  out = heads_[c];
  advance(cursors_[c]);
  push(c);
  return true;
}

}  // namespace gmp::exporter
