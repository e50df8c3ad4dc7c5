// Replay's shared mode (traces/replay_pool.h, derive_scenario.h): a producer and three workers in a
// small trace written by hand, whose pool, items and derived scenario are worked out by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <initializer_list>
#include <regex>
#include <string>
#include <vector>

#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation/simulation.h"
#include "tests/temp_dir.h"
#include "traces/derive_scenario.h"
#include "traces/replay_pool.h"
#include "traces/timeline.h"
#include "traces/trace_writer.h"

using namespace gmp::trace;

namespace {

struct Ev {
  int64_t ts;
  Kind kind;
  int64_t g = -1, m = -1, p = -1;
  int64_t peer_g = -1;
  const char* label = "";
  WaitReason wait = WAIT_REASON_UNSPECIFIED;
  const char* stack = "";
};

Timeline timeline_of(const std::vector<Ev>& evs) {
  const TempDir dir("gmp_replay_pool_test");
  const std::string path = dir.file("t.trace");
  Header h;
  h.set_producer("replay pool test");
  h.set_num_ps(4);
  h.set_clock(CLOCK_VIRTUAL);
  {
    TraceWriter w(path, h);
    for (const Ev& x : evs) {
      Event e;
      e.set_ts(x.ts);
      e.set_kind(x.kind);
      if (x.g >= 0) e.set_g(x.g);
      if (x.m >= 0) e.set_m(x.m);
      if (x.p >= 0) e.set_p(x.p);
      if (x.peer_g >= 0) e.set_peer_g(x.peer_g);
      if (x.kind == KIND_GO_PARK) e.set_reason(REASON_PARK);
      if (x.kind == KIND_GO_CREATE) e.set_reason(REASON_NEWPROC);
      e.set_label(x.label);
      e.set_wait_reason(x.wait);
      e.set_stack(x.stack);
      w.write(e);
    }
    w.close();
  }
  return build_timeline(path);
}

constexpr const char* kSite = "main.worker /src/main.go:21\nmain.main /src/main.go:9";
constexpr const char* kOther = "main.worker /src/main.go:30";

// G1 (main) starts the producer G2 and the workers G3, G4, G5, then waits on a WaitGroup. Each
// worker runs its start (10, 15 and 20 ns) and waits at main.go:21 for an item; G2 hands items out
// at 100 (G3, 1000 ns of work), 200 (G4, 1500), 300 (G5, 1200) and 1200 (G3 again, 800), and
// closes the channel at 3000, which wakes all three; they run 5, 10 and 21 ns and exit, G5's
// WaitGroup Done at 3020 waking main, which exits at 3030. G5 parks at `g5_site`.
Timeline pool_trace(const char* g5_site = kSite, WaitReason main_wait = WAIT_REASON_SYNC_WAITGROUP_WAIT,
                    const char* main_label = "", const char* main_site = "main.main /src/main.go:12") {
  constexpr WaitReason R = WAIT_REASON_CHAN_RECEIVE;
  return timeline_of({
      {0, KIND_GO_CREATE, 1, 0, 0, -1, "main"},
      {0, KIND_GO_START, 1, 0, 0},
      {10, KIND_GO_CREATE, 2, 0, 0, 1, "main.producer"},
      {11, KIND_GO_CREATE, 3, 0, 0, 1, "main.worker"},
      {12, KIND_GO_CREATE, 4, 0, 0, 1, "main.worker"},
      {13, KIND_GO_CREATE, 5, 0, 0, 1, "main.worker"},
      {20, KIND_GO_PARK, 1, 0, 0, -1, main_label, main_wait, main_site},
      {20, KIND_GO_START, 2, 0, 0},
      {30, KIND_GO_START, 3, 1, 1},
      {30, KIND_GO_START, 4, 2, 2},
      {30, KIND_GO_START, 5, 3, 3},
      {40, KIND_GO_PARK, 3, 1, 1, -1, "", R, kSite},
      {45, KIND_GO_PARK, 4, 2, 2, -1, "", R, kSite},
      {50, KIND_GO_PARK, 5, 3, 3, -1, "", R, g5_site},
      {100, KIND_GO_UNPARK, 3, 0, 0, 2},
      {100, KIND_GO_START, 3, 1, 1},
      {200, KIND_GO_UNPARK, 4, 0, 0, 2},
      {200, KIND_GO_START, 4, 2, 2},
      {300, KIND_GO_UNPARK, 5, 0, 0, 2},
      {300, KIND_GO_START, 5, 3, 3},
      {1100, KIND_GO_PARK, 3, 1, 1, -1, "", R, kSite},
      {1200, KIND_GO_UNPARK, 3, 0, 0, 2},
      {1200, KIND_GO_START, 3, 1, 1},
      {1500, KIND_GO_PARK, 5, 3, 3, -1, "", R, kSite},
      {1700, KIND_GO_PARK, 4, 2, 2, -1, "", R, kSite},
      {2000, KIND_GO_PARK, 3, 1, 1, -1, "", R, kSite},
      {3000, KIND_GO_UNPARK, 3, 0, 0, 2},
      {3000, KIND_GO_UNPARK, 4, 0, 0, 2},
      {3000, KIND_GO_UNPARK, 5, 0, 0, 2},
      {3000, KIND_GO_EXIT, 2, 0, 0},
      {3000, KIND_GO_START, 3, 1, 1},
      {3000, KIND_GO_START, 4, 2, 2},
      {3000, KIND_GO_START, 5, 3, 3},
      {3005, KIND_GO_EXIT, 3, 1, 1},
      {3010, KIND_GO_EXIT, 4, 2, 2},
      {3020, KIND_GO_UNPARK, 1, 3, 3, 5},
      {3021, KIND_GO_EXIT, 5, 3, 3},
      {3021, KIND_GO_START, 1, 0, 0},
      {3030, KIND_GO_EXIT, 1, 0, 0},
  });
}

DerivedScenario derive(const Timeline& tl, ReplayMode mode) {
  DeriveOptions o;
  o.mode = mode;
  return derive_scenario(tl, "pool.trace", o);
}

// The text of function `name` in a derived scenario.
std::string func(const std::string& text, const std::string& name) {
  const size_t at = text.find("func {\n  name: \"" + name + "\"\n");
  if (at == std::string::npos) return "";
  return text.substr(at, text.find("\n}\n", at) + 3 - at);
}

}  // namespace

TEST_CASE("replay pool: a producer and three workers at one receive site are one pool", "[replay][pool]") {
  const Timeline tl = pool_trace();
  const PoolAnalysis pa = find_pools(tl, 0, {1, 2, 3, 4, 5}, 1);
  REQUIRE(pa.pools.size() == 1);
  const Pool& p = pa.pools[0];
  CHECK(p.start_fn == "main.worker");
  CHECK(p.site == "main.worker /src/main.go:21");
  CHECK(p.feeders == std::vector<int64_t>{2});
  REQUIRE(p.members.size() == 3);
  // Stretches between two pulls: G3 1000 and 800, G4 1500, G5 1200: the median (lower middle) 1000.
  CHECK(p.median_ns == 1000);
  // Items in the order taken, each a stretch from a pull to the next.
  REQUIRE(p.items.size() == 4);
  CHECK((p.items[0].t == 100 && p.items[0].member == 3 && p.items[0].ns == 1000));
  CHECK((p.items[1].t == 200 && p.items[1].member == 4 && p.items[1].ns == 1500));
  CHECK((p.items[2].t == 300 && p.items[2].member == 5 && p.items[2].ns == 1200));
  CHECK((p.items[3].t == 1200 && p.items[3].member == 3 && p.items[3].ns == 800));
  // Starts before the first item and the runs after the close are each member's own (under half
  // the median: no item); G5's last 1 ns follows its end, main's wake-up.
  CHECK((p.members[0].prologue_ns == 10 && p.members[0].epilogue_ns == 5));
  CHECK((p.members[1].prologue_ns == 15 && p.members[1].epilogue_ns == 10));
  CHECK((p.members[2].prologue_ns == 20 && p.members[2].epilogue_ns == 21));
  CHECK(p.work_ns() == 1815 + 1525 + 1241);  // every member's running time
  CHECK(p.end_wakes.size() == 1);
  CHECK(p.end_waits.count({1, 2}) == 1);  // main's WaitGroup wait: runnable, running, then blocked
  CHECK(p.all_exited);
  // Items go where the producer readied their taker: positions 0 to 3; the close's three after.
  REQUIRE(p.positions.size() == 7);
  for (size_t i = 0; i < 4; i++) CHECK(p.items[i].position == i);
  REQUIRE(pa.lines.size() == 1);
  CHECK(
      pa.lines[0] ==
      "3 goroutines of main.worker blocked at main.worker /src/main.go:21, fed by G2 (main.producer): pooled, 4 items, "
      "median item 0.001 ms");
}

// A buffered channel that is full: the producer G2 waits in a send (at 50, 1030 and 2030) and
// each worker that takes an item then readies it; the workers never wait. G3 runs 20-6020 and
// readies G2 at 1020 and 2020; G4 runs 20-4020, readies G2 at 3020 and main (its WaitGroup
// Done) at 4019. G2 runs 20-50 and 10 ns after each wake-up, then exits at 3030.
Timeline buffered_trace() {
  constexpr WaitReason S = WAIT_REASON_CHAN_SEND;
  return timeline_of({
      {0, KIND_GO_CREATE, 1, 0, 0, -1, "main"},
      {0, KIND_GO_START, 1, 0, 0},
      {10, KIND_GO_CREATE, 2, 0, 0, 1, "main.producer"},
      {11, KIND_GO_CREATE, 3, 0, 0, 1, "main.worker"},
      {12, KIND_GO_CREATE, 4, 0, 0, 1, "main.worker"},
      {15, KIND_GO_PARK, 1, 0, 0, -1, "", WAIT_REASON_SYNC_WAITGROUP_WAIT},
      {20, KIND_GO_START, 2, 0, 0},
      {20, KIND_GO_START, 3, 1, 1},
      {20, KIND_GO_START, 4, 2, 2},
      {50, KIND_GO_PARK, 2, 0, 0, -1, "", S},
      {1020, KIND_GO_UNPARK, 2, 1, 1, 3},
      {1020, KIND_GO_START, 2, 0, 0},
      {1030, KIND_GO_PARK, 2, 0, 0, -1, "", S},
      {2020, KIND_GO_UNPARK, 2, 1, 1, 3},
      {2020, KIND_GO_START, 2, 0, 0},
      {2030, KIND_GO_PARK, 2, 0, 0, -1, "", S},
      {3020, KIND_GO_UNPARK, 2, 2, 2, 4},
      {3020, KIND_GO_START, 2, 0, 0},
      {3030, KIND_GO_EXIT, 2, 0, 0},
      {4019, KIND_GO_UNPARK, 1, 2, 2, 4},
      {4020, KIND_GO_EXIT, 4, 2, 2},
      {4020, KIND_GO_START, 1, 0, 0},
      {4030, KIND_GO_EXIT, 1, 0, 0},
      {6020, KIND_GO_EXIT, 3, 1, 1},
  });
}

TEST_CASE("replay pool: workers that take from a full buffer keep their long starts and ends as their own",
          "[replay][pool]") {
  const PoolAnalysis pa = find_pools(buffered_trace(), 0, {1, 2, 3, 4}, 1);
  REQUIRE(pa.pools.size() == 1);
  const Pool& p = pa.pools[0];
  CHECK(p.site == "chan send (taken from blocked senders)");
  CHECK(p.feeders == std::vector<int64_t>{2});
  // The one stretch between two pulls, G3's 1020-2020, is the median: 1000. G3's start (1000) is
  // one item; its last stretch (4000) and G4's start (3000), over twice the median, are their own
  // (not split into shared items); G4's last (1000, less nothing: its Done at 4019 is its end) is
  // one item.
  CHECK(p.median_ns == 1000);
  REQUIRE(p.items.size() == 3);
  for (const PoolItem& it : p.items) CHECK(it.ns == 1000);
  CHECK(p.stretches == 3);
  CHECK(p.merged == 0);
  CHECK((p.members[0].prologue_ns == 0 && p.members[0].epilogue_ns == 4000));
  CHECK((p.members[1].prologue_ns == 3000 && p.members[1].epilogue_ns == 0));
  // Taken at 20 (G3), 1020 (G3), 3020 (G4): positions 0, 0, 2.
  std::vector<size_t> pos;
  for (const PoolItem& it : p.items) pos.push_back(it.position);
  CHECK(pos == std::vector<size_t>{0, 0, 2});
  CHECK(pa.lines[0].find("pooled, 3 items, median item 0.001 ms") != std::string::npos);
  // The producer hands the items out where its waits ended, and no longer waits.
  const DerivedScenario d = derive(buffered_trace(), ReplayMode::Shared);
  CHECK(func(d.text, "g2") ==
        "func {\n  name: \"g2\"\n"
        "  op { compute { ns: 30 } }\n"
        "  op { send { chan: \"pool1\" value: \"1000\" } }\n"
        "  op { send { chan: \"pool1\" value: \"1000\" } }\n"
        "  op { compute { ns: 20 } }\n"
        "  op { send { chan: \"pool1\" value: \"1000\" } }\n"
        "  op { close { chan: \"pool1\" } }\n"
        "  op { compute { ns: 10 } }\n"
        "  op { done { wg: \"exited\" } }\n}\n");
  CHECK(func(d.text, "g3").find("    }\n  }\n  op { compute { ns: 4000 } }\n  op { done { wg: \"pool1_end\" } }\n") !=
        std::string::npos);
  CHECK_NOTHROW(gmp::scenario::parse_scenario(d.text, "buffered.replay"));
}

// G2 hands G3 items at 100, 300 and 500 and G4 one at 150; G3's third takes 100000 ns, the others
// 100; the close at 200000 wakes both, G4's Done at 200010 wakes main.
Timeline long_item_trace() {
  constexpr WaitReason R = WAIT_REASON_CHAN_RECEIVE;
  return timeline_of({
      {0, KIND_GO_CREATE, 1, 0, 0, -1, "main"},
      {0, KIND_GO_START, 1, 0, 0},
      {10, KIND_GO_CREATE, 2, 0, 0, 1, "main.producer"},
      {11, KIND_GO_CREATE, 3, 0, 0, 1, "main.worker"},
      {12, KIND_GO_CREATE, 4, 0, 0, 1, "main.worker"},
      {20, KIND_GO_PARK, 1, 0, 0, -1, "", WAIT_REASON_SYNC_WAITGROUP_WAIT},
      {20, KIND_GO_START, 2, 0, 0},
      {30, KIND_GO_START, 3, 1, 1},
      {30, KIND_GO_START, 4, 2, 2},
      {40, KIND_GO_PARK, 3, 1, 1, -1, "", R, kSite},
      {45, KIND_GO_PARK, 4, 2, 2, -1, "", R, kSite},
      {100, KIND_GO_UNPARK, 3, 0, 0, 2},
      {100, KIND_GO_START, 3, 1, 1},
      {150, KIND_GO_UNPARK, 4, 0, 0, 2},
      {150, KIND_GO_START, 4, 2, 2},
      {200, KIND_GO_PARK, 3, 1, 1, -1, "", R, kSite},
      {250, KIND_GO_PARK, 4, 2, 2, -1, "", R, kSite},
      {300, KIND_GO_UNPARK, 3, 0, 0, 2},
      {300, KIND_GO_START, 3, 1, 1},
      {400, KIND_GO_PARK, 3, 1, 1, -1, "", R, kSite},
      {500, KIND_GO_UNPARK, 3, 0, 0, 2},
      {500, KIND_GO_START, 3, 1, 1},
      {100500, KIND_GO_PARK, 3, 1, 1, -1, "", R, kSite},
      {200000, KIND_GO_UNPARK, 3, 0, 0, 2},
      {200000, KIND_GO_UNPARK, 4, 0, 0, 2},
      {200000, KIND_GO_EXIT, 2, 0, 0},
      {200000, KIND_GO_START, 3, 1, 1},
      {200000, KIND_GO_START, 4, 2, 2},
      {200005, KIND_GO_EXIT, 3, 1, 1},
      {200010, KIND_GO_UNPARK, 1, 2, 2, 4},
      {200011, KIND_GO_EXIT, 4, 2, 2},
      {200011, KIND_GO_START, 1, 0, 0},
      {200020, KIND_GO_EXIT, 1, 0, 0},
  });
}

TEST_CASE("replay pool: a long stretch between two pulls is split by the median into at most 64 items",
          "[replay][pool]") {
  const PoolAnalysis pa = find_pools(long_item_trace(), 0, {1, 2, 3, 4}, 1);
  REQUIRE(pa.pools.size() == 1);
  const Pool& p = pa.pools[0];
  // Stretches between two pulls: 100, 100, 100000 (G3) and 100 (G4): median 100. The long one
  // would be 1000 items by the median; it is 64 of 1562 ns (the first 1594, the remainder).
  CHECK(p.median_ns == 100);
  CHECK(p.merged == 1);
  CHECK(p.merged_items == 64);
  REQUIRE(p.items.size() == 3 + 64);
  int64_t sum = 0;
  for (const PoolItem& it : p.items) sum += it.ns;
  CHECK(sum == 100300);
  CHECK(p.items[3].ns == 1594);  // by the time taken: G3 at 100, G4 at 150, G3 at 300, then the 64
  CHECK(p.items[4].ns == 1562);
}

TEST_CASE("replay pool: workers parked at two different sites are refused and the line says where", "[replay][pool]") {
  const PoolAnalysis pa = find_pools(pool_trace(kOther), 0, {1, 2, 3, 4, 5}, 1);
  CHECK(pa.pools.empty());
  REQUIRE(pa.lines.size() == 1);
  CHECK(pa.lines[0] ==
        "3 goroutines of main.worker: not pooled, they wait at different sites: main.worker /src/main.go:21 (G3, G4, "
        "G5); main.worker /src/main.go:30 (G5)");
  // Refused, the workers stay pinned: the shared derivation is the pinned one.
  const DerivedScenario s = derive(pool_trace(kOther), ReplayMode::Shared);
  CHECK(s.text == derive(pool_trace(kOther), ReplayMode::Pinned).text);
  CHECK(s.pools == pa.lines);
}

TEST_CASE("replay pool: the shared scenario hands the items out as values and keeps the pool's work",
          "[replay][pool]") {
  const DerivedScenario d = derive(pool_trace(), ReplayMode::Shared);
  INFO(d.text);
  REQUIRE(d.pools.size() == 1);
  CHECK(d.text.find("chan { name: \"pool1\" cap: 4 }") != std::string::npos);
  CHECK(d.text.find("waitgroup { name: \"pool1_end\" }") != std::string::npos);
  // The producer: its running time between the hand-outs, each item's work as the value, the close
  // where it closed.
  CHECK(func(d.text, "g2") ==
        "func {\n  name: \"g2\"\n"
        "  op { compute { ns: 80 } }\n"
        "  op { send { chan: \"pool1\" value: \"1000\" } }\n"
        "  op { compute { ns: 100 } }\n"
        "  op { send { chan: \"pool1\" value: \"1500\" } }\n"
        "  op { compute { ns: 100 } }\n"
        "  op { send { chan: \"pool1\" value: \"1200\" } }\n"
        "  op { compute { ns: 900 } }\n"
        "  op { send { chan: \"pool1\" value: \"800\" } }\n"
        "  op { compute { ns: 1800 } }\n"
        "  op { close { chan: \"pool1\" } }\n"
        "  op { done { wg: \"exited\" } }\n}\n");
  // A worker: its start, the loop over the items, its end as a WaitGroup's Done.
  CHECK(func(d.text, "g5") ==
        "func {\n  name: \"g5\"\n"
        "  op { compute { ns: 20 } }\n"
        "  op {\n    loop {\n      range: \"pool1\"\n      var: \"v\"\n"
        "      op { compute { duration_expr: \"v\" } }\n    }\n  }\n"
        "  op { compute { ns: 21 } }\n"
        "  op { done { wg: \"pool1_end\" } }\n"
        "  op { done { wg: \"exited\" } }\n}\n");
  // Main waits for the pool's end where the last Done woke it.
  const std::string main_fn = func(d.text, "main");
  CHECK(main_fn.find("  op { add { wg: \"pool1_end\" n: 3 } }\n") != std::string::npos);
  CHECK(main_fn.find("  op { wait { wg: \"pool1_end\" } }\n") != std::string::npos);
  CHECK(d.text.find("wake_g3") == std::string::npos);
  // The items' values and the workers' own compute add up to the members' running time.
  int64_t total = 0;
  const std::regex value("value: \"([0-9]+)\""), ns("compute \\{ ns: ([0-9]+) \\}");
  for (auto it = std::sregex_iterator(d.text.begin(), d.text.end(), value); it != std::sregex_iterator(); ++it) {
    total += std::stoll((*it)[1]);
  }
  for (const char* g : {"g3", "g4", "g5"}) {
    const std::string f = func(d.text, g);
    for (auto it = std::sregex_iterator(f.begin(), f.end(), ns); it != std::sregex_iterator(); ++it) {
      total += std::stoll((*it)[1]);
    }
  }
  CHECK(total == 1815 + 1525 + 1241);
  // It is a scenario the simulator takes.
  CHECK_NOTHROW(gmp::scenario::parse_scenario(d.text, "pool.replay"));
}

TEST_CASE("replay pool: pinned mode derives each worker's own work as before", "[replay][pool]") {
  const DerivedScenario d = derive(pool_trace(), ReplayMode::Pinned);
  CHECK(d.pools.empty());
  CHECK(d.text.find("pool1") == std::string::npos);
  CHECK(func(d.text, "g3") ==
        "func {\n  name: \"g3\"\n"
        "  op { compute { ns: 10 } }\n"
        "  op { recv { chan: \"wake_g3\" } }\n"
        "  op { compute { ns: 1000 } }\n"
        "  op { recv { chan: \"wake_g3\" } }\n"
        "  op { compute { ns: 800 } }\n"
        "  op { recv { chan: \"wake_g3\" } }\n"
        "  op { compute { ns: 5 } }\n"
        "  op { done { wg: \"exited\" } }\n}\n");
}

TEST_CASE("replay pool: a member's last wake-up of a goroutine not at a WaitGroup stays a send", "[replay][pool]") {
  // Main waits in a receive (a result) where G5's last wake-up readies it, 1 ns before G5 exits:
  // a send carried by G5's last item, not the pool's end.
  const PoolAnalysis pa = find_pools(pool_trace(kSite, WAIT_REASON_CHAN_RECEIVE), 0, {1, 2, 3, 4, 5}, 1);
  REQUIRE(pa.pools.size() == 1);
  CHECK(pa.pools[0].end_wakes.empty());
  CHECK(pa.pools[0].end_waits.empty());
  const DerivedScenario d = derive(pool_trace(kSite, WAIT_REASON_CHAN_RECEIVE), ReplayMode::Shared);
  INFO(d.text);
  CHECK(d.text.find("pool1_end") == std::string::npos);
  CHECK(func(d.text, "main").find("  op { recv { chan: \"wake_g1\" } }\n") != std::string::npos);
  CHECK_NOTHROW(gmp::scenario::parse_scenario(d.text, "pool.replay"));
  // A Go execution trace's WaitGroup wait: a semaphore wait ("sync") parked in
  // sync.runtime_Semacquire, or in WaitGroup's own code: the pool's end.
  for (const char* site : {"sync.runtime_Semacquire /usr/lib/go/src/runtime/sema.go:71",
                           "sync.(*WaitGroup).Wait /usr/lib/go/src/sync/waitgroup.go:118"}) {
    const PoolAnalysis go = find_pools(pool_trace(kSite, WAIT_REASON_OTHER, "sync", site), 0, {1, 2, 3, 4, 5}, 1);
    REQUIRE(go.pools.size() == 1);
    CHECK(go.pools[0].end_waits.count({1, 2}) == 1);
  }
  // A mutex's semaphore wait is no WaitGroup's.
  const PoolAnalysis mu = find_pools(
      pool_trace(kSite, WAIT_REASON_OTHER, "sync", "sync.runtime_SemacquireMutex /usr/lib/go/src/runtime/sema.go:77"),
      0, {1, 2, 3, 4, 5}, 1);
  REQUIRE(mu.pools.size() == 1);
  CHECK(mu.pools[0].end_waits.empty());
}

namespace {

// Runs a scenario at `procs` Ps with a trace (stopped at `limit` ns of virtual time), derives the
// trace's shared replay, and runs that at 1, 2 and 4 Ps: each must parse and end. The replay's end
// at 2 Ps goes to *end2.
DerivedScenario run_and_replay(const std::string& text, int32_t procs, int64_t limit = 0, int64_t* end2 = nullptr) {
  const gmp::scenario::Scenario sc = gmp::scenario::parse_scenario(text, "case.textproto");
  const TempDir dir("gmp_replay_pool_test");
  gmp::engine::SimConfig cfg;
  cfg.procs = procs;
  cfg.cores = std::max(procs, 2);  // as the reviewer's runs on a machine of 2 cores
  if (limit > 0) cfg.time_limit = limit;
  cfg.trace_path = dir.file("run.trace");
  (void)gmp::engine::simulate(sc, gmp::cost::default_profile(), cfg);
  const DerivedScenario d = derive(build_timeline(cfg.trace_path), ReplayMode::Shared);
  INFO(d.text.substr(0, 4000));
  gmp::scenario::Scenario replay;
  REQUIRE_NOTHROW(replay = gmp::scenario::parse_scenario(d.text, "case.replay"));
  for (int32_t p : {1, 2, 4}) {
    INFO("replayed at GOMAXPROCS " << p);
    gmp::engine::SimConfig again;
    again.procs = p;
    const gmp::engine::SimResult r = gmp::engine::simulate(replay, gmp::cost::default_profile(), again);
    CHECK(r.message == "");
    REQUIRE(r.stop == gmp::engine::Engine::Stop::Exit);
    if (p == 2 && end2 != nullptr) *end2 = r.end_time;
  }
  return d;
}

bool has_line(const DerivedScenario& d, const std::string& part) {
  for (const std::string& l : d.pools) {
    if (l.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("replay pool: of two pooled stages in a chain one stays pinned and the replay runs", "[replay][pool]") {
  // source -> 3 x stage1 -> 3 x stage2 -> main: stage2's feeders are stage1's goroutines, whose
  // items wake stage2's. Both pooled, stage2 would never be fed and stage1's items would send on
  // wake channels of goroutines replayed as loops over a pool.
  const DerivedScenario d = run_and_replay(R"(
chan { name: "a" cap: 4 }
chan { name: "b" cap: 4 }
chan { name: "c" cap: 4 }
waitgroup { name: "wg1" }
waitgroup { name: "wg2" }
func {
  name: "main"
  op { add { wg: "wg1" n: 3 } }
  op { add { wg: "wg2" n: 3 } }
  op { go { func: "source" } }
  op { loop { count: 3 op { go { func: "stage1" } } } }
  op { loop { count: 3 op { go { func: "stage2" } } } }
  op { go { func: "closer1" } }
  op { go { func: "closer2" } }
  op { loop { range: "c" var: "v" op { compute { ns: 2000 } } } }
}
func { name: "source"
  op { loop { var: "i" count: 60 op { compute { ns: 3000 } } op { send { chan: "a" value: "i" } } } }
  op { close { chan: "a" } }
}
func { name: "stage1"
  op { loop { range: "a" var: "v" op { compute { duration_expr: "(10 + v % 7) * 1us" } } op { send { chan: "b" value: "v" } } } }
  op { done { wg: "wg1" } }
}
func { name: "stage2"
  op { loop { range: "b" var: "v" op { compute { duration_expr: "(15 + v % 5) * 1us" } } op { send { chan: "c" value: "v" } } } }
  op { done { wg: "wg2" } }
}
func { name: "closer1" op { wait { wg: "wg1" } } op { close { chan: "b" } } }
func { name: "closer2" op { wait { wg: "wg2" } } op { close { chan: "c" } } }
)",
                                           2);
  // The stage with more work is pooled (which one depends on the run), the other is refused.
  for (const std::string& l : d.pools) UNSCOPED_INFO(l);
  const bool one = has_line(d, "3 goroutines of stage1 blocked at") &&
                   has_line(d, "3 goroutines of stage2: not pooled, they are fed or woken by the pool of stage1");
  const bool two = has_line(d, "3 goroutines of stage2 blocked at") &&
                   has_line(d, "3 goroutines of stage1: not pooled, they feed or wake the pool of stage2");
  CHECK(one != two);
}

TEST_CASE("replay pool: goroutines started and waited for per request are not pooled", "[replay][pool]") {
  // Main starts 4 parts per request and waits for them on a WaitGroup of that request: one pool
  // would make main wait for all 12 at the first request.
  const DerivedScenario d = run_and_replay(R"(
chan { name: "req" cap: 4 }
func {
  name: "main"
  op {
    loop {
      count: 3
      op { local { waitgroup: "wg" } }
      op { add { wg: "wg" n: 4 } }
      op { loop { count: 4 op { go { func: "part" arg: "wg" } } } }
      op { compute { ns: 20000 } }
      op { loop { count: 4 op { compute { ns: 1000 } } op { send { chan: "req" } } } }
      op { wait { wg: "wg" } }
    }
  }
}
func {
  name: "part"
  param: "wg waitgroup"
  op { recv { chan: "req" } }
  op { compute { ns: 50000 } }
  op { done { wg: "wg" } }
}
)",
                                           4);
  CHECK(has_line(d, "12 goroutines of part: not pooled, their end is waited for 3 times"));
}

TEST_CASE("replay pool: a trace cut while the pool runs replays to its end", "[replay][pool]") {
  // The trace stops at 13.5 ms, in the 100 ms item: the workers have not all exited, so the pool
  // has no end and their last wake-ups of main stay sends.
  const DerivedScenario d = run_and_replay(R"(
chan { name: "jobs" cap: 2 }
chan { name: "results" }
func {
  name: "main"
  op { go { func: "feeder" } }
  op { loop { count: 3 op { go { func: "w" } } } }
  op { loop { range: "results" var: "r" op { compute { ns: 500 } } } }
}
func { name: "feeder"
  op { loop { var: "i" count: 30 op { compute { ns: 2000 } } op { send { chan: "jobs" value: "i" } } } }
  op { close { chan: "jobs" } }
}
func { name: "w"
  op { loop { range: "jobs" var: "v" op { compute { duration_expr: "(v / 29) * 100000000 + 20000" } } op { send { chan: "results" value: "v" } } } }
}
)",
                                           2, 13500000);
  CHECK(has_line(d, "3 goroutines of w blocked at chan receive, fed by G6 (feeder): pooled"));
  CHECK(d.text.find("pool1_end") == std::string::npos);
}

TEST_CASE("replay pool: one long job among short ones is split into 64 items at most", "[replay][pool]") {
  // 41 jobs, the last 10 ms, the others empty: by the median of about 100 ns the long job was
  // 100000 items (a 1 s one 18.9 million, an 849 MB scenario); a stretch is split into 64 at most.
  const DerivedScenario d = run_and_replay(R"(
chan { name: "jobs" }
waitgroup { name: "wg" }
func {
  name: "main"
  op { add { wg: "wg" n: 2 } }
  op { go { func: "w" } }
  op { go { func: "w" } }
  op { compute { ns: 10000 } }
  op { loop { var: "i" count: 41 op { send { chan: "jobs" value: "i" } } } }
  op { close { chan: "jobs" } }
  op { wait { wg: "wg" } }
}
func { name: "w"
  op { loop { range: "jobs" var: "v" op { compute { duration_expr: "(v / 40) * 10000000" } } } }
  op { done { wg: "wg" } }
}
)",
                                           1);
  CHECK(has_line(d, "2 goroutines of w blocked at chan receive"));
  CHECK(has_line(d, "held several items (taken as 64, by the median)"));
  CHECK(d.text.size() < 100000);
}
