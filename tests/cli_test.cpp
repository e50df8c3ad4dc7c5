// gmpsim end to end: the binary's output, exit status and files for good and bad input.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

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

// Runs gmpsim with `args`, after the shell commands in `prefix` (which may end in "exec ").
Out gmpsim(const std::string& args, const std::string& prefix = "") {
  return shell(prefix + std::string(GMPSIM) + " " + args + " 2>&1");
}

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
  const Out valid = gmpsim("trace validate " + tr);
  CHECK(valid.status == 0);
  CHECK(valid.text.find("consistent") != std::string::npos);
  std::remove(tr.c_str());
}

TEST_CASE("bad flags exit 2 naming the flag", "[cli][errors]") {
  Out o = gmpsim("run " + kScenarios + "pingpong.textproto --procs 0");
  CHECK(o.status == 2);
  CHECK(o.text.find("--procs: expected auto or an integer in [1, 4096], got '0'") != std::string::npos);
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

TEST_CASE("a deadlock exits 2 with Go's message and a trace up to the deadlock", "[cli][errors]") {
  const std::string path = tmp("deadlock.textproto");
  const std::string tr = tmp("deadlock.trace");
  write(path, "chan { name: \"c\" }\nfunc { name: \"main\" op { recv { chan: \"c\" } } }\n");
  const Out o = gmpsim("run " + path + " --trace " + tr);
  CHECK(o.status == 2);
  CHECK(o.text.find("fatal error: all goroutines are asleep - deadlock!") != std::string::npos);
  CHECK(o.text.find("goroutine 1 [chan receive]") != std::string::npos);
  const Out dump = gmpsim("trace " + tr);
  CHECK(dump.status == 0);
  CHECK(dump.text.find("KIND_GO_PARK g=1") != std::string::npos);  // main's last event: its block
  CHECK(gmpsim("trace validate " + tr).status == 0);
  std::remove(tr.c_str());
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

// A server scenario (connections, no benchmark): run prints its requests' latency, a sweep adds
// request-latency tables and charts the p99; a scenario without connections has neither.
TEST_CASE("gmpsim run and sweep report a server's request latency", "[cli][sweep][netpoll]") {
  const std::string sc = tmp("echo.textproto"), svg = tmp("echo.svg");
  write(sc, "conn { name: \"c\" count: 50 duration: \"100us\" poisson: true }\n"
            "func { name: \"main\" op { loop { count: 50 op { read { conn: \"c\" } }"
            " op { compute { duration: \"30us\" } } op { write { conn: \"c\" } } } } }\n");
  Out o = gmpsim("run " + sc + " --procs 1");
  REQUIRE(o.status == 0);
  CHECK(o.text.find("requests: 50 answered of 50; latency p50 ") != std::string::npos);
  o = gmpsim("sweep " + sc + " --procs 1,2 --svg " + svg);
  REQUIRE(o.status == 0);
  CHECK(o.text.find("request latency p99 (us)") != std::string::npos);
  std::ifstream in(svg);
  const std::string chart((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(chart.find("request latency p99 (us)") != std::string::npos);
  o = gmpsim("sweep " + kScenarios + "cpu.textproto --procs 1");
  CHECK(o.text.find("request latency") == std::string::npos);
  CHECK(gmpsim("run " + kScenarios + "cpu.textproto --procs 1").text.find("requests:") == std::string::npos);
  std::remove(sc.c_str());
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
// steal's schedules are gmpsim check's: the same text, the same strict replay.
TEST_CASE("gmpsim steal --replay with a bad schedule exits 2 naming the byte or the step", "[cli][errors]") {
  Out o = gmpsim("steal --replay abc");
  CHECK(o.status == 2);
  CHECK(o.text.find("--replay: schedule: byte 0: expected a step number, found 'a'") != std::string::npos);
  o = gmpsim("steal --replay 0.1..0");
  CHECK(o.status == 2);
  CHECK(o.text.find("byte 1: expected ':' after the step number") != std::string::npos);
  o = gmpsim("steal --replay 3:1");
  CHECK(o.status == 2);
  CHECK(o.text.find("byte 3: expected '/' and the number of steps") != std::string::npos);
  o = gmpsim("steal --replay 99999999999999999999:1/5");
  CHECK(o.status == 2);
  CHECK(o.text.find("a step number is too large") != std::string::npos);
  // Well formed, but the machine has 2 Ps: threads 0 and 1.
  o = gmpsim("steal --procs 2 --gs 4 --replay 0:7/50");
  CHECK(o.status == 2);
  CHECK(o.text.find("diverges at step 0: it picks thread 7, which cannot run there (threads that can: 0, 1); the "
                    "schedule was recorded with other --procs, --producers, --gs, --seed or gmpsim") !=
        std::string::npos);
  o = gmpsim("steal --procs 2 --gs 4 --replay /3");
  CHECK(o.status == 2);
  CHECK(o.text.find("the schedule ends at step 3 but the run goes on past it") != std::string::npos);
  CHECK(o.text.find("terminate") == std::string::npos);
}

// The default order's schedule is "/N", N the run's length: a replay that is too long says what N
// is, and "/N" then replays the run.
TEST_CASE("gmpsim steal --replay replays a schedule that fits", "[cli]") {
  const Out longer = gmpsim("steal --procs 2 --gs 4 --replay /1000000");
  REQUIRE(longer.status == 2);
  const std::string key = "the run ended at step ";
  const size_t at = longer.text.find(key);
  REQUIRE(at != std::string::npos);
  const std::string steps = longer.text.substr(at + key.size(), longer.text.find(' ', at + key.size()) - at - key.size());
  const Out o = gmpsim("steal --procs 2 --gs 4 --replay /" + steps);
  CHECK(o.status == 0);
  CHECK(o.text.find("seed 1: completed, " + steps + " steps") != std::string::npos);
  CHECK(o.text.find("Gs taken exactly once: all of 4") != std::string::npos);
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


// Issue 9's bad input: every input gives a clear message and a non-zero status, never a signal, a
// hang or a silently wrong result.

namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const std::string kPingPong = kScenarios + "pingpong.textproto";

// Files in GMP_BINARY_DIR whose names start with `prefix`.
int files_starting(const std::string& prefix) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(GMP_BINARY_DIR)) n += e.path().filename().string().rfind(prefix, 0) == 0;
  return n;
}

}  // namespace

TEST_CASE("times beyond int64 arithmetic are errors at file:line:column", "[cli][errors][limits]") {
  int seen = 0;
  for (const auto& e : fs::directory_iterator(std::string(GMP_SOURCE_DIR) + "/tests/data/repro")) {
    if (e.path().extension() != ".textproto") continue;
    const std::string path = e.path().string();
    INFO(path);
    const Out o = gmpsim("run '" + path + "' --procs 2");
    CHECK(o.status == 1);
    CHECK(o.text.rfind(path + ":", 0) == 0);
    CHECK(o.text.find("is too long: at most 1000000000000000ns") != std::string::npos);
    seen++;
  }
  CHECK(seen == 7);
}

TEST_CASE("thousands of nested loops are an error, not a stack overflow", "[cli][errors][limits]") {
  const std::string path = tmp("nested.textproto");
  std::string text = "func { name: \"main\" ";
  for (int i = 0; i < 3300; i++) text += "op { loop { count: 1 ";
  for (int i = 0; i < 3300; i++) text += "} } ";
  write(path, text + "}\n");
  const Out o = gmpsim("run " + path + " --procs 2");
  CHECK(o.status == 1);
  CHECK(o.text.find(path + ":1:") == 0);
  CHECK(o.text.find("nested too deeply: at most 100 loops, selects and parallels") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("4096 Ps on 4096 cores run, and 4097 are refused wherever GOMAXPROCS is given", "[cli][errors][limits]") {
  const std::string path = tmp("procs4096.textproto");
  // main changes GOMAXPROCS to the bound and back under a stop-the-world each time, with goroutines
  // queued on the Ps that the shrink destroys.
  write(path,
        "func { name: \"main\"\n"
        "  op { loop { count: 8 op { go { func: \"w\" } } } }\n"
        "  op { gomaxprocs { n: 4096 } }\n"
        "  op { loop { count: 8 op { go { func: \"w\" } } } }\n"
        "  op { gomaxprocs { n: 2 } }\n"
        "}\n"
        "func { name: \"w\" op { compute { iterations: 100 } } }\n");
  // (The output is checked with find: a failed Catch::Contains would print its 40 KB.)
  const auto has = [](const Out& out, const std::string& what) { return out.text.find(what) != std::string::npos; };
  Out o = gmpsim("run " + path + " --procs 4096 --cores 4096");
  CHECK(o.status == 0);
  CHECK(o.text.rfind("GOMAXPROCS=4096 cores=4096 ", 0) == 0);
  CHECK(has(o, "ended: program exited (status 0)"));
  CHECK(has(o, " P4095 "));
  CHECK(has(o, "GOMAXPROCS changed 1 times, 2 at the end"));
  o = gmpsim("run " + path + " --procs 2 --cores 4096");
  CHECK(o.status == 0);
  CHECK(has(o, "ended: program exited (status 0)"));
  CHECK(has(o, "GOMAXPROCS changed 2 times, 2 at the end"));
  o = gmpsim("run " + path + " --procs 4097");
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("--procs: expected auto or an integer in [1, 4096], got '4097'"));
  o = gmpsim("run " + path + " --procs 2 --cores 4097");
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("--cores: expected an integer in [1, 4096], got '4097'"));
  o = gmpsim("sweep " + path + " --procs 1,4097");
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("[1, 4096]"));
  // The gomaxprocs operation, as a literal and as an expression at run time.
  write(path, "func { name: \"main\" op { gomaxprocs { n: 4097 } } }\n");
  o = gmpsim("run " + path + " --procs 2");
  CHECK(o.status == 1);
  CHECK_THAT(o.text, Catch::Contains(path + ":1:"));
  CHECK_THAT(o.text, Catch::Contains("n 4097 is out of range: from 0 to 4096 (GOMAXPROCS)"));
  write(path, "func { name: \"main\" op { gomaxprocs { n_expr: \"4095 + 1\" } } }\n");
  o = gmpsim("run " + path + " --procs 2 --cores 8");
  CHECK(o.status == 0);
  CHECK(has(o, "GOMAXPROCS changed 1 times, 4096 at the end"));
  write(path, "func { name: \"main\" op { gomaxprocs { n_expr: \"4096 + 1\" } } }\n");
  o = gmpsim("run " + path + " --procs 2 --cores 8");
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("panic: n_expr is 4097: out of range, from 0 to 4096"));
  // A process's procs.
  write(path, "process { name: \"a\" procs: 4096 program { func { name: \"main\" } } }\n");
  o = gmpsim("run " + path + " --cores 4096");
  CHECK(o.status == 0);
  CHECK(o.text.rfind("GOMAXPROCS=4096 cores=4096 ", 0) == 0);
  CHECK(has(o, "ended: program exited (status 0)"));
  write(path, "process { name: \"a\" procs: 4097 program { func { name: \"main\" } } }\n");
  o = gmpsim("run " + path);
  CHECK(o.status == 1);
  CHECK_THAT(o.text, Catch::Contains("procs 4097 is out of range: from 1 to 4096"));
  std::remove(path.c_str());
}

TEST_CASE("a profile's absurd machine or costs are errors, not aborts or wrong runs", "[cli][errors][limits]") {
  const std::string good = slurp(std::string(GMP_SOURCE_DIR) + "/sim/cost/profiles/default.textproto");
  const std::string path = tmp("profile.textproto");
  const struct {
    const char* from;
    const char* to;
    const char* says;
  } cases[] = {
      {"count: 16", "count: 2147483648", "count 2147483648 is too large: a machine has at most 4096 cores"},
      {"count: 16", "count: 100000000", "count 100000000 is too large"},
      {"speed: 1.0", "speed: 1e-300", "speed 1e-300 is out of range: between 0.001 and 1000"},
      {"value: 3000000", "value: 1e-300", "os_time_slice: value 1e-300 is out of range"},
  };
  for (const auto& c : cases) {
    INFO(c.to);
    std::string text = good;
    text.replace(text.find(c.from), std::string(c.from).size(), c.to);
    write(path, text);
    const Out o = gmpsim("run " + kPingPong + " --procs 2 --profile " + path);
    CHECK(o.status == 1);
    CHECK(o.text.rfind(path + ":", 0) == 0);
    CHECK(o.text.find(c.says) != std::string::npos);
  }
  std::remove(path.c_str());
}

TEST_CASE("flags take exactly what they say", "[cli][errors]") {
  const struct {
    const char* args;
    const char* says;
  } cases[] = {
      {"--procs 2,4", "run: --procs takes one value (a list is for gmpsim sweep)"},
      {"--cores 2,4", "run: --cores takes one value"},
      {"--seeds 3", "run: --seeds is for gmpsim sweep"},
      {"--max-time 0", "--max-time: expected a duration that is positive"},
      {"--max-time 2000000000000000000", "at most 1e18ns"},
      {"--jitter 2s", "--jitter: expected a duration of at most 1s"},
      {"--profile ''", "--profile: expected a file or a builtin name, got ''"},
      {"--procs ' 2'", "--procs: expected auto or an integer in [1, 4096], got ' 2'"},
      {"--procs +2", "--procs: expected auto or an integer in [1, 4096], got '+2'"},
      {"--seed -1", "--seed: expected an integer"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const Out o = gmpsim("run " + kPingPong + " " + c.args);
    CHECK(o.status == 2);
    CHECK(o.text.find(c.says) != std::string::npos);
  }
  const Out o = gmpsim("sweep " + kPingPong + " --procs 1 --svg ''");
  CHECK(o.status == 2);
  CHECK(o.text.find("--svg: expected a file name") != std::string::npos);
}

TEST_CASE("every command prints its usage for --help and -h", "[cli]") {
  for (const char* cmd : {"run", "sweep", "steal", "trace", "check"}) {
    for (const char* flag : {"--help", "-h"}) {
      INFO(cmd << " " << flag);
      const Out o = gmpsim(std::string(cmd) + " " + flag + " 2>/dev/null");
      CHECK(o.status == 0);
      CHECK(o.text.rfind("usage:\n  gmpsim " + std::string(cmd) + " ", 0) == 0);
    }
  }
  const Out o = gmpsim("run " + kPingPong + " --procs 2 --help 2>/dev/null");
  CHECK(o.status == 0);
  CHECK(o.text.rfind("usage:\n  gmpsim run ", 0) == 0);
}

TEST_CASE("an empty scenario, a directory and a missing file say so", "[cli][errors]") {
  const std::string empty = tmp("empty.textproto");
  write(empty, "");
  Out o = gmpsim("run " + empty);
  CHECK(o.status == 1);
  CHECK(o.text == empty + ":1:1: no function \"main\": the main goroutine has nothing to run\n");
  std::remove(empty.c_str());
  o = gmpsim("run " + kPingPong + " --profile " + GMP_BINARY_DIR);
  CHECK(o.status == 1);
  CHECK(o.text == std::string(GMP_BINARY_DIR) + ": is a directory, not a file\n");
  o = gmpsim(std::string("run ") + GMP_BINARY_DIR);
  CHECK(o.status == 1);
  CHECK(o.text == std::string(GMP_BINARY_DIR) + ": is a directory, not a file\n");
  o = gmpsim("run " + tmp("absent.textproto"));
  CHECK(o.status == 1);
  CHECK(o.text == tmp("absent.textproto") + ": cannot open: No such file or directory\n");
}

TEST_CASE("a failing run under --check-determinism reports the failure with its own status", "[cli][determinism]") {
  const std::string path = tmp("detfail.textproto");
  const std::string tr = tmp("detfail.trace");
  write(path, "chan { name: \"c\" }\nfunc { name: \"main\" op { recv { chan: \"c\" } } }\n");
  Out o = gmpsim("run " + path + " --trace " + tr + " --check-determinism");
  CHECK(o.status == 2);
  CHECK(o.text.find("fatal error: all goroutines are asleep - deadlock!") != std::string::npos);
  CHECK(o.text.find("determinism: two runs gave byte-identical output and traces\n") != std::string::npos);
  CHECK(o.text.find("determinism check failed") == std::string::npos);
  CHECK(files_starting("cli_test_detfail.trace") == 1);  // the run's trace, not the second run's copy
  write(path, "func { name: \"main\" op { loop { forever: true op { compute { ns: 500 } } } } }\n");
  o = gmpsim("run " + path + " --trace " + tr + " --check-determinism --max-time 1ms");
  CHECK(o.status == 2);
  CHECK(o.text.find("(--max-time)") != std::string::npos);
  CHECK(o.text.find("determinism check failed") == std::string::npos);
  CHECK(gmpsim("trace validate " + tr).status == 0);  // written up to the limit
  std::remove(tr.c_str());
  std::remove(path.c_str());
}

// As root, renaming onto --trace /dev/null replaced /dev/null; the FIFO here stands for it.
TEST_CASE("a trace streams into a FIFO, follows a symbolic link and refuses a directory", "[cli][errors][trace]") {
  const std::string plain = tmp("plain.trace");
  REQUIRE(gmpsim("run " + kPingPong + " --trace " + plain).status == 0);
  const std::string expected = slurp(plain);
  REQUIRE(expected.rfind("gmptrace", 0) == 0);

  const std::string fifo = tmp("fifo.trace"), copy = tmp("fifo.copy");
  std::remove(fifo.c_str());
  REQUIRE(system(("mkfifo " + fifo).c_str()) == 0);
  const Out o = gmpsim("run " + kPingPong + " --trace " + fifo + " & timeout 20 cat " + fifo + " > " + copy + "; wait $!");
  CHECK(o.status == 0);
  CHECK(fs::is_fifo(fifo));
  CHECK(slurp(copy) == expected);
  std::remove(fifo.c_str());
  std::remove(copy.c_str());

  const std::string target = tmp("target.trace"), link = tmp("link.trace");
  write(target, "old");
  std::remove(link.c_str());
  fs::create_symlink(target, link);
  CHECK(gmpsim("run " + kPingPong + " --trace " + link).status == 0);
  CHECK(fs::is_symlink(link));
  CHECK(slurp(target) == expected);
  std::remove(link.c_str());
  std::remove(target.c_str());
  std::remove(plain.c_str());

  const std::string dir = tmp("dir.trace");
  fs::create_directories(dir);
  const Out d = gmpsim("run " + kPingPong + " --trace " + dir);
  CHECK(d.status == 1);
  CHECK(d.text == "gmpsim: trace writer: cannot write " + dir + ": is a directory\n");
  CHECK(files_starting("cli_test_dir.trace.tmp") == 0);
  const Out svg = gmpsim("sweep " + kPingPong + " --procs 1 --svg " + dir);
  CHECK(svg.status == 1);
  CHECK(svg.text == "gmpsim: cannot write " + dir + ": is a directory\n");
  fs::remove(dir);
}

TEST_CASE("an interrupted run removes its temporary trace file", "[cli][trace]") {
  const std::string path = tmp("forever.textproto");
  write(path, "func { name: \"main\" op { loop { forever: true op { gosched {} } } } }\n");
  for (const char* sig : {"INT", "TERM"}) {
    INFO(sig);
    // timeout, not `&` then kill: a shell starts a background command with SIGINT ignored.
    const Out o = gmpsim("run " + path + " --trace " + tmp("sig.trace") + " --max-time 100000s >/dev/null; echo status=$?",
                         std::string("timeout --preserve-status -s ") + sig + " 1 ");
    INFO(o.text);
    CHECK(o.text.find(std::string("status=") + (sig[0] == 'I' ? "130" : "143")) != std::string::npos);
    CHECK(files_starting("cli_test_sig.trace") == 0);
    for (const auto& e : fs::directory_iterator(GMP_BINARY_DIR)) {
      if (e.path().filename().string().rfind("cli_test_sig.trace", 0) == 0) fs::remove(e.path());  // for the next run
    }
  }
  std::remove(path.c_str());
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
  const Out o = gmpsim("run " + sc + " --trace " + tr, "ulimit -v 300000; exec ");
  CHECK(o.status == 1);
  CHECK(o.text.find("gmpsim: out of memory") != std::string::npos);
  CHECK_FALSE(exists(tr));
  CHECK(files_starting("cli_test_oom.trace") == 0);  // nor a temporary file beside it
}
#endif

// Protobuf logs a string field with bad UTF-8 itself, on stderr, before the parse fails; gmpsim
// reports the failure and drops protobuf's own line.
TEST_CASE("a trace with bad UTF-8 gets gmpsim's message alone", "[cli][trace][errors]") {
  std::string bytes = slurp(std::string(GMP_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_trace/tiny-2p.trace");
  const size_t at = bytes.find("tiny");  // in the header's scenario path, a string field
  REQUIRE(at != std::string::npos);
  bytes.replace(at, 2, "\xff\xfe");
  const std::string path = tmp("utf8.trace");
  write(path, bytes);
  const Out o = gmpsim("trace " + path);
  CHECK(o.status == 1);
  CHECK(o.text.rfind(path + ": at byte offset ", 0) == 0);
  CHECK(o.text.find("libprotobuf") == std::string::npos);
  std::remove(path.c_str());
}

// Assertions (docs/scenarios.md): sim/scenarios/check/readied.textproto's four hold or not by
// GOMAXPROCS, as its header says; a violated one is printed with its position and exits 4.
TEST_CASE("gmpsim run prints violated assertions with their position and exits 4", "[cli][assert]") {
  const std::string path = kScenarios + "check/readied.textproto";
  // "PATH:LINE:1: start_latency { ... }" for the assertion written so on its own line.
  auto at = [&](const std::string& text) {
    std::ifstream in(path);
    std::string line;
    for (int n = 1; std::getline(in, line); n++) {
      if (line == "assertion { " + text + " }") return path + ":" + std::to_string(n) + ":1: " + text;
    }
    FAIL("no assertion " << text << " in " << path);
    return std::string();
  };
  const std::string w1 = at("start_latency { goroutine: \"w1\" duration: \"50us\" }");
  const std::string w2 = at("start_latency { goroutine: \"w2\" duration: \"50us\" }");
  Out o = gmpsim("run " + path + " --procs 1");
  CHECK(o.status == 4);
  CHECK(o.text.find("assertions: 2 of 4 violated\n") != std::string::npos);
  CHECK(o.text.find("violated: " + w1 + "\n  goroutine ") != std::string::npos);
  CHECK(o.text.find("violated: " + w2 + "\n  goroutine ") != std::string::npos);
  CHECK(o.text.find("gmpsim: assertions were violated (see above)") != std::string::npos);
  for (const char* procs : {"2", "3"}) {
    o = gmpsim("run " + path + " --procs " + procs);
    CHECK(o.status == 4);
    CHECK(o.text.find("assertions: 1 of 4 violated\n") != std::string::npos);
    CHECK(o.text.find("violated: " + w1) == std::string::npos);
    CHECK(o.text.find("violated: " + w2 + "\n  goroutine 7 (w2) started ") != std::string::npos);
    CHECK(o.text.find("gmpsim: an assertion was violated (see above)") != std::string::npos);
  }
  // The determinism check compares the violations too; it passes, and the status is still 4.
  o = gmpsim("run " + path + " --procs 2 --check-determinism");
  CHECK(o.status == 4);
  CHECK(o.text.find("determinism: two runs gave byte-identical output") != std::string::npos);
  // A sweep names the first violation of each run that has one.
  const std::string svg = tmp("readied.svg");
  o = gmpsim("sweep " + path + " --procs 1,3 --svg " + svg);
  CHECK(o.status == 4);
  CHECK(o.text.find("gmpsim: GOMAXPROCS=3 seed=1: assertion violated: " + w2 + ": goroutine 7 (w2) started ") !=
        std::string::npos);
  std::remove(svg.c_str());
}

TEST_CASE("assertions that hold are counted in one line, and a scenario without any prints none", "[cli][assert]") {
  const std::string path = tmp("holds.textproto");
  write(path, "chan { name: \"c\" cap: 1 }\n"
              "func { name: \"w\" op { send { chan: \"c\" } } }\n"
              "func { name: \"main\" op { go { func: \"w\" name: \"w\" } } op { recv { chan: \"c\" } } }\n"
              "assertion { start_latency { goroutine: \"w\" duration: \"1ms\" } }\n"
              "assertion { chan_empty_at_exit { chan: \"c\" } }\n"
              "assertion { finished_at_exit { goroutine: \"w\" } }\n");
  Out o = gmpsim("run " + path + " --procs 2");
  CHECK(o.status == 0);
  CHECK(o.text.find("assertions: all 3 held\n") != std::string::npos);
  CHECK(o.text.find("violated") == std::string::npos);
  o = gmpsim("run " + kScenarios + "pingpong.textproto");
  CHECK(o.status == 0);
  CHECK(o.text.find("assertions") == std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("an assertion's bad reference exits 1 with file:line:column", "[cli][assert][errors]") {
  const std::string path = tmp("badassert.textproto");
  write(path, "func { name: \"main\" }\n"
              "assertion { finished_at_exit { goroutine: \"nobody\" } }\n"
              "assertion { chan_empty_at_exit { chan: \"nothing\" } }\n");
  const Out o = gmpsim("run " + path);
  CHECK(o.status == 1);
  CHECK(o.text.find(path + ":2:32: no go statement named \"nobody\"") != std::string::npos);
  CHECK(o.text.find(path + ":3:34: undeclared channel \"nothing\"") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("gmpsim check: a violation exits 3 with a schedule that replays, bad input exits 2", "[cli][check]") {
  const std::string path = tmp("check_deadlock.textproto");
  write(path, "chan { name: \"a\" }\nfunc { name: \"main\" op { recv { chan: \"a\" } } }\n");
  const Out found = gmpsim("check " + path + " --procs 2 --strategy random --max-executions 3 --show 5");
  CHECK(found.status == 3);
  CHECK(found.text.find("VIOLATION throw") != std::string::npos);
  const size_t at = found.text.find("--replay '");
  REQUIRE(at != std::string::npos);
  const std::string sched = found.text.substr(at + 10, found.text.find('\'', at + 10) - (at + 10));
  const Out again = gmpsim("check " + path + " --procs 2 --replay '" + sched + "'");
  CHECK(again.status == 3);
  CHECK(again.text.find("all goroutines are asleep") != std::string::npos);
  const Out stale = gmpsim("check " + path + " --procs 2 --replay '1:7/900'");
  CHECK(stale.status == 2);
  CHECK(stale.text.find("diverges at step 1") != std::string::npos);
  const Out bad = gmpsim("check " + path + " --procs 2 --replay '1:x/9'");
  CHECK(bad.status == 2);
  CHECK(bad.text.find("byte 2") != std::string::npos);
  CHECK(gmpsim("check " + path + " --procs 2 --max-events 9").status == 2);
  const Out nope = gmpsim("check " + path + " --procs 2 --strategy nope");
  CHECK(nope.status == 2);
  CHECK(nope.text.find("--strategy: expected auto, dpor, bounded, pct, random or plain, got 'nope'") != std::string::npos);
  const Out depth = gmpsim("check " + path + " --procs 2 --strategy pct --depth 0");
  CHECK(depth.status == 2);
  CHECK(depth.text.find("--depth: expected an integer in [1, 100], got '0'") != std::string::npos);
  std::remove(path.c_str());
}

// The usage lists every strategy of model/strategies.h's table with its flags, and each flag's
// default in each strategy that takes it.
TEST_CASE("gmpsim check --help lists the strategies and their flags", "[cli][check]") {
  const Out o = gmpsim("check --help");
  CHECK(o.status == 0);
  CHECK(o.text.find("[--strategy auto|dpor|bounded|pct|random|plain]") != std::string::npos);
  CHECK(o.text.find("        dpor [--estimate N]\n") != std::string::npos);
  CHECK(o.text.find("        bounded [--preemptions K] [--estimate N]\n") != std::string::npos);
  CHECK(o.text.find("        pct [--depth D]\n") != std::string::npos);
  CHECK(o.text.find("        random\n") != std::string::npos);
  CHECK(o.text.find("        plain [--preemptions K] [--estimate N]\n") != std::string::npos);
  CHECK(o.text.find("default auto 3, bounded 2, plain none)") != std::string::npos);
  // The portfolio is the default, with its members, and every default is named.
  CHECK(o.text.find("        auto [--preemptions K] [--depth D] [--estimate N]\n") != std::string::npos);
  CHECK(o.text.find("defaults: --strategy auto (random, PCT at depths 2 and 3, bounded search at 0 to 3") !=
        std::string::npos);
  CHECK(o.text.find("--time-limit 60s; --property default (throw, deadlock") != std::string::npos);
}

TEST_CASE("gmpsim trace stats, critical-path and diff read a simulated trace", "[cli][trace]") {
  const std::string a = tmp("stats_a.trace"), b = tmp("stats_b.trace");
  REQUIRE(gmpsim("run " + kScenarios + "check/spawn2.textproto --procs 2 --trace " + a).status == 0);
  REQUIRE(gmpsim("run " + kScenarios + "check/spawn2.textproto --procs 3 --trace " + b).status == 0);
  const Out stats = gmpsim("trace stats " + a);
  CHECK(stats.status == 0);
  CHECK(stats.text.find("scheduling latency (runnable to running)") != std::string::npos);
  CHECK(stats.text.find("P utilisation: P0 ") != std::string::npos);
  const Out json = gmpsim("trace stats " + a + " --json");
  CHECK(json.status == 0);
  CHECK(json.text.find("\"num_ps\": 2") != std::string::npos);
  // At 2 Ps the second worker waits in main's runnext for main's 1ms computation: that wait is
  // on the critical path, and at 3 Ps it is not.
  const Out cp = gmpsim("trace critical-path " + a);
  CHECK(cp.status == 0);
  CHECK(cp.text.find("runnable, waiting for a P                1.00ms") != std::string::npos);
  const Out cp3 = gmpsim("trace critical-path " + b);
  CHECK(cp3.text.find("runnable, waiting for a P                1.00ms") == std::string::npos);
  const Out diff = gmpsim("trace diff " + a + " " + b);
  CHECK(diff.status == 0);
  CHECK(diff.text.find("latency max") != std::string::npos);
  CHECK(gmpsim("trace stats " + a + " --bogus").status == 2);
  CHECK(gmpsim("trace diff " + a).status == 2);
  const Out missing = gmpsim("trace critical-path " + tmp("no_such.trace"));
  CHECK(missing.status == 1);
  CHECK(missing.text.find("cannot open") != std::string::npos);
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST_CASE("gmpsim replay derives a scenario from a trace, fits it and sweeps it", "[cli][trace]") {
  const std::string tr = tmp("replay.trace"), sc = tmp("replay.textproto");
  REQUIRE(gmpsim("run " + kScenarios + "goroutines.textproto --procs 2 --trace " + tr).status == 0);
  const Out o = gmpsim("replay " + tr + " --procs 1,2 --jobs 1 -o " + sc);
  CHECK(o.status == 0);
  CHECK(o.text.find("10001 goroutines (4 of the runtime left out; 0 of the tracer left out (0.000 ms of running))") !=
        std::string::npos);
  CHECK(o.text.find("replay: fitted at GOMAXPROCS 2") != std::string::npos);
  CHECK(o.text.find("virtual time (ms)") != std::string::npos);
  CHECK(gmpsim("run " + sc + " --procs 2").status == 0);  // the derived scenario is a scenario
  const Out raw = gmpsim("replay " + tr + " --procs 2 --jobs 1 --no-fit -o " + sc);
  CHECK(raw.status == 0);
  CHECK(raw.text.find("fitted") == std::string::npos);
  CHECK(gmpsim("replay --procs 2 " + tr).status == 2);  // TRACE comes first
  CHECK(gmpsim("replay " + tmp("no_such.trace")).status == 1);
  std::remove(tr.c_str());
  std::remove(sc.c_str());
}

// The derived scenario goes next to the trace under its whole name (not cut at the first dot),
// and names its trace and its goroutines' start functions in its comments.
TEST_CASE("gmpsim replay writes next to the trace under its whole name", "[cli][trace]") {
  const std::string tr = tmp("w-go1.23-p2.trace"), sc = tmp("w-go1.23-p2.replay.textproto");
  std::remove(sc.c_str());
  REQUIRE(gmpsim("run " + kScenarios + "workers.textproto --procs 2 --trace " + tr).status == 0);
  const Out o = gmpsim("replay " + tr + " --procs 2 --jobs 1 --no-fit --svg " + tmp("w.svg"));
  CHECK(o.status == 0);
  REQUIRE(exists(sc));
  std::ifstream in(sc);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("# Derived by gmpsim replay from " + tr) != std::string::npos);
  CHECK(text.find("# The program's goroutines by start function") != std::string::npos);
  CHECK(text.find(" x main: ") != std::string::npos);
  std::remove(tr.c_str());
  std::remove(sc.c_str());
  std::remove(tmp("w.svg").c_str());
}

// Several traces of one program: each one's span, the median; traces of another program refused,
// naming both; a cut trace refused with the reader's byte offset, nothing written.
TEST_CASE("gmpsim replay combines traces of one program and refuses others", "[cli][trace]") {
  std::vector<std::string> trs;
  for (const char* seed : {"1", "2", "3"}) {
    trs.push_back(tmp(std::string("c") + seed + ".trace"));
    REQUIRE(gmpsim("run " + kScenarios + "workers.textproto --procs 2 --seed " + seed + " --trace " + trs.back()).status ==
            0);
  }
  const std::string sc = tmp("c.textproto");
  const Out o = gmpsim("replay " + trs[0] + " " + trs[1] + " " + trs[2] + " --procs 2 --jobs 1 --no-fit -o " + sc);
  CHECK(o.status == 0);
  CHECK(o.text.find("replay: " + trs[0] + ": span ") != std::string::npos);
  CHECK(o.text.find("(the median: its structure is replayed)") != std::string::npos);
  CHECK(o.text.find("goroutines matched in every trace") != std::string::npos);
  const std::string other = tmp("other.trace");
  REQUIRE(gmpsim("run " + kScenarios + "chanshared.textproto --procs 2 --trace " + other).status == 0);
  std::remove(sc.c_str());
  const Out diff = gmpsim("replay " + trs[0] + " " + other + " --procs 2 --no-fit -o " + sc);
  CHECK(diff.status == 1);
  CHECK(diff.text.find("look like traces of different programs") != std::string::npos);
  CHECK(diff.text.find(trs[0]) != std::string::npos);
  CHECK(diff.text.find(other) != std::string::npos);
  CHECK_FALSE(exists(sc));
  CHECK(shell("truncate -s -5 " + trs[1]).status == 0);
  const Out cut = gmpsim("replay " + trs[1] + " --procs 2 --no-fit -o " + sc);
  CHECK(cut.status == 1);
  CHECK(cut.text.find("at byte offset") != std::string::npos);
  CHECK_FALSE(exists(sc));
  CHECK(gmpsim("replay " + trs[0] + " --cpu-time 1ms,2ms --no-fit -o " + sc).status == 2);  // one per trace
  for (const std::string& t : trs) std::remove(t.c_str());
  std::remove(other.c_str());
}

// An imported Go trace does not say the traced machine's cores: replay takes nothing out for them
// unless --traced-cores says them, and says so, rather than reading the cores of the machine that
// replays (its output would depend on where it ran).
TEST_CASE("gmpsim replay of a trace without its cores takes nothing out for them and says how to give them",
          "[cli][trace]") {
  const std::string gmp = tmp("gctrees-cores.gmp"), sc = tmp("gctrees-cores.textproto");
  REQUIRE(gmpsim("trace import " + std::string(GMP_SOURCE_DIR) + "/tests/data/gctrees/gctrees-1.23.trace -o " + gmp)
              .status == 0);
  const Out o = gmpsim("replay " + gmp + " --procs 2 --jobs 1 --no-fit -o " + sc);
  CHECK(o.status == 0);
  CHECK(o.text.find("replay: the traced machine's cores are not known (the trace does not say them): no running "
                    "time taken out where more goroutines ran than cores; --traced-cores N gives them") !=
        std::string::npos);
  CHECK(o.text.find("traced cores)") == std::string::npos);
  const Out one = gmpsim("replay " + gmp + " --traced-cores 1 --procs 2 --jobs 1 --no-fit -o " + sc);
  CHECK(one.status == 0);
  CHECK(one.text.find("cores are not known") == std::string::npos);
  CHECK(one.text.find("where more goroutines ran than the 1 traced cores") != std::string::npos);
  std::remove(gmp.c_str());
  std::remove(sc.c_str());
  std::remove(tmp("gctrees-cores-sweep.svg").c_str());
}

// At 1 P main yields to a goroutine that computes 50us, so it waits 50us to run again: a latency
// assertion the checker tests under strict time only, where the clock means what it does in a run.
TEST_CASE("gmpsim check --time strict checks latency assertions, and its schedules replay with it", "[cli][check]") {
  const std::string path = tmp("check_strict.textproto");
  write(path,
        "assertion { max_runnable_latency { duration: \"10us\" } }\n"
        "func { name: \"main\" op { go { func: \"w\" } } op { gosched {} } }\n"
        "func { name: \"w\" op { compute { duration: \"50us\" } } }\n");
  const Out free = gmpsim("check " + path + " --procs 1 --strategy random --max-executions 5");
  CHECK(free.status == 0);
  CHECK(free.text.find("latency assertion is checked under --time strict only") != std::string::npos);
  const Out strict = gmpsim("check " + path + " --procs 1 --strategy random --max-executions 5 --time strict");
  CHECK(strict.status == 3);
  CHECK(strict.text.find("waited runnable 50us") != std::string::npos);
  const size_t at = strict.text.find("--time strict --replay '");
  REQUIRE(at != std::string::npos);
  const std::string sched = strict.text.substr(at + 24, strict.text.find('\'', at + 24) - (at + 24));
  CHECK(gmpsim("check " + path + " --procs 1 --time strict --replay '" + sched + "'").status == 3);
  CHECK(gmpsim("check " + path + " --procs 1 --time slow").status == 2);
  CHECK(gmpsim("check " + path + " --procs 1 --max-time 1ms").status == 2);
  CHECK(gmpsim("check " + path + " --procs 1 --time strict --max-time 1ms").status == 3);
  std::remove(path.c_str());
}

TEST_CASE("gmpsim trace import converts a Go trace and refuses bad ones", "[cli][go-import]") {
  const std::string out = tmp("go.trace");
  const std::string go = std::string(GMP_SOURCE_DIR) + "/tests/traces/data/goprog-1.23.trace";
  std::remove(out.c_str());
  Out o = gmpsim("trace import " + go + " -o " + out);
  CHECK(o.status == 0);
  CHECK(o.text.find("go 1.23 trace") != std::string::npos);
  o = gmpsim("trace " + out);
  CHECK(o.status == 0);
  CHECK(o.text.find("# go trace import, schema 1, 4 Ps") != std::string::npos);
  CHECK(o.text.find("KIND_GO_START") != std::string::npos);
  o = gmpsim("trace validate " + out);
  CHECK(o.status == 0);
  CHECK(o.text.find(": consistent") != std::string::npos);
  o = gmpsim("trace import " + go + " --format v1 -o " + out + ".v1");
  CHECK(o.status == 1);
  CHECK(o.text.find("--format v1") != std::string::npos);
  CHECK(!exists(out + ".v1"));
  const std::string cut = tmp("go-cut.in");
  std::ifstream in(go, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write(cut, bytes.substr(0, bytes.size() / 2));
  o = gmpsim("trace import " + cut + " -o " + out + ".cut");
  CHECK(o.status == 1);
  CHECK(o.text.find(cut + ":") != std::string::npos);
  CHECK(!exists(out + ".cut"));
  CHECK(gmpsim("trace import " + go).status == 2);
  CHECK(gmpsim("trace import " + go + " -o " + out + " --format v3").status == 2);
  CHECK(gmpsim("trace import -o " + out).status == 2);
  o = gmpsim("trace import");
  CHECK(o.status == 2);
  CHECK(o.text.find("missing the Go trace IN") != std::string::npos);
  // The first format, chosen by its header or named.
  const std::string v1 = std::string(GMP_SOURCE_DIR) + "/tests/traces/data/goprog-1.19.trace";
  o = gmpsim("trace import --format v1 " + v1 + " -o " + out);
  CHECK(o.status == 0);
  CHECK(o.text.find("go 1.19 trace") != std::string::npos);
  CHECK(gmpsim("trace " + out).text.find("# go_version=1.19") != std::string::npos);
  o = gmpsim("trace import --format=v2 " + v1 + " -o " + out + ".v2");
  CHECK(o.status == 1);
  CHECK(!exists(out + ".v2"));
}

TEST_CASE("gmpsim trace export writes Perfetto and Chrome JSON, and refuses bad traces", "[cli][export]") {
  const std::string tr = tmp("export.trace"), pf = tmp("export.pftrace"), js = tmp("export.json");
  std::remove(pf.c_str());
  std::remove(js.c_str());
  REQUIRE(gmpsim("run " + std::string(GMP_SOURCE_DIR) + "/sim/scenarios/workers.textproto --procs 2 --trace " + tr)
              .status == 0);
  Out o = gmpsim("trace export " + tr + " --format perfetto -o " + pf);
  CHECK(o.status == 0);
  CHECK(o.text.find("tracks, ") != std::string::npos);
  CHECK(exists(pf));
  o = gmpsim("trace export --format=chrome -o " + js + " " + tr);
  CHECK(o.status == 0);
  std::ifstream in(js);
  std::string head(16, '\0');
  in.read(head.data(), 16);
  CHECK(head == "{\"traceEvents\":[");
  // A cut trace: an error naming the byte offset, exit 1, and no output at all.
  std::ifstream t(tr, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>());
  const std::string cut = tmp("export-cut.trace");
  write(cut, bytes.substr(0, bytes.size() - 3));
  o = gmpsim("trace export " + cut + " --format chrome -o " + js + ".cut");
  CHECK(o.status == 1);
  CHECK(o.text.find("byte offset") != std::string::npos);
  CHECK(!exists(js + ".cut"));
  CHECK(gmpsim("trace export " + tr + " -o " + js).status == 2);                    // no --format
  CHECK(gmpsim("trace export " + tr + " --format svg -o " + js).status == 2);       // unknown format
  CHECK(gmpsim("trace export " + tr + " --format chrome").status == 2);             // no -o
  CHECK(gmpsim("trace export " + tr + " --format chrome --axis x -o " + js).status == 2);
  o = gmpsim("trace export " + tr + " --format chrome -o /");
  CHECK(o.status == 1);
  CHECK(o.text.find("is a directory") != std::string::npos);
  for (const std::string& f : {tr, pf, js, cut}) std::remove(f.c_str());
}

// A sweep writes its chart only where --svg says; replay puts it next to the scenario it derives.
TEST_CASE("gmpsim sweep writes no chart unless asked, replay writes it beside its scenario", "[cli][sweep]") {
  const std::string dir = tmp("chartdir");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string in_dir = "cd " + dir + " && ";
  Out o = gmpsim("sweep " + kScenarios + "cpu.textproto --procs 1,2", in_dir);
  CHECK(o.status == 0);
  CHECK(o.text.find("chart:") == std::string::npos);
  CHECK(std::filesystem::is_empty(dir));
  const std::string tr = dir + "/w.trace";
  REQUIRE(gmpsim("run " + kScenarios + "workers.textproto --procs 2 --trace " + tr).status == 0);
  o = gmpsim("replay " + tr + " --procs 1,2 -o " + dir + "/w.replay.textproto", in_dir);
  CHECK(o.status == 0);
  CHECK(exists(dir + "/w-sweep.svg"));
  CHECK(o.text.find("chart: " + dir + "/w-sweep.svg") != std::string::npos);
  std::filesystem::remove_all(dir);
}

// A scenario expression that cannot be computed ends the run as Go's unrecovered panic does: the
// message with the expression's position, then exit status 2 (docs/scenarios.md, "Expressions").
TEST_CASE("gmpsim run: an index out of range exits with status 2 and Go's panic message", "[cli][lang]") {
  const std::string path = tmp("oob.textproto");
  write(path, "chan { name: \"ring\" count: 4 }\nfunc { name: \"main\"\n"
              "  op { loop { var: \"i\" count: 5 op { close { chan: \"ring\" index: \"i\" } } } }\n}\n");
  const Out o = gmpsim("run " + path);
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("panic: runtime error: index out of range [4] with length 4\n\tat " + path +
                                     ":3:59: index \"i\""));
  std::remove(path.c_str());
}

// Both kinds of benchmark report through the same lines: a benchmark func's in sweep too.
TEST_CASE("gmpsim sweep reports a benchmark func's ns/op per GOMAXPROCS", "[cli][lang]") {
  const Out o = gmpsim("sweep " + kScenarios + "fanout.textproto --procs 1,2");
  REQUIRE(o.status == 0);
  CHECK_THAT(o.text, Catch::Contains("BenchmarkFanout\t   80000\t"));
  CHECK_THAT(o.text, Catch::Contains("BenchmarkFanout-2\t   80000\t"));
}

// gmpsim calibrate on saved measurements of this machine kind (sim/calibration/measurements), over
// a suite of two of its scenarios (kept small so the test is quick under ASan): a short fit of one
// parameter, a profile that loads and cites its measurements, bad input refused.
TEST_CASE("gmpsim calibrate fits a profile to saved measurements and refuses bad ones", "[cli][calibrate]") {
  const std::string prof = tmp("calibrated.textproto"), suite = tmp("calib-suite");
  const std::string m = std::string(GMP_SOURCE_DIR) + "/sim/calibration/measurements/epyc-vm-go1.23-suite.txt";
  std::filesystem::remove_all(suite);
  std::filesystem::create_directories(suite);
  for (const char* b : {"BenchmarkChanSendRecv", "BenchmarkMutexUncontended"}) {
    std::filesystem::copy_file(std::string(GMP_SOURCE_DIR) + "/sim/calibration/suite/" + b + ".textproto",
                               suite + "/" + b + ".textproto");
  }
  std::remove(prof.c_str());
  Out o = gmpsim("calibrate --profile epyc-vm --measured " + m + " --suite " + suite +
                 " --heldout none --params chan_op --max-evaluations 3 --jobs 2 -o " + prof);
  REQUIRE(o.status == 0);
  CHECK(o.text.find("BenchmarkChanSendRecv") != std::string::npos);
  CHECK(o.text.find("fit suite after the fit: median |error|") != std::string::npos);
  CHECK(o.text.find("fit suite: ") != std::string::npos);
  CHECK(o.text.find(" points within their runs' spread; median spread ") != std::string::npos);
  CHECK(o.text.find("(measured; no scenario to pair it with)") != std::string::npos);  // the other eight
  std::ifstream in(prof);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("Fitted by gmpsim calibrate from builtin:epyc-vm") != std::string::npos);
  CHECK(text.find("measurements: " + m) != std::string::npos);
  CHECK(gmpsim("run " + kScenarios + "pingpong.textproto --procs 1 --profile " + prof).status == 0);
  const std::string bad = tmp("bad-bench.txt");
  write(bad, "goos: linux\nBenchmarkChanSendRecv\t100\tabc ns/op\n");
  o = gmpsim("calibrate --measured " + bad + " --heldout none -o " + prof + ".2");
  CHECK(o.status == 1);
  CHECK(o.text.find(bad + ":2: ns/op 'abc'") != std::string::npos);
  CHECK(!exists(prof + ".2"));
  // A folder is no measurements file: refused as unreadable, not read as no benchmarks at all.
  o = gmpsim("calibrate --measured " + std::string(GMP_BINARY_DIR) + " --heldout none");
  CHECK(o.status == 1);
  CHECK(o.text == "gmpsim: calibrate: cannot read " + std::string(GMP_BINARY_DIR) + "\n");
  CHECK(gmpsim("calibrate --params no_such_cost --measured " + m).status == 2);
  CHECK(gmpsim("calibrate --count 0").status == 2);
  // A profile that could not be written at the end is refused before any measuring or fitting.
  o = gmpsim("calibrate --measured " + m + " --heldout none -o " + tmp("no-such-folder") + "/p.textproto");
  CHECK(o.status == 1);
  CHECK(o.text.find("is not a folder this user may write into") != std::string::npos);
  CHECK(o.text.find("fit suite") == std::string::npos);
  std::remove(prof.c_str());
  std::remove(bad.c_str());
  std::filesystem::remove_all(suite);
}

// The machine's speed is measured by BenchmarkCPU at 1 P, not fitted: a measurement of 13,333 ns/op
// is half of what the default profile's 1.333 ns/iteration gives for cpuWork(20000), so the profile
// gets half that speed figure, whatever the fit does. Affine placement is asked for with
// --placement and needs a base that can be scaled.
TEST_CASE("gmpsim calibrate measures the speed from BenchmarkCPU and takes --placement", "[cli][calibrate]") {
  const std::string prof = tmp("speed.textproto"), suite = tmp("speed-suite"), m = tmp("speed-bench.txt");
  std::filesystem::remove_all(suite);
  std::filesystem::create_directories(suite);
  std::filesystem::copy_file(std::string(GMP_SOURCE_DIR) + "/sim/calibration/suite/BenchmarkCPU.textproto",
                             suite + "/BenchmarkCPU.textproto");
  write(m, "BenchmarkCPU\t1000\t13333 ns/op\nBenchmarkCPU-2\t1000\t6700 ns/op\n");
  std::remove(prof.c_str());
  Out o = gmpsim("calibrate --measured " + m + " --suite " + suite + " --heldout none --max-evaluations 1 -o " + prof);
  REQUIRE(o.status == 0);
  CHECK(o.text.find("speed_ns_per_iteration 1.333 -> 0.6665, measured by BenchmarkCPU at 1 P") != std::string::npos);
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::string text = read(prof);
  const size_t speed = text.find("speed_ns_per_iteration {");
  REQUIRE(speed != std::string::npos);
  CHECK(std::stod(text.substr(text.find("value: ", speed) + 7)) == Approx(0.6665).epsilon(0.001));
  CHECK(text.find("source: \"measured: BenchmarkCPU at -cpu 1, median 13333.0", speed) != std::string::npos);
  CHECK(text.find("os_placement: ") == std::string::npos);  // spread, the default
  o = gmpsim("calibrate --profile epyc-vm --placement affine --measured " + m + " --suite " + suite +
             " --heldout none --params chan_op --max-evaluations 1 -o " + prof);
  REQUIRE(o.status == 0);
  text = read(prof);
  CHECK(text.find("os_placement: \"affine\"") != std::string::npos);
  CHECK(gmpsim("run " + kScenarios + "pingpong.textproto --procs 2 --profile " + prof).status == 0);
  CHECK(gmpsim("calibrate --placement nearest --measured " + m).status == 2);
  // The default profile has no machine.linux_scheduler: affine placement has no kernel constants.
  o = gmpsim("calibrate --placement affine --measured " + m + " --suite " + suite + " --heldout none");
  CHECK(o.status == 2);
  CHECK(o.text.find("linux_scheduler") != std::string::npos);
  std::remove(prof.c_str());
  std::remove(m.c_str());
  std::filesystem::remove_all(suite);
}

// gmpsim calibrate measuring with a fake `go` (a script: `go test -c -o BIN` writes BIN, a script
// that prints canned go test -bench output for its -test.cpu and logs the order it was run in):
// the suite's Go files are built in a temporary folder that is gone afterwards, the source folder
// is left exactly as it was, the runs are interleaved (1 2 1 2, not 1 1 2 2), the measurement file
// carries the quietness comments and reads back with --measured.
TEST_CASE("gmpsim calibrate builds in a temporary folder, interleaves its runs and leaves the sources alone",
          "[cli][calibrate]") {
  namespace fs = std::filesystem;
  const std::string suite = tmp("fake-suite"), go = tmp("fake-go"), log = tmp("fake-go.log"),
                    order = tmp("fake-go.order"), prof = tmp("fake.textproto");
  fs::remove_all(suite);
  fs::create_directories(suite);
  const std::string src = std::string(GMP_SOURCE_DIR) + "/sim/calibration/suite/";
  for (const char* f : {"BenchmarkChanSendRecv.textproto", "BenchmarkMutexUncontended.textproto", "calib_test.go",
                        "go.mod"}) {
    fs::copy_file(src + f, suite + "/" + f);
  }
  for (const std::string& f : {log, order, prof, prof + ".suite.txt"}) std::remove(f.c_str());
  write(go,
        "#!/bin/sh\n"
        "pwd >> '" + log + "'\n"
        "[ \"$1\" = test ] && [ \"$2\" = -c ] && [ \"$3\" = -o ] || exit 3\n"
        "touch go.sum left-by-build.txt\n"  // what a real build may leave in the package folder
        "cat > \"$4\" <<'EOS'\n"
        "#!/bin/sh\n"
        "for a; do [ \"$prev\" = -test.cpu ] && cpu=$a; prev=$a; done\n"
        "echo $cpu >> '" + order + "'\n"
        "n=$(wc -l < '" + order + "')\n"
        "echo 'goos: linux'\n"
        "if [ $cpu = 1 ]; then s=''; t=5$n; else s=-$cpu; t=7$n; fi\n"
        "printf 'BenchmarkChanSendRecv%s\\t1000\\t%s ns/op\\n' \"$s\" $t\n"
        "printf 'BenchmarkMutexUncontended%s\\t1000\\t%s.5 ns/op\\n' \"$s\" $t\n"
        "echo PASS\n"
        "EOS\n"
        "chmod +x \"$4\"\n");
  fs::permissions(go, fs::perms::owner_all);
  const auto listing = [](const std::string& dir) {
    std::string out;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) {
      std::ifstream in(dir + "/" + n, std::ios::binary);
      out += n + "\n" + std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
    return out;
  };
  const std::string before = listing(suite);
  Out o = gmpsim("calibrate --go " + go + " --suite " + suite + " --heldout none --cpus 1,2 --count 3 --benchtime 20x "
                 "--params chan_op --max-evaluations 2 --cv-evaluations 2 --jobs 2 -o " + prof);
  INFO(o.text);
  REQUIRE(o.status == 0);
  CHECK(listing(suite) == before);
  std::ifstream lin(log);
  std::string built_in;
  std::getline(lin, built_in);
  CHECK(fs::path(built_in).parent_path().filename().string().rfind("gmpsim-calibrate-", 0) == 0);
  CHECK_FALSE(fs::exists(built_in));  // removed
  std::ifstream oin(order);
  CHECK(std::string((std::istreambuf_iterator<char>(oin)), std::istreambuf_iterator<char>()) == "1\n2\n1\n2\n1\n2\n");
  CHECK_THAT(o.text, Catch::Contains("CI95"));
  CHECK_THAT(o.text, Catch::Contains("cross-validation (each fit-suite benchmark predicted by a fit without it)"));
  CHECK_THAT(o.text, Catch::Contains("2 in the measured direction (BenchmarkChanSendRecv 1->2 up, "
                                     "BenchmarkMutexUncontended 1->2 up)"));
  std::ifstream min(prof + ".suite.txt");
  const std::string measured((std::istreambuf_iterator<char>(min)), std::istreambuf_iterator<char>());
  CHECK_THAT(measured, Catch::Contains("# quiet: repetition 3 of 3, -cpu 2: "));
  CHECK_THAT(measured, Catch::Contains("# quiet: load average "));
  const Out again = gmpsim("calibrate --measured " + prof + ".suite.txt --suite " + suite +
                           " --heldout none --params chan_op --max-evaluations 2 --no-cross-validate");
  CHECK(again.status == 0);
  CHECK_THAT(again.text, Catch::Contains("BenchmarkMutexUncontended        2   3 "));
  CHECK(again.text.find("cross-validation (") == std::string::npos);
  fs::remove_all(suite);
  for (const std::string& f : {go, log, order, prof, prof + ".suite.txt"}) std::remove(f.c_str());
}

// A change between GOMAXPROCS values counts when the medians' confidence intervals are apart,
// whatever the runs' spread: nine runs at 1 P with one outlier each way (spread 160%) have the
// interval 50-50 (x(2)-x(8)), nine at 2 Ps 60-60, so the 20% step is in the measured direction,
// not inside the noise. A step between overlapping intervals is.
TEST_CASE("gmpsim calibrate counts a GOMAXPROCS step only when the confidence intervals are apart",
          "[cli][calibrate]") {
  const std::string suite = tmp("ci-suite"), m = tmp("ci-bench.txt");
  std::filesystem::remove_all(suite);
  std::filesystem::create_directories(suite);
  std::filesystem::copy_file(std::string(GMP_SOURCE_DIR) + "/sim/calibration/suite/BenchmarkChanSendRecv.textproto",
                             suite + "/BenchmarkChanSendRecv.textproto");
  std::string text;
  for (const double v : {10, 50, 50, 50, 50, 50, 50, 50, 90}) text += "BenchmarkChanSendRecv\t1000\t" + std::to_string(v) + " ns/op\n";
  for (int i = 0; i < 9; ++i) text += "BenchmarkChanSendRecv-2\t1000\t60 ns/op\n";
  for (const double v : {55, 58, 59, 60, 61, 62, 63, 64, 65}) text += "BenchmarkChanSendRecv-4\t1000\t" + std::to_string(v) + " ns/op\n";
  write(m, text);
  const Out o = gmpsim("calibrate --measured " + m + " --suite " + suite + " --cpus 1,2,4 --heldout none --params chan_op "
                       "--max-evaluations 1 --no-cross-validate");
  INFO(o.text);
  REQUIRE(o.status == 0);
  CHECK_THAT(o.text, Catch::Contains("1 in the measured direction (BenchmarkChanSendRecv 1->2 up)"));
  CHECK_THAT(o.text, Catch::Contains("1 inside the noise"));
  std::remove(m.c_str());
  std::filesystem::remove_all(suite);
}

// ---- The garbage collector's surface: the GC line, --gctrace, --gogc and --memlimit.

TEST_CASE("gmpsim run prints a GC line for a program that allocates, and none for one that does not", "[cli][gc]") {
  Out o = gmpsim("run " + kScenarios + "gc.textproto --procs 2");
  CHECK(o.status == 0);
  CHECK_THAT(o.text, Catch::Contains("\nGC: "));
  CHECK_THAT(o.text, Catch::Contains(" cycles"));
  CHECK_THAT(o.text, Catch::Contains("of GOMAXPROCS x run time; stop-the-world "));
  // 8 MiB of cache (1024 objects), and per request 40 x 512 bytes and a 4 KiB entry, 4 x 2000
  // requests: 204,996,608 bytes, 195.5 MB of 2^20.
  CHECK_THAT(o.text, Catch::Contains("; allocated 195.5 MB in " + std::to_string(1024 + 4 * 2000 * 41) + " objects\n"));
  o = gmpsim("run " + kScenarios + "pingpong.textproto --procs 2 --gctrace --gogc 50 --memlimit 1GiB");
  CHECK(o.status == 0);
  CHECK(o.text.find("GC") == std::string::npos);
  CHECK(o.text.find("gc ") == std::string::npos);
}

TEST_CASE("the GOGC and memory-limit flags take Go's GOGC and GOMEMLIMIT values and refuse others", "[cli][gc][errors]") {
  for (const char* good : {"--gogc off", "--gogc 0", "--gogc 1000000", "--gogc +50", "--gogc -1", "--memlimit off",
                           "--memlimit 0", "--memlimit 64MiB", "--memlimit 1073741824", "--memlimit 512B",
                           "--memlimit 8TiB", "--memlimit=2GiB"}) {
    INFO(good);
    const Out o = gmpsim("run " + kScenarios + "pingpong.textproto " + good);
    CHECK(o.status == 0);
  }
  const struct {
    const char* args;
    const char* says;
  } cases[] = {
      {"--gogc 1000001", "--gogc: expected off or a percentage in [0, 1000000] (GOGC), got '1000001'"},
      {"--gogc OFF", "--gogc: expected off or a percentage"},
      {"--gogc ''", "--gogc: expected off or a percentage"},
      {"--gogc 1e3", "got '1e3'"},
      {"--gogc 2147483648", "got '2147483648'"},
      {"--gogc 50,100", "run: --gogc takes one value (a list is for gmpsim sweep)"},
      {"--memlimit 64MB", "--memlimit: expected off or a size in bytes with an optional B, KiB, MiB, GiB or TiB suffix"},
      {"--memlimit -1", "got '-1'"},
      {"--memlimit 1.5GiB", "got '1.5GiB'"},
      {"--memlimit 8388608TiB", "got '8388608TiB'"},  // 2^63 bytes: past int64
      {"--memlimit 9223372036854775808", "got '9223372036854775808'"},
      {"--memlimit KiB", "got 'KiB'"},
      {"--memlimit 1GiB,2GiB", "run: --memlimit takes one value"},
      {"--gogc", "--gogc: missing value"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const Out o = gmpsim("run " + kPingPong + " " + c.args);
    CHECK(o.status == 2);
    CHECK_THAT(o.text, Catch::Contains(c.says));
  }
  Out o = gmpsim("sweep " + kPingPong + " --procs 1 --gogc 50,x");
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("--gogc: expected off or a percentage in [0, 1000000] (GOGC), got 'x'"));
  o = gmpsim("check " + kPingPong + " --procs 1 --gogc 50,100");
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("check: --gogc takes one value"));
}

TEST_CASE("gmpsim sweep varies GOGC and GOMEMLIMIT as dimensions, with columns only when given", "[cli][gc][sweep]") {
  const std::string svg = tmp("gc-sweep.svg");
  Out o = gmpsim("sweep " + kScenarios + "cpu.textproto --procs 1,2 --gogc 50,off --svg " + svg);
  CHECK(o.status == 0);
  // Each table: a GOGC column, then GOMAXPROCS, in the order given, each GOGC with every GOMAXPROCS.
  CHECK_THAT(o.text, Catch::Contains("\n          GOGC    GOMAXPROCS "));
  CHECK_THAT(o.text, Catch::Contains("\n            50             1"));
  CHECK_THAT(o.text, Catch::Contains("\n            50             2"));
  CHECK_THAT(o.text, Catch::Contains("\n           off             1"));
  CHECK_THAT(o.text, Catch::Contains("\n           off             2"));
  CHECK(o.text.find("            50             2") < o.text.find("           off             1"));
  CHECK(o.text.find("GOMEMLIMIT") == std::string::npos);
  // The bench lines: a configuration line per GOGC block, for benchstat.
  const size_t g50 = o.text.find("gogc: 50\n"), goff = o.text.find("gogc: off\n");
  REQUIRE(g50 != std::string::npos);
  REQUIRE(goff != std::string::npos);
  CHECK(g50 < goff);
  CHECK(o.text.find("BenchmarkCPU-2\t", goff) != std::string::npos);
  std::ifstream in(svg);
  const std::string chart((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_THAT(chart, Catch::Contains("cores GOGC=50<"));
  CHECK_THAT(chart, Catch::Contains("cores GOGC=off<"));
  std::remove(svg.c_str());
  o = gmpsim("sweep " + kScenarios + "cpu.textproto --procs 1 --memlimit 64MiB,off");
  CHECK(o.status == 0);
  CHECK_THAT(o.text, Catch::Contains("    GOMEMLIMIT    GOMAXPROCS"));
  CHECK_THAT(o.text, Catch::Contains("memlimit: 64MiB\n"));
  CHECK(o.text.find("GOGC") == std::string::npos);
  // Neither given: no trace of either.
  o = gmpsim("sweep " + kScenarios + "cpu.textproto --procs 1,2");
  CHECK(o.status == 0);
  CHECK(o.text.find("GOGC") == std::string::npos);
  CHECK(o.text.find("gogc") == std::string::npos);
  CHECK(o.text.find("GOMEMLIMIT") == std::string::npos);
  CHECK_THAT(o.text, Catch::Contains("\n    GOMAXPROCS "));
}

// The GC tables of a sweep: present for a program that allocates (and GOGC moves them: a lower
// GOGC collects more often), absent for one that does not.
TEST_CASE("gmpsim sweep prints GC tables for a program that allocates, and GOGC moves them", "[cli][gc][sweep]") {
  Out o = gmpsim("sweep " + kScenarios + "gc.textproto --procs 2 --gogc 50,400");
  REQUIRE(o.status == 0);
  const size_t table = o.text.find("\nGC cycles\n");
  REQUIRE(table != std::string::npos);
  CHECK_THAT(o.text, Catch::Contains("\nGC CPU (% of GOMAXPROCS x run time)\n"));
  CHECK_THAT(o.text, Catch::Contains("\nstop-the-world max (us)\n"));
  // The two rows of the cycles table: GOGC, GOMAXPROCS, cycles.
  std::istringstream rows(o.text.substr(table + std::string("\nGC cycles\n").size()));
  std::string header, gogc, procs;
  std::getline(rows, header);
  long c50 = -1, c400 = -1;
  rows >> gogc >> procs >> c50 >> gogc >> procs >> c400;
  CHECK(c50 > c400);
  CHECK(c400 > 0);
  o = gmpsim("sweep " + kScenarios + "cpu.textproto --procs 1,2");
  CHECK(o.status == 0);
  CHECK(o.text.find("GC cycles") == std::string::npos);
  CHECK(o.text.find("stop-the-world") == std::string::npos);
}

TEST_CASE("gmpsim run: an alloc whose expression is out of range panics at its field", "[cli][gc][lang]") {
  const std::string path = tmp("alloc-oob.textproto");
  write(path, "func { name: \"main\"\n"
              "  op { loop { var: \"i\" count: 2 op { alloc { bytes_expr: \"i\" } } } }\n}\n");
  Out o = gmpsim("run " + path);
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("panic: bytes_expr is 0: out of range, from 1 to 1073741824\n\tat " + path +
                                     ":2:46: bytes_expr \"i\""));
  write(path, "func { name: \"main\"\n"
              "  op { alloc { bytes: 1073741824 count_expr: \"1025\" } }\n}\n");
  o = gmpsim("run " + path);
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("panic: 1025 objects of 1073741824 bytes: more than 1099511627776 bytes in one alloc"));
  write(path, "func { name: \"main\"\n  op { alloc { bytes: 0 } }\n}\n");
  o = gmpsim("run " + path);
  CHECK(o.status == 1);
  CHECK_THAT(o.text, Catch::Contains(path + ":2:16: bytes 0 is out of range: from 1 to 1073741824"));
  std::remove(path.c_str());
}

// ---- Containers: the cgroup flags, --procs auto and --godebug (docs/scenarios.md, "Processes").

TEST_CASE("the cgroup flags take quotas periods bursts and cpusets and refuse bad ones", "[cli][cgroup][errors]") {
  for (const char* good : {"--cpu-quota 2.5", "--cpu-quota 0", "--cpu-quota 0.01", "--cpu-quota 4096 --cores 4096",
                           "--cpu-quota 1 --cpu-period 1ms", "--cpu-quota 1 --cpu-period 1s",
                           "--cpu-quota 1 --cpu-burst 100ms", "--cpuset 0-3,8", "--cpuset 0", "--procs auto",
                           "--godebug containermaxprocs=0,updatemaxprocs=0", "--godebug updatemaxprocs=1",
                           "--cpu-period=50ms --cpu-quota=0.5"}) {
    INFO(good);
    const Out o = gmpsim("run " + kPingPong + " " + good);
    CHECK(o.status == 0);
  }
  const struct {
    const char* args;
    const char* says;
  } cases[] = {
      {"--cpu-quota -1", "--cpu-quota: expected CPUs such as 2.5, 0 (no limit) or above 0 and at most 4096, got '-1'"},
      {"--cpu-quota 4097", "at most 4096, got '4097'"},
      {"--cpu-quota nan", "got 'nan'"},
      {"--cpu-quota 1e3", "got '1e3'"},
      {"--cpu-quota 1..5", "got '1..5'"},
      {"--cpu-quota .", "got '.'"},
      {"--cpu-quota 0.005", "--cpu-quota: quota 0.005 CPUs of a 100ms period is 500us per period: at least 1ms"},
      {"--cpu-quota 0.5 --cpu-period 1ms", "--cpu-quota: quota 0.5 CPUs of a 1ms period is 500us per period"},
      {"--cpu-quota 1,2", "run: --cpu-quota takes one value (a list is for gmpsim sweep)"},
      {"--cpu-period 999us", "--cpu-period: expected a duration from 1ms to 1s (cgroup v2's cpu.max), got '999us'"},
      {"--cpu-period 2s", "--cpu-period: expected a duration from 1ms to 1s"},
      {"--cpu-period x", "--cpu-period: expected a duration such as 10ms"},
      {"--cpu-burst 5ms", "--cpu-burst: needs a --cpu-quota"},
      {"--cpu-quota 0.5 --cpu-burst 60ms", "--cpu-burst: 60ms is more than the quota's 50ms per period"},
      {"--cpuset 3-1", "--cpuset: range \"3-1\" runs backwards"},
      {"--cpuset 4096", "--cpuset: \"4096\" is not a core or a range: expected cores and ranges such as \"0-3,8\", each core 0 to 4095, got '4096'"},
      {"--cpuset ''", "--cpuset: an empty cpuset has no core"},
      {"--procs automatic", "--procs: expected auto or an integer in [1, 4096], got 'automatic'"},
      {"--procs auto,2", "run: --procs takes one value"},
      {"--godebug gctrace=1", "--godebug: unknown GODEBUG setting \"gctrace\": expected containermaxprocs or updatemaxprocs"},
      {"--godebug updatemaxprocs=2", "--godebug: GODEBUG updatemaxprocs takes 0 or 1"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const Out o = gmpsim("run " + kPingPong + " " + c.args);
    CHECK(o.status == 2);
    CHECK_THAT(o.text, Catch::Contains(c.says));
  }
  Out o = gmpsim("sweep " + kPingPong + " --procs 1 --cpu-quota 1,x");
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("--cpu-quota: expected CPUs such as 2.5"));
  o = gmpsim("check " + kPingPong + " --procs 1 --cpu-quota 1,2");
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("check: --cpu-quota takes one value"));
  o = gmpsim("check " + kPingPong + " --procs 1 --cpu-period 0");
  CHECK(o.status == 2);
  CHECK_THAT(o.text, Catch::Contains("--cpu-period: expected a duration from 1ms to 1s"));
  o = gmpsim("help");
  CHECK_THAT(o.text, Catch::Contains("[--cpu-quota CPUS] [--cpu-period DUR] [--cpu-burst DUR] [--cpuset LIST]"));
}

TEST_CASE("gmpsim sweep varies the CPU quota as a dimension with a column only when given", "[cli][cgroup][sweep]") {
  Out o = gmpsim("sweep " + kScenarios + "cpu.textproto --procs 1,2 --cpu-quota 0.5,0");
  CHECK(o.status == 0);
  CHECK_THAT(o.text, Catch::Contains("\n     CPU quota    GOMAXPROCS "));
  CHECK_THAT(o.text, Catch::Contains("\n           0.5             1"));
  CHECK_THAT(o.text, Catch::Contains("\n           0.5             2"));
  CHECK_THAT(o.text, Catch::Contains("\n          none             1"));
  CHECK_THAT(o.text, Catch::Contains("cpu-quota: 0.5\n"));
  o = gmpsim("sweep " + kScenarios + "cpu.textproto --procs 1,2");
  CHECK(o.status == 0);
  CHECK(o.text.find("CPU quota") == std::string::npos);
  CHECK(o.text.find("cpu-quota") == std::string::npos);
  o = gmpsim("sweep " + kScenarios + "cpu.textproto --procs 1,auto");
  CHECK(o.status == 0);
  CHECK_THAT(o.text, Catch::Contains("\n          auto "));
}

TEST_CASE("run prints a cpu.stat line only for a process with a quota", "[cli][machine]") {
  const Out with = gmpsim("run " + kScenarios + "cpu.textproto --procs 2 --cores 2 --cpu-quota 0.5");
  CHECK(with.status == 0);
  CHECK(with.text.find("cpu.stat: nr_periods ") != std::string::npos);
  CHECK(with.text.find(" nr_throttled ") != std::string::npos);
  const Out without = gmpsim("run " + kScenarios + "cpu.textproto --procs 2 --cores 2");
  CHECK(without.status == 0);
  CHECK(without.text.find("cpu.stat") == std::string::npos);
}

TEST_CASE("run prints a section per process and refuses a cpuset past the cores", "[cli][machine]") {
  const std::string path = tmp("two_procs.textproto");
  write(path, R"(
process { name: "first" procs: 1 program { func { name: "main" op { compute { duration: "2ms" } } } } }
process { name: "second" procs: 1 cgroup { quota: 0.5 } program { func { name: "main" op { compute { duration: "3ms" } } } } }
)");
  const Out o = gmpsim("run " + path + " --cores 2");
  CHECK(o.status == 0);
  CHECK(o.text.find("machine: cores=2") != std::string::npos);
  CHECK(o.text.find("\nprocess first: GOMAXPROCS=1; cgroup no quota") != std::string::npos);
  CHECK(o.text.find("\nprocess second: GOMAXPROCS=1; cgroup quota 0.50 CPUs") != std::string::npos);
  // 3 ms within its first 100 ms period: no period has ended, none throttled.
  CHECK(o.text.find("cpu.stat: nr_periods 0 nr_throttled 0 throttled_usec 0") != std::string::npos);
  const std::string trace = tmp("cpuset.trace");
  std::remove(trace.c_str());
  const Out bad = gmpsim("run " + kScenarios + "cpu.textproto --cores 2 --cpuset 0,5 --trace " + trace);
  CHECK(bad.status == 2);
  CHECK(bad.text.find("core 5") != std::string::npos);
  CHECK_FALSE(exists(trace));
}

// Sweeps split across machines (--shard I/N -o PART, --merge): the merged output is the whole
// sweep's, byte for byte, on both streams, with its exit status and chart.

namespace {

struct Streams {
  int status = -1;
  std::string out, err;
};

// Runs gmpsim with `args`, stdout and stderr apart (stderr through a file of this test process's
// own: ctest runs test cases side by side).
Streams gmpsim_streams(const std::string& args) {
  const std::string err = tmp("streams." + std::to_string(getpid()) + ".err");
  const Out o = shell(std::string(GMPSIM) + " " + args + " 2>" + err);
  Streams s{o.status, o.text, slurp(err)};
  std::remove(err.c_str());
  return s;
}

// The sweep `args` whole with --svg, then in `shards` parts merged in reverse order with --svg
// at the same path: the same stdout, stderr, status and chart. Returns the whole sweep's streams.
Streams check_split_sweep(const std::string& args, int shards) {
  const std::string svg = tmp("split.svg");
  std::remove(svg.c_str());
  const Streams whole = gmpsim_streams("sweep " + args + " --svg " + svg);
  const std::string chart = slurp(svg);
  CHECK_FALSE(chart.empty());
  std::remove(svg.c_str());
  std::string parts;
  for (int i = shards; i >= 1; i--) {
    const std::string part = tmp("split.part" + std::to_string(i));
    const Streams s = gmpsim_streams("sweep " + args + " --shard " + std::to_string(i) + "/" + std::to_string(shards) +
                                     " -o " + part + " --jobs 2");
    CHECK(s.status == 0);
    CHECK(s.out.empty());  // the shard's one line is on stderr: its part may go to stdout
    CHECK(s.err.rfind("sweep of ", 0) == 0);
    CHECK(std::count(s.err.begin(), s.err.end(), '\n') == 1);
    CHECK(s.err.find("shard " + std::to_string(i) + " of " + std::to_string(shards) + ", ") != std::string::npos);
    parts += " " + part;
  }
  CHECK_FALSE(exists(svg));  // a shard writes no chart
  const Streams merged = gmpsim_streams("sweep --merge" + parts + " --svg " + svg);
  CHECK(merged.status == whole.status);
  CHECK(merged.out == whole.out);
  CHECK(merged.err == whole.err);
  CHECK(slurp(svg) == chart);
  std::remove(svg.c_str());
  for (int i = 1; i <= shards; i++) std::remove(tmp("split.part" + std::to_string(i)).c_str());
  return whole;
}

}  // namespace

TEST_CASE("a sweep split into shards and merged prints exactly what the whole sweep does", "[cli][sweep][shard]") {
  // Two GOMAXPROCS values, two core counts, two seeds: 8 runs in 3 shards of 3, 3 and 2.
  Streams whole = check_split_sweep(kPingPong + " --procs 1,2 --cores 2,4 --seeds 2", 3);
  CHECK(whole.status == 0);
  CHECK(whole.out.find("BenchmarkPingPong-2\t") != std::string::npos);
  // Runs that violate an assertion: their lines on stderr, exit status 4.
  whole = check_split_sweep(kScenarios + "check/readied.textproto --procs 1,3 --seeds 2", 3);
  CHECK(whole.status == 4);
  CHECK(whole.err.find("GOMAXPROCS=3 seed=2: assertion violated: ") != std::string::npos);
  // Runs stopped by a limit: their messages, exit status 2.
  whole = check_split_sweep(kPingPong + " --procs 1,2 --seeds 2 --max-time 10ms", 3);
  CHECK(whole.status == 2);
  CHECK(whole.err.find("GOMAXPROCS=2 seed=2: ") != std::string::npos);
  // GC and quota dimensions; more shards than the 8 runs, so some parts hold none.
  whole = check_split_sweep(kScenarios + "cpu.textproto --procs 1,2 --gogc 50,off --cpu-quota 0,1.5", 10);
  CHECK(whole.out.find("CPU quota") != std::string::npos);
  // Several processes: each process's tables.
  const std::string two = tmp("split_two.textproto");
  write(two, R"(
process { name: "first" procs: 1 program { func { name: "main" op { compute { duration: "2ms" } } } } }
process { name: "second" procs: 1 program { func { name: "main" op { compute { duration: "3ms" } } } } }
)");
  whole = check_split_sweep(two + " --procs 1,2 --seeds 2", 2);
  CHECK(whole.out.find("\nprocess second\n") != std::string::npos);
  std::remove(two.c_str());
}

TEST_CASE("sweep -o alone saves the whole sweep for a later merge", "[cli][sweep][shard]") {
  const std::string svg = tmp("whole.svg"), part = tmp("whole.part");
  const std::string args = "sweep " + kPingPong + " --procs 1,2 --seeds 2";
  const Streams whole = gmpsim_streams(args + " --svg " + svg);
  const std::string chart = slurp(svg);
  std::remove(svg.c_str());
  const Streams saved = gmpsim_streams(args + " -o " + part);
  CHECK(saved.status == 0);
  CHECK(saved.err.find("shard 1 of 1, 4 of 4 runs, written to " + part) != std::string::npos);
  const Streams merged = gmpsim_streams("sweep --merge " + part + " --svg " + svg);
  CHECK(merged.status == whole.status);
  CHECK(merged.out == whole.out);
  CHECK(merged.err == whole.err);
  CHECK(slurp(svg) == chart);
  std::remove(svg.c_str());
  std::remove(part.c_str());
}

TEST_CASE("merging parts of different sweeps, missing, doubled or damaged ones exits 2 and writes nothing",
          "[cli][sweep][shard][errors]") {
  const std::string args = "sweep " + kPingPong + " --procs 1,2 --seeds 2";
  auto part = [](const std::string& name) { return tmp("bad.part." + name); };
  for (const char* i : {"1", "2", "3"}) {
    REQUIRE(gmpsim(args + " --shard " + i + "/3 -o " + part(i)).status == 0);
  }
  REQUIRE(gmpsim("sweep " + kPingPong + " --procs 1,4 --seeds 2 --shard 1/3 -o " + part("other")).status == 0);
  REQUIRE(gmpsim(args + " --shard 1/2 -o " + part("half")).status == 0);
  const std::string good = slurp(part("1"));
  REQUIRE(good.size() > 3000);
  // Cut inside a line; one digit of a result changed; another version; a scenario, not a part.
  write(part("cut"), good.substr(0, 3000));
  std::string changed = good;
  const size_t digit = changed.find("\nend_time ") + 10;
  changed[digit] = changed[digit] == '9' ? '8' : '9';
  write(part("changed"), changed);
  write(part("v2"), "gmpsim-sweep-part 2" + good.substr(good.find('\n')));
  const std::string svg = tmp("bad.svg");
  std::remove(svg.c_str());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {part("1") + " " + part("2"), "shard 3 of 3 is missing (2 of 3 parts given)"},
      {part("1") + " " + part("2") + " " + part("3") + " " + part("2"),
       part("2") + " and " + part("2") + " are both shard 2 of 3"},
      {part("other") + " " + part("2") + " " + part("3"),
       part("2") + " is not a part of the same sweep as " + part("other") + ": they differ at 'flags'"},
      {part("1") + " " + part("2") + " " + part("half"),
       part("half") + " is shard 1 of 2, " + part("1") + " shard 1 of 3: the parts come from splits into different "
                                                             "numbers of shards"},
      {part("cut") + " " + part("2") + " " + part("3"),
       part("cut") + ": byte " + std::to_string(good.rfind('\n', 2999) + 1) +
           ": the part ends inside a line, with no newline (truncated?)"},
      {part("changed") + " " + part("2") + " " + part("3"),
       part("changed") + ": byte " + std::to_string(good.size() - 17) +
           ": the checksum does not match the bytes before it"},
      {part("v2") + " " + part("2") + " " + part("3"),
       part("v2") + ": byte 0: format version 2 is not known (this gmpsim reads version 1)"},
      {kPingPong + " " + part("2") + " " + part("3"), kPingPong + ": byte 0: not a gmpsim sweep part"},
      {tmp("no_such.part"), tmp("no_such.part") + ": cannot open"},
  };
  for (const auto& [parts, message] : cases) {
    INFO(parts);
    const Streams o = gmpsim_streams("sweep --merge " + parts + " --svg " + svg);
    CHECK(o.status == 2);
    CHECK(o.out.empty());
    CHECK(o.err.find("gmpsim: sweep --merge: " + message) != std::string::npos);
    CHECK_FALSE(exists(svg));
    std::remove(svg.c_str());  // so that one failure here does not fail every case after it
  }
  for (const char* name : {"1", "2", "3", "other", "half", "cut", "changed", "v2"}) std::remove(part(name).c_str());
}

TEST_CASE("sweep's split flags refuse bad usage with exit 2 before any run", "[cli][sweep][shard][errors]") {
  const std::string part = tmp("usage.part");
  std::remove(part.c_str());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {kPingPong + " --shard 1/3", "sweep: --shard needs -o PART"},
      {kPingPong + " --shard 0/3 -o " + part, "--shard: expected I/N with 1 <= I <= N"},
      {kPingPong + " --shard 4/3 -o " + part, "--shard: expected I/N with 1 <= I <= N"},
      {kPingPong + " --shard 1 -o " + part, "got '1'"},
      {kPingPong + " --shard 1/3 -o " + part + " --svg " + tmp("usage.svg"), "sweep: --svg goes with --merge"},
      {"--merge " + part + " --procs 2", "sweep --merge: takes PART files and --svg only, not '--procs'"},
      {"--merge " + part + " --shard 1/2", "sweep --merge: takes PART files and --svg only"},
      {"--merge", "sweep --merge: expected the PART files of a sweep"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    const Streams o = gmpsim_streams("sweep " + args);
    CHECK(o.status == 2);
    CHECK(o.err.find(message) != std::string::npos);
    CHECK_FALSE(exists(part));
  }
}

// replay's what-if sweep: --jobs changes nothing in the output; split into shards, its merged
// parts print the what-if exactly as the unsplit replay does after its own lines.
TEST_CASE("replay's what-if sweep runs in parallel and splits into shards as sweep does", "[cli][trace][shard]") {
  const std::string tr = tmp("shard-replay.trace"), sc = tmp("shard-replay.textproto"), svg = tmp("shard-replay.svg");
  REQUIRE(gmpsim("run " + kScenarios + "workers.textproto --procs 2 --trace " + tr).status == 0);
  const std::string args = "replay " + tr + " --procs 1,2,4 --seeds 2 --no-fit -o " + sc;
  const Streams seq = gmpsim_streams(args + " --jobs 1 --svg " + svg);
  CHECK(seq.status == 0);
  const std::string chart = slurp(svg);
  CHECK_FALSE(chart.empty());
  std::remove(svg.c_str());
  const Streams par = gmpsim_streams(args + " --jobs 3 --svg " + svg);
  CHECK(par.status == seq.status);
  CHECK(par.out == seq.out);
  CHECK(par.err == seq.err);
  CHECK(slurp(svg) == chart);
  std::remove(svg.c_str());
  for (const char* i : {"1", "2"}) {
    const Streams s = gmpsim_streams(args + " --shard " + i + "/2 --part " + tmp(std::string("replay.part") + i));
    CHECK(s.status == 0);
    CHECK(s.err.find(std::string("shard ") + i + " of 2") != std::string::npos);
  }
  CHECK_FALSE(exists(svg));
  const Streams merged = gmpsim_streams("replay --merge " + tmp("replay.part2") + " " + tmp("replay.part1") + " --svg " + svg);
  CHECK(merged.status == seq.status);
  const size_t what_if = seq.out.find("sweep of " + sc);
  REQUIRE(what_if != std::string::npos);
  CHECK(merged.out == seq.out.substr(what_if));
  CHECK(merged.err == seq.err);
  CHECK(slurp(svg) == chart);
  for (const std::string& f : {tr, sc, svg, tmp("replay.part1"), tmp("replay.part2")}) std::remove(f.c_str());
}

// A part written to stdout (a pipe to another machine) is the part alone: the shard's line goes to
// stderr, and the merge of what stdout carried prints the whole sweep.
TEST_CASE("a sweep's part written to stdout merges", "[cli][shard]") {
  const std::string args = "sweep " + kScenarios + "pingpong.textproto --procs 1,2 --seeds 2 --max-events 200000";
  const Streams whole = gmpsim_streams(args);
  const Streams piped = gmpsim_streams(args + " --shard 1/1 -o /dev/stdout");
  REQUIRE(piped.status == 0);
  const std::string part = tmp("stdout.part");
  std::ofstream(part, std::ios::binary) << piped.out;
  const Streams merged = gmpsim_streams("sweep --merge " + part);
  CHECK(merged.status == whole.status);
  CHECK(merged.out == whole.out);
  CHECK(merged.err == whole.err);
  std::remove(part.c_str());
}

// A connection's arrival file is part of a sweep's identity: shards that read different times are
// two sweeps, refused at the merge.
TEST_CASE("merge refuses shards whose arrival files differ", "[cli][shard]") {
  const std::string dir = tmp("arrivals_dir");
  std::filesystem::create_directories(dir);
  const std::string times = dir + "/times.txt", scen = dir + "/server.textproto";
  std::ofstream(scen) << "conn { name: \"c\" arrivals: \"times.txt\" }\n"
                         "func { name: \"main\" op { loop { count: 3 op { read { conn: \"c\" } }\n"
                         "  op { compute { duration: \"20us\" } } op { write { conn: \"c\" } } } } }\n";
  const std::string args = "sweep " + scen + " --procs 1,2";
  std::ofstream(times) << "100us\n200us\n300us\n";
  REQUIRE(gmpsim(args + " --shard 1/2 -o " + dir + "/p1").status == 0);
  std::ofstream(times) << "100us\n200us\n900us\n";
  REQUIRE(gmpsim(args + " --shard 2/2 -o " + dir + "/p2").status == 0);
  const Streams merged = gmpsim_streams("sweep --merge " + dir + "/p1 " + dir + "/p2");
  CHECK(merged.status == 2);
  CHECK(merged.out.empty());
  CHECK(merged.err.find("scenario_digest") != std::string::npos);
  // The same times on both shards merge.
  REQUIRE(gmpsim(args + " --shard 1/2 -o " + dir + "/p1").status == 0);
  CHECK(gmpsim("sweep --merge " + dir + "/p1 " + dir + "/p2").status == 0);
  std::filesystem::remove_all(dir);
}

// replay's -o names the derived scenario, so a shard's part is --part's; without it the command
// is refused before any trace is read (here: a trace that does not exist).
TEST_CASE("replay --shard without --part is refused before the traces are read", "[cli][shard]") {
  const Streams s = gmpsim_streams("replay " + tmp("no-such.trace") + " --procs 1,2 --shard 1/2");
  CHECK(s.status == 2);
  CHECK(s.err.find("--shard needs --part") != std::string::npos);
  CHECK(s.err.find("no-such") == std::string::npos);
}

