// Importing real Go execution traces (traces/import): traces that a small Go program writes
// during the test with each installed Go toolchain, compared with what `go tool trace` reads in
// them; the schema trace that comes out, checked as G and P timelines; bad input of every kind
// refused with a byte offset and no output file.
#include "tests/temp_dir.h"
#include "traces/import/go_import.h"

#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "traces/derive_scenario.h"
#include "traces/import/go_text_trace.h"
#include "traces/import/go_header.h"
#include "traces/import/go_trace_v1.h"
#include "traces/import/go_trace_v2.h"
#include "traces/trace_reader.h"
#include "traces/timeline.h"
#include "traces/validate.h"

namespace fs = std::filesystem;
using namespace gmp::trace;
using namespace gmp::trace::go;

namespace {

struct Shell {
  int status = -1;
  std::string out;  // stdout and stderr together
};

Shell shell(const std::string& cmd) {
  Shell s;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) s.out.append(buf, n);
  const int st = pclose(p);
  s.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return s;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

const std::string kData = std::string(GMP_SOURCE_DIR) + "/tests/traces/data/";

std::string go_tool(const std::string& version) { return "/usr/lib/go-" + version + "/bin/go"; }

// Builds tests/traces/goprog with Go `version` ("1.19", "1.23") and runs it: the path of the
// trace it wrote, or "" (after a printed reason) when that Go is not installed. Nothing is
// downloaded: the module has no dependencies, GOPROXY is off and the caches live in the build
// directory.
std::string make_go_trace(const std::string& version) {
  const std::string go = go_tool(version);
  if (!fs::exists(go)) {
    WARN("skipped: " + go + " is not installed");
    return "";
  }
  const std::string dir = std::string(GMP_BINARY_DIR) + "/go_import_test/" + version;
  fs::create_directories(dir);
  const std::string env = "GOFLAGS=-mod=mod GOCACHE=" + dir + "/gocache GOPATH=" + dir +
                          "/gopath GOPROXY=off GOTOOLCHAIN=local GO111MODULE=on ";
  const Shell build = shell("cd " + std::string(GMP_SOURCE_DIR) + "/tests/traces/goprog && " + env + go + " build -o " +
                            dir + "/goprog .");
  INFO(build.out);
  REQUIRE(build.status == 0);
  const std::string trace = dir + "/goprog.trace";
  fs::remove(trace);
  const Shell run = shell(dir + "/goprog " + trace);
  INFO(run.out);
  REQUIRE(run.status == 0);
  return trace;
}

// Reads a whole trace with the reader the header picks: Go's event counts by type name.
std::map<std::string, uint64_t> our_counts(const std::string& path, const std::string& data) {
  std::unique_ptr<GoTraceReader> r = open_go_reader(path, data, FormatChoice::kAuto);
  std::map<std::string, uint64_t> counts;
  GoEvent ev;
  while (r->next(ev)) {
    if (!ev.synthetic) counts[std::string(r->type_name(ev.type))]++;
  }
  return counts;
}
std::map<std::string, uint64_t> our_counts(const std::string& path) { return our_counts(path, slurp(path)); }

// The events of each type that `go tool trace` prints for a second-format trace (-d=2: the
// events of the file, batch by batch), those of the event batches only.
std::map<std::string, uint64_t> go_counts_v2(const std::string& version, const std::string& path) {
  const Shell s = shell(go_tool(version) + " tool trace -d=2 " + path);
  REQUIRE(s.status == 0);
  std::map<std::string, uint64_t> counts;
  std::istringstream in(s.out);
  std::string line;
  static const std::vector<std::string> kNotInBatches = {
      "EventBatch", "Stacks",    "Stack", "Strings",       "String",          "CPUSamples",
      "CPUSample",  "Frequency", "Sync",  "ClockSnapshot", "EndOfGeneration", "ExperimentalBatch"};
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '\t' || line[0] == ' ') continue;
    const std::string name = line.substr(0, line.find(' '));
    if (std::find(kNotInBatches.begin(), kNotInBatches.end(), name) != kNotInBatches.end()) continue;
    if (name.find('=') != std::string::npos) continue;
    counts[name]++;
  }
  return counts;
}

// The schema trace checked by the project's validator (traces/validate.h: G, M and P state
// machines, as `gmpsim trace validate` runs them), with its events counted by kind.
struct Timelines {
  std::vector<std::string> problems;
  std::map<Kind, uint64_t> kinds;
  Header header;
  uint64_t events = 0;
};

Timelines check_timelines(const std::string& path) {
  Timelines t;
  TraceReader r(path);
  t.header = r.header();
  Validator::Options opt;
  opt.from_start = t.header.clock() != CLOCK_REAL;
  Validator v(opt);
  Event e;
  while (r.next(e)) {
    t.events++;
    t.kinds[e.kind()]++;
    v.on_event(e);
  }
  for (const ValidationIssue& i : v.issues()) {
    t.problems.push_back("event " + std::to_string(i.index) + " at " + std::to_string(i.ts) + " ns: " + i.what);
  }
  if (v.issue_count() > v.issues().size()) {
    t.problems.push_back("... and " + std::to_string(v.issue_count() - v.issues().size()) + " more");
  }
  return t;
}

// Imports `in` into a file of `dir`; checks the result as timelines.
Timelines import_and_check(const std::string& in, const TempDir& dir, ImportResult* result = nullptr) {
  const std::string out = dir.file("out.trace");
  ImportResult r = import_go_trace(in, out, FormatChoice::kAuto);
  if (result != nullptr) *result = r;
  Timelines t = check_timelines(out);
  CHECK(t.events == r.events_written);
  return t;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += x + "\n";
  return s;
}

std::string counts_text(const std::map<std::string, uint64_t>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += k + "=" + std::to_string(v) + " ";
  return s;
}

// Every byte string `bad` must be refused with a TraceFormatError whose offset lies in the
// input; a good prefix (which a cut at a batch boundary can be) may import, and then its events
// must serialize as the schema wants (UTF-8 strings). In memory, for speed; returns whether it
// was refused.
bool refused_cleanly(const std::string& bytes) {
  try {
    std::string buf;
    convert_go_trace(
        "bad", bytes, FormatChoice::kAuto, [](const Header&) {},
        [&](const Event& e) {
          buf.clear();
          REQUIRE(e.SerializeToString(&buf));
          Event back;
          REQUIRE(back.ParseFromString(buf));
        });
  } catch (const TraceFormatError& e) {
    CHECK(e.offset() <= bytes.size());
    CHECK(!e.problem().empty());
    return true;
  }
  return false;
}

// The same through files: the output file must not appear.
bool refused_cleanly(const std::string& bytes, const TempDir& dir) {
  const std::string in = dir.file("bad.in"), out = dir.file("bad.out");
  spit(in, bytes);
  try {
    import_go_trace(in, out, FormatChoice::kAuto);
  } catch (const TraceFormatError& e) {
    CHECK(e.offset() <= bytes.size());
    CHECK(!fs::exists(out));
    return true;
  }
  CHECK_NOTHROW(check_timelines(out));
  fs::remove(out);
  return false;
}

// Deterministic pseudo-random numbers for the corruption tests.
struct Lcg {
  uint64_t s;
  uint64_t next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return s >> 33;
  }
};

// The good trace cut at every byte (most cuts must be refused: only one at a batch boundary can
// read as a shorter trace), every 97th cut also through the file importer, 3,000 copies with 1-4
// bytes flipped after the 16-byte header, and 2,000 random tails behind the header alone: each is
// imported or refused cleanly (refused_cleanly checks it).
void refuse_bad_inputs(const std::string& good, const std::string& header, uint64_t seed, const TempDir& dir) {
  size_t refused = 0;
  for (size_t n = 0; n < good.size(); n++) refused += refused_cleanly(good.substr(0, n));
  CHECK(refused > good.size() * 9 / 10);
  for (size_t n = 0; n < good.size(); n += 97) refused_cleanly(good.substr(0, n), dir);
  Lcg rng{seed};
  for (int i = 0; i < 3000; i++) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(rng.next() % 4);
    for (int f = 0; f < flips; f++) bad[16 + rng.next() % (bad.size() - 16)] = static_cast<char>(rng.next());
    refused_cleanly(bad);
  }
  for (int i = 0; i < 2000; i++) {
    std::string bad = header;
    const size_t n = rng.next() % 200;
    for (size_t k = 0; k < n; k++) bad += static_cast<char>(rng.next());
    refused_cleanly(bad);
  }
}

}  // namespace

TEST_CASE("go import: a Go 1.23 program's trace reads as go tool trace reads it", "[go-import][v2]") {
  const std::string trace = make_go_trace("1.23");
  if (trace.empty()) {
    SUCCEED("Go 1.23 not installed");
    return;
  }
  const auto ours = our_counts(trace);
  const auto gos = go_counts_v2("1.23", trace);
  INFO("ours: " << counts_text(ours));
  INFO("go tool trace -d=2: " << counts_text(gos));
  CHECK(ours == gos);
  CHECK(ours.at("GoStart") > 20);
  CHECK(ours.at("GoSyscallBegin") > 0);

  TempDir dir("gmp_go_import_test");
  ImportResult r;
  const Timelines t = import_and_check(trace, dir, &r);
  INFO(join(t.problems));
  CHECK(t.problems.empty());
  CHECK(t.header.producer() == "go trace import");
  CHECK(t.header.clock() == CLOCK_REAL);
  CHECK(t.header.num_ps() == 4);
  REQUIRE(t.header.metadata_size() >= 1);
  CHECK(t.header.metadata(0).key() == "go_version");
  CHECK(t.header.metadata(0).value() == "1.23");
  // One schema event per Go transition of these kinds.
  auto kind = [&](Kind k) { return t.kinds.count(k) != 0 ? t.kinds.at(k) : 0; };
  auto go = [&](const char* n) { return ours.count(n) != 0 ? ours.at(n) : 0; };
  CHECK(kind(KIND_GO_UNPARK) == go("GoUnblock"));
  CHECK(kind(KIND_GO_STOP) == go("GoStop"));
  CHECK(kind(KIND_GO_EXIT) == go("GoDestroy") + go("GoDestroySyscall"));
  CHECK(kind(KIND_GO_SYSCALL_EXIT) == go("GoSyscallEnd") + go("GoSyscallEndBlocked"));
  CHECK(kind(KIND_GO_CREATE) == go("GoCreate") + go("GoCreateSyscall"));
  CHECK(kind(KIND_P_RELEASE) <= go("ProcStop") + go("ProcSteal"));
  CHECK(kind(KIND_P_RELEASE) >= go("ProcStop"));
}

// One run in about a hundred of tests/traces/goprog under load begins its trace with a G that is
// runnable inside a mark assist (GoStatus runnable, then GCMarkAssistActive, then its GoStart):
// that run's trace, kept.
TEST_CASE("go import: a G restated in a mark assist while runnable starts as Go says", "[go-import][v2]") {
  TempDir dir("gmp_go_import_test");
  const Timelines t = import_and_check(kData + "goprog-1.23-assist-runnable.trace", dir);
  INFO(join(t.problems));
  CHECK(t.problems.empty());
  CHECK(t.kinds.at(KIND_GC_MARK_ASSIST_BEGIN) >= 1);
}

TEST_CASE("go import: the shipped Go 1.23 trace imports the same every time", "[go-import][v2]") {
  TempDir dir("gmp_go_import_test");
  const std::string a = dir.file("a.trace"), b = dir.file("b.trace");
  const ImportResult ra = import_go_trace(kData + "goprog-1.23.trace", a, FormatChoice::kAuto);
  import_go_trace(kData + "goprog-1.23.trace", b, FormatChoice::kV2);
  CHECK(ra.go_version == "1.23");
  CHECK(ra.events_written > 100);
  CHECK(slurp(a) == slurp(b));
  Timelines t = check_timelines(a);
  INFO(join(t.problems));
  CHECK(t.problems.empty());
  CHECK(t.kinds[KIND_STEAL] > 0);
  CHECK(t.kinds[KIND_GO_SYSCALL_ENTER] > 0);
  CHECK_THROWS_AS(import_go_trace(kData + "goprog-1.23.trace", a, FormatChoice::kV1), TraceFormatError);
}

TEST_CASE("go import: cut, corrupted and random second-format traces are refused with an offset", "[go-import][v2]") {
  TempDir dir("gmp_go_import_test");
  refuse_bad_inputs(slurp(kData + "goprog-1.23.trace"), std::string("go 1.23 trace\0\0\0", 16), 12345, dir);
}

TEST_CASE("go import: headers name the version they refuse", "[go-import]") {
  TempDir dir("gmp_go_import_test");
  const std::string in = dir.file("h.trace"), out = dir.file("h.out");
  auto error_for = [&](const std::string& bytes) -> std::string {
    spit(in, bytes);
    try {
      import_go_trace(in, out, FormatChoice::kAuto);
    } catch (const TraceFormatError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(error_for(std::string("go 1.24 trace\0\0\0", 16)).find("go 1.24") != std::string::npos);
  CHECK(error_for(std::string("go 1.27 trace\0\0\0", 16)).find("go 1.27") != std::string::npos);
  CHECK(error_for(std::string("go 1.5 trace\0\0\0\0", 16)).find("go 1.5") != std::string::npos);
  CHECK(error_for("gmptrace").find("not a Go execution trace") != std::string::npos);
  CHECK(error_for("").find("not a Go execution trace") != std::string::npos);
  CHECK(error_for(std::string("go 1.23 trace\0\0\1", 16)).find("NUL") != std::string::npos);
  CHECK(!fs::exists(out));
  // A header alone is an empty trace.
  CHECK(error_for(std::string("go 1.23 trace\0\0\0", 16)).empty());
  CHECK(check_timelines(out).events == 0);
}

namespace {

// The collector as Go 1.23's `go tool trace -d=1` reads a trace of either format: its ranges (GC
// cycles, world stops by reason, mark assists, sweeps) begun and ended, its heap metrics' values
// (sorted: sort_values), and the GC mark workers' start labels. A range Go restates as active
// begins only in the first generation (before the second Sync).
struct GcView {
  std::map<std::string, uint64_t> begun, ended;  // by range name
  std::vector<int64_t> heap_alloc, heap_goal;
  std::map<std::string, uint64_t> worker_labels;
  std::vector<std::string> stws;  // the world stops' reasons, in order
  bool operator==(const GcView&) const = default;
};

// The value of `key="..."` in a line, or of `key=` up to the next space.
std::string field(const std::string& line, const std::string& key) {
  size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return "";
  at += key.size() + 2;
  if (line[at] == '"') return line.substr(at + 1, line.find('"', at + 1) - at - 1);
  return line.substr(at, line.find(' ', at) - at);
}

// Between events of two Ms at the same time Go's order is its map's (batches by M) and its
// unstable sort's: `go tool trace -d=1` prints such metrics in another order from run to run. The
// values are compared as sets of values.
void sort_values(GcView& v) {
  std::sort(v.heap_alloc.begin(), v.heap_alloc.end());
  std::sort(v.heap_goal.begin(), v.heap_goal.end());
}

std::optional<GcView> go_gc_view(const std::string& path) {
  const Shell s = shell(go_tool("1.23") + " tool trace -d=1 " + path);
  if (s.status != 0) return std::nullopt;
  GcView v;
  std::istringstream in(s.out);
  std::string line;
  int syncs = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string m, p, g, what;
    words >> m >> p >> g >> what;
    if (what == "Sync") syncs++;
    if (what == "RangeBegin" || (what == "RangeActive" && syncs <= 1)) {
      const std::string name = field(line, "Name");
      v.begun[name]++;
      if (name.rfind("stop-the-world", 0) == 0) v.stws.push_back(name);
    }
    if (what == "RangeEnd") v.ended[field(line, "Name")]++;
    if (what == "Label") v.worker_labels[field(line, "Label")]++;
    if (what == "Metric") {
      const std::string value = field(line, "Value");  // Uint64(4194304)
      const int64_t n = std::stoll(value.substr(value.find('(') + 1));
      if (field(line, "Name") == "/memory/classes/heap/objects:bytes") v.heap_alloc.push_back(n);
      if (field(line, "Name") == "/gc/heap/goal:bytes") v.heap_goal.push_back(n);
    }
  }
  sort_values(v);
  return v;
}

std::string describe(const GcView& v) {
  std::string s = "begun ";
  for (const auto& [k, n] : v.begun) s += k + "=" + std::to_string(n) + " ";
  s += "ended ";
  for (const auto& [k, n] : v.ended) s += k + "=" + std::to_string(n) + " ";
  s += "workers ";
  for (const auto& [k, n] : v.worker_labels) s += k + "=" + std::to_string(n) + " ";
  s += "heap " + std::to_string(v.heap_alloc.size()) + " goal " + std::to_string(v.heap_goal.size()) + " stws " +
       std::to_string(v.stws.size()) + " heap values";
  for (size_t i = 0; i < v.heap_alloc.size() && i < 12; i++) s += " " + std::to_string(v.heap_alloc[i]);
  s += " goal values";
  for (size_t i = 0; i < v.heap_goal.size() && i < 4; i++) s += " " + std::to_string(v.heap_goal[i]);
  return s;
}

// The same read from an imported schema trace.
GcView schema_gc_view(const std::string& path) {
  GcView v;
  TraceReader r(path);
  Event e;
  auto stw = [](const Event& e) {
    const std::string reason = e.stw_reason() == STW_REASON_OTHER
                                   ? e.label()
                                   : std::string(kGoStwReasons[std::max(1, static_cast<int>(e.stw_reason())) - 1]);
    return "stop-the-world (" + reason + ")";
  };
  while (r.next(e)) {
    switch (e.kind()) {
      case KIND_GC_BEGIN: v.begun["GC concurrent mark phase"]++; break;
      case KIND_GC_END: v.ended["GC concurrent mark phase"]++; break;
      case KIND_STW_BEGIN:
        v.begun[stw(e)]++;
        v.stws.push_back(stw(e));
        break;
      case KIND_STW_END: v.ended[stw(e)]++; break;
      case KIND_GC_MARK_ASSIST_BEGIN: v.begun["GC mark assist"]++; break;
      case KIND_GC_MARK_ASSIST_END: v.ended["GC mark assist"]++; break;
      case KIND_GC_SWEEP_BEGIN: v.begun["GC incremental sweep"]++; break;
      case KIND_GC_SWEEP_END: v.ended["GC incremental sweep"]++; break;
      case KIND_HEAP_ALLOC: v.heap_alloc.push_back(e.value()); break;
      case KIND_HEAP_GOAL: v.heap_goal.push_back(e.value()); break;
      case KIND_GO_START:
        if (e.gc_worker_mode() == GC_WORKER_MODE_DEDICATED) v.worker_labels["GC (dedicated)"]++;
        if (e.gc_worker_mode() == GC_WORKER_MODE_FRACTIONAL) v.worker_labels["GC (fractional)"]++;
        if (e.gc_worker_mode() == GC_WORKER_MODE_IDLE) v.worker_labels["GC (idle)"]++;
        break;
      default: break;
    }
  }
  sort_values(v);
  return v;
}

const std::string kGcTrees = std::string(GMP_SOURCE_DIR) + "/tests/data/gctrees/";

}  // namespace

namespace {

// Go's text-format test traces: Go 1.23's (its source package) and the ones shipped here.
std::vector<std::string> text_tests() {
  std::vector<std::string> files;
  const std::string go_dir = "/usr/lib/go-1.23/src/internal/trace/testdata/tests";
  if (fs::is_directory(go_dir)) {
    for (const auto& e : fs::directory_iterator(go_dir)) {
      if (e.path().extension() == ".test") files.push_back(e.path().string());
    }
  } else {
    WARN("skipped Go's own test traces: " + go_dir + " is not installed (package golang-1.23-src)");
  }
  for (const auto& e : fs::directory_iterator(kData + "go-tests")) {
    if (e.path().extension() == ".test") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Whether an error matches a test's FAILURE pattern, a regular expression that Go matches anywhere
// in the error. Go's patterns are literal text, perhaps between ".*"s; std::regex is not used (GCC
// 12's <regex> does not build warning-free under ASan). A pattern with other metacharacters
// fails the test, so that it is noticed.
bool failure_matches(const std::string& error, std::string pattern) {
  while (pattern.rfind(".*", 0) == 0) pattern.erase(0, 2);
  while (pattern.size() >= 2 && pattern.compare(pattern.size() - 2, 2, ".*") == 0) pattern.resize(pattern.size() - 2);
  if (pattern.find_first_of(".*+?()[]{}|^$\\") != std::string::npos) {
    FAIL("a FAILURE pattern this test cannot match: " << pattern);
  }
  return error.find(pattern) != std::string::npos;
}

}  // namespace

TEST_CASE("go import: Go's text-format test traces give Go's outcome and go tool trace's counts", "[go-import][v2]") {
  TempDir dir("gmp_go_import_test");
  const bool have_go = fs::exists(go_tool("1.23"));
  if (!have_go) WARN("not comparing with go tool trace: " + go_tool("1.23") + " is not installed");
  int tested = 0, failures = 0;
  for (const std::string& file : text_tests()) {
    INFO(file);
    const TextTrace t = parse_text_trace(slurp(file));
    const std::string bin = dir.file(fs::path(file).stem().string() + ".trace");
    spit(bin, t.binary);
    std::string error;
    std::map<std::string, uint64_t> ours;
    try {
      ours = our_counts(bin);
    } catch (const TraceFormatError& e) {
      error = e.what();
    }
    tested++;
    if (t.expect_failure) {
      failures++;
      INFO("expected an error matching " << t.error_pattern);
      CHECK(failure_matches(error, t.error_pattern));
      CHECK_THROWS_AS(import_go_trace(bin, dir.file("fail.trace"), FormatChoice::kAuto), TraceFormatError);
      CHECK(!fs::exists(dir.file("fail.trace")));
      continue;
    }
    CHECK(error.empty());
    if (!error.empty()) continue;
    const Timelines tl = import_and_check(bin, dir);
    INFO(join(tl.problems));
    CHECK(tl.problems.empty());
    const GoHeader h = parse_go_header(bin, t.binary);
    if (have_go && h.minor <= 23) {
      CHECK(ours == go_counts_v2("1.23", bin));
      // Go 1.23 cannot read go123-sync (see the states test below).
      if (const std::optional<GcView> gos = go_gc_view(bin)) {
        const GcView ours_gc = schema_gc_view(dir.file("out.trace"));  // the file import_and_check wrote
        INFO("ours: " << describe(ours_gc) << "\ngo:   " << describe(*gos));
        CHECK(ours_gc.begun == gos->begun);
        CHECK(ours_gc.ended == gos->ended);
        CHECK(ours_gc.worker_labels == gos->worker_labels);
        CHECK(ours_gc.stws == gos->stws);
        CHECK(ours_gc.heap_goal == gos->heap_goal);
        CHECK(ours_gc.heap_alloc == gos->heap_alloc);  // sorted: see go_gc_view
      }
    }
  }
  CHECK(tested >= 5);
  CHECK(failures >= 3);
}

TEST_CASE("go import: an event type newer than the trace's version is refused", "[go-import][v2]") {
  TextTrace t = parse_text_trace(slurp(kData + "go-tests/go123-go-switch.test"));
  t.binary[6] = '2';  // "go 1.22 trace": GoCreateBlocked is a Go 1.23 event
  std::string error;
  try {
    our_counts("go122", t.binary);
  } catch (const TraceFormatError& e) {
    error = e.what();
  }
  INFO(error);
  CHECK(error.find("invalid event type 47 for go 1.22") != std::string::npos);
}

namespace {

// One Go event: its time, its byte offset in the file and its type's name.
struct Seen {
  int64_t ts;
  uint64_t off;
  std::string name;
  bool operator==(const Seen&) const = default;
  bool operator<(const Seen& o) const { return std::tie(ts, off, name) < std::tie(o.ts, o.off, o.name); }
};

// The events in order; those with equal times sorted by offset (Go's order between them is
// unspecified).
void sort_ties(std::vector<Seen>& v) {
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j < v.size() && v[j].ts == v[i].ts) j++;
    std::sort(v.begin() + static_cast<ptrdiff_t>(i), v.begin() + static_cast<ptrdiff_t>(j));
    i = j;
  }
}

std::vector<Seen> our_events(const std::string& path) {
  const std::string data = slurp(path);
  std::unique_ptr<GoTraceReader> r = open_go_reader(path, data, FormatChoice::kAuto);
  std::vector<Seen> v;
  GoEvent ev;
  while (r->next(ev)) {
    if (!ev.synthetic) v.push_back({ev.ts, ev.offset, std::string(r->type_name(ev.type))});
  }
  sort_ties(v);
  return v;
}

// What Go 1.19's `go tool trace -d` prints for a first-format trace: one parsed event a line,
// "TIME NAME p=P g=G off=OFFSET ...".
std::vector<Seen> go_events_v1(const std::string& path) {
  const Shell s = shell(go_tool("1.19") + " tool trace -d " + path);
  INFO(s.out.substr(0, 2000));
  REQUIRE(s.status == 0);
  std::vector<Seen> v;
  std::istringstream in(s.out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    Seen e{};
    std::string p, g, off;
    if (!(l >> e.ts >> e.name >> p >> g >> off) || off.rfind("off=", 0) != 0) continue;
    e.off = std::stoull(off.substr(4));
    v.push_back(e);
  }
  sort_ties(v);
  return v;
}

std::map<std::string, uint64_t> count_names(const std::vector<Seen>& v) {
  std::map<std::string, uint64_t> m;
  for (const Seen& e : v) m[e.name]++;
  return m;
}

// Go's first-format test traces: Go 1.19's and, with 1.21 ones, Go 1.23's.
std::vector<std::string> v1_test_files() {
  std::vector<std::string> files;
  for (const std::string dir : {"/usr/lib/go-1.19/src/internal/trace/testdata",
                                "/usr/lib/go-1.23/src/internal/trace/internal/oldtrace/testdata"}) {
    if (!fs::is_directory(dir)) {
      WARN("skipped Go's test traces in " + dir + ": not installed (packages golang-1.19-src, golang-1.23-src)");
      continue;
    }
    for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("go import: a Go 1.19 program's trace reads as go tool trace reads it", "[go-import][v1]") {
  const std::string trace = make_go_trace("1.19");
  if (trace.empty()) {
    SUCCEED("Go 1.19 not installed");
    return;
  }
  const std::vector<Seen> ours = our_events(trace);
  const std::vector<Seen> gos = go_events_v1(trace);
  INFO("ours: " << counts_text(count_names(ours)));
  INFO("go tool trace -d: " << counts_text(count_names(gos)));
  CHECK(count_names(ours) == count_names(gos));
  CHECK(ours == gos);  // the same events, in the same order, at the same times
  CHECK(count_names(ours)["GoStart"] > 20);
  TempDir dir("gmp_go_import_test");
  const Timelines t = import_and_check(trace, dir);
  INFO(join(t.problems));
  CHECK(t.problems.empty());
  CHECK(t.header.num_ps() == 4);
  CHECK(t.header.metadata(0).value() == "1.19");
}

TEST_CASE("go import: Go's first-format test traces read as Go 1.19 reads them, older versions are refused",
          "[go-import][v1]") {
  TempDir dir("gmp_go_import_test");
  const bool have_go = fs::exists(go_tool("1.19"));
  int imported = 0, refused = 0;
  for (const std::string& file : v1_test_files()) {
    INFO(file);
    const std::string data = slurp(file);
    const GoHeader h = [&] {
      try {
        return parse_go_header(file, data);
      } catch (const TraceFormatError& e) {
        // Go 1.5 to 1.10: the error names the version.
        const std::string name = fs::path(file).filename().string();
        const std::string minor = name.substr(name.find("_1_") + 3, name.rfind('_') - name.find("_1_") - 3);
        CHECK(std::string(e.what()).find("go 1." + minor) != std::string::npos);
        refused++;
        return GoHeader{};
      }
    }();
    if (h.minor == 0) continue;
    const Timelines t = import_and_check(file, dir);
    INFO(join(t.problems));
    CHECK(t.problems.empty());
    imported++;
    if (have_go && h.minor <= 19) CHECK(our_events(file) == go_events_v1(file));
  }
  if (imported == 0 && refused == 0) {
    SUCCEED("no Go test traces installed");
    return;
  }
  CHECK(imported >= 5);
  CHECK(refused >= 5);
}

TEST_CASE("go import: cut, corrupted and random first-format traces are refused with an offset", "[go-import][v1]") {
  TempDir dir("gmp_go_import_test");
  refuse_bad_inputs(slurp(kData + "goprog-1.19.trace"), std::string("go 1.19 trace\0\0\0", 16), 54321, dir);
}

namespace {

// The states each G and each P goes through, in order: from `go tool trace -d=1` (Go's own
// reading of a second-format trace, one StateTransition a line) or from a schema trace. A state
// restated without change is not a step; Go's other transitions are spelled as the importer
// spells them (a G that existed before the trace shows first when it runs, a G created in a
// syscall is created, started and enters it...).
using Steps = std::map<std::string, std::vector<std::string>>;  // "G 5", "P 0" -> states

std::optional<Steps> go_steps(const std::string& path) {
  const Shell s = shell(go_tool("1.23") + " tool trace -d=1 " + path);
  if (s.status != 0) return std::nullopt;
  Steps steps;
  std::set<std::string> resumed;  // Gs that left a syscall with a P: their next start is not a step
  std::istringstream in(s.out);
  std::string line;
  while (std::getline(in, line)) {
    // "M=1 P=0 G=-1 StateTransition Time=16 Resource=Proc(0) Reason="" ProcID=0 Undetermined->Running"
    if (line.find(" StateTransition ") == std::string::npos) continue;
    const size_t res = line.find(" Resource=");
    const size_t open = line.find('(', res), close = line.find(')', res);
    const size_t arrow = line.rfind("->"), space = line.rfind(' ', arrow);
    if (res == std::string::npos || close == std::string::npos || arrow == std::string::npos) continue;
    const std::string kind = line.substr(res + 10, open - res - 10), id = line.substr(open + 1, close - open - 1);
    const std::string from = line.substr(space + 1, arrow - space - 1), to = line.substr(arrow + 2);
    if (from == to) continue;
    if (kind == "Proc") {
      if ((from == "Undetermined" || from == "NotExist") && to == "Idle") continue;
      steps["P " + id].push_back(to);
      continue;
    }
    const std::string g = "G " + id;
    if (from == "Undetermined") {  // a G that existed before the trace shows only when it runs
      if (to == "Running" || to == "Syscall") steps[g].push_back(to);
      continue;
    }
    if (from == "NotExist") {  // created blocked: it shows when it is unblocked
      if (to == "Runnable") steps[g].push_back("Runnable");
      if (to == "Syscall") steps[g].insert(steps[g].end(), {"Runnable", "Running", "Syscall"});
      continue;
    }
    std::vector<std::string>& v = steps[g];
    if (resumed.erase(g) != 0 && from == "Runnable" && to == "Running") continue;
    if (from == "Syscall" && to == "NotExist") v.push_back("Running");  // it leaves the syscall first
    v.push_back(to);
    if (from == "Syscall" && to == "Runnable" && line.find(" P=-1 ") == std::string::npos) {
      // It left with a P (one it got back or an idle one): the importer's syscall exit has it
      // run on, and the start Go writes next is part of it.
      v.push_back("Running");
      resumed.insert(g);
    }
  }
  return steps;
}

Steps schema_steps(const std::string& path) {
  Steps steps;
  TraceReader r(path);
  Event e;
  while (r.next(e)) {
    const std::string g = "G " + std::to_string(e.g());
    switch (e.kind()) {
      case KIND_GO_CREATE:
      case KIND_GO_STOP:
      case KIND_GO_UNPARK: steps[g].push_back("Runnable"); break;
      case KIND_GO_START: steps[g].push_back("Running"); break;
      case KIND_GO_PARK: steps[g].push_back("Waiting"); break;
      case KIND_GO_EXIT: steps[g].push_back("NotExist"); break;
      case KIND_GO_SYSCALL_ENTER: steps[g].push_back("Syscall"); break;
      case KIND_GO_SYSCALL_EXIT:
        // NO_P: runnable; IDLE_P: runnable, then running (Go writes a start); else it runs on.
        if (e.reason() != REASON_EXITSYSCALL_FAST && e.reason() != REASON_UNSPECIFIED) {
          steps[g].push_back("Runnable");
        }
        if (e.reason() != REASON_EXITSYSCALL_NO_P) steps[g].push_back("Running");
        break;
      case KIND_P_ACQUIRE: steps["P " + std::to_string(e.p())].push_back("Running"); break;
      case KIND_P_RELEASE: steps["P " + std::to_string(e.p())].push_back("Idle"); break;
      default: break;
    }
  }
  return steps;
}

std::string steps_diff(const Steps& a, const Steps& b) {
  std::string out;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it != b.end() && it->second == v) continue;
    out += k + ": ours";
    for (const auto& s : v) out += " " + s;
    out += "\n" + std::string(k.size(), ' ') + "  go  ";
    if (it != b.end()) {
      for (const auto& s : it->second) out += " " + s;
    }
    out += "\n";
  }
  for (const auto& [k, v] : b) {
    if (a.count(k) == 0) out += k + ": only in go\n";
  }
  return out;
}

}  // namespace

TEST_CASE("go import: every G and P goes through the states go tool trace -d=1 shows", "[go-import][v2]") {
  if (!fs::exists(go_tool("1.23"))) {
    WARN("skipped: " + go_tool("1.23") + " is not installed");
    SUCCEED("Go 1.23 not installed");
    return;
  }
  TempDir dir("gmp_go_import_test");
  // Second format, and the first, which Go 1.23 reads by converting it to the second's events.
  std::vector<std::string> inputs = {kData + "goprog-1.23.trace", kData + "goprog-1.19.trace",
                                     std::string(GMP_SOURCE_DIR) + "/tests/data/gctrees/gctrees-1.23.trace",
                                     std::string(GMP_SOURCE_DIR) + "/tests/data/gctrees/gctrees-1.19.trace"};
  for (const std::string& file : v1_test_files()) {
    const std::string data = slurp(file);
    const int minor = data.size() >= 16 && data.compare(0, 5, "go 1.") == 0 ? std::atoi(data.c_str() + 5) : 0;
    if (minor >= 11) inputs.push_back(file);
  }
  for (const std::string& file : text_tests()) {
    const TextTrace t = parse_text_trace(slurp(file));
    if (t.expect_failure || parse_go_header(file, t.binary).minor > 23) continue;
    inputs.push_back(dir.file(fs::path(file).stem().string() + ".trace"));
    spit(inputs.back(), t.binary);
  }
  for (const std::string& in : inputs) {
    INFO(in);
    const std::string out = dir.file("steps.out");
    import_go_trace(in, out, FormatChoice::kAuto);
    Steps ours = schema_steps(out);
    std::optional<Steps> gos = go_steps(in);
    if (!gos) {
      // Go 1.23's reader stops at a generation without event batches ("frontier is empty");
      // later Go reads it, and Go 1.27 ships go123-sync.test to check that.
      CHECK(in.find("go123-sync") != std::string::npos);
      continue;
    }
    if (parse_go_header(in, slurp(in)).format == GoFormat::kV1) {
      // The first format does not name the M that a P goes to after a blocked system call; the
      // importer spells out that move (a release and an acquire) where Go's reader has none.
      for (Steps* st : {&ours, &*gos}) {
        for (auto it = st->begin(); it != st->end();) it = it->first[0] == 'P' ? st->erase(it) : std::next(it);
      }
    }
    INFO(steps_diff(ours, *gos));
    CHECK(ours == *gos);
  }
  CHECK(inputs.size() > 10);
}


TEST_CASE("go import: GC cycles, world stops, assists, sweeps, heap counters and mark workers come through as "
          "go tool trace -d=1 reads them",
          "[go-import][gc]") {
  TempDir dir("gmp_go_import_test");
  for (const char* name : {"gctrees-1.23.trace", "gctrees-1.19.trace"}) {
    INFO(name);
    const std::string in = kGcTrees + name, out = dir.file("gc.trace");
    ImportResult r;
    const Timelines t = import_and_check(in, dir, &r);
    INFO(join(t.problems));
    CHECK(t.problems.empty());
    import_go_trace(in, out, FormatChoice::kAuto);
    const GcView ours = schema_gc_view(out);
    // The tree builders collect often: the shipped traces hold 23 and 27 cycles (README.md there).
    CHECK(ours.ended.at("GC concurrent mark phase") >= 20);
    CHECK(ours.begun.at("GC mark assist") > 50);
    CHECK(ours.begun.at("stop-the-world (GC mark termination)") >= 20);
    CHECK(ours.heap_alloc.size() > 10000);
    // Every Go event of these kinds is written: the cycles are no longer dropped.
    CHECK(r.events_written > r.go_events * 9 / 10);
    if (!fs::exists(go_tool("1.23"))) {
      WARN("not comparing with go tool trace: " + go_tool("1.23") + " is not installed");
      continue;
    }
    const std::optional<GcView> gos = go_gc_view(in);
    REQUIRE(gos);
    CHECK(ours.begun == gos->begun);
    CHECK(ours.ended == gos->ended);
    CHECK(ours.heap_alloc == gos->heap_alloc);
    CHECK(ours.heap_goal == gos->heap_goal);
    CHECK(ours.worker_labels == gos->worker_labels);
    CHECK(ours.stws == gos->stws);
  }
}

TEST_CASE("go import: a first-format trace's GC events are Go 1.19's, one schema event each", "[go-import][gc][v1]") {
  if (!fs::exists(go_tool("1.19"))) {
    SUCCEED("Go 1.19 not installed");
    return;
  }
  TempDir dir("gmp_go_import_test");
  const std::string in = kGcTrees + "gctrees-1.19.trace";
  const auto gos = count_names(go_events_v1(in));
  const Timelines t = import_and_check(in, dir);
  auto kind = [&](Kind k) { return t.kinds.count(k) != 0 ? t.kinds.at(k) : 0; };
  auto go = [&](const char* n) { return gos.count(n) != 0 ? gos.at(n) : 0; };
  INFO("go tool trace -d: " << counts_text(gos));
  CHECK(kind(KIND_GC_BEGIN) == go("GCStart"));
  CHECK(kind(KIND_GC_END) == go("GCDone"));
  CHECK(kind(KIND_STW_BEGIN) == go("GCSTWStart"));
  CHECK(kind(KIND_STW_END) == go("GCSTWDone"));
  CHECK(kind(KIND_GC_MARK_ASSIST_BEGIN) == go("GCMarkAssistStart"));
  CHECK(kind(KIND_GC_MARK_ASSIST_END) == go("GCMarkAssistDone"));
  CHECK(kind(KIND_GC_SWEEP_BEGIN) == go("GCSweepStart"));
  CHECK(kind(KIND_GC_SWEEP_END) == go("GCSweepDone"));
  CHECK(kind(KIND_HEAP_ALLOC) == go("HeapAlloc"));
  CHECK(kind(KIND_HEAP_GOAL) == go("HeapGoal"));
  CHECK(kind(KIND_GC_BEGIN) > 20);
}

namespace {

// Sums of a derived scenario's heap operations, read from its text: `alloc { bytes: N count: K
// [retain: true] }` and `release { bytes: N }`.
struct HeapOps {
  int64_t allocated = 0, retained = 0, released = 0, allocs = 0;
};

int64_t number_after(const std::string& line, const std::string& key) {
  const size_t at = line.find(key);
  return at == std::string::npos ? -1 : std::stoll(line.substr(at + key.size()));
}

HeapOps heap_ops(const std::string& text) {
  HeapOps h;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("op { alloc {") != std::string::npos) {
      const int64_t bytes = number_after(line, "bytes: "), count = number_after(line, "count: ");
      REQUIRE(bytes > 0);
      REQUIRE(count > 0);
      h.allocs++;
      h.allocated += bytes * count;
      if (line.find("retain: true") != std::string::npos) h.retained += bytes * count;
    } else if (line.find("op { release {") != std::string::npos) {
      h.released += number_after(line, "bytes: ");
    }
  }
  return h;
}

}  // namespace

TEST_CASE("replay derivation: allocation is the heap counter's rises, the live heap the last marked heap",
          "[go-import][gc][replay]") {
  TempDir dir("gmp_go_import_test");
  for (const char* name : {"gctrees-1.23.trace", "gctrees-1.19.trace"}) {
    INFO(name);
    const std::string out = dir.file("gc.trace");
    import_go_trace(kGcTrees + name, out, FormatChoice::kAuto);
    // From the trace itself: the counter at its start and its rises; its value at the last cycle's end.
    int64_t first = -1, last = 0, rises = 0, at_end = -1;
    uint64_t cycles = 0;
    {
      TraceReader r(out);
      Event e;
      while (r.next(e)) {
        if (e.kind() == KIND_HEAP_ALLOC) {
          if (first < 0) first = e.value();
          if (first >= 0 && e.value() > last && last > 0) rises += e.value() - last;
          last = e.value();
        }
        if (e.kind() == KIND_GC_END) {
          at_end = last;
          cycles++;
        }
      }
    }
    REQUIRE(first > 0);
    REQUIRE(at_end > 0);
    const Timeline tl = build_timeline(out);
    const DerivedScenario d = derive_scenario(tl, name);
    const HeapOps h = heap_ops(d.text);
    INFO(d.text.substr(0, 3000));
    CHECK(h.allocated == first + rises);
    CHECK(d.alloc_bytes == static_cast<uint64_t>(first + rises));
    CHECK(h.retained - h.released == at_end);
    CHECK(d.retained_bytes == at_end);
    CHECK(d.trace_gc_cycles == cycles);
    CHECK(h.allocs == static_cast<int64_t>(d.alloc_ops));
    // The GC's mark workers (their starts carry a worker mode) and the sweeper are the replay
    // runtime's own: no function replays them. Main and the four builders are replayed.
    CHECK(tl.gc_workers.size() >= 2);
    for (const gmp::trace::GKey& g : tl.gc_workers) CHECK(d.text.find("name: \"g" + std::to_string(g.g) + "\"") == std::string::npos);
    CHECK(d.goroutines >= 5);
  }
}
