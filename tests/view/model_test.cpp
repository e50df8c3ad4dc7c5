// The viewer's model: what the loader derives from a known trace (lanes, counters, arrows,
// markers, latencies), the hand-written wire decoder against protobuf's own, the counter pyramid
// against brute force, and bad input reported with its byte offset.
#include "tests/temp_dir.h"
#include "viewer/model.h"

#include <stdlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tests/view/small_trace.h"
#include "tests/traces/two_process_trace.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "viewer/lod.h"
#include "traces/lanes/wire.h"

namespace fs = std::filesystem;
using namespace gmp::view;
using namespace gmp::lanes;  // the wire decoder's names (traces/lanes/wire.h)

namespace {

struct Seg {
  int64_t start, end;
  int32_t g;
  State st;
  bool operator==(const Seg&) const = default;
};

std::vector<Seg> segs(const Lane& l) {
  std::vector<Seg> out;
  for (const Segment& s : l.segs) out.push_back({s.start, s.end(), s.g(), s.state()});
  return out;
}

std::vector<std::pair<int64_t, int32_t>> samples(const Counter& c) {
  std::vector<std::pair<int64_t, int32_t>> out;
  for (size_t i = 0; i < c.ts.size(); ++i) out.emplace_back(c.ts[i], c.v[i]);
  return out;
}

}  // namespace

TEST_CASE("view model: lanes of the small trace") {
  TempDir dir("gmp_view_test");
  const std::string path = dir.file("small.gmptrace");
  testing::write_small_trace(path);
  const Model m = load_trace(path);
  REQUIRE(m.events.size() == 32);
  CHECK(m.producer == "gmpview test");
  CHECK(m.t_begin == 0);
  CHECK(m.t_end == 1400);
  REQUIRE(m.p_lanes.size() == 2);
  REQUIRE(m.m_lanes.size() == 3);  // M0, M1 and sysmon's M2
  CHECK(m.m_lanes[2].id == 2);
  constexpr State R = State::Running;
  CHECK(segs(m.p_lanes[0]) ==
        std::vector<Seg>{
            {100, 500, 1, R}, {510, 800, 3, R}, {800, 900, 3, State::Syscall}, {900, 1000, 3, R}, {1200, 1400, 1, R}});
  CHECK(segs(m.p_lanes[1]) == std::vector<Seg>{{150, 200, kNoG, State::Spinning}, {250, 600, 2, R}, {750, 1100, 2, R}});
  CHECK(segs(m.m_lanes[1]) ==
        std::vector<Seg>{
            {150, 200, kNoG, State::Spinning}, {250, 600, 2, R}, {620, 700, kNoG, State::Parked}, {750, 1100, 2, R}});
  // Busy time is Running only: 400 + 290 + 100 + 200 on P0.
  CHECK(busy_ns(m.p_lanes[0], 0, 1400) == 990);
  CHECK(busy_ns(m.p_lanes[0], 300, 950) == 200 + 290 + 50);
  REQUIRE(m.p_lanes[0].markers.size() == 1);
  CHECK(m.p_lanes[0].markers[0].ts == 700);
  CHECK(m.p_lanes[0].markers[0].kind == MarkerKind::PreemptRequest);
}

TEST_CASE("view model: counters, arrows and latencies of the small trace") {
  TempDir dir("gmp_view_test");
  const std::string path = dir.file("small.gmptrace");
  testing::write_small_trace(path);
  const Model m = load_trace(path);
  using S = std::vector<std::pair<int64_t, int32_t>>;
  CHECK(samples(m.local_queues[0]) ==
        S{{10, 1}, {20, 2}, {30, 3}, {100, 2}, {200, 1}, {500, 2}, {510, 1}, {650, 2}, {720, 1}, {1200, 0}});
  CHECK(samples(m.local_queues[1]).empty());
  CHECK(samples(m.spinning_ms) == S{{150, 1}, {200, 0}});
  CHECK(samples(m.idle_ps) == S{{0, 0}, {610, 1}, {700, 0}});
  CHECK(m.global_queue.ts.empty());

  REQUIRE(m.arrows.size() == 4);
  auto check_arrow = [&](size_t i, ArrowKind k, int64_t t0, int64_t t1, uint32_t src, uint32_t dst) {
    INFO("arrow " << i);
    CHECK(m.arrows[i].kind == k);
    CHECK(m.arrows[i].t0 == t0);
    CHECK(m.arrows[i].t1 == t1);
    CHECK(m.arrows[i].src == src);
    CHECK(m.arrows[i].dst == dst);
  };
  const uint32_t p0 = lane_ref(LaneType::P, 0), p1 = lane_ref(LaneType::P, 1);
  check_arrow(0, ArrowKind::Steal, 200, 200, p0, p1);
  check_arrow(1, ArrowKind::Unpark, 650, 750, p0, p1);
  check_arrow(2, ArrowKind::Wakeup, 660, 700, lane_ref(LaneType::M, 0), lane_ref(LaneType::M, 1));
  check_arrow(3, ArrowKind::Steal, 720, 720, p0, p1);

  std::vector<std::pair<int64_t, int64_t>> lat;
  for (const LatencySample& s : m.latencies) lat.emplace_back(m.events[s.ev].ts, s.latency);
  CHECK(lat == std::vector<std::pair<int64_t, int64_t>>{{100, 90}, {250, 230}, {510, 480}, {750, 100}, {1200, 700}});
  REQUIRE(m.gs.size() == 3);
  CHECK(m.find_g(2)->create_ev == 4);
  CHECK(m.find_g(7) == nullptr);
}

TEST_CASE("view model: G lanes on request") {
  TempDir dir("gmp_view_test");
  const std::string path = dir.file("small.gmptrace");
  testing::write_small_trace(path);
  Model m = load_trace(path);
  CHECK(m.g_lanes.empty());
  m.build_g_lanes();
  REQUIRE(m.g_lanes.size() == 3);
  CHECK(segs(m.g_lanes[1]) == std::vector<Seg>{{20, 250, 2, State::Runnable},
                                               {250, 600, 2, State::Running},
                                               {600, 650, 2, State::Blocked},
                                               {650, 750, 2, State::Runnable},
                                               {750, 1100, 2, State::Running}});
}

TEST_CASE("view model: the counter pyramid gives the brute-force max of any range") {
  std::mt19937_64 rng(7);
  Counter c;
  int64_t t = 0;
  for (int i = 0; i < 5000; ++i) {
    t += 1 + static_cast<int64_t>(rng() % 50);
    c.ts.push_back(t);
    c.v.push_back(static_cast<int32_t>(rng() % 1000));
  }
  c.build_levels();
  REQUIRE(c.levels.size() >= 2);
  for (int q = 0; q < 3000; ++q) {
    int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(t + 100)) - 50;
    int64_t b = a + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(q % 3 == 0 ? t : 300));
    int32_t want = INT32_MIN;
    bool before = true;
    for (size_t i = 0; i < c.ts.size(); ++i) {
      const int64_t from = c.ts[i], to = i + 1 < c.ts.size() ? c.ts[i + 1] : INT64_MAX;
      if (from < b && to > a) want = std::max(want, c.v[i]);
      if (from <= a) before = false;
    }
    if (before) want = std::max(want, 0);  // the range starts before the first sample
    INFO("range [" << a << ", " << b << ")");
    REQUIRE(c.max_in(a, b) == want);
  }
  CHECK(c.value_at(c.ts[10]) == c.v[10]);
  CHECK(c.value_at(c.ts[0] - 1) == 0);
}

TEST_CASE("view model: the wire decoder reads what protobuf writes") {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    gmp::trace::Event e;
    e.set_ts(static_cast<int64_t>(rng() >> 20));
    e.set_kind(static_cast<gmp::trace::Kind>(rng() % 3 == 0 ? 50 : 2));
    if (rng() & 1) e.set_g(static_cast<int64_t>(rng() % 100000));
    if (rng() & 1) e.set_m(0);
    if (rng() & 1) e.set_p(static_cast<int64_t>(rng() % 300));
    if (rng() & 1) e.set_peer_g(static_cast<int64_t>(rng() % 10));
    if (rng() & 1) e.set_count(-5);
    if (rng() & 1) e.set_signal(23);
    if (rng() & 1) e.set_object(rng());
    if (rng() & 1) e.set_label("chan receive");
    if (rng() & 1) e.set_step(rng() >> 3);
    e.set_reason(static_cast<gmp::trace::Reason>(rng() % 33));
    const std::string bytes = e.SerializeAsString();
    WireEvent w;
    REQUIRE(decode_event(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), w));
    CHECK(w.ts == e.ts());
    CHECK(w.kind == e.kind());
    CHECK(w.reason == e.reason());
    CHECK(((w.has & kHasG) != 0) == e.has_g());
    if (e.has_g()) CHECK(w.g == e.g());
    CHECK(((w.has & kHasM) != 0) == e.has_m());
    if (e.has_p()) CHECK(w.p == e.p());
    if (e.has_peer_g()) CHECK(w.peer_g == e.peer_g());
    if (e.has_count()) CHECK(w.count == e.count());
    CHECK(((w.has & kHasSignal) != 0) == e.has_signal());
    if (e.has_object()) CHECK(w.object == e.object());
    CHECK(w.label == e.label());
    CHECK(((w.has & kHasStep) != 0) == e.has_step());
    if (e.has_step()) CHECK(w.step == e.step());
  }
  // A field of a later schema is skipped; a cut-short varint is refused.
  const uint8_t later[] = {0x08, 0x05, 0xa0, 0x06, 0x01, 0x10, 0x02};  // ts 5, field 100 = 1, kind 2
  WireEvent w;
  REQUIRE(decode_event(later, sizeof later, w));
  CHECK(w.ts == 5);
  CHECK(w.kind == 2);
  const uint8_t cut[] = {0x08, 0x85};
  CHECK_FALSE(decode_event(cut, sizeof cut, w));
}

TEST_CASE("view model: bad input names the byte offset") {
  TempDir dir("gmp_view_test");
  auto error_of = [](const std::string& path) -> gmp::trace::TraceFormatError {
    try {
      load_trace(path);
    } catch (const gmp::trace::TraceFormatError& e) {
      return e;
    }
    FAIL("no error for " << path);
    return gmp::trace::TraceFormatError(path, 0, "");
  };
  SECTION("missing") {
    const auto e = error_of(dir.file("nope.gmptrace"));
    CHECK(e.offset() == 0);
    CHECK_THAT(e.problem(), Catch::Contains("cannot open"));
  }
  SECTION("foreign") {
    std::ofstream(dir.file("foreign")) << "PNG not a trace at all";
    const auto e = error_of(dir.file("foreign"));
    CHECK(e.offset() == 0);
    CHECK_THAT(e.problem(), Catch::Contains("not a gmpsim trace"));
  }
  SECTION("truncated inside the last event") {
    const std::string path = dir.file("small.gmptrace");
    testing::write_small_trace(path);
    const auto size = fs::file_size(path);
    fs::resize_file(path, size - 2);
    // The last record starts where the reader stops before it.
    uint64_t last = 0;
    testing::write_small_trace(dir.file("whole.gmptrace"));
    gmp::trace::TraceReader r(dir.file("whole.gmptrace"));
    gmp::trace::Event ev;
    for (int i = 0; i < 31; ++i) REQUIRE(r.next(ev));
    last = r.offset();
    const auto e = error_of(path);
    CHECK(e.offset() == last);
    CHECK_THAT(e.problem(), Catch::Contains("truncated"));
    CHECK_THAT(std::string(e.what()), Catch::Contains("at byte offset " + std::to_string(last)));
  }
  SECTION("unparsable event") {
    const std::string path = dir.file("bad.gmptrace");
    testing::write_small_trace(path);
    const auto size = fs::file_size(path);
    std::ofstream(path, std::ios::app | std::ios::binary) << std::string("\x02\x0f\x0f", 3);
    const auto e = error_of(path);
    CHECK(e.offset() == size);
    CHECK_THAT(e.problem(), Catch::Contains("unparsable"));
  }
  SECTION("newer schema") {
    gmp::trace::Header h;
    h.set_schema_version(gmp::trace::kSchemaVersion + 1);
    {
      // The writer writes what it is given; only readers refuse.
      gmp::trace::TraceWriter w(dir.file("new.gmptrace"), h);
      w.close();
    }
    const auto e = error_of(dir.file("new.gmptrace"));
    CHECK(e.offset() == 12);
    CHECK_THAT(e.problem(), Catch::Contains("unsupported schema version 2"));
  }
}

TEST_CASE("view model: queue lengths follow batches, steals and the Gs a P takes directly") {
  using namespace gmp::trace;
  TempDir dir("gmp_view_test");
  const std::string path = dir.file("queues.gmptrace");
  {
    Header h;
    h.set_num_ps(2);
    TraceWriter w(path, h);
    auto ev = [&](int64_t ts, Kind k, int64_t g, int64_t m, int64_t p) {
      Event e;
      e.set_ts(ts);
      e.set_kind(k);
      e.set_g(g);
      e.set_m(m);
      e.set_p(p);
      return e;
    };
    for (int64_t g = 1; g <= 3; ++g) {
      Event put = ev(g, KIND_RUNQ_PUT, g, 0, 0);
      put.set_queue(QUEUE_LOCAL);
      w.write(put);
    }
    Event steal = ev(10, KIND_STEAL, 1, 1, 1);  // P1 takes g1 to run and g2 into its queue
    steal.set_peer_p(0);
    steal.set_count(2);
    w.write(steal);
    w.write(ev(11, KIND_GO_START, 1, 1, 1));  // g1 came straight from the steal: P1 keeps g2
    w.write(ev(12, KIND_GO_STOP, 1, 1, 1));
    w.write(ev(13, KIND_GO_START, 2, 1, 1));      // from P1's queue
    Event over = ev(20, KIND_RUNQ_PUT, 3, 0, 0);  // runqputslow: g3 and the local queue go global
    over.set_queue(QUEUE_GLOBAL);
    over.set_count(2);
    over.set_reason(REASON_RUNQ_OVERFLOW);
    w.write(over);
    Event get = ev(30, KIND_RUNQ_GET, 3, 0, 0);  // a batch of 2 from the global queue
    get.set_queue(QUEUE_GLOBAL);
    get.set_count(2);
    w.write(get);
    w.write(ev(31, KIND_GO_START, 3, 0, 0));
    w.close();
  }
  const Model m = load_trace(path);
  using S = std::vector<std::pair<int64_t, int32_t>>;
  CHECK(samples(m.local_queues[0]) == S{{1, 1}, {2, 2}, {3, 3}, {10, 1}, {20, 0}, {30, 1}});
  CHECK(samples(m.local_queues[1]) == S{{10, 1}, {13, 0}});
  CHECK(samples(m.global_queue) == S{{20, 2}, {30, 0}});
}

// Issue 25: a trace of two processes (tests/traces/two_process_trace.h).
TEST_CASE("view model: lanes grouped by process, a throttled stretch, GOMAXPROCS over time") {
  TempDir dir("gmp_view_test");
  const std::string path = dir.file("two.gmptrace");
  gmp::trace::testing::write_two_process_trace(path);
  Model m = load_trace(path);
  REQUIRE(m.processes.size() == 2);
  const ProcessGroup& server = m.processes[0];
  const ProcessGroup& loadgen = m.processes[1];
  CHECK(server.name == "server");
  CHECK(server.cpu_quota == 0.5);
  CHECK(loadgen.name == "loadgen");
  // Lanes by process, then id: the server's P0, then loadgen's P0 and P1; Ms likewise.
  REQUIRE(m.p_lanes.size() == 3);
  REQUIRE(m.m_lanes.size() == 3);
  CHECK(server.p_begin == 0);
  CHECK(server.p_end == 1);
  CHECK(loadgen.p_begin == 1);
  CHECK(loadgen.p_end == 3);
  CHECK(server.m_end - server.m_begin == 1);
  CHECK(loadgen.m_end - loadgen.m_begin == 2);
  CHECK(m.p_lane_index(1, 1) == 2);
  CHECK(m.p_lane_index(1, 0) == -1);
  // The server's M0 and P0: G1 runs, is throttled, runs again; loadgen's M0 is untouched.
  const std::vector<Seg> throttled{{10, 50, 1, State::Running}, {50, 80, 1, State::Throttled}, {80, 120, 1, State::Running}};
  CHECK(segs(m.m_lanes[static_cast<size_t>(m.m_lane_index(0, 0))]) == throttled);
  CHECK(segs(m.p_lanes[static_cast<size_t>(m.p_lane_index(0, 0))]) == throttled);
  CHECK(segs(m.m_lanes[static_cast<size_t>(m.m_lane_index(0, 1))]) == std::vector<Seg>{{10, 130, 1, State::Running}});
  REQUIRE(m.throttles.size() == 1);
  CHECK(m.throttles[0].start == 50);
  CHECK(m.throttles[0].end == 80);
  CHECK(m.throttles[0].process == 0);
  CHECK(samples(loadgen.gomaxprocs) == std::vector<std::pair<int64_t, int32_t>>{{90, 2}});
  CHECK(server.gomaxprocs.ts.empty());
  // Each process's G1 is its own.
  REQUIRE(m.gs.size() == 3);
  CHECK(m.find_g(2, 0) == nullptr);
  REQUIRE(m.find_g(2, 1) != nullptr);
  CHECK(m.find_g(2, 1)->create_ev == 9);
  m.build_g_lanes();
  REQUIRE(m.g_lanes.size() == 3);
  CHECK(m.g_lanes[1].process == 1);
  CHECK(segs(m.g_lanes[0]).back() == Seg{120, 140, 1, State::Runnable});
  CHECK(segs(m.g_lanes[1]).back() == Seg{130, 140, 1, State::Runnable});
  std::string text;
  describe_event(m, 9, text);
  CHECK(text.find("process: 1 (loadgen)") != std::string::npos);
}
