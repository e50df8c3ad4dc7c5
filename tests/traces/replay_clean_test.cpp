// Replay's trace cleaning and combining (traces/replay_clean.h, traces/replay_combine.h) on small
// traces whose figures are worked out by hand.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "traces/derive_scenario.h"
#include "traces/replay_clean.h"
#include "traces/replay_combine.h"
#include "traces/timeline.h"
#include "traces/trace_writer.h"

using namespace gmp::trace;

namespace {

constexpr int64_t kMs = 1000000;

struct Ev {
  int64_t ts;
  Kind kind;
  int64_t g = -1, m = -1, p = -1;
  int64_t peer_g = -1;
  Reason reason = REASON_UNSPECIFIED;
  const char* label = "";
  const char* stack = "";
};

std::string write_trace(const std::string& name, const std::vector<Ev>& evs, int32_t ps, Clock clock = CLOCK_REAL,
                        const char* cores = nullptr) {
  const std::string path = (std::filesystem::temp_directory_path() / ("gmp_replay_clean_" + name)).string();
  Header h;
  h.set_producer("replay clean test");
  h.set_num_ps(ps);
  h.set_clock(clock);
  if (cores != nullptr) {
    Metadata* m = h.add_metadata();
    m->set_key("cores");
    m->set_value(cores);
  }
  TraceWriter w(path, h);
  for (const Ev& x : evs) {
    Event e;
    e.set_ts(x.ts);
    e.set_kind(x.kind);
    if (x.g >= 0) e.set_g(x.g);
    if (x.m >= 0) e.set_m(x.m);
    if (x.p >= 0) e.set_p(x.p);
    if (x.peer_g >= 0) e.set_peer_g(x.peer_g);
    e.set_reason(x.reason);
    e.set_label(x.label);
    e.set_stack(x.stack);
    w.write(e);
  }
  w.close();
  return path;
}

Timeline timeline_of(const std::vector<Ev>& evs, int32_t ps, const char* cores = nullptr) {
  const std::string path = write_trace("tl.trace", evs, ps, CLOCK_REAL, cores);
  Timeline tl = build_timeline(path);
  std::filesystem::remove(path);
  return tl;
}

// G1 (main, there before the trace) creates `workers` goroutines of `fn` at 0 and parks for good;
// worker k starts on P k at 0 and runs `run[k]` ns, then exits; the trace ends at `span`.
std::vector<Ev> workers_events(const std::vector<int64_t>& run, int64_t span, const char* fn = "main.worker") {
  std::vector<Ev> evs;
  for (size_t k = 0; k < run.size(); k++) evs.push_back({0, KIND_GO_CREATE, 2 + int64_t(k), 0, 0, 1, REASON_UNSPECIFIED, fn});
  evs.push_back({0, KIND_GO_PARK, 1, 0, 0, -1, REASON_PARK, "chan receive", "main.main /src/main.go:9"});
  for (size_t k = 0; k < run.size(); k++) evs.push_back({0, KIND_GO_START, 2 + int64_t(k), int64_t(k), int64_t(k)});
  std::vector<std::pair<int64_t, int64_t>> ends;
  for (size_t k = 0; k < run.size(); k++) ends.push_back({run[k], 2 + int64_t(k)});
  std::sort(ends.begin(), ends.end());
  for (const auto& [t, g] : ends) evs.push_back({t, KIND_GO_EXIT, g, g - 2, g - 2});
  evs.push_back({span, KIND_RUN_END});
  return evs;
}

int64_t off_cpu(const Timeline& tl, int64_t g) {
  int64_t off = 0;
  for (const Interval& iv : tl.gs.at(GKey{0, g}).intervals) off += iv.off_cpu;
  return off;
}

}  // namespace

TEST_CASE("replay cleaning: 3 goroutines running 10 ms at once on 2 traced cores hold 10 ms off-CPU", "[replay]") {
  Timeline tl = timeline_of(workers_events({10 * kMs, 10 * kMs, 10 * kMs}, 10 * kMs), 3);
  CleanOptions opt;
  opt.traced_cores = 2;
  const CleanReport r = clean_timeline(tl, opt);
  CHECK(r.running_ns == 30 * kMs);
  CHECK(r.over_cores_ns == 10 * kMs);
  CHECK(off_cpu(tl, 2) + off_cpu(tl, 3) + off_cpu(tl, 4) == 10 * kMs);
  for (int64_t g : {2, 3, 4}) CHECK(std::abs(off_cpu(tl, g) - 10 * kMs / 3) <= 1);
  // 30 ms of running in 10 ms on 2 cores (20 ms at most), and 10 ms taken out: two warnings.
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[0].find("more than the cores could give (20.000 ms)") != std::string::npos);
  CHECK(r.warnings[1].find("10.000 ms of the trace's 30.000 ms of running time taken out as OS waits") != std::string::npos);
  // The derivation replays the work, 20 ms, not the running time.
  const DerivedScenario d = derive_scenario(tl, "t");
  CHECK(d.running_ns == 20 * kMs);
  // Enough cores: nothing taken out, no warning.
  Timeline quiet = timeline_of(workers_events({10 * kMs, 10 * kMs, 10 * kMs}, 10 * kMs), 3);
  opt.traced_cores = 3;
  const CleanReport q = clean_timeline(quiet, opt);
  CHECK(q.over_cores_ns == 0);
  CHECK(q.warnings.empty());
}

TEST_CASE("replay cleaning: running time over the measured CPU time is taken out, first where cores ran short",
          "[replay]") {
  // 2 + 4 + 6 ms on 4 cores, CPU time 9 ms: 3 ms over, in proportion to running time.
  Timeline tl = timeline_of(workers_events({2 * kMs, 4 * kMs, 6 * kMs}, 10 * kMs), 3);
  CleanOptions opt;
  opt.traced_cores = 4;
  opt.cpu_time_ns = 9 * kMs;
  CleanReport r = clean_timeline(tl, opt);
  CHECK(r.over_cores_ns == 0);
  CHECK(r.over_cpu_time_ns == 3 * kMs);
  CHECK(off_cpu(tl, 2) == kMs / 2);
  CHECK(off_cpu(tl, 3) == kMs);
  CHECK(off_cpu(tl, 4) == 3 * kMs / 2);
  // 3 x 10 ms on 2 cores, CPU time 15 ms: 15 ms over, 10 of it where 3 ran on 2 cores, the other 5
  // from the 20 ms left, 5/3 ms each.
  Timeline both = timeline_of(workers_events({10 * kMs, 10 * kMs, 10 * kMs}, 10 * kMs), 3);
  opt.traced_cores = 2;
  opt.cpu_time_ns = 15 * kMs;
  r = clean_timeline(both, opt);
  CHECK(r.over_cores_ns == 10 * kMs);
  CHECK(r.over_cpu_time_ns == 5 * kMs);
  for (int64_t g : {2, 3, 4}) CHECK(std::abs(off_cpu(both, g) - 5 * kMs) <= 3);  // the divisions' ns
}

TEST_CASE("replay cleaning: the tracer's goroutines are left out and counted", "[replay]") {
  // G1 creates a worker (runs 4 ms) and the tracer's CPU reader (runs 1 ms); G9 was there before the
  // trace and parks in the advancer (runs 2 ms first).
  const Timeline tl = timeline_of(
      {
          {0, KIND_GO_CREATE, 2, 0, 0, 1, REASON_UNSPECIFIED, "main.worker"},
          {0, KIND_GO_CREATE, 3, 0, 0, 1, REASON_UNSPECIFIED, "runtime.traceStartReadCPU.func1"},
          {0, KIND_GO_PARK, 1, 0, 0, -1, REASON_PARK, "chan receive", "main.main /src/main.go:9"},
          {0, KIND_GO_START, 2, 0, 0},
          {0, KIND_GO_START, 3, 1, 1},
          {1 * kMs, KIND_GO_EXIT, 3, 1, 1},
          {1 * kMs, KIND_GO_START, 9, 1, 1},
          {3 * kMs, KIND_GO_PARK, 9, 1, 1, -1, REASON_PARK, "sleep",
           "runtime.(*traceAdvancerState).start.func1 /usr/lib/go/src/runtime/trace.go:900"},
          {4 * kMs, KIND_GO_EXIT, 2, 0, 0},
      },
      2);
  CHECK(tracer_goroutine(tl.gs.at(GKey{0, 3})));
  CHECK(tracer_goroutine(tl.gs.at(GKey{0, 9})));
  CHECK_FALSE(tracer_goroutine(tl.gs.at(GKey{0, 2})));
  CHECK_FALSE(tracer_goroutine(tl.gs.at(GKey{0, 1})));
  const DerivedScenario d = derive_scenario(tl, "t");
  CHECK(d.tracer_gs == 2);
  CHECK(d.tracer_running_ns == 3 * kMs);
  CHECK(d.goroutines == 2);  // main and the worker
  CHECK(d.running_ns == 4 * kMs);
  CHECK(d.text.find("traceStartReadCPU") == std::string::npos);
  CHECK(d.text.find("g3") == std::string::npos);
  CHECK(d.text.find("g9") == std::string::npos);
}

TEST_CASE("replay cleaning: a P held with nothing running while a goroutine waited is reported", "[replay]") {
  // On P0: G2 runs 0-1 ms and stops; G3, runnable since 0, starts there at 1.5 ms: 0.5 ms held. G2
  // starts again at 3 ms after a 1.5 ms wait, but it became runnable only at 2.9 ms: not counted.
  const Timeline tl0 = timeline_of(
      {
          {0, KIND_GO_CREATE, 2, 0, 0, 1, REASON_UNSPECIFIED, "main.a"},
          {0, KIND_GO_CREATE, 3, 0, 0, 1, REASON_UNSPECIFIED, "main.b"},
          {0, KIND_GO_PARK, 1, 0, 0, -1, REASON_PARK, "chan receive"},
          {0, KIND_GO_START, 2, 0, 0},
          {1 * kMs, KIND_GO_PARK, 2, 0, 0, -1, REASON_PARK, "sleep"},
          {1500000, KIND_GO_START, 3, 0, 0},
          {1500000 + 1, KIND_GO_PARK, 3, 0, 0, -1, REASON_PARK, "sleep"},
          {2900000, KIND_GO_UNPARK, 2, 0, -1, -1},
          {3 * kMs, KIND_GO_START, 2, 0, 0},
          {4 * kMs, KIND_GO_EXIT, 2, 0, 0},
      },
      1);
  Timeline tl = tl0;
  const CleanReport r = clean_timeline(tl, CleanOptions{});
  CHECK(r.held_idle_stretches == 1);
  CHECK(r.held_idle_ns == 500000);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("1 times, 0.500 ms in all") != std::string::npos);
}

TEST_CASE("replay combining: each goroutine's work is the median over the traces, on the median trace", "[replay]") {
  // Spans 50, 40 and 60 ms: the median is the first trace. Its two workers ran 10 and 5 ms; over
  // the traces worker 0 ran 10, 30, 20 (median 20), worker 1 ran 5, 1, 9 (median 5).
  const Timeline a = timeline_of(workers_events({10 * kMs, 5 * kMs}, 50 * kMs), 2);
  const Timeline b = timeline_of(workers_events({30 * kMs, 1 * kMs}, 40 * kMs), 2);
  const Timeline c = timeline_of(workers_events({20 * kMs, 9 * kMs}, 60 * kMs), 2);
  CombineReport rep;
  const Timeline m = combine_timelines({a, b, c}, {"a", "b", "c"}, &rep);
  CHECK(rep.median == 0);
  CHECK(rep.spans == std::vector<int64_t>{50 * kMs, 40 * kMs, 60 * kMs});
  CHECK(rep.goroutines == 3);  // main and the two workers
  CHECK(rep.matched == 3);
  CHECK(work_ns(m.gs.at(GKey{0, 2})) == 20 * kMs);
  CHECK(work_ns(m.gs.at(GKey{0, 3})) == 5 * kMs);
  CHECK(off_cpu(m, 2) == -10 * kMs);  // more work than the median trace's running time
  const DerivedScenario d = derive_scenario(m, "m");
  CHECK(d.running_ns == 25 * kMs);
  CHECK(d.text.find("compute { ns: 20000000 }") != std::string::npos);
  // Two traces: the median of two is their mean; the median span is the shorter trace's.
  const Timeline two = combine_timelines({a, b}, {"a", "b"}, &rep);
  CHECK(rep.median == 1);
  CHECK(work_ns(two.gs.at(GKey{0, 2})) == 20 * kMs);
  CHECK(work_ns(two.gs.at(GKey{0, 3})) == 3 * kMs);
}

TEST_CASE("replay combining: traces of different programs are refused, naming both", "[replay]") {
  const Timeline a = timeline_of(workers_events({10 * kMs, 5 * kMs, 5 * kMs}, 50 * kMs), 3);
  const Timeline b = timeline_of(workers_events({10 * kMs, 5 * kMs, 5 * kMs}, 50 * kMs, "main.other"), 3);
  try {
    (void)combine_timelines({a, b}, {"A.trace", "B.trace"});
    FAIL("combined traces of different programs");
  } catch (const CombineError& e) {
    CHECK(std::string(e.what()).find("A.trace and B.trace look like traces of different programs: only 1 of 4") !=
          std::string::npos);
  }
}

TEST_CASE("replay naming: the scenario goes next to the trace under its whole name", "[replay]") {
  CHECK(replay_output_path("DIR/trace-go1.23-p4.trace") == "DIR/trace-go1.23-p4.replay.textproto");
  CHECK(replay_output_path("a.b/c.gmp") == "a.b/c.replay.textproto");
  CHECK(replay_output_path("go1.19") == "go1.19.replay.textproto");
  CHECK(replay_output_path("dir/.trace") == "dir/.trace.replay.textproto");
  CHECK(add_header_comments("# a\n# b\n\nchan {}\n", {"x", "y"}) == "# a\n# b\n# x\n# y\n\nchan {}\n");
  const Timeline a = timeline_of(workers_events({10 * kMs, 5 * kMs}, 50 * kMs), 2);
  CHECK(start_function_lines(a) ==
        std::vector<std::string>{"2 x main.worker: 15.000 ms running", "1 x main.main: 0.000 ms running"});
}

TEST_CASE("replay's reading refuses traces it cannot derive a program from, saying why", "[replay]") {
  Timeline tl;
  // An unblock of a goroutine that is running.
  std::vector<Ev> bad = workers_events({10 * kMs, 5 * kMs}, 50 * kMs);
  bad.insert(bad.begin() + 5, Ev{1, KIND_GO_UNPARK, 2, 0, 0, 1});
  std::string path = write_trace("bad.trace", bad, 2);
  std::string err = read_replay_trace(path, tl);
  CHECK(err.find(path + ": event 5 (at 1 ns): ") != std::string::npos);
  CHECK(err.find("G2") != std::string::npos);
  // Too short.
  path = write_trace("short.trace", {{0, KIND_GO_START, 1, 0, 0}, {5, KIND_GO_EXIT, 1, 0, 0}}, 1);
  CHECK(read_replay_trace(path, tl) == path + ": too short to replay: 2 events (at least 8)");
  // Only the tracer's.
  std::vector<Ev> tracer = workers_events({1 * kMs, 1 * kMs}, 5 * kMs, "runtime/trace.Start.func1");
  tracer[2].stack = "runtime/trace.Start.func1 /x.go:1";  // main parks in the tracer too
  path = write_trace("tracer.trace", tracer, 2);
  CHECK(read_replay_trace(path, tl).find("no goroutine of the program in it (0 of the runtime, 3 of the tracer)") !=
        std::string::npos);
  // Cut: the reader's error, with its byte offset.
  path = write_trace("cut.trace", workers_events({10 * kMs, 5 * kMs}, 50 * kMs), 2);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  err = read_replay_trace(path, tl);
  CHECK(err.find("at byte offset") != std::string::npos);
  // A good one.
  path = write_trace("good.trace", workers_events({10 * kMs, 5 * kMs}, 50 * kMs), 2);
  CHECK(read_replay_trace(path, tl).empty());
  for (const char* n : {"bad.trace", "short.trace", "tracer.trace", "cut.trace", "good.trace"}) {
    std::filesystem::remove(std::filesystem::temp_directory_path() / (std::string("gmp_replay_clean_") + n));
  }
}

// Products and sums that pass int64: span x cores on a 9000 s trace with 2^20 cores, and (running -
// cores) x a stretch on crafted timestamps. Saturated, never wrapped (a wrap read as a negative
// capacity and warned of running time above it).
TEST_CASE("replay cleaning: span x cores and the excess over cores do not overflow", "[replay]") {
  const int64_t s9000 = 9000 * int64_t{1000} * kMs;
  Timeline tl = timeline_of(workers_events({s9000, s9000}, s9000), 2);
  CleanOptions opt;
  opt.traced_cores = 1 << 20;
  CleanReport rep = clean_timeline(tl, opt);
  CHECK(rep.capacity_ns == INT64_MAX);  // 9e12 ns x 2^20 is past int64
  CHECK(rep.running_ns == 2 * s9000);
  CHECK(rep.over_cores_ns == 0);
  CHECK(rep.warnings.empty());
  // 3 goroutines running 2^62 ns at once on 1 core: the excess, 2 x 2^62 = 2^63 ns, is past int64;
  // each one's share is a third of it (the first two in goid order get the ns the division leaves).
  const int64_t big = int64_t{1} << 62;
  Timeline huge = timeline_of(workers_events({big, big, big}, big), 3);
  opt.traced_cores = 1;
  rep = clean_timeline(huge, opt);
  CHECK(rep.running_ns == INT64_MAX);     // 3 x 2^62, saturated
  CHECK(rep.over_cores_ns == INT64_MAX);  // 2^63, saturated
  const int64_t third = static_cast<int64_t>((static_cast<__int128>(1) << 63) / 3);
  CHECK(off_cpu(huge, 2) == third + 1);
  CHECK(off_cpu(huge, 3) == third + 1);
  CHECK(off_cpu(huge, 4) == third);
  CHECK(work_ns(huge.gs.at(GKey{0, 2})) == big - third - 1);
  CHECK(sat_add(INT64_MAX, 1) == INT64_MAX);
  CHECK(sat_sub(INT64_MIN, 1) == INT64_MIN);
  CHECK(sat_mul(INT64_MIN, 2) == INT64_MIN);
  CHECK(sat_mul(-3, -4) == 12);
  // replay refuses a span past 2^53 ns, so that derivation's sums stay in range.
  Timeline t;
  const std::string path = write_trace("long.trace", workers_events({kMs, kMs}, int64_t{1} << 54), 2);
  CHECK(read_replay_trace(path, t).find(path + ": its span, 18014399 s, is longer than replay takes") == 0);
  std::filesystem::remove(path);
}

// The traced machine's cores come from the trace's header or not at all (never from the machine
// that replays): an imported Go trace says none.
TEST_CASE("replay cleaning: the traced cores are the header's, none when it does not say", "[replay]") {
  CHECK(header_cores(timeline_of(workers_events({kMs}, kMs), 1)) == 0);
  CHECK(header_cores(timeline_of(workers_events({kMs}, kMs), 1, "4")) == 4);
  CHECK(header_cores(timeline_of(workers_events({kMs}, kMs), 1, "-4")) == 0);
  CHECK(header_cores(timeline_of(workers_events({kMs}, kMs), 1, "99999999999999")) == 0);
}

namespace {

// A park's stack as an imported Go trace gives it: innermost first, one frame a line.
const char* const kMainParked =
    "runtime.gopark /go/src/runtime/proc.go:424\nruntime.chanrecv /go/src/runtime/chan.go:639\n"
    "runtime.chanrecv2 /go/src/runtime/chan.go:494\nmain.main /src/main.go:40\n"
    "runtime.main /go/src/runtime/proc.go:272\nruntime.goexit /go/src/runtime/asm_amd64.s:1700";

}  // namespace

// Goroutines already there when the trace began are named by their first park's outermost frame
// outside package runtime, G1 is main.main, and one whose frames are all the runtime's is the
// runtime's whatever it waits for.
TEST_CASE("replay naming: goroutines from before the trace are named by their entry, not the park", "[replay]") {
  std::vector<Ev> evs = workers_events({kMs}, 5 * kMs);
  evs[1].stack = kMainParked;  // G1's park
  evs.push_back({kMs, KIND_GO_START, 5, 0, 0});
  evs.push_back({kMs + 10, KIND_GO_PARK, 5, 0, 0, -1, REASON_PARK, "chan receive",
                 "runtime.gopark /r/proc.go:424\nruntime.chanrecv1 /r/chan.go:489\nmain.helper /src/main.go:20\n"
                 "main.worker /src/main.go:12\nruntime.goexit /r/asm_amd64.s:1700"});
  evs.push_back({kMs + 10, KIND_GO_START, 6, 0, 0});
  evs.push_back({kMs + 20, KIND_GO_PARK, 6, 0, 0, -1, REASON_PARK, "chan receive",
                 "runtime.gopark /r/proc.go:424\nruntime.chanrecv1 /r/chan.go:489\nruntime.runCleanups /r/mcleanup.go:9\n"
                 "runtime.goexit /r/asm_amd64.s:1700"});
  std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) { return a.ts < b.ts; });
  const Timeline tl = timeline_of(evs, 1);
  CHECK(start_function(GKey{0, 1}, tl.gs.at(GKey{0, 1})) == "main.main");
  CHECK(start_function(GKey{0, 5}, tl.gs.at(GKey{0, 5})) == "main.worker");
  CHECK(start_function(GKey{0, 6}, tl.gs.at(GKey{0, 6})) == "runtime.runCleanups");
  CHECK_FALSE(runtime_goroutine(tl, GKey{0, 1}, tl.gs.at(GKey{0, 1})));
  CHECK_FALSE(runtime_goroutine(tl, GKey{0, 5}, tl.gs.at(GKey{0, 5})));
  CHECK(runtime_goroutine(tl, GKey{0, 6}, tl.gs.at(GKey{0, 6})));
  CHECK(start_function_lines(tl) ==
        std::vector<std::string>{"2 x main.worker: 1.000 ms running", "1 x main.main: 0.000 ms running"});
  const DerivedScenario d = derive_scenario(tl, "t");
  CHECK(d.runtime_gs == 1);  // G6
  CHECK(d.goroutines == 3);  // main, the created worker, G5
}

// Main parked in one trace (in runtime.chanrecv2) and never in the other: it matches all the same.
TEST_CASE("replay combining: main matches whether or not it parked in the trace", "[replay]") {
  std::vector<Ev> parked = workers_events({10 * kMs, 5 * kMs}, 50 * kMs);
  parked[2].stack = kMainParked;
  std::vector<Ev> ran = workers_events({10 * kMs, 5 * kMs}, 50 * kMs);
  ran[2] = {0, KIND_GO_STOP, 1, 0, 0, -1, REASON_GOSCHED};
  CombineReport rep;
  (void)combine_timelines({timeline_of(parked, 2), timeline_of(ran, 2)}, {"a", "b"}, &rep);
  CHECK(rep.goroutines == 3);
  CHECK(rep.matched == 3);
  CHECK(rep.warnings.empty());
  // The same program traced at GOMAXPROCS 2 and 4: combined, with a warning naming both.
  (void)combine_timelines({timeline_of(parked, 2), timeline_of(parked, 4)}, {"a", "b"}, &rep);
  REQUIRE(rep.warnings.size() == 1);
  CHECK(rep.warnings[0].find("a was traced at GOMAXPROCS 2 and b at 4") == 0);
}
