// gmpsim end to end: the binary's output, exit status and files for good and bad input.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace {

struct Out {
  int status = -1;
  std::string text;  // stdout and stderr together
};

// Runs a shell command line.
Out shell(const std::string& cmd) {
  Out o;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.text.append(buf, n);
  const int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

Out gmpsim(const std::string& args) { return shell(std::string(GMPSIM) + " " + args + " 2>&1"); }

std::string tmp(const std::string& name) { return std::string(GMP_BINARY_DIR) + "/cli_test_" + name; }

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

const std::string kScenarios = std::string(GMP_SOURCE_DIR) + "/sim/scenarios/";

}  // namespace

TEST_CASE("gmpsim run prints a benchmark line and the counts", "[cli]") {
  const Out o = gmpsim("run " + kScenarios + "pingpong.textproto --procs 2");
  CHECK(o.status == 0);
  CHECK(o.text.find("BenchmarkPingPong-2\t") != std::string::npos);
  CHECK(o.text.find("ns/op") != std::string::npos);
  CHECK(o.text.find("scheduling latency") != std::string::npos);
  CHECK(o.text.find("steals ") != std::string::npos);
}

TEST_CASE("gmpsim run --check-determinism compares output and traces", "[cli][determinism]") {
  const std::string tr = tmp("det.trace");
  std::remove(tr.c_str());  // the trace checked below must be this run's
  const Out o = gmpsim("run " + kScenarios + "pingpong.textproto --procs 4 --seed 3 --trace " + tr + " --check-determinism");
  CHECK(o.status == 0);
  CHECK(o.text.find("byte-identical output and traces") != std::string::npos);
  CHECK(exists(tr));
  CHECK_FALSE(exists(tr + ".check"));
  const Out dump = gmpsim("trace " + tr);
  CHECK(dump.status == 0);
  CHECK(dump.text.find("KIND_GO_CREATE") != std::string::npos);
  std::remove(tr.c_str());
}

TEST_CASE("bad flags exit 2 naming the flag", "[cli][errors]") {
  Out o = gmpsim("run " + kScenarios + "pingpong.textproto --procs 0");
  CHECK(o.status == 2);
  CHECK(o.text.find("--procs: expected an integer in [1, 1024], got '0'") != std::string::npos);
  o = gmpsim("run " + kScenarios + "pingpong.textproto --schedtrace 10parsecs");
  CHECK(o.status == 2);
  CHECK(o.text.find("--schedtrace") != std::string::npos);
  o = gmpsim("run " + kScenarios + "pingpong.textproto --frobnicate");
  CHECK(o.status == 2);
  CHECK(o.text.find("unknown flag '--frobnicate'") != std::string::npos);
  o = gmpsim("frobnicate");
  CHECK(o.status == 2);
}

TEST_CASE("a bad scenario exits 1 with file:line:column", "[cli][errors]") {
  const std::string path = tmp("bad.textproto");
  write(path, "func { name: \"main\"\n  op { recv { chan: \"nope\" } }\n}\n");
  const Out o = gmpsim("run " + path);
  CHECK(o.status == 1);
  CHECK(o.text.find(path + ":2:") != std::string::npos);
  CHECK(o.text.find("nope") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("a deadlock exits 2 with Go's message and leaves no trace", "[cli][errors]") {
  const std::string path = tmp("deadlock.textproto");
  const std::string tr = tmp("deadlock.trace");
  write(path, "chan { name: \"c\" }\nfunc { name: \"main\" op { recv { chan: \"c\" } } }\n");
  const Out o = gmpsim("run " + path + " --trace " + tr);
  CHECK(o.status == 2);
  CHECK(o.text.find("fatal error: all goroutines are asleep - deadlock!") != std::string::npos);
  CHECK(o.text.find("goroutine 1 [chan receive]") != std::string::npos);
  CHECK_FALSE(exists(tr));
  std::remove(path.c_str());
}

TEST_CASE("a trace that cannot be written exits 1 naming the file", "[cli][errors]") {
  const std::string dir = tmp("no-such-dir");
  const Out o = gmpsim("run " + kScenarios + "pingpong.textproto --trace " + dir + "/t.trace");
  CHECK(o.status == 1);
  CHECK(o.text.find("cannot create " + dir + "/t.trace") != std::string::npos);
  CHECK_FALSE(exists(dir));
}

TEST_CASE("a runaway program stops at --max-time with a clear message", "[cli][errors]") {
  const std::string path = tmp("runaway.textproto");
  write(path, "func { name: \"main\" op { loop { forever: true op { compute { ns: 500 } } } } }\n");
  const Out o = gmpsim("run " + path + " --max-time 20ms");
  CHECK(o.status == 2);
  CHECK(o.text.find("stopped at virtual time 20000000 ns (--max-time)") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("gmpsim sweep prints tables and bench lines and writes a chart", "[cli][sweep]") {
  const std::string svg = tmp("sweep.svg");
  const Out o = gmpsim("sweep " + kScenarios + "cpu.textproto --procs 1,2,4 --cores 2,4 --svg " + svg);
  CHECK(o.status == 0);
  CHECK(o.text.find("ns/op") != std::string::npos);
  CHECK(o.text.find("BenchmarkCPU\t") != std::string::npos);
  CHECK(o.text.find("BenchmarkCPU-4\t") != std::string::npos);
  const size_t two = o.text.find("cores: 2\n"), four = o.text.find("cores: 4\n");
  REQUIRE(two != std::string::npos);
  REQUIRE(four != std::string::npos);
  CHECK(two < four);
  std::ifstream in(svg);
  const std::string chart((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(chart.rfind("<svg", 0) == 0);
  CHECK(chart.find("2 cores") != std::string::npos);
  CHECK(chart.find("4 cores") != std::string::npos);
  std::remove(svg.c_str());
}

TEST_CASE("gmpsim trace rejects a file that is not a trace and names the offset", "[cli][errors]") {
  const std::string path = tmp("not.trace");
  write(path, "gmptracX\x01\x00\x00\x00");
  const Out o = gmpsim("trace " + path);
  CHECK(o.status == 1);
  CHECK(o.text.find(path) != std::string::npos);
  CHECK(o.text.find("offset 0") != std::string::npos);
  std::remove(path.c_str());
}

// A malformed or impossible --replay schedule used to escape as an uncaught exception (SIGABRT).
TEST_CASE("gmpsim steal --replay with a bad schedule exits 2 naming the byte offset", "[cli][errors]") {
  Out o = gmpsim("steal --replay abc");
  CHECK(o.status == 2);
  CHECK(o.text.find("--replay: schedule: unexpected 'a', expected a digit or '.' at byte offset 0") !=
        std::string::npos);
  o = gmpsim("steal --replay 0.1..0");
  CHECK(o.status == 2);
  CHECK(o.text.find("expected a thread index, found '.' at byte offset 4") != std::string::npos);
  o = gmpsim("steal --replay 0.1.");
  CHECK(o.status == 2);
  CHECK(o.text.find("expected a thread index, found the end at byte offset 4") != std::string::npos);
  o = gmpsim("steal --replay 0.99999999999");
  CHECK(o.status == 2);
  CHECK(o.text.find("thread index too large at byte offset 2") != std::string::npos);
  // Well formed, but the machine has 2 Ps: threads 0 and 1.
  o = gmpsim("steal --procs 2 --gs 4 --replay 7.7.7.7");
  CHECK(o.status == 2);
  CHECK(o.text.find("thread index 7 out of range (threads are 0 to 1) at byte offset 0") != std::string::npos);
  CHECK(o.text.find("terminate") == std::string::npos);
}

// Sweeps run simulations on several threads; the output must not depend on how many.
TEST_CASE("a parallel sweep prints exactly what a sequential one does", "[cli][sweep][determinism]") {
  const std::string svg = tmp("par.svg");
  const std::string args = "sweep " + kScenarios + "pingpong.textproto --procs 1,2,3,4 --seeds 2 --svg " + svg;
  const Out seq = gmpsim(args + " --jobs 1");
  const Out par = gmpsim(args + " --jobs 3");
  CHECK(seq.status == 0);
  CHECK(par.status == 0);
  CHECK(seq.text == par.text);
  std::remove(svg.c_str());
}

// Sanitizer builds reserve terabytes of shadow memory and cannot start under an address-space limit.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST_CASE("gmpsim run out of memory says so, exits 1 and leaves no trace behind", "[cli][scale]") {
  const std::string sc = tmp("oom.textproto"), tr = tmp("oom.trace");
  std::remove(tr.c_str());
  write(sc, R"(
chan { name: "start" }
func { name: "main"
  op { loop { count: 1000000 op { go { func: "w" } } } }
  op { gosched {} }
  op { close { chan: "start" } }
}
func { name: "w" op { recv { chan: "start" } } }
)");
  // 1,000,000 parked goroutines need about 1.2 GB; the limit is 300 MB.
  const Out o = shell("ulimit -v 300000; exec " + std::string(GMPSIM) + " run " + sc + " --trace " + tr + " 2>&1");
  CHECK(o.status == 1);
  CHECK(o.text.find("gmpsim: out of memory") != std::string::npos);
  CHECK_FALSE(exists(tr));
  // Nor a temporary file beside it.
  CHECK(shell("ls " + std::string(GMP_BINARY_DIR) + " | grep -c cli_test_oom.trace").text == "0\n");
}
#endif
