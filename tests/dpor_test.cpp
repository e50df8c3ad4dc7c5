// DPOR against plain enumeration on small synthetic programs: threads that read and write a few
// shared cells, driven straight through the Policy interface (no engine). Every outcome (the
// values each read saw, the cells' final values) that some interleaving yields, DPOR must yield
// too, in fewer executions.
#include <catch2/catch.hpp>

#include <optional>
#include <set>
#include <vector>

#include "model/policies.h"
#include "sim/platform/splitmix64.h"

namespace {

using gmp::engine::Step;
using gmp::engine::StepKind;

struct Op {
  int cell;
  bool write;
};
using Program = std::vector<std::vector<Op>>;  // one list of operations per thread

struct Outcome {
  std::vector<int> reads;  // every read's value, in thread and program order
  std::vector<int> cells;
  bool operator<(const Outcome& o) const { return reads != o.reads ? reads < o.reads : cells < o.cells; }
  bool operator==(const Outcome& o) const = default;
};

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
      s.op = op.write ? gmp::plat::Op::Store : gmp::plat::Op::Load;
      s.write = op.write;
      s.obj = &cells_storage[op.cell];
      enabled.push_back(s);
    }
    if (enabled.empty()) break;
    const size_t i = pol.pick(step, enabled, current);
    if (i == gmp::engine::kStopRun) return std::nullopt;
    const uint32_t t = enabled[i].tid;
    const Op& op = prog[t][pc[t]++];
    if (op.write) {
      cells[static_cast<size_t>(op.cell)] = static_cast<int>(t * 100 + pc[t]);
    } else {
      seen[t].push_back(cells[static_cast<size_t>(op.cell)]);
    }
    current = t;
  }
  Outcome o;
  for (const auto& v : seen) o.reads.insert(o.reads.end(), v.begin(), v.end());
  o.cells = cells;
  return o;
}

struct Result {
  std::set<Outcome> outcomes;
  uint64_t executions = 0;
};

Result search(const Program& prog, bool reduce, int ncells) {
  Result r;
  gmp::model::Dpor d(-1, reduce);
  while (d.next()) {
    r.executions++;
    if (auto o = run(prog, d, ncells)) r.outcomes.insert(*o);
  }
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
