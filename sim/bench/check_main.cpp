// gmp_check_bench: the model checker's speed and reduction, as figures (never a test).
//   1. the 2-P run-queue check (model/queue_check, plain threads under the checker): executions and
//      steps a second;
//   2. a whole-scheduler scenario (two workers and a WaitGroup, 2 Ps) under gmpsim check's
//      random and bounded strategies: executions and distinct states a second;
//   3. DPOR against plain enumeration where plain enumeration finishes: small synthetic programs
//      (threads reading and writing shared cells), and the whole scheduler with a preemption bound.
//   4. Symmetry: identical synthetic threads with and without DPOR's symmetry classes; three
//      identical goroutines under bounded DPOR, states with and without goroutine symmetry.
//   5. The mutation self-test's searches (tests/mutant_cases.h), with GMP_MUTANTS only: for each
//      mutant, `gmpsim check` as it comes (auto, the default properties, the 60 s time limit) on
//      its scenario: CPU seconds and executions to the first violation, and the member that found
//      it (the performance mutants: whether anything was flagged in the self-test's budget).
//   6. A portfolio run of S seconds (--portfolio-seconds S, default 5) on each shipped check
//      scenario of the unmutated port: the violations found (expected: none).
// Usage: gmp_check_bench [--quick | --symmetry (section 4 only) | --mutants (5 only) | --mutant NAME (5, one
//                        mutant) | --portfolio (6 only)] [--portfolio-seconds S]
//                        [--portfolio-part I/N (section 6, every Nth scenario from the Ith)]
//                        [--mutant-time-limit S (section 5's wall-clock limit, default 60 as gmpsim
//                        check's; more on a busy machine, where CPU seconds are the figure)]
#include <algorithm>
#include <cstdint>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/policies.h"
#include "model/portfolio.h"
#include "model/queue_check.h"
#include "model/search.h"
#include "sim/cost/profile.h"
#include "sim/runtime/mutants.h"
#include "sim/scenario/scenario.h"
#include "tests/mutant_cases.h"

using namespace gmp;

namespace {

// CPU seconds of this process: the speed figures are single-threaded, and CPU time keeps them
// meaningful on a machine that is busy with other work.
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

const char kEmpty[] = "func { name: \"main\" }\n";

// A synthetic program: per thread, a list of (cell, write) steps.
struct Op {
  int cell;
  bool write;
};
using Program = std::vector<std::vector<Op>>;

uint64_t enumerate(const Program& prog, bool reduce, const std::vector<uint32_t>* classes = nullptr) {
  static int cells[8];
  model::Dpor d(-1, reduce);
  if (classes != nullptr) d.set_symmetry(*classes);
  uint64_t n = 0;
  while (d.next()) {
    n++;
    std::vector<size_t> pc(prog.size(), 0);
    for (uint32_t t = 0; t < prog.size(); t++) d.thread_created(t, UINT32_MAX, false);
    uint32_t cur = 0;
    for (uint64_t step = 0;; step++) {
      std::vector<engine::Step> en;
      for (uint32_t t = 0; t < prog.size(); t++) {
        if (pc[t] >= prog[t].size()) continue;
        engine::Step s;
        s.tid = t;
        s.kind = engine::StepKind::Access;
        s.write = prog[t][pc[t]].write;
        s.op = s.write ? plat::Op::Store : plat::Op::Load;
        s.obj = &cells[prog[t][pc[t]].cell];
        en.push_back(s);
      }
      if (en.empty()) break;
      const size_t i = d.pick(step, en, cur);
      if (i == engine::kStopRun) break;
      cur = en[i].tid;
      pc[cur]++;
    }
  }
  return n;
}

void sections_1_to_3(bool quick);
void symmetry(bool quick);
void mutants(const std::string& which, double time_limit);
void portfolio(double seconds, uint32_t part, uint32_t parts);

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;
  std::string mutant;  // --mutant NAME: section 5 for that mutant's rows only
  double portfolio_seconds = 5;
  uint32_t part = 0, parts = 1;  // --portfolio-part I/N: every Nth scenario from the Ith (for two processes)
  double mutant_limit = model::kDefaultTimeLimitS;  // --mutant-time-limit S: wall seconds a search (on a busy machine)
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--symmetry" || a == "--mutants" || a == "--portfolio") {
      only = a.substr(2);
    } else if (a == "--mutant" && i + 1 < argc) {
      only = "mutants";
      mutant = argv[++i];
    } else if (a == "--portfolio-part" && i + 1 < argc) {
      only = "portfolio";
      if (std::sscanf(argv[++i], "%u/%u", &part, &parts) != 2 || parts == 0 || part >= parts) {
        std::fprintf(stderr, "gmp_check_bench: --portfolio-part takes I/N with I < N\n");
        return 2;
      }
    } else if (a == "--mutant-time-limit" && i + 1 < argc) {
      mutant_limit = std::strtod(argv[++i], nullptr);
      if (!(mutant_limit > 0)) mutant_limit = model::kDefaultTimeLimitS;
    } else if (a == "--portfolio-seconds" && i + 1 < argc) {
      char* end = nullptr;
      portfolio_seconds = std::strtod(argv[++i], &end);
      if (end == argv[i] || *end != '\0' || !(portfolio_seconds > 0)) {
        std::fprintf(stderr, "gmp_check_bench: --portfolio-seconds takes a positive number of seconds\n");
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: gmp_check_bench [--quick | --symmetry | --mutants | --mutant NAME | --portfolio] "
                   "[--portfolio-seconds S] [--portfolio-part I/N] [--mutant-time-limit S]\n");
      return 2;
    }
  }
  if (only.empty()) sections_1_to_3(quick);
  if (only.empty() || only == "symmetry") symmetry(quick);
  if (only.empty() || only == "mutants") mutants(mutant, mutant_limit);
  if (only.empty() || only == "portfolio") portfolio(quick ? 1 : portfolio_seconds, part, parts);
  return 0;
}

namespace {

void sections_1_to_3(bool quick) {
  // 1. The run-queue check at 2 Ps, a small configuration (8 Gs, one producer).
  {
    model::QueueCheckConfig cfg;
    cfg.procs = 2;
    cfg.gs = 8;
    cfg.producers = 1;
    const uint64_t n = quick ? 2000 : 50000;
    uint64_t steps = 0;
    const double t0 = cpu_seconds();
    for (uint64_t i = 0; i < n; i++) {
      model::RandomPolicy s(i + 1);
      cfg.seed = i + 1;
      steps += model::run_queue_check(cfg, s).run.steps;
    }
    const double s = cpu_seconds() - t0;
    std::printf(
        "runq check, 2 Ps, 8 Gs (plain threads, random): %llu executions in %.2f CPU s: %.0f executions/s, %.2f M "
        "steps/s\n",
        static_cast<unsigned long long>(n), s, static_cast<double>(n) / s, static_cast<double>(steps) / s / 1e6);
  }

  // 2. The whole scheduler: gmpsim check on two workers and a WaitGroup at 2 Ps.
  const scenario::Scenario wg =
      scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/check/waitgroup.textproto");
  for (const char* k : {"random", "bounded"}) {
    const bool random = std::string(k) == "random";
    model::CheckConfig cfg;
    cfg.setup.scenario = &wg;
    cfg.setup.profile = &cost::default_profile();
    cfg.setup.procs = 2;
    cfg.strategy = k;
    if (!random) cfg.params = {{"preemptions", 1}, {"estimate", 0}};
    cfg.max_executions = random ? (quick ? 300 : 3000) : 0;
    const double t0 = cpu_seconds();
    const model::CheckReport r = model::run_check(cfg);
    const double secs = cpu_seconds() - t0;
    std::printf(
        "whole scheduler, waitgroup, 2 Ps, %s%s: %llu executions (%s), %llu distinct states, %.2f CPU s: %.0f "
        "executions/s, "
        "%.0f states/s, %.0f steps an execution at most\n",
        k, random ? "" : " (1 preemption)",
        static_cast<unsigned long long>(r.executions), r.complete ? "complete" : "sampled",
        static_cast<unsigned long long>(r.states), secs, static_cast<double>(r.executions) / secs,
        static_cast<double>(r.states) / secs, static_cast<double>(r.max_steps_seen));
  }

  // 3. Reduction. Synthetic programs first: every interleaving against DPOR's.
  {
    uint64_t plain = 0, dpor = 0;
    SplitMix64 rng(7);
    const int programs = quick ? 5 : 20;
    for (int k = 0; k < programs; k++) {
      Program p(3);
      for (auto& t : p) {
        for (int i = 0; i < 4; i++) t.push_back(Op{static_cast<int>(rng.next() % 3), rng.next() % 2 == 0});
      }
      plain += enumerate(p, false);
      dpor += enumerate(p, true);
    }
    std::printf(
        "reduction, %d synthetic programs (3 threads x 4 steps on 3 cells): plain %llu executions, DPOR %llu: %.1fx "
        "fewer\n",
        programs, static_cast<unsigned long long>(plain), static_cast<unsigned long long>(dpor),
        static_cast<double>(plain) / static_cast<double>(dpor));
  }
  // The whole scheduler: an empty main (the runtime's start and exit, sysmon), preemption-bounded.
  const scenario::Scenario empty = scenario::parse_scenario(kEmpty, "empty");
  for (int procs : {1, 2}) {
    for (int bound : {0, 1}) {
      if (quick && bound == 1 && procs == 2) continue;
      uint64_t ex[2] = {0, 0};
      double secs[2] = {0, 0};
      bool complete[2] = {false, false};
      for (int plain = 0; plain < 2; plain++) {
        model::CheckConfig cfg;
        cfg.setup.scenario = &empty;
        cfg.setup.profile = &cost::default_profile();
        cfg.setup.procs = procs;
        cfg.strategy = plain != 0 ? "plain" : "bounded";
        cfg.params = {{"preemptions", bound}, {"estimate", 0}};
        cfg.time_limit = quick ? 10 : 120;
        cfg.states = false;
        const model::CheckReport r = model::run_check(cfg);
        ex[plain] = r.executions;
        secs[plain] = r.seconds;
        complete[plain] = r.complete;
      }
      std::printf(
          "reduction, whole scheduler, empty main, %d P%s, at most %d preemption%s: plain %llu executions%s (%.2f s), "
          "DPOR %llu%s (%.2f s): %.1fx fewer\n",
          procs, procs > 1 ? "s" : "", bound, bound == 1 ? "" : "s", static_cast<unsigned long long>(ex[1]),
          complete[1] ? "" : " (stopped at the time limit)", secs[1], static_cast<unsigned long long>(ex[0]),
          complete[0] ? "" : " (stopped at the time limit)", secs[0],
          static_cast<double>(ex[1]) / static_cast<double>(std::max<uint64_t>(ex[0], 1)));
    }
  }
}

void symmetry(bool quick) {
  // 4. Symmetry. Identical plain threads (one class): DPOR's executions without and with it.
  {
    const std::vector<uint32_t> one_class(4, 0);
    const struct {
      const char* what;
      Program prog;
    } cases[] = {
        {"3 threads, one write each to one cell", {{{0, true}}, {{0, true}}, {{0, true}}}},
        {"4 threads, one write each to one cell", {{{0, true}}, {{0, true}}, {{0, true}}, {{0, true}}}},
        {"3 threads, a read and a write of one cell each",
         {{{0, false}, {0, true}}, {{0, false}, {0, true}}, {{0, false}, {0, true}}}},
        {"3 threads, write a, read b, write b",
         {{{0, true}, {1, false}, {1, true}}, {{0, true}, {1, false}, {1, true}}, {{0, true}, {1, false}, {1, true}}}},
    };
    for (const auto& c : cases) {
      std::printf("symmetry, %s: plain %llu executions, DPOR %llu, DPOR with symmetry %llu\n", c.what,
                  static_cast<unsigned long long>(enumerate(c.prog, false)),
                  static_cast<unsigned long long>(enumerate(c.prog, true)),
                  static_cast<unsigned long long>(enumerate(c.prog, true, &one_class)));
    }
  }
  // Three identical goroutines at 2 Ps, bounded DPOR at 1 preemption: the same executions, and
  // the distinct states with goroutines named by goid and by what they are.
  {
    const scenario::Scenario three = scenario::parse_scenario(R"(
waitgroup { name: "wg" }
func { name: "main" op { add { wg: "wg" n: 3 } } op { go { func: "worker" } } op { go { func: "worker" } }
       op { go { func: "worker" } } op { wait { wg: "wg" } } }
func { name: "worker" op { compute { ns: 200 } } op { done { wg: "wg" } } }
)",
                                                              "three");
    for (int sym = 0; sym < 2; sym++) {
      model::CheckConfig cfg;
      cfg.setup.scenario = &three;
      cfg.setup.profile = &cost::default_profile();
      cfg.setup.procs = 2;
      cfg.setup.symmetric_states = sym != 0;
      cfg.strategy = "bounded";
      cfg.params = {{"preemptions", quick ? 0 : 1}, {"estimate", 0}};
      cfg.time_limit = quick ? 10 : 120;
      const double t0 = cpu_seconds();
      const model::CheckReport r = model::run_check(cfg);
      const double secs = cpu_seconds() - t0;
      std::printf(
          "symmetry, 3 identical workers, 2 Ps, bounded (%d preemption%s), goroutines named %s: %llu executions "
          "(%s), %llu distinct states, %.2f CPU s\n",
          quick ? 0 : 1, quick ? "s" : "", sym != 0 ? "by contents" : "by goid",
          static_cast<unsigned long long>(r.executions), r.complete ? "complete" : "incomplete",
          static_cast<unsigned long long>(r.states), secs);
    }
  }
}

// 5. Each mutant under gmpsim check's defaults, one core: the time to its first violation.
void mutants(const std::string& which, double time_limit) {
  if (!rt::kMutantsBuilt) {
    std::printf("mutants: not built (configure with -DGMP_MUTANTS=ON for each mutant's time to its first violation)\n");
    return;
  }
  for (const selftest::MutantCase& c : selftest::kMutantCases) {
    if (!which.empty() && which != c.mutant) continue;
    const scenario::Scenario sc = selftest::check_scenario(c.scenario);
    rt::setActiveMutant(rt::mutantFromName(c.mutant));
    const double t0 = cpu_seconds();
    // A performance mutant (which must not be flagged) runs its row's budget of executions, not the
    // whole time limit.
    const model::CheckReport r =
        model::run_check(selftest::default_search(c, sc, selftest::performance(c) ? c.budget : 0, time_limit));
    const double secs = cpu_seconds() - t0;
    rt::setActiveMutant(rt::Mutant::None);
    const std::string flags = std::string(c.strict_time ? " --time strict" : "") +
                              (c.sysmon_rounds != 2 ? " --sysmon-rounds " + std::to_string(c.sysmon_rounds) : "");
    std::printf("mutant %s on %s, %d P%s%s (defaults): ", c.mutant, c.scenario, c.procs, c.procs == 1 ? "" : "s",
                flags.c_str());
    if (r.found) {
      std::printf("%s after %llu executions, %.2f CPU s, found by %s\n", model::property_name(r.found->violation.property),
                  static_cast<unsigned long long>(r.executions), secs, r.found->found_by.c_str());
    } else {
      std::printf("nothing found in %llu executions, %.2f CPU s%s\n", static_cast<unsigned long long>(r.executions),
                  secs, selftest::performance(c) ? " (a performance mutant: as it should be)" : " (MISSED)");
    }
    std::fflush(stdout);
  }
}

// 6. The unmutated port: a portfolio run of `seconds` on each shipped check scenario, at the Ps and
// with the flags the mutation table gives it (2 Ps and free time otherwise).
void portfolio(double seconds, uint32_t part, uint32_t parts) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/check")) {
    if (e.path().extension() == ".textproto") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  for (size_t i = part; i < names.size(); i += parts) {
    const std::string& name = names[i];
    selftest::MutantCase c{"none", "", 2, 0, model::kThrow, "none"};
    for (const selftest::MutantCase& m : selftest::kMutantCases) {
      if (name == m.scenario) {
        c = m;
        break;
      }
    }
    const scenario::Scenario sc = selftest::check_scenario(name);
    const double t0 = cpu_seconds();
    const model::CheckReport r = model::run_check(selftest::default_search(c, sc, 0, seconds));
    const double secs = cpu_seconds() - t0;
    const std::string flags = std::string(c.strict_time ? " --time strict" : "") +
                              (c.sysmon_rounds != 2 ? " --sysmon-rounds " + std::to_string(c.sysmon_rounds) : "");
    std::printf("portfolio %g s, unmutated, %s, %d P%s%s: %llu executions, %.2f CPU s, %s\n", seconds, name.c_str(),
                c.procs, c.procs == 1 ? "" : "s", flags.c_str(), static_cast<unsigned long long>(r.executions), secs,
                r.found ? ("VIOLATION " + std::string(model::property_name(r.found->violation.property)) + " (" +
                           r.found->found_by + "): " + r.found->violation.message)
                              .c_str()
                        : r.complete ? "no violation (complete)" : "no violation");
    std::fflush(stdout);
  }
}

}  // namespace
