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

int64_t sat_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? INT64_MAX : INT64_MIN;
}

int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

namespace {

// A stack's functions, innermost first (each line's text up to its first space).
std::vector<std::string_view> stack_functions(std::string_view st) {
  std::vector<std::string_view> out;
  while (!st.empty()) {
    const std::string_view line = st.substr(0, st.find('\n'));
    if (!line.empty()) out.push_back(line.substr(0, line.find(' ')));
    st.remove_prefix(std::min(st.size(), line.size() + 1));
  }
  return out;
}

bool runtime_function(std::string_view fn) {
  return fn.rfind("runtime.", 0) == 0 || fn.rfind("internal/runtime/", 0) == 0;
}

}  // namespace

std::string start_function(const GLife& life) {
  if (!life.start_fn.empty()) return life.start_fn;
  const std::vector<std::string_view> fns = stack_functions(life.first_park_stack);
  for (auto it = fns.rbegin(); it != fns.rend(); ++it) {
    if (!runtime_function(*it)) return std::string(*it);
  }
  for (auto it = fns.rbegin(); it != fns.rend(); ++it) {
    if (*it != "runtime.goexit") return std::string(*it);
  }
  for (const Interval& iv : life.intervals) {
    if (iv.state == GState::Blocked && !iv.site.empty()) return iv.site.substr(0, iv.site.find(' '));
  }
  return "";
}

std::string start_function(const GKey& key, const GLife& life) {
  if (life.start_fn.empty() && key.g == 1) return "main.main";
  return start_function(life);
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
  for (std::string_view fn : stack_functions(life.first_park_stack)) {
    if (named(fn)) return true;
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
  // Go 1.19's traces give no wait reasons, and a runtime goroutine may park on a channel or a
  // timer ("chan receive", "sleep"): the runtime's goroutines by where they start or park.
  if (started_or_parked_in(life, {"runtime.runfinq", "runtime.bgsweep", "runtime.bgscavenge",
                                  "runtime.forcegchelper", "runtime.gcBgMarkWorker"})) {
    return true;
  }
  const std::string fn = start_function(key, life);
  return fn != "runtime.main" && runtime_function(fn);
}

int32_t header_cores(const Timeline& tl) {
  for (const Metadata& m : tl.header.metadata()) {
    if (m.key() != "cores") continue;
    int64_t v = 0;
    const std::string& s = m.value();
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) continue;
    v = std::stoll(s);
    if (v > 0) return static_cast<int32_t>(std::min<int64_t>(v, 1 << 20));
  }
  return 0;
}

bool program_goroutine(const Timeline& tl, const GKey& key, const GLife& life) {
  return !tracer_goroutine(life) && !runtime_goroutine(tl, key, life);
}

int64_t work_ns(const GLife& life) {
  int64_t w = 0;
  for (const Interval& iv : life.intervals) {
    if (iv.state == GState::Running) w = sat_add(w, sat_sub(sat_sub(iv.t1, iv.t0), iv.off_cpu));
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
      // In 128 bits: (n - cores) x the stretch can pass int64 (many goroutines, crafted
      // timestamps); each one's share, at most the stretch, cannot.
      const __int128 excess = static_cast<__int128>(n - cores) * (static_cast<__int128>(m.t) - prev);
      const auto share = static_cast<int64_t>(excess / n);
      int64_t rem = static_cast<int64_t>(excess % n);
      for (size_t i : active) {
        running[i]->off_cpu = sat_add(running[i]->off_cpu, share + (rem > 0 ? 1 : 0));
        rem--;
      }
      taken = excess > INT64_MAX - taken ? INT64_MAX : taken + static_cast<int64_t>(excess);
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
  // An interval's work left, and the sum, saturated: a crafted trace's sum can pass int64.
  auto left = [](const Interval* iv) { return std::max<int64_t>(0, sat_sub(sat_sub(iv->t1, iv->t0), iv->off_cpu)); };
  int64_t work = 0;
  for (const Interval* iv : running) work = sat_add(work, left(iv));
  if (work <= 0 || rest <= 0) return 0;
  rest = std::min(rest, work);
  int64_t taken = 0;
  for (Interval* iv : running) {
    const auto share = static_cast<int64_t>(static_cast<__int128>(rest) * left(iv) / work);
    iv->off_cpu += share;
    taken += share;
  }
  // What the divisions left (a few ns), from the first stretches with work left.
  for (Interval* iv : running) {
    const int64_t more = std::min(rest - taken, left(iv));
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
      const int64_t d = sat_sub(iv.t1, iv.t0);
      rep.running_ns = sat_add(rep.running_ns, d);
      if (tracer) rep.tracer_running_ns = sat_add(rep.tracer_running_ns, d);
      running.push_back(&iv);
      if (iv.p >= 0) on_p[{key.process, iv.p}].push_back({&iv, {key, i}});
    }
  }
  const int64_t span = sat_sub(tl.t_end, tl.t_begin);
  if (opt.traced_cores > 0) {
    rep.capacity_ns = sat_mul(span, opt.traced_cores);
    rep.over_cores_ns = take_over_cores(running, opt.traced_cores);
    if (rep.running_ns > rep.capacity_ns) {
      rep.warnings.push_back("the trace's goroutines ran " + ms_text(rep.running_ns) + " in its " + ms_text(span) +
                             " on " + std::to_string(opt.traced_cores) + " cores, more than the cores could give (" +
                             ms_text(rep.capacity_ns) + "): the OS held threads off their cores");
    }
  }
  if (opt.cpu_time_ns >= 0 && rep.running_ns > opt.cpu_time_ns) {
    const int64_t excess = rep.running_ns - opt.cpu_time_ns;  // both >= 0: fits
    rep.over_cpu_time_ns = take_proportionally(running, excess - rep.over_cores_ns);
  }
  if (rep.over_cores_ns > 0 || rep.over_cpu_time_ns > 0) {
    std::string how;
    if (rep.over_cores_ns > 0) {
      how += ms_text(rep.over_cores_ns) + " where more goroutines ran than the " + std::to_string(opt.traced_cores) +
             " traced cores";
    }
    if (rep.over_cpu_time_ns > 0) {
      how += (how.empty() ? "" : ", ") + ms_text(rep.over_cpu_time_ns) + " more to meet the measured CPU time of " +
             ms_text(opt.cpu_time_ns);
    }
    rep.warnings.push_back(ms_text(sat_add(rep.over_cores_ns, rep.over_cpu_time_ns)) + " of the trace's " +
                           ms_text(rep.running_ns) + " of running time taken out as OS waits (" + how + ")");
  }
  // Ps held with nothing running while a goroutine waited to run.
  for (auto& [p, v] : on_p) {
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
      return a.first->t0 != b.first->t0 ? a.first->t0 < b.first->t0 : a.second < b.second;
    });
    for (size_t k = 1; k < v.size(); k++) {
      const int64_t stop = v[k - 1].first->t1, start = v[k].first->t0;
      if (sat_sub(start, stop) <= kHeldIdleNs) continue;
      const auto& [key, i] = v[k].second;
      const std::vector<Interval>& ivs = tl.gs.at(key).intervals;
      if (i == 0 || ivs[i - 1].state != GState::Runnable || ivs[i - 1].t0 > stop) continue;
      rep.held_idle_ns = sat_add(rep.held_idle_ns, start - stop);
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
  if (static_cast<__int128>(tl.t_end) - tl.t_begin > kMaxReplaySpanNs) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f s", (static_cast<double>(tl.t_end) - static_cast<double>(tl.t_begin)) / 1e9);
    return path + ": its span, " + buf + ", is longer than replay takes (2^53 ns, about 104 days)";
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
