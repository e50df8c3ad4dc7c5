// The network of server scenarios (sim/workload/network.h) and the language's connections, listeners
// and their operations (docs/scenarios.md): arrival times as declared, and what runs on them show.
#include <catch2/catch.hpp>

#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/cost/profile.h"
#include "sim/simulation/simulation.h"
#include "sim/scenario/scenario.h"
#include "sim/workload/network.h"
#include "tests/temp_dir.h"

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

// A declaration of fixed arrivals (start -1: one interval after the run starts).
scenario::Conn fixed(int64_t count, int64_t interval, int64_t length, int64_t start, int64_t stagger,
                     int64_t burst = 1) {
  scenario::Conn c;
  c.count = count;
  c.interval = interval;
  c.length = length;
  c.start = start;
  c.stagger = stagger;
  c.burst = burst;
  return c;
}

// The arrival times of connection c, found by reading it at every ns from `from` to `to`: each
// successful read is a request that had arrived by then and not before.
std::vector<int64_t> arrivals(workload::Network& net, int32_t c, int64_t from, int64_t to) {
  std::vector<int64_t> out;
  for (int64_t t = from; t <= to; t++) {
    while (net.read(c, t) == workload::Network::Got::Request) out.push_back(t);
  }
  return out;
}

}  // namespace

// Fixed arrival k of connection i of an array is start + i*stagger + k*interval; with no start,
// the first comes one interval after i*stagger.
TEST_CASE("connection arrays: each connection's arrivals are shifted by its stagger", "[net]") {
  const std::vector<scenario::Conn> decls{fixed(3, 1000, 3, 100, 250), fixed(2, 400, 2, -1, 30)};
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
  const std::vector<scenario::Conn> decls{fixed(2, 1000, 3, 0, 100)};
  workload::Network net(decls, 1, 50);  // nanotime reads 50 at the run's start
  CHECK(net.nextEvent() == 50);
  std::vector<rt::NetEvent> ready;
  net.takeEvents(50 + 150, &ready);
  CHECK(ready == std::vector<rt::NetEvent>{{net.pd(0), rt::EPOLLIN}, {net.pd(1), rt::EPOLLIN}});
  CHECK(net.nextEvent() == 50 + 200);
  CHECK(net.read(2, 200) == workload::Network::Got::Request);  // read before netpoll looked: no event for it
  CHECK(net.nextEvent() == 50 + 1000);
  ready.clear();
  net.takeEvents(50 + 1300, &ready);
  // Each connection's last request: the client closes its end after it (RDHUP).
  constexpr uint32_t kLast = rt::EPOLLIN | rt::EPOLLRDHUP;
  CHECK(ready == std::vector<rt::NetEvent>{{net.pd(0), kLast}, {net.pd(1), kLast}, {net.pd(2), kLast}});
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

// A burst is that many requests at each arrival time; the last burst has what is left.
TEST_CASE("bursts: several requests arrive at each arrival time", "[net]") {
  const std::vector<scenario::Conn> decls{fixed(5, 1000, 0, 0, 0, 2)};
  workload::Network net(decls, 1, 0);
  CHECK(arrivals(net, 0, 0, 5000) == std::vector<int64_t>{0, 0, 1000, 1000, 2000});
  CHECK(net.requests() == 5);
}

namespace {

// One goroutine serves connection c: read, 20 us of work, write, count times; the requests arrive
// from 200 us on, once it waits.
std::string one_server(const std::string& conn, int count) {
  return conn + "\nfunc { name: \"main\" op { loop { count: " + std::to_string(count) +
         " op { read { conn: \"c\" } } op { compute { duration: \"20us\" } } op { write { conn: \"c\" } } } } }\n";
}

}  // namespace

// The second request of a burst arrives with the first, and waits for the first one's answer
// before it is read: its latency is the first one's plus the 20 us of work (and the read and the
// write). Apart, the two wait for nothing.
TEST_CASE("bursts: the second request of a burst waits behind the first", "[sim][net]") {
  const SimResult apart = run(one_server("conn { name: \"c\" count: 2 duration: \"100us\" start: \"200us\" }", 2), 1);
  REQUIRE(apart.answered == 2);
  CHECK(apart.req_max - apart.req_p50 < 2 * kUs);
  const SimResult burst =
      run(one_server("conn { name: \"c\" count: 2 duration: \"100us\" start: \"200us\" burst: 2 }", 2), 1);
  REQUIRE(burst.answered == 2);
  CHECK(burst.req_p50 == Approx(apart.req_p50).margin(2 * kUs));
  CHECK(burst.req_max - burst.req_p50 == Approx(20 * kUs).margin(2 * kUs));
}

// An arrival file's times, relative to the scenario file's folder: connection 1's two requests
// come at 300 us, 10 us after connection 0's first, and every line without an index is an
// arrival on both connections.
TEST_CASE("arrival files: the requests arrive when the file says", "[sim][net]") {
  const TempDir dir("gmp_net_arrivals");
  std::ofstream(dir.file("times.txt")) << "# at   conn\n290us 0\n300us 1\n300us 1\n1ms\n";
  const std::string path = dir.file("server.textproto");
  std::ofstream(path) << "conn { name: \"c\" conns: 2 arrivals: \"times.txt\" }\n"
                         "waitgroup { name: \"wg\" }\n"
                         "func { name: \"main\" op { add { wg: \"wg\" n: 2 } }\n"
                         "  op { go { func: \"serve\" arg: \"0\" arg: \"2\" } }\n"
                         "  op { go { func: \"serve\" arg: \"1\" arg: \"3\" } } op { wait { wg: \"wg\" } } }\n"
                         "func { name: \"serve\" param: \"i\" param: \"n\" op { loop { count_expr: \"n\"\n"
                         "  op { read { conn: \"c\" index: \"i\" } } op { compute { duration: \"20us\" } }\n"
                         "  op { write { conn: \"c\" index: \"i\" } } } } op { done { wg: \"wg\" } } }\n";
  const scenario::Scenario sc = scenario::load_scenario(path);
  engine::SimConfig cfg;
  cfg.procs = 1;
  const SimResult r = engine::simulate(sc, cost::default_profile(), cfg);
  REQUIRE(r.exit_code == 0);
  CHECK(r.requests == 5);
  CHECK(r.answered == 5);
  // A request alone takes about 22 us (20 us of work, the wake-up, the read and the write).
  // Connection 1's second request, the slowest, waits for connection 0's first, answered about
  // 22 us after 290 us, then for its own first: 12 + 22 + 22 us. At 1 ms the two connections'
  // requests come together: one waits for the other, 44 us.
  CHECK(r.req_p50 > 30 * kUs);  // of 22, 22, 34, 44, 56: connection 1's first
  CHECK(r.req_max == Approx(56 * kUs).margin(3 * kUs));
  CHECK(r.end_time > 1000 * kUs);
}

// With a write_service, an answer leaves that long after the one ahead of it; the send buffer
// holds send_buffer of them, and a write that finds it full is refused (EAGAIN) until one has
// left, which the network reports as EPOLLOUT.
TEST_CASE("write service: answers leave one at a time and a full send buffer refuses a write", "[net]") {
  scenario::Conn d = fixed(3, 10, 0, 0, 0, 3);  // three requests at 0
  d.write_service = 100;
  const std::vector<scenario::Conn> decls{d};
  workload::Network net(decls, 1, 0);
  using W = workload::Network::Wrote;
  std::vector<rt::NetEvent> ready;
  net.takeEvents(0, &ready);
  CHECK(ready == std::vector<rt::NetEvent>{{net.pd(0), rt::EPOLLIN | rt::EPOLLRDHUP}});
  REQUIRE(arrivals(net, 0, 0, 0).size() == 3);
  CHECK(net.write(0, 5) == W::Answer);  // leaves at 105
  CHECK(net.write(0, 6) == W::Full);
  CHECK(net.nextEvent() == 105);
  ready.clear();
  net.takeEvents(104, &ready);
  CHECK(ready.empty());
  net.takeEvents(105, &ready);
  CHECK(ready == std::vector<rt::NetEvent>{{net.pd(0), rt::EPOLLOUT}});
  CHECK(net.nextEvent() == INT64_MAX);
  CHECK(net.write(0, 110) == W::Answer);  // leaves at 210
  CHECK(net.latencies() == std::vector<int64_t>{105, 210});
  CHECK(net.last_write() == 210);
}

namespace {

uint64_t parks(const SimResult& r) {
  for (const auto& [name, count] : r.event_counts) {
    if (name == "GoPark") return count;
  }
  return 0;
}

}  // namespace

// Two requests arrive together; the server answers each at once, and each answer takes 100 us to
// leave. The first answer's latency is its 100 us; the second leaves 100 us after it, 200 us. With
// a send buffer of one answer, the second write finds the first still leaving and parks in the
// poller ("IO wait") until it has gone; with two, it is taken at once.
TEST_CASE("write service: a write with a busy send side waits in the poller, and latency counts the sending",
          "[sim][net]") {
  auto text = [](const std::string& buffer) {
    return one_server("conn { name: \"c\" count: 2 duration: \"1ms\" start: \"200us\" burst: 2 "
                      "write_service: \"100us\"" + buffer + " }", 2);
  };
  const SimResult one = run(text(""), 1);
  REQUIRE(one.exit_code == 0);
  REQUIRE(one.answered == 2);
  // 20 us of work (and the system calls), then 100 us leaving.
  CHECK(one.req_p50 == Approx(120 * kUs).margin(5 * kUs));
  // The second leaves 100 us after its write, which waited for the first to leave (and for the
  // poller's wake-up and the write's retry, a few us more).
  CHECK(one.req_max == Approx(220 * kUs).margin(10 * kUs));
  CHECK(one.req_max > one.req_p50 + 100 * kUs);
  const SimResult two = run(text(" send_buffer: 2"), 1);
  REQUIRE(two.answered == 2);
  CHECK(two.req_max == Approx(one.req_p50 + 100 * kUs).margin(kUs));  // queued behind the first at once
  CHECK(parks(one) == parks(two) + 1);  // the second write's wait
  // Without a write_service, latency ends at the write: 20 and 40 us of work.
  const SimResult none =
      run(one_server("conn { name: \"c\" count: 2 duration: \"1ms\" start: \"200us\" burst: 2 }", 2), 1);
  CHECK(none.req_max < 50 * kUs);
}

// With nothing pending, accept parks in the poller on the listener until the first connection
// comes, at 500 us; the connection's request arrives as it connects (start 0).
TEST_CASE("accept parks when no connection is pending, and a connection's requests count from its connect",
          "[sim][net]") {
  const SimResult r = run(R"(
conn { name: "c" count: 1 ns: 1000 start_ns: 0 }
listener { name: "ln" conn: "c" duration: "500us" }
func { name: "main"
  op { accept { listener: "ln" var: "i" } }
  op { read { conn: "c" } } op { write { conn: "c" } }
}
)", 1);
  REQUIRE(r.exit_code == 0);
  CHECK(r.answered == 1);
  CHECK(r.end_time > 500 * kUs);
  CHECK(r.req_max < 20 * kUs);  // read at once after the accept
  CHECK(parks(r) >= 1);
}

// A reader parked on a connection whose request comes only at 10 ms is woken when main closes the
// connection at 1 ms: its read fails and it leaves its loop, long before the request.
TEST_CASE("close wakes a goroutine parked reading the connection, and its read fails", "[sim][net]") {
  const SimResult r = run(R"(
conn { name: "c" count: 1 duration: "10ms" }
waitgroup { name: "wg" }
func { name: "main"
  op { add { wg: "wg" n: 1 } }
  op { go { func: "serve" } }
  op { sleep { duration: "1ms" } }
  op { close { conn: "c" } }
  op { wait { wg: "wg" } }
}
func { name: "serve"
  op { loop { forever: true op { read { conn: "c" } } op { write { conn: "c" } } } }
  op { done { wg: "wg" } }
}
)", 2);
  REQUIRE(r.exit_code == 0);
  CHECK(r.answered == 0);
  CHECK(r.end_time < 2'000 * kUs);
}

// A worker pool: 2 workers take turns accepting the 4 connections of a listener (internal/poll's
// lock on the listener keeps one of them in the poller at a time) and serve each until its client
// closes it (end of file ends the read loop), then close it. Every request is answered.
TEST_CASE("a worker pool of 2 accepting 4 connections answers every request", "[sim][net]") {
  for (const int32_t procs : {1, 2}) {
    INFO("GOMAXPROCS " << procs);
    const SimResult r = run(R"(
conn { name: "c" conns: 4 count: 5 duration: "100us" }
listener { name: "ln" conn: "c" duration: "50us" }
waitgroup { name: "wg" }
func { name: "main"
  op { add { wg: "wg" n: 2 } }
  op { go { func: "worker" } }
  op { go { func: "worker" } }
  op { wait { wg: "wg" } }
}
func { name: "worker"
  op { loop { count: 2
    op { accept { listener: "ln" var: "i" } }
    op { loop { forever: true
      op { read { conn: "c" index: "i" } }
      op { compute { duration: "10us" } }
      op { write { conn: "c" index: "i" } } } }
    op { close { conn: "c" index: "i" } } } }
  op { done { wg: "wg" } }
}
)", procs);
    REQUIRE(r.exit_code == 0);
    CHECK(r.requests == 20);
    CHECK(r.answered == 20);
  }
}

// Two goroutines read one connection until its end of file: the descriptor's read lock lets one
// of them wait in the poller at a time (two would be netpollblock's "double wait").
TEST_CASE("two readers of one connection take turns and share its requests", "[sim][net]") {
  const SimResult r = run(R"(
conn { name: "c" count: 40 duration: "20us" poisson: true }
waitgroup { name: "wg" }
func { name: "main"
  op { add { wg: "wg" n: 2 } }
  op { go { func: "serve" } }
  op { go { func: "serve" } }
  op { wait { wg: "wg" } }
}
func { name: "serve"
  op { loop { forever: true
    op { read { conn: "c" } } op { compute { duration: "15us" } } op { write { conn: "c" } } } }
  op { done { wg: "wg" } }
}
)", 2);
  REQUIRE(r.exit_code == 0);
  CHECK(r.answered == 40);
}

// The shipped servers answer every request; the pool's connections wait to be accepted.
TEST_CASE("echo-accept and echo-pool answer every request", "[sim][net]") {
  auto shipped = [](const std::string& name) {
    const scenario::Scenario sc = scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/" + name);
    engine::SimConfig cfg;
    cfg.procs = 2;
    return engine::simulate(sc, cost::default_profile(), cfg);
  };
  const SimResult accept = shipped("echo-accept.textproto");
  const SimResult pool = shipped("echo-pool.textproto");
  REQUIRE(accept.exit_code == 0);
  REQUIRE(pool.exit_code == 0);
  CHECK(accept.answered == 3200);
  CHECK(pool.answered == 3200);
  CHECK(accept.req_p99 < 200 * kUs);
  CHECK(pool.req_p50 > 10'000 * kUs);
}

// A listener's connection is in no epoll set until Accept returns it: requests that arrive before
// make no event, and the accept makes the ones that came meanwhile one event at once.
TEST_CASE("a listener's connection has no events until it is accepted, then one for what came", "[net]") {
  std::vector<scenario::Conn> decls{fixed(3, 100, 2, 0, 0)};
  decls[0].listener = 0;
  scenario::Listener l;
  l.conn = 0;
  l.interval = 1000;
  l.start = 50;
  workload::Network net(decls, 1, 0, {l});
  // Connections connect at 50 and 1050; each one's requests come 0, 100 and 200 ns after.
  CHECK(net.nextEvent() == 50);
  std::vector<rt::NetEvent> ready;
  net.takeEvents(400, &ready);
  CHECK(ready == std::vector<rt::NetEvent>{{net.listener_pd(0), rt::EPOLLIN}});
  CHECK(net.nextEvent() == 1050);  // the next connect; not connection 0's arrivals at 50-250
  CHECK(net.accept(0, 400) == 0);
  CHECK(net.nextEvent() == 50);  // what connection 0 has had since it connected, due at once
  ready.clear();
  net.takeEvents(400, &ready);
  CHECK(ready == std::vector<rt::NetEvent>{{net.pd(0), rt::EPOLLIN | rt::EPOLLRDHUP}});
}

// Connect times are made when the run starts: 9,224 connections 10^15 ns apart would pass
// INT64_MAX, so they stop at a time no run reaches (under UBSan an overflow fails this test).
TEST_CASE("a listener's connect times saturate instead of overflowing", "[net]") {
  std::vector<scenario::Conn> decls{fixed(1, 1, 9224, -1, 0)};
  decls[0].listener = 0;
  scenario::Listener l;
  l.conn = 0;
  l.interval = 1'000'000'000'000'000;
  workload::Network net(decls, 1, 1'000'000'000, {l});
  CHECK(net.nextEvent() == 1'000'000'000 + 1'000'000'000'000'000);
  CHECK(net.accept(0, INT64_MAX / 2) == 0);
  CHECK(net.nextEvent() > 0);
}

// Reading a connection of a listener before any accept returned it is the scenario's error: the
// program could not hold it. The run fails with a panic that names the connection.
TEST_CASE("using a listener's connection before it is accepted panics", "[net]") {
  const SimResult r = run("conn { name: \"c\" conns: 2 count: 1 ns: 100 }\n"
                          "listener { name: \"l\" conn: \"c\" ns: 10 }\n"
                          "func { name: \"main\" op { read { conn: \"c\" index: \"1\" } } }\n",
                          1);
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.message, Catch::Contains("c[1] before its listener accepted it"));
}

// ---- Dialled connections (ConnDecl.dial): a client process's ends joined to a server process's
// listener's array, within one machine.

namespace {

using Got = workload::Network::Got;
using Wrote = workload::Network::Wrote;

// A client array of n ends dialling listener 0 of process 1.
scenario::Conn client_decl(int64_t n) {
  scenario::Conn c;
  c.name = "cl";
  c.length = n;
  c.dial_process = 1;
  c.dial_listener = 0;
  return c;
}

// The server side: an array of n ends handed out by listener 0, which on its own would connect
// them 5 us apart, from 5 us on.
scenario::Conn server_decl(int64_t n, int64_t write_service = 0) {
  scenario::Conn c;
  c.name = "sv";
  c.length = n;
  c.listener = 0;
  c.write_service = write_service;
  return c;
}
std::vector<scenario::Listener> server_listener() {
  scenario::Listener l;
  l.name = "ln";
  l.conn = 0;
  l.interval = 5000;
  return {l};
}

std::vector<rt::NetEvent> take(workload::Network& net, int64_t now) {
  std::vector<rt::NetEvent> out;
  net.takeEvents(now, &out);
  return out;
}

// The two networks of a client (nanotime's epoch 1000) and a server (epoch 2000) with n
// connections, joined element by element, the server's listener made a dialled one.
struct Pair {
  std::vector<scenario::Conn> cdecls, sdecls;
  workload::Network client, server;
  explicit Pair(int64_t n, int64_t write_service = 0)
      : cdecls{client_decl(n)}, sdecls{server_decl(n, write_service)}, client(cdecls, 1, 1000),
        server(sdecls, 2, 2000, server_listener()) {
    server.dial_listener(0);
    for (int32_t k = 0; k < n; k++) workload::Network::join(client, client.conn(0, k), server, server.conn(0, k));
  }
};

}  // namespace

// The dialled listener hands out its connections at time 0, in order (not 5 us apart as it would
// alone); a client end has no event of its own until something is delivered to it (an end with
// no requests of a schedule would report end of file at once).
TEST_CASE("dialled connections: the server accepts them all as the run starts and the client ends are quiet",
          "[net]") {
  Pair p(2);
  CHECK(p.client.nextEvent() == INT64_MAX);
  CHECK(p.server.nextEvent() == 2000);
  CHECK(take(p.server, 2000) == std::vector<rt::NetEvent>{{p.server.listener_pd(0), rt::EPOLLIN}});
  CHECK(p.server.accept(0, 0) == 0);
  CHECK(p.server.accept(0, 0) == 1);
  CHECK(p.server.accept(0, 0) == -1);
  CHECK(p.server.nextEvent() == INT64_MAX);
  CHECK(p.client.read(0, 10) == Got::Again);
  CHECK(p.server.read(0, 10) == Got::Again);
}

// A client's write is a request delivered at once: the server's next event is due then, and its
// takeEvents reports the server end; the wake callback runs for each delivery that makes a new
// edge, and not for one that lands on an edge netpoll has not taken yet.
TEST_CASE("dialled connections: a client write is due at once on the server end and wakes its poller once",
          "[net]") {
  Pair p(2);
  int server_wakes = 0, client_wakes = 0;
  p.server.set_wake([&] { server_wakes++; });
  p.client.set_wake([&] { client_wakes++; });
  take(p.server, 2000);
  REQUIRE(p.server.accept(0, 0) == 0);
  REQUIRE(p.server.accept(0, 0) == 1);

  CHECK(p.client.write(0, 100) == Wrote::Request);
  CHECK(server_wakes == 1);
  CHECK(p.server.nextEvent() == 2000 + 100);
  CHECK(take(p.server, 2000 + 100) == std::vector<rt::NetEvent>{{p.server.pd(0), rt::EPOLLIN}});
  CHECK(p.server.nextEvent() == INT64_MAX);
  CHECK(p.client.write(0, 150) == Wrote::Request);  // a new edge after netpoll took the last
  CHECK(server_wakes == 2);
  CHECK(p.client.write(0, 160) == Wrote::Request);  // the 150 edge is still pending: no wake
  CHECK(server_wakes == 2);
  CHECK(p.server.wakes() == 2);
  // Deliveries at one time come out in connection order.
  CHECK(p.client.write(1, 160) == Wrote::Request);
  CHECK(server_wakes == 3);
  CHECK(take(p.server, 2000 + 200) ==
        std::vector<rt::NetEvent>{{p.server.pd(0), rt::EPOLLIN}, {p.server.pd(1), rt::EPOLLIN}});

  // The server reads each request once; then EAGAIN.
  CHECK(p.server.read(0, 200) == Got::Request);
  CHECK(p.server.read(0, 200) == Got::Request);
  CHECK(p.server.read(0, 200) == Got::Request);
  CHECK(p.server.read(0, 200) == Got::Again);
  CHECK(p.server.requests() == 4);
  CHECK(p.client.client_requests() == 4);
  CHECK(p.client.requests() == 0);  // a client end's answers are not requests
  CHECK(client_wakes == 0);
}

// A server write answers its oldest request (a server-side sample: arrival to answer) and
// delivers the answer to the client end, whose read takes it (a client-side sample: the
// request's write to the answer's read). The client reads EAGAIN until an answer has come.
TEST_CASE("dialled connections: the server's answer reaches the client and both sides count latency", "[net]") {
  Pair p(1);
  int client_wakes = 0;
  p.client.set_wake([&] { client_wakes++; });
  take(p.server, 2000);
  REQUIRE(p.server.accept(0, 0) == 0);
  REQUIRE(p.client.write(0, 100) == Wrote::Request);
  REQUIRE(p.client.write(0, 130) == Wrote::Request);
  CHECK(p.server.read(0, 140) == Got::Request);
  CHECK(p.client.read(0, 200) == Got::Again);
  CHECK(p.server.write(0, 300) == Wrote::Answer);
  CHECK(client_wakes == 1);
  CHECK(p.client.nextEvent() == 1000 + 300);
  CHECK(take(p.client, 1000 + 300) == std::vector<rt::NetEvent>{{p.client.pd(0), rt::EPOLLIN}});
  CHECK(p.server.write(0, 310) == Wrote::Nothing);  // the second request is not read yet
  CHECK(client_wakes == 1);
  CHECK(p.server.read(0, 320) == Got::Request);
  CHECK(p.server.write(0, 400) == Wrote::Answer);
  CHECK(client_wakes == 2);
  CHECK(p.client.read(0, 450) == Got::Request);
  CHECK(p.client.read(0, 460) == Got::Request);
  CHECK(p.client.read(0, 470) == Got::Again);
  CHECK(p.server.latencies() == std::vector<int64_t>{300 - 100, 400 - 130});
  CHECK(p.client.client_latencies() == std::vector<int64_t>{450 - 100, 460 - 130});
  CHECK(p.client.last_answer() == 460);
  CHECK(p.server.last_write() == 400);
}

// With a write_service on the server end, an answer reaches the client as it leaves: the client's
// event is due then, and a read before it finds nothing. The server's close right after the
// write follows the answer out: the client reads no end of file before it.
TEST_CASE("dialled connections: an answer leaving slowly reaches the client when it has left", "[net]") {
  Pair p(1, 50);
  take(p.server, 2000);
  REQUIRE(p.server.accept(0, 0) == 0);
  REQUIRE(p.client.write(0, 100) == Wrote::Request);
  REQUIRE(p.server.read(0, 100) == Got::Request);
  CHECK(p.server.write(0, 200) == Wrote::Answer);  // leaves at 250
  p.server.close(0, 210);
  CHECK(p.client.nextEvent() == 1000 + 250);
  CHECK(take(p.client, 1000 + 249).empty());
  CHECK(p.client.read(0, 249) == Got::Again);
  CHECK(take(p.client, 1000 + 250) == std::vector<rt::NetEvent>{{p.client.pd(0), rt::EPOLLIN | rt::EPOLLRDHUP}});
  CHECK(p.client.read(0, 250) == Got::Request);
  CHECK(p.client.read(0, 250) == Got::Eof);
  CHECK(p.server.latencies() == std::vector<int64_t>{150});
  CHECK(p.client.client_latencies() == std::vector<int64_t>{150});
}

// A request written before the server accepted its end waits in the socket: no event and no wake
// (the end is in no epoll set), and Accept brings it to netpoll.
TEST_CASE("dialled connections: a request before the accept waits for it", "[net]") {
  Pair p(2);
  int server_wakes = 0;
  p.server.set_wake([&] { server_wakes++; });
  take(p.server, 2000);
  REQUIRE(p.server.accept(0, 0) == 0);
  CHECK(p.client.write(1, 100) == Wrote::Request);
  CHECK(server_wakes == 0);
  CHECK(p.server.nextEvent() == INT64_MAX);
  CHECK(p.server.accept(0, 200) == 1);
  CHECK(p.server.nextEvent() == 2000 + 100);
  CHECK(take(p.server, 2000 + 200) == std::vector<rt::NetEvent>{{p.server.pd(1), rt::EPOLLIN}});
}

// The client closes: the server end reports the close (EPOLLRDHUP) and reads end of file once it
// has read every request; its answers after that are still taken (and counted), and dropped at
// the closed end. The server closes: the client reads its answers, then end of file; its requests
// after that go nowhere.
TEST_CASE("dialled connections: a close reaches the peer as end of file after what was delivered", "[net]") {
  Pair p(2);
  int server_wakes = 0, client_wakes = 0;
  p.server.set_wake([&] { server_wakes++; });
  p.client.set_wake([&] { client_wakes++; });
  take(p.server, 2000);
  REQUIRE(p.server.accept(0, 0) == 0);
  REQUIRE(p.server.accept(0, 0) == 1);

  REQUIRE(p.client.write(0, 100) == Wrote::Request);
  take(p.server, 2000 + 100);
  p.client.close(0, 120);
  CHECK(server_wakes == 2);
  CHECK(take(p.server, 2000 + 120) == std::vector<rt::NetEvent>{{p.server.pd(0), rt::EPOLLIN | rt::EPOLLRDHUP}});
  CHECK(p.server.read(0, 130) == Got::Request);
  CHECK(p.server.read(0, 130) == Got::Eof);
  CHECK(p.server.write(0, 140) == Wrote::Answer);
  CHECK(p.server.latencies() == std::vector<int64_t>{40});
  CHECK(client_wakes == 0);
  CHECK(p.client.read(0, 150) == Got::Closed);
  CHECK(p.client.nextEvent() == INT64_MAX);

  REQUIRE(p.client.write(1, 200) == Wrote::Request);
  REQUIRE(p.server.read(1, 200) == Got::Request);
  REQUIRE(p.server.write(1, 210) == Wrote::Answer);
  CHECK(client_wakes == 1);
  take(p.client, 1000 + 210);
  p.server.close(1, 220);
  CHECK(client_wakes == 2);
  CHECK(take(p.client, 1000 + 220) == std::vector<rt::NetEvent>{{p.client.pd(1), rt::EPOLLIN | rt::EPOLLRDHUP}});
  CHECK(p.client.read(1, 230) == Got::Request);
  CHECK(p.client.read(1, 230) == Got::Eof);
  CHECK(p.server.read(1, 230) == Got::Closed);
  const int before = server_wakes;
  CHECK(p.client.write(1, 240) == Wrote::Request);
  CHECK(server_wakes == before);
  CHECK(p.server.requests() == 2);
}

// connect_dials joins each dialling declaration of each process to its listener's array, element
// by element, and refuses arrays of different sizes.
TEST_CASE("connect_dials joins processes' dialled connections by process and listener", "[net]") {
  auto client = std::make_shared<scenario::Scenario>();
  client->conns = {client_decl(3)};
  auto server = std::make_shared<scenario::Scenario>();
  server->conns = {server_decl(3)};
  server->listeners = server_listener();
  std::vector<scenario::ProcessSpec> procs(2);
  procs[0].name = "loadgen";
  procs[0].program = client;
  procs[1].name = "server";
  procs[1].program = server;
  workload::Network c(client->conns, 1, 0), s(server->conns, 2, 0, server->listeners);
  workload::connect_dials({&c, &s}, procs);
  take(s, 0);
  for (int k = 0; k < 3; k++) REQUIRE(s.accept(0, 0) == k);
  REQUIRE(c.write(2, 10) == Wrote::Request);
  CHECK(take(s, 10) == std::vector<rt::NetEvent>{{s.pd(2), rt::EPOLLIN}});
  CHECK(s.read(2, 10) == Got::Request);
  CHECK(s.read(1, 10) == Got::Again);

  auto small = std::make_shared<scenario::Scenario>(*server);
  small->conns = {server_decl(2)};
  procs[1].program = small;
  workload::Network c2(client->conns, 1, 0), s2(small->conns, 2, 0, small->listeners);
  CHECK_THROWS_AS(workload::connect_dials({&c2, &s2}, procs), std::invalid_argument);
  CHECK_THROWS_AS(workload::connect_dials({&c2, nullptr}, procs), std::invalid_argument);
}

// End to end: sim/scenarios/loadgen-server.textproto, a server and a closed-loop load generator
// (16 connections, 500 round trips each) on one machine. Every request written reaches the server
// and every answer comes back: the server answers 8,000 requests and the generator reads 8,000
// answers. A round trip holds the server's part (arrival to answer, at least the 15 us of work)
// and the generator's own (its write before, its wake-up and read after), so the client's p50 is
// above the server's. Without the wake callback the server's poller, asleep with no deadline,
// never sees the first request.
TEST_CASE("dialled connections: the load generator gets every answer from the server", "[sim][net]") {
  const scenario::Scenario sc =
      scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/loadgen-server.textproto");
  engine::SimConfig cfg;
  cfg.procs = 2;
  cfg.seed = 1;
  cfg.time_limit = 5LL * 1000 * 1000 * 1000;
  const SimResult r = engine::simulate(sc, cost::default_profile(), cfg);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.processes.size() == 2);
  const SimResult& server = r.processes[0];
  const SimResult& loadgen = r.processes[1];
  CHECK(server.requests == 8000);
  CHECK(server.answered == 8000);
  CHECK(loadgen.requests == 0);  // it serves nothing: its side is its round trips
  CHECK(loadgen.client_requests == 8000);
  CHECK(loadgen.client_answered == 8000);
  CHECK(server.req_p50 >= 15 * kUs);
  CHECK(loadgen.client_p50 > server.req_p50);
  CHECK(loadgen.client_max >= server.req_max);
}
