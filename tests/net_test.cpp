// The network of server scenarios (sim/workload/network.h) and the language's connections, listeners
// and their operations (docs/scenarios.md): arrival times as declared, and what runs on them show.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/cost/profile.h"
#include "sim/engine/simulation.h"
#include "sim/scenario/scenario.h"
#include "sim/workload/network.h"

using namespace gmp;
using engine::SimResult;

namespace {

constexpr int64_t kUs = 1000;

SimResult run(const std::string& text, int32_t procs, uint64_t seed = 1) {
  const scenario::Scenario sc = scenario::parse_scenario(text, "net.textproto");
  engine::SimConfig cfg;
  cfg.procs = procs;
  cfg.seed = seed;
  cfg.time_limit = 5LL * 1000 * 1000 * 1000;
  return engine::simulate(sc, cost::default_profile(), cfg);
}

// The arrival times of connection c, found by reading it at every ns from `from` to `to`: each
// successful read is a request that had arrived by then and not before.
std::vector<int64_t> arrivals(workload::Network& net, int32_t c, int64_t from, int64_t to) {
  std::vector<int64_t> out;
  for (int64_t t = from; t <= to; t++) {
    while (net.read(c, t)) out.push_back(t);
  }
  return out;
}

}  // namespace

// Fixed arrival k of connection i of an array is start + i*stagger + k*interval; with no start,
// the first comes one interval after i*stagger.
TEST_CASE("connection arrays: each connection's arrivals are shifted by its stagger", "[net]") {
  std::vector<scenario::Conn> decls(2);
  decls[0] = {.name = "a", .count = 3, .interval = 1000, .length = 3, .start = 100, .stagger = 250};
  decls[1] = {.name = "b", .count = 2, .interval = 400, .length = 2, .stagger = 30};
  workload::Network net(decls, 1, 0);
  CHECK(net.conn(1, 1) == 4);
  CHECK(net.nextEvent() == 100);
  CHECK(arrivals(net, net.conn(0, 0), 0, 5000) == std::vector<int64_t>{100, 1100, 2100});
  CHECK(arrivals(net, net.conn(0, 1), 0, 5000) == std::vector<int64_t>{350, 1350, 2350});
  CHECK(arrivals(net, net.conn(0, 2), 0, 5000) == std::vector<int64_t>{600, 1600, 2600});
  CHECK(arrivals(net, net.conn(1, 0), 0, 5000) == std::vector<int64_t>{400, 800});
  CHECK(arrivals(net, net.conn(1, 1), 0, 5000) == std::vector<int64_t>{430, 830});
  CHECK(net.requests() == 13);
}

// One event per ready descriptor, in the connections' order, each reported once; requests read
// before netpoll saw them need no event.
TEST_CASE("the network reports each connection's new arrivals once, in connection order", "[net]") {
  std::vector<scenario::Conn> decls(1);
  decls[0] = {.name = "a", .count = 2, .interval = 1000, .length = 3, .start = 0, .stagger = 100};
  workload::Network net(decls, 1, 50);  // nanotime reads 50 at the run's start
  CHECK(net.nextEvent() == 50);
  std::vector<rt::pollDesc*> ready;
  net.takeEvents(50 + 150, &ready);
  CHECK(ready == std::vector<rt::pollDesc*>{net.pd(0), net.pd(1)});
  CHECK(net.nextEvent() == 50 + 200);
  CHECK(net.read(2, 200));  // read before netpoll looked: no event for it
  CHECK(net.nextEvent() == 50 + 1000);
  ready.clear();
  net.takeEvents(50 + 1300, &ready);
  CHECK(ready == std::vector<rt::pollDesc*>{net.pd(0), net.pd(1), net.pd(2)});
  ready.clear();
  net.takeEvents(50 + 5000, &ready);
  CHECK(ready.empty());
  CHECK(net.nextEvent() == INT64_MAX);
}

// Two connections, a goroutine each, on one P: connection 1's requests arrive `stagger` after
// connection 0's, from 200 us on (once the program has started and both goroutines wait). Each
// request takes 20 us of work, so a request of connection 1 that arrives 10 us after one of
// connection 0 waits the other 10 us behind it; 60 us later, it waits for nothing. The latency of
// a request that waits for nothing is the same fixed overhead (wake-up, system calls) each time.
TEST_CASE("staggered connections: a request waits behind another one's work for what is left of it", "[sim][net]") {
  auto text = [](const std::string& stagger) {
    return "conn { name: \"c\" conns: 2 count: 10 duration: \"100us\" start: \"200us\" stagger: \"" + stagger +
           "\" }\n"
           "waitgroup { name: \"wg\" }\n"
           "func { name: \"main\" op { add { wg: \"wg\" n: 2 } }\n"
           "  op { loop { var: \"i\" count: 2 op { go { func: \"serve\" arg: \"i\" } } } }\n"
           "  op { wait { wg: \"wg\" } } }\n"
           "func { name: \"serve\" param: \"i\" op { loop { count: 10\n"
           "  op { read { conn: \"c\" index: \"i\" } } op { compute { duration: \"20us\" } }\n"
           "  op { write { conn: \"c\" index: \"i\" } } } } op { done { wg: \"wg\" } } }\n";
  };
  const SimResult apart = run(text("60us"), 1);
  REQUIRE(apart.exit_code == 0);
  CHECK(apart.answered == 20);
  CHECK(apart.req_p50 > 20 * kUs);
  CHECK(apart.req_max - apart.req_p50 < 2 * kUs);  // all alike (the first a little slower)
  const SimResult behind = run(text("10us"), 1);
  REQUIRE(behind.exit_code == 0);
  CHECK(behind.answered == 20);
  // The first ten (nearest rank 10 of 20) waited for nothing: connection 0's; the others waited
  // 10 us more.
  CHECK(behind.req_p50 == Approx(apart.req_p50).margin(2 * kUs));
  CHECK(behind.req_max - behind.req_p50 == Approx(10 * kUs).margin(kUs));
}
