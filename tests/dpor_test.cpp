// DPOR against plain enumeration on small synthetic programs: threads that read and write a few
// shared cells, driven straight through the Policy interface (no engine). Every outcome (the
// values each read saw, the cells' final values) that some interleaving yields, DPOR must yield
// too, in fewer executions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <vector>

#include "model/policies.h"
#include "model/search.h"
#include "sim/cost/profile.h"
#include "sim/platform/splitmix64.h"
#include "sim/scenario/scenario.h"

namespace {

using gmp::engine::Step;
using gmp::engine::StepKind;

// A read, a write (of a value naming the thread and its pc: thread * 100 + pc), or with add an
// atomic increment (an Xadd of kAdd that returns the old value: names survive it, in value % kAdd).
struct Op {
  int cell;
  bool write;
  bool add = false;
};
constexpr int kAdd = 1000;
using Program = std::vector<std::vector<Op>>;  // one list of operations per thread

struct Outcome {
  std::vector<int> reads;  // every read's value, in thread and program order
  std::vector<int> cells;
  std::vector<std::vector<int>> by_thread;  // the same reads, per thread (for symmetry)
  bool operator<(const Outcome& o) const { return reads != o.reads ? reads < o.reads : cells < o.cells; }
  bool operator==(const Outcome& o) const { return reads == o.reads && cells == o.cells; }
};

// The outcome up to renaming the threads of each symmetry class (classes[t]; kNoClass: alone):
// the least, over the renamings, of the outcome with each thread's reads moved to its new name and
// every value's writer renamed.
Outcome canonical(const Outcome& o, const std::vector<uint32_t>& classes) {
  const size_t n = o.by_thread.size();
  std::vector<uint32_t> sigma(n);
  std::iota(sigma.begin(), sigma.end(), 0);
  auto rename = [&](int v) {
    const int low = v % kAdd, t = low / 100;
    return low == 0 ? v : v - low + static_cast<int>(sigma[static_cast<size_t>(t)]) * 100 + low % 100;
  };
  std::optional<Outcome> best;
  do {
    bool keeps = true;  // sigma maps each thread into its own class
    for (size_t t = 0; t < n; t++) {
      const uint32_t c = t < classes.size() ? classes[t] : gmp::model::Dpor::kNoClass;
      const uint32_t d = sigma[t] < classes.size() ? classes[sigma[t]] : gmp::model::Dpor::kNoClass;
      keeps = keeps && (sigma[t] == t || (c != gmp::model::Dpor::kNoClass && c == d));
    }
    if (!keeps) continue;
    Outcome r;
    r.by_thread.resize(n);
    for (size_t t = 0; t < n; t++) {
      for (int v : o.by_thread[t]) r.by_thread[sigma[t]].push_back(rename(v));
    }
    for (const auto& v : r.by_thread) r.reads.insert(r.reads.end(), v.begin(), v.end());
    for (int v : o.cells) r.cells.push_back(rename(v));
    if (!best || r < *best) best = r;
  } while (std::next_permutation(sigma.begin(), sigma.end()));
  return *best;
}

// Runs the program once under the policy; nullopt when the policy abandons it.
std::optional<Outcome> run(const Program& prog, gmp::model::Policy& pol, int ncells) {
  static int cells_storage[16];
  std::vector<int> cells(static_cast<size_t>(ncells), 0);
  std::vector<size_t> pc(prog.size(), 0);
  std::vector<std::vector<int>> seen(prog.size());
  for (uint32_t t = 0; t < prog.size(); t++) pol.thread_created(t, UINT32_MAX, false);
  uint32_t current = 0;
  for (uint64_t step = 0;; step++) {
    std::vector<Step> enabled;
    for (uint32_t t = 0; t < prog.size(); t++) {
      if (pc[t] >= prog[t].size()) continue;
      const Op& op = prog[t][pc[t]];
      Step s;
      s.tid = t;
      s.kind = StepKind::Access;
      s.op = op.add ? gmp::plat::Op::Add : op.write ? gmp::plat::Op::Store : gmp::plat::Op::Load;
      s.write = op.write || op.add;
      s.obj = &cells_storage[op.cell];
      enabled.push_back(s);
    }
    if (enabled.empty()) break;
    const size_t i = pol.pick(step, enabled, current);
    if (i == gmp::engine::kStopRun) return std::nullopt;
    const uint32_t t = enabled[i].tid;
    const Op& op = prog[t][pc[t]++];
    if (op.add) {
      seen[t].push_back(cells[static_cast<size_t>(op.cell)]);
      cells[static_cast<size_t>(op.cell)] += kAdd;
    } else if (op.write) {
      cells[static_cast<size_t>(op.cell)] = static_cast<int>(t * 100 + pc[t]);
    } else {
      seen[t].push_back(cells[static_cast<size_t>(op.cell)]);
    }
    current = t;
  }
  Outcome o;
  for (const auto& v : seen) o.reads.insert(o.reads.end(), v.begin(), v.end());
  o.cells = cells;
  o.by_thread = seen;
  return o;
}

struct Result {
  std::set<Outcome> outcomes;
  uint64_t executions = 0;
};

// With classes, under symmetry, and the outcomes taken up to it.
Result search(const Program& prog, bool reduce, int ncells, const std::vector<uint32_t>& classes = {},
              bool symmetric = false, uint64_t* skipped = nullptr) {
  Result r;
  gmp::model::Dpor d(-1, reduce);
  if (symmetric) d.set_symmetry(classes);
  while (d.next()) {
    r.executions++;
    if (auto o = run(prog, d, ncells)) r.outcomes.insert(classes.empty() ? *o : canonical(*o, classes));
  }
  if (skipped != nullptr) *skipped = d.symmetry_skipped();
  return r;
}

Program random_program(uint64_t seed, int threads, int ops, int ncells) {
  gmp::SplitMix64 rng(seed);
  Program p(static_cast<size_t>(threads));
  for (auto& t : p) {
    for (int i = 0; i < ops; i++)
      t.push_back(Op{static_cast<int>(rng.next() % static_cast<uint64_t>(ncells)), rng.next() % 2 == 0});
  }
  return p;
}

}  // namespace

TEST_CASE("DPOR reaches every outcome plain enumeration reaches, in fewer executions", "[dpor]") {
  uint64_t dpor_total = 0, plain_total = 0;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    const int threads = 2 + static_cast<int>(seed % 2), ops = 3, ncells = 2 + static_cast<int>(seed % 3);
    const Program prog = random_program(seed, threads, ops, ncells);
    const Result plain = search(prog, false, ncells);
    const Result dpor = search(prog, true, ncells);
    INFO("seed " << seed);
    CHECK(dpor.outcomes == plain.outcomes);
    CHECK(dpor.executions <= plain.executions);
    dpor_total += dpor.executions;
    plain_total += plain.executions;
  }
  // Independent steps are where the reduction comes from; over 40 programs it is large.
  CHECK(dpor_total * 3 < plain_total);
}

TEST_CASE("DPOR explores one execution of threads that share nothing", "[dpor]") {
  const Program prog{{{0, true}, {0, false}}, {{1, true}, {1, false}}, {{2, true}, {2, false}}};
  CHECK(search(prog, false, 3).executions == 90);  // 6! / (2! 2! 2!)
  CHECK(search(prog, true, 3).executions == 1);
}

TEST_CASE("DPOR tries both orders of two writes to one cell", "[dpor]") {
  const Program prog{{{0, true}}, {{0, true}}};
  const Result r = search(prog, true, 1);
  CHECK(r.executions == 2);
  CHECK(r.outcomes.size() == 2);
}

// ---- Symmetry (policies.h, Dpor::set_symmetry) ----

TEST_CASE("symmetry explores one execution of three identical threads that each write one cell", "[dpor][symmetry]") {
  // GenMC's figure: 6 executions without symmetry reduction, 1 with.
  const Program prog{{{0, true}}, {{0, true}}, {{0, true}}};
  const std::vector<uint32_t> same{0, 0, 0};
  const Result plain = search(prog, false, 1, same);
  const Result dpor = search(prog, true, 1, same);
  uint64_t skipped = 0;
  const Result sym = search(prog, true, 1, same, true, &skipped);
  CHECK(plain.executions == 6);
  CHECK(dpor.executions == 6);
  CHECK(sym.executions == 1);
  CHECK(skipped == 3);  // two threads held back at the first node, one at the second
  CHECK(sym.outcomes == plain.outcomes);
  CHECK(plain.outcomes.size() == 1);  // the last writer, up to renaming
  // Without the renaming, the three last writers differ; symmetry reaches one of them.
  CHECK(search(prog, true, 1).outcomes.size() == 3);
}

TEST_CASE("symmetry explores one execution of three identical threads that increment a counter", "[dpor][symmetry]") {
  const Program prog{{{0, false, true}}, {{0, false, true}}, {{0, false, true}}};
  const std::vector<uint32_t> same{0, 0, 0};
  CHECK(search(prog, true, 1, same).executions == 6);
  const Result sym = search(prog, true, 1, same, true);
  CHECK(sym.executions == 1);
  CHECK(sym.outcomes == search(prog, false, 1, same).outcomes);
  // A read and an increment each: 3 threads, every order of the dependent steps.
  const Program rw{{{0, false}, {0, false, true}}, {{0, false}, {0, false, true}}, {{0, false}, {0, false, true}}};
  const Result p = search(rw, false, 1, same), d = search(rw, true, 1, same), s = search(rw, true, 1, same, true);
  CHECK(s.outcomes == p.outcomes);
  CHECK(d.executions == 36);
  CHECK(s.executions == 15);
}

TEST_CASE("symmetry reaches every outcome plain enumeration reaches up to renaming", "[dpor][symmetry]") {
  // Programs of 2 to 4 threads, each a copy of one of one or two bodies; the copies of a body are
  // a class. Plain enumeration without symmetry against DPOR with it (and plain with it).
  uint64_t dpor_total = 0, sym_total = 0;
  for (uint64_t seed = 1; seed <= 60; seed++) {
    gmp::SplitMix64 rng(seed * 7919);
    const int threads = 2 + static_cast<int>(seed % 3), ncells = 1 + static_cast<int>(seed % 3);
    // At most 9 steps in all: plain enumeration of 4 threads of 3 steps would take 369,600 runs.
    const int bodies = 1 + static_cast<int>((seed / 3) % 2),
              ops = threads == 4 ? 2 : 2 + static_cast<int>((seed / 6) % 2);
    std::vector<std::vector<Op>> body(static_cast<size_t>(bodies));
    for (auto& b : body) {
      for (int i = 0; i < ops; i++) {
        const uint64_t k = rng.next() % 5;  // reads and writes twice as often as increments
        b.push_back(Op{static_cast<int>(rng.next() % static_cast<uint64_t>(ncells)), k >= 2 && k < 4, k == 4});
      }
    }
    Program prog;
    std::vector<uint32_t> classes;
    for (int t = 0; t < threads; t++) {
      const auto c = static_cast<uint32_t>(rng.next() % static_cast<uint64_t>(bodies));
      prog.push_back(body[c]);
      classes.push_back(c);
    }
    INFO("seed " << seed);
    const Result plain = search(prog, false, ncells, classes);
    const Result dpor = search(prog, true, ncells, classes);
    const Result sym = search(prog, true, ncells, classes, true);
    const Result plain_sym = search(prog, false, ncells, classes, true);
    CHECK(dpor.outcomes == plain.outcomes);
    CHECK(sym.outcomes == plain.outcomes);
    CHECK(plain_sym.outcomes == plain.outcomes);
    CHECK(sym.executions <= dpor.executions);
    CHECK(plain_sym.executions <= plain.executions);
    dpor_total += dpor.executions;
    sym_total += sym.executions;
  }
  CHECK(sym_total * 2 < dpor_total);
}

TEST_CASE("goroutine symmetry merges states that differ only in which identical goroutine is where",
          "[dpor][symmetry]") {
  // Three `go worker` of one function against three functions with the same body: the same
  // executions (the port never looks at a function's name), fewer distinct states when the
  // fingerprint names interchangeable goroutines by what they are rather than by goid; and by
  // goid, the two programs have the same number.
  const char* same = R"(
waitgroup { name: "wg" }
func { name: "main" op { add { wg: "wg" n: 3 } } op { go { func: "w" } } op { go { func: "w" } } op { go { func: "w" } } op { wait { wg: "wg" } } }
func { name: "w" op { compute { ns: 100 } } op { done { wg: "wg" } } }
)";
  const char* differ = R"(
waitgroup { name: "wg" }
func { name: "main" op { add { wg: "wg" n: 3 } } op { go { func: "a" } } op { go { func: "b" } } op { go { func: "c" } } op { wait { wg: "wg" } } }
func { name: "a" op { compute { ns: 100 } } op { done { wg: "wg" } } }
func { name: "b" op { compute { ns: 100 } } op { done { wg: "wg" } } }
func { name: "c" op { compute { ns: 100 } } op { done { wg: "wg" } } }
)";
  auto check = [](const char* text, bool symmetric) {
    static std::vector<std::unique_ptr<gmp::scenario::Scenario>> keep;
    keep.push_back(std::make_unique<gmp::scenario::Scenario>(gmp::scenario::parse_scenario(text, "sym")));
    gmp::model::CheckConfig cfg;
    cfg.setup.scenario = keep.back().get();
    cfg.setup.profile = &gmp::cost::default_profile();
    cfg.setup.procs = 2;
    cfg.setup.symmetric_states = symmetric;
    cfg.strategy = "bounded";
    cfg.params = {{"preemptions", 0}, {"estimate", 0}};
    return gmp::model::run_check(cfg);
  };
  const gmp::model::CheckReport s = check(same, true), d = check(differ, true);
  const gmp::model::CheckReport s_id = check(same, false), d_id = check(differ, false);
  REQUIRE(s.complete);
  CHECK(!s.found);
  CHECK(s.executions == d.executions);
  CHECK(s_id.states == d_id.states);
  // Where no two goroutines agree, little merges: only which dead goroutine's g a later `go`
  // reused (allgs order), which nothing observes.
  CHECK(d.states <= d_id.states);
  CHECK(d.states * 100 > d_id.states * 99);
  CHECK(s.states * 10 < d.states * 9);  // 1,756 against 2,160
}
