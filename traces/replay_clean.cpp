// Cleaning a trace for replay: see replay_clean.h.
#include "traces/replay_clean.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string_view>
#include <initializer_list>
#include <utility>

#include "traces/derive_scenario.h"
#include "traces/trace_reader.h"
#include "traces/validate.h"

namespace gmp::trace {

std::string ms_text(int64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

std::string start_function(const GLife& life) {
  if (!life.start_fn.empty()) return life.start_fn;
  for (const Interval& iv : life.intervals) {
    if (iv.state == GState::Blocked && !iv.site.empty()) return iv.site.substr(0, iv.site.find(' '));
  }
  return "";
}

namespace {

// Whether the goroutine started in one of `fns`, or parked first with one of them on its stack.
bool started_or_parked_in(const GLife& life, std::initializer_list<const char*> fns) {
  auto named = [&](std::string_view fn) {
    for (const char* f : fns) {
      if (fn == f) return true;
    }
    return false;
  };
  if (!life.start_fn.empty()) return named(life.start_fn);
  std::string_view st = life.first_park_stack;
  while (!st.empty()) {
    const std::string_view line = st.substr(0, st.find('\n'));
    if (named(line.substr(0, line.find(' ')))) return true;
    st.remove_prefix(std::min(st.size(), line.size() + 1));
  }
  return false;
}

}  // namespace

bool tracer_goroutine(const GLife& life) {
  // The tracer's goroutines, by the function they start in: runtime/trace.Start's reader
  // (Go 1.19 to 1.23), the CPU-sample reader (traceStartReadCPU, Go 1.19+) and the generation
  // advancer (Go 1.22+). One already there when the trace began has no start function: its first
  // park's stack says the same.
  return started_or_parked_in(life, {"runtime/trace.Start.func1", "runtime.traceStartReadCPU.func1",
                                     "runtime.(*traceAdvancerState).start.func1"});
}

bool runtime_goroutine(const Timeline& tl, const GKey& key, const GLife& life) {
  if (tl.gc_workers.count(key) != 0) return true;
  for (const Interval& iv : life.intervals) {
    if (iv.state == GState::Blocked && runtime_wait_reason(iv.label)) return true;
  }
  // Go 1.19's traces give no wait reasons: the runtime's goroutines by where they start or park.
  return started_or_parked_in(life, {"runtime.runfinq", "runtime.bgsweep", "runtime.bgscavenge",
                                     "runtime.forcegchelper", "runtime.gcBgMarkWorker"});
}

bool program_goroutine(const Timeline& tl, const GKey& key, const GLife& life) {
  return !tracer_goroutine(life) && !runtime_goroutine(tl, key, life);
}

int64_t work_ns(const GLife& life) {
  int64_t w = 0;
  for (const Interval& iv : life.intervals) {
    if (iv.state == GState::Running) w += iv.t1 - iv.t0 - iv.off_cpu;
  }
  return w;
}

namespace {

// (a): where more goroutines run at once than there are cores, the excess is off-CPU, shared
// equally among those running (the first ones in goid order get the ns the division leaves).
int64_t take_over_cores(std::vector<Interval*>& running, int32_t cores) {
  struct Mark {
    int64_t t;
    int start;  // 0: an end, 1: a start (ends first at a tie)
    size_t i;
    bool operator<(const Mark& o) const {
      if (t != o.t) return t < o.t;
      return start != o.start ? start < o.start : i < o.i;
    }
  };
  std::vector<Mark> marks;
  for (size_t i = 0; i < running.size(); i++) {
    if (running[i]->t1 <= running[i]->t0) continue;
    marks.push_back({running[i]->t0, 1, i});
    marks.push_back({running[i]->t1, 0, i});
  }
  std::sort(marks.begin(), marks.end());
  std::set<size_t> active;
  int64_t prev = 0, taken = 0;
  for (const Mark& m : marks) {
    const int64_t n = static_cast<int64_t>(active.size());
    if (n > cores && m.t > prev) {
      const int64_t excess = (n - cores) * (m.t - prev);
      int64_t rem = excess % n;
      for (size_t i : active) {
        running[i]->off_cpu += excess / n + (rem > 0 ? 1 : 0);
        rem--;
      }
      taken += excess;
    }
    prev = m.t;
    if (m.start != 0) {
      active.insert(m.i);
    } else {
      active.erase(m.i);
    }
  }
  return taken;
}

// (b): `rest` ns more, from each interval in proportion to its remaining work.
int64_t take_proportionally(std::vector<Interval*>& running, int64_t rest) {
  int64_t work = 0;
  for (const Interval* iv : running) work += std::max<int64_t>(0, iv->t1 - iv->t0 - iv->off_cpu);
  if (work <= 0 || rest <= 0) return 0;
  rest = std::min(rest, work);
  int64_t taken = 0;
  for (Interval* iv : running) {
    const int64_t w = std::max<int64_t>(0, iv->t1 - iv->t0 - iv->off_cpu);
    const auto share = static_cast<int64_t>(static_cast<__int128>(rest) * w / work);
    iv->off_cpu += share;
    taken += share;
  }
  // What the divisions left (a few ns), from the first stretches with work left.
  for (Interval* iv : running) {
    const int64_t more = std::min(rest - taken, std::max<int64_t>(0, iv->t1 - iv->t0 - iv->off_cpu));
    iv->off_cpu += more;
    taken += more;
  }
  return taken;
}

}  // namespace

CleanReport clean_timeline(Timeline& tl, const CleanOptions& opt) {
  CleanReport rep;
  std::vector<Interval*> running;
  // Per (process, P): its running intervals, with their G and index, for the held stretches.
  std::map<std::pair<uint32_t, int64_t>, std::vector<std::pair<Interval*, std::pair<GKey, size_t>>>> on_p;
  for (auto& [key, life] : tl.gs) {
    const bool tracer = tracer_goroutine(life);
    if (tracer) rep.tracer_gs++;
    for (size_t i = 0; i < life.intervals.size(); i++) {
      Interval& iv = life.intervals[i];
      if (iv.state != GState::Running) continue;
      rep.running_ns += iv.t1 - iv.t0;
      if (tracer) rep.tracer_running_ns += iv.t1 - iv.t0;
      running.push_back(&iv);
      if (iv.p >= 0) on_p[{key.process, iv.p}].push_back({&iv, {key, i}});
    }
  }
  const int64_t span = tl.t_end - tl.t_begin;
  if (opt.traced_cores > 0) {
    rep.capacity_ns = span * opt.traced_cores;
    rep.over_cores_ns = take_over_cores(running, opt.traced_cores);
    if (rep.running_ns > rep.capacity_ns) {
      rep.warnings.push_back("the trace's goroutines ran " + ms_text(rep.running_ns) + " in its " + ms_text(span) +
                             " on " + std::to_string(opt.traced_cores) + " cores, more than the cores could give (" +
                             ms_text(rep.capacity_ns) + "): the OS held threads off their cores");
    }
  }
  if (opt.cpu_time_ns >= 0 && rep.running_ns > opt.cpu_time_ns) {
    const int64_t excess = rep.running_ns - opt.cpu_time_ns;
    rep.over_cpu_time_ns = take_proportionally(running, excess - rep.over_cores_ns);
  }
  if (rep.over_cores_ns + rep.over_cpu_time_ns > 0) {
    std::string how;
    if (rep.over_cores_ns > 0) {
      how += ms_text(rep.over_cores_ns) + " where more goroutines ran than the " + std::to_string(opt.traced_cores) +
             " traced cores";
    }
    if (rep.over_cpu_time_ns > 0) {
      how += (how.empty() ? "" : ", ") + ms_text(rep.over_cpu_time_ns) + " more to meet the measured CPU time of " +
             ms_text(opt.cpu_time_ns);
    }
    rep.warnings.push_back(ms_text(rep.over_cores_ns + rep.over_cpu_time_ns) + " of the trace's " +
                           ms_text(rep.running_ns) + " of running time taken out as OS waits (" + how + ")");
  }
  // Ps held with nothing running while a goroutine waited to run.
  for (auto& [p, v] : on_p) {
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.first->t0 != b.first->t0 ? a.first->t0 < b.first->t0 : a.second < b.second;
    });
    for (size_t k = 1; k < v.size(); k++) {
      const int64_t stop = v[k - 1].first->t1, start = v[k].first->t0;
      if (start - stop <= kHeldIdleNs) continue;
      const auto& [key, i] = v[k].second;
      const std::vector<Interval>& ivs = tl.gs.at(key).intervals;
      if (i == 0 || ivs[i - 1].state != GState::Runnable || ivs[i - 1].t0 > stop) continue;
      rep.held_idle_ns += start - stop;
      rep.held_idle_stretches++;
    }
  }
  if (rep.held_idle_stretches > 0) {
    rep.warnings.push_back("a P was held with no goroutine running while one waited to run " +
                           std::to_string(rep.held_idle_stretches) + " times, " + ms_text(rep.held_idle_ns) +
                           " in all (gaps over " + std::to_string(kHeldIdleNs / 1000) +
                           " us): the replay has no such stretches and may run shorter by up to that much");
  }
  return rep;
}

// Reads and checks one trace: its reader's error, the validator's first problem (an unblock of a G
// that is not blocked, ...), too few events, no goroutine of the program. "" when it is fine.
std::string read_replay_trace(const std::string& path, Timeline& tl) {
  try {
    tl = build_timeline(path);
    const Validator v = validate_file(path, 1);
    if (v.issue_count() > 0) {
      const ValidationIssue& i = v.issues().front();
      return path + ": event " + std::to_string(i.index) + " (at " + std::to_string(i.ts) + " ns): " + i.what +
             (v.issue_count() > 1 ? " (and " + std::to_string(v.issue_count() - 1) + " more problems)" : "") +
             "; `gmpsim trace validate` lists them";
    }
  } catch (const TraceFormatError& e) {
    return e.what();
  }
  if (tl.events < kMinReplayEvents) {
    return path + ": too short to replay: " + std::to_string(tl.events) + " events (at least " +
           std::to_string(kMinReplayEvents) + ")";
  }
  uint64_t program = 0, runtime = 0, tracer = 0;
  for (const auto& [key, life] : tl.gs) {
    if (tracer_goroutine(life)) {
      tracer++;
    } else if (runtime_goroutine(tl, key, life)) {
      runtime++;
    } else {
      program++;
    }
  }
  if (program == 0) {
    return path + ": no goroutine of the program in it (" + std::to_string(runtime) + " of the runtime, " +
           std::to_string(tracer) + " of the tracer): nothing to replay";
  }
  return "";
}

}  // namespace gmp::trace
