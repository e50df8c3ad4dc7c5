// Files of several processes (docs/scenarios.md, "Processes"): each process's program compiles as
// a scenario of its own, its settings turn into engine units, dials join another process's
// listener; every mistake is a ScenarioError at the offending name, inside the nested program
// when it is the program's. Positions are found in the text, as errors_test.cpp does.
#include <catch2/catch.hpp>
#include <string>

#include "sim/scenario/scenario.h"
#include "sim/scenario/settings.h"
#include "tests/scenario/where.h"

using namespace gmp::scenario;

namespace {

const std::string kName = "procs.textproto";

using testing::find;
using testing::Where;

// The error at `w` whose message contains `says` is among the file's diagnostics, and the text
// reads path:line:column: message.
void expect(const std::string& text, Where w, const std::string& says) {
  INFO(text);
  try {
    parse_scenario(text, kName);
  } catch (const ScenarioError& e) {
    bool found = false;
    for (const Diagnostic& d : e.diagnostics()) {
      if (d.line == w.line && d.column == w.column && d.message.find(says) != std::string::npos) found = true;
    }
    INFO(e.what());
    CHECK(found);
    CHECK_THAT(e.what(), Catch::Contains(kName + ":" + std::to_string(w.line) + ":" + std::to_string(w.column) + ": "));
    return;
  }
  FAIL("no ScenarioError");
}

// A server (listener ln over conn array c of `n`) and a client dialling it with `m` connections;
// `server` and `client` go into their process blocks, `sconn` into the server's conn.
std::string pair(int n = 4, int m = 4, const std::string& server = "", const std::string& client = "",
                 const std::string& sconn = "", const std::string& dial = "server.ln") {
  return "process {\n"
         "  name: \"server\"\n"
         "  daemon: true\n" + server +
         "  program {\n"
         "    conn { name: \"c\" conns: " + std::to_string(n) + sconn + " }\n"
         "    listener { name: \"ln\" conn: \"c\" }\n"
         "    func { name: \"main\" op { accept { listener: \"ln\" var: \"i\" } } op { read { conn: \"c\" index: \"i\" } } }\n"
         "  }\n"
         "}\n"
         "process {\n"
         "  name: \"client\"\n" + client +
         "  program {\n"
         "    conn { name: \"d\" conns: " + std::to_string(m) + " dial: \"" + dial + "\" }\n"
         "    func { name: \"main\" op { write { conn: \"d\" index: \"0\" } } }\n"
         "  }\n"
         "}\n";
}

}  // namespace

TEST_CASE("processes: two processes compile as programs of their own joined by the dial") {
  const std::string text = pair(4, 4, "  procs_auto: true\n", "  procs: 3\n  gogc: -1\n  memlimit: \"64MiB\"\n");
  const Scenario s = parse_scenario(text, kName);
  CHECK(s.entry == -1);
  CHECK(s.funcs.empty());
  REQUIRE(s.processes.size() == 2);
  const ProcessSpec& server = s.processes[0];
  const ProcessSpec& client = s.processes[1];
  CHECK(server.name == "server");
  CHECK(server.daemon);
  CHECK(server.procs_auto);
  CHECK(server.procs == 0);
  CHECK_FALSE(server.gogc.has_value());
  CHECK(client.name == "client");
  CHECK_FALSE(client.daemon);
  CHECK(client.procs == 3);
  CHECK(client.gogc == -1);
  CHECK(client.memlimit == 64 << 20);
  REQUIRE(server.program);
  REQUIRE(client.program);
  // Each program has its own main.
  CHECK(server.program->funcs.at(server.program->entry).name == "main");
  CHECK(client.program->funcs.at(client.program->entry).name == "main");
  // The dial: the client's conn d is joined to the server's listener ln and its conn c.
  const Conn& d = client.program->conns.at(0);
  const Conn& c = server.program->conns.at(0);
  CHECK(d.dial_process == 0);
  CHECK(d.dial_listener == 0);
  CHECK(d.peer_process == 0);
  CHECK(d.peer_conn == 0);
  CHECK(c.peer_process == 1);
  CHECK(c.peer_conn == 0);
  CHECK(c.dial_process == -1);
  // Fed by its peer, neither end has a count or an interval.
  CHECK(c.count == 0);
  CHECK(c.interval == 0);
  CHECK(d.count == 0);
  CHECK(server.program->listeners.at(0).interval == 0);
}

TEST_CASE("processes: the shipped load generator and server load") {
  const Scenario s = load_scenario(std::string(GMP_SCENARIOS_DIR) + "/loadgen-server.textproto");
  REQUIRE(s.processes.size() == 2);
  CHECK(s.processes[0].daemon);
  CHECK(s.processes[1].procs == 1);
  const Conn& d = s.processes[1].program->conns.at(0);
  CHECK(d.length == 16);
  CHECK(d.dial_process == 0);
  CHECK(s.processes[0].program->conns.at(0).peer_process == 1);
}

TEST_CASE("processes: cgroup settings in engine units") {
  const std::string text = pair(1, 1,
                                "  cgroup { quota: 2.5 burst: \"20ms\" cpuset: \"8,0-3,2\"\n"
                                "    change { at: \"1s\" quota: 1 } change { at_ns: 2000000000 quota: 0 } }\n"
                                "  godebug: \"containermaxprocs=0,updatemaxprocs=1\"\n",
                                "  cgroup { quota: 0.5 period: \"10ms\" }\n");
  const Scenario s = parse_scenario(text, kName);
  const Cgroup& g = s.processes[0].cgroup;
  CHECK(g.period == 100'000'000);
  CHECK(g.quota == 250'000'000);  // 2.5 CPUs of a 100 ms period
  CHECK(g.burst == 20'000'000);
  CHECK(g.cpuset == std::vector<int32_t>{0, 1, 2, 3, 8});
  REQUIRE(g.changes.size() == 2);
  CHECK(g.changes[0].at == 1'000'000'000);
  CHECK(g.changes[0].quota == 100'000'000);
  CHECK(g.changes[1].at == 2'000'000'000);
  CHECK(g.changes[1].quota == -1);
  CHECK(s.processes[0].containermaxprocs == 0);
  CHECK(s.processes[0].updatemaxprocs == 1);
  const Cgroup& h = s.processes[1].cgroup;
  CHECK(h.period == 10'000'000);
  CHECK(h.quota == 5'000'000);
  CHECK(h.cpuset.empty());
  CHECK(s.processes[1].containermaxprocs == -1);
}

TEST_CASE("processes: settings parsers") {
  CHECK(quota_ns(2.5, 100'000'000).ns == 250'000'000);
  CHECK(quota_ns(0, 100'000'000).ns == -1);
  CHECK(quota_ns(0.01, 100'000'000).ns == 1'000'000);  // exactly the least
  CHECK_FALSE(quota_ns(0.009, 100'000'000).error.empty());
  CHECK_FALSE(quota_ns(4097, 100'000'000).error.empty());
  CHECK_FALSE(quota_ns(-1, 100'000'000).error.empty());
  CHECK(parse_cpuset("4095").cpus == std::vector<int32_t>{4095});
  CHECK_FALSE(parse_cpuset("4096").error.empty());
  CHECK_FALSE(parse_cpuset("3-1").error.empty());
  CHECK_FALSE(parse_cpuset("1,,2").error.empty());
  CHECK_FALSE(parse_cpuset("-1").error.empty());
  CHECK_FALSE(parse_cpuset("0-").error.empty());
  CHECK_FALSE(parse_cpuset(" 1").error.empty());
  CHECK(parse_godebug("updatemaxprocs=0").updatemaxprocs == 0);
  CHECK(parse_godebug("updatemaxprocs=0").containermaxprocs == -1);
  CHECK_FALSE(parse_godebug("gctrace=1").error.empty());
  CHECK_FALSE(parse_godebug("updatemaxprocs=2").error.empty());
  CHECK_FALSE(parse_godebug("updatemaxprocs").error.empty());
  CHECK_FALSE(parse_godebug("updatemaxprocs=0,updatemaxprocs=1").error.empty());
}

TEST_CASE("processes: a bad setting is reported at its field") {
  std::string t = pair(1, 1, "  procs: 0\n");
  expect(t, find(t, "procs: 0"), "procs 0 is out of range: from 1 to 4096");
  t = pair(1, 1, "  procs: 4097\n");
  expect(t, find(t, "procs: 4097"), "out of range");
  t = pair(1, 1, "  procs_auto: false\n");
  expect(t, find(t, "procs_auto"), "procs_auto must be true");
  t = pair(1, 1, "  cgroup { quota: 0.005 }\n");
  expect(t, find(t, "quota"), "at least 1ms");
  t = pair(1, 1, "  cgroup { quota: 4097 }\n");
  expect(t, find(t, "quota"), "at most 4096");
  t = pair(1, 1, "  cgroup { quota: -1 }\n");
  expect(t, find(t, "quota"), "out of range");
  t = pair(1, 1, "  cgroup { quota: 1 period: \"500us\" }\n");
  expect(t, find(t, "period"), "period 500us is out of range: from 1ms to 1s");
  t = pair(1, 1, "  cgroup { quota: 1 period_ns: 2000000000 }\n");
  expect(t, find(t, "period_ns"), "out of range");
  t = pair(1, 1, "  cgroup { quota: 1 burst: \"200ms\" }\n");
  expect(t, find(t, "burst"), "is more than the quota's 100ms");
  t = pair(1, 1, "  cgroup { burst: \"2ms\" }\n");
  expect(t, find(t, "burst"), "needs a quota");
  t = pair(1, 1, "  cgroup { quota: 1 cpuset: \"0-3,x\" }\n");
  expect(t, find(t, "cpuset"), "\"x\" is not a core or a range");
  t = pair(1, 1, "  cgroup { quota: 1 cpuset: \"4096\" }\n");
  expect(t, find(t, "cpuset"), "each core 0 to 4095");
  t = pair(1, 1, "  cgroup { quota: 1 change { at: \"2s\" quota: 2 } change { at: \"1s\" quota: 1 } }\n");
  expect(t, find(t, "at: \"1s\""), "changes are in time order");
  t = pair(1, 1, "  cgroup { quota: 1 change { quota: 2 } }\n");
  expect(t, find(t, "change"), "change needs at");
  t = pair(1, 1, "  cgroup { quota: 1 change { at: \"1s\" quota: 0.001 } }\n");
  expect(t, find(t, "quota", "change"), "at least 1ms");
  t = pair(1, 1, "  gogc: -2\n");
  expect(t, find(t, "gogc"), "-1 (off) or 0 to 1000000");
  t = pair(1, 1, "  memlimit: \"64MB\"\n");
  expect(t, find(t, "memlimit"), "expected off or a size in bytes");
  t = pair(1, 1, "  godebug: \"containermaxprocs=0,gctrace=1\"\n");
  expect(t, find(t, "godebug"), "unknown GODEBUG setting \"gctrace\"");
}

TEST_CASE("processes: names are present and unique and dot-free and at most 64 processes") {
  std::string t = "process { name: \"a\" program { func { name: \"main\" } } }\n"
                  "process { name: \"a\" program { func { name: \"main\" } } }\n";
  expect(t, Where{2, 11}, "duplicate process \"a\" (first declared at 1:11)");
  t = "process { program { func { name: \"main\" } } }\n";
  expect(t, find(t, "process"), "process needs a name");
  t = "process { name: \"a.b\" program { func { name: \"main\" } } }\n";
  expect(t, find(t, "name"), "has a '.'");
  t = "";
  for (int i = 0; i < 65; i++) t += "process { name: \"p" + std::to_string(i) + "\" program { func { name: \"main\" } } }\n";
  expect(t, Where{65, 1}, "more than 64 processes");
  t = "process { name: \"a\" }\n";
  expect(t, find(t, "process"), "needs a program");
}

TEST_CASE("processes: a file with processes declares nothing else at its top level") {
  std::string t = "process { name: \"a\" program { func { name: \"main\" } } }\n"
                  "chan { name: \"x\" }\n"
                  "func { name: \"main\" }\n";
  expect(t, find(t, "chan"), "declares nothing else at its top level: chan belongs in a process's program");
  t = "func { name: \"main\" }\nprocess { name: \"a\" program { func { name: \"main\" } } }\nchan { name: \"x\" }\n";
  expect(t, find(t, "func"), "func belongs in a process's program");
}

TEST_CASE("processes: a program's errors point into its nested block") {
  std::string t = "process {\n  name: \"a\"\n  program {\n    func {\n      name: \"main\"\n"
                  "      op { send { chan: \"nope\" } }\n    }\n  }\n}\n";
  expect(t, find(t, "chan: \"nope\""), "undeclared channel \"nope\"");
  t = "process {\n  name: \"a\"\n  program {\n    func { name: \"other\" }\n  }\n}\n";
  expect(t, find(t, "program"), "no function \"main\": the main goroutine of this process");
  // A conn's own checks hold inside a program, at the nested line.
  t = "process {\n  name: \"a\"\n  program {\n    conn { name: \"c\" count: 0 ns: 5 }\n"
      "    func { name: \"main\" }\n  }\n}\n";
  expect(t, find(t, "count: 0"), "request count 0 is out of range");
}

TEST_CASE("processes: dials resolve to another process's listener") {
  std::string t = pair(4, 4, "", "", "", "nobody.ln");
  expect(t, find(t, "dial"), "no process named \"nobody\"");
  t = pair(4, 4, "", "", "", "server.nope");
  expect(t, find(t, "dial"), "process \"server\" has no listener \"nope\"");
  t = pair(4, 4, "", "", "", "client.ln");
  expect(t, find(t, "dial"), "not its own process's");
  t = pair(4, 4, "", "", "", "serverln");
  expect(t, find(t, "dial"), "expected \"process.listener\"");
  t = pair(4, 3);
  expect(t, find(t, "dial"), "connection \"d\" has 3 connections but the listener accepts 4");
  // A dialled conn takes no count or interval, nor does the conn of a dialled listener.
  t = pair(4, 4, "", "", " count: 5");
  expect(t, find(t, "count: 5"), "count is for generated arrivals: this connection's listener is dialled");
  t = pair(4, 4, "", "", " duration: \"1ms\"");
  expect(t, find(t, "duration: \"1ms\""), "duration is for generated arrivals");
  t = "process { name: \"s\" program { conn { name: \"c\" count: 1 ns: 5 } listener { name: \"ln\" conn: \"c\" } "
      "func { name: \"main\" } } }\n"
      "process { name: \"g\" program { conn { name: \"d\" dial: \"s.ln\" count: 7 } func { name: \"main\" } } }\n";
  expect(t, find(t, "count: 7"), "count is for generated arrivals: a dialled connection's requests");
  expect(t, find(t, "count: 1"), "count is for generated arrivals: this connection's listener is dialled");
  // The dialled listener takes no interval of its own.
  t = "process { name: \"s\" program { conn { name: \"c\" } listener { name: \"ln\" conn: \"c\" ns: 100 } "
      "func { name: \"main\" } } }\n"
      "process { name: \"g\" program { conn { name: \"d\" dial: \"s.ln\" } func { name: \"main\" } } }\n";
  expect(t, find(t, "ns: 100"), "dialled by another process");
  // Two dials of one listener.
  t = "process { name: \"s\" program { conn { name: \"c\" } listener { name: \"ln\" conn: \"c\" } "
      "func { name: \"main\" } } }\n"
      "process { name: \"g\" program { conn { name: \"d\" dial: \"s.ln\" } func { name: \"main\" } } }\n"
      "process { name: \"h\" program { conn { name: \"e\" dial: \"s.ln\" } func { name: \"main\" } } }\n";
  const Where first = find(t, "dial", "name: \"g\"");
  expect(t, find(t, "dial", "name: \"h\""),
         "is dialled already (at " + std::to_string(first.line) + ":" + std::to_string(first.column) + ")");
  // A conn that is not dialled still needs its count and interval.
  t = "process { name: \"s\" program { conn { name: \"c\" } listener { name: \"ln\" conn: \"c\" ns: 5 } "
      "func { name: \"main\" } } }\n";
  expect(t, find(t, "conn {"), "request count 0 is out of range");
  // A dialling conn is not accepted by a listener of its own process.
  t = "process { name: \"s\" program { conn { name: \"c\" } listener { name: \"ln\" conn: \"c\" } "
      "func { name: \"main\" } } }\n"
      "process { name: \"g\" program { conn { name: \"d\" dial: \"s.ln\" } listener { name: \"m\" conn: \"d\" ns: 5 } "
      "func { name: \"main\" } } }\n";
  expect(t, find(t, "conn: \"d\""), "dials another process's listener");
}

TEST_CASE("processes: dial outside a file of processes is an error") {
  std::string t = "conn { name: \"d\" dial: \"s.ln\" }\nfunc { name: \"main\" }\n";
  expect(t, find(t, "dial"), "only a file that declares processes");
}
