// The default properties (model/execution.h's kDefaultProperties: work conservation, stranding and
// starvation on) against real mutants (docs/mutants.md): `gmpsim check --strategy random` with no
// --property flag finds each, by the property and at the execution stated; the unmutated port
// passes the same search. Built only with GMP_MUTANTS.
#include <catch2/catch.hpp>

#include <string>

#include "model/search.h"
#include "sim/cost/profile.h"
#include "sim/runtime/mutants.h"
#include "sim/scenario/scenario.h"

using namespace gmp;

namespace {

struct Case {
  const char* mutant;
  const char* scenario;  // a file of sim/scenarios/check, or (with text) a name for the text
  int32_t procs;
  bool strict_time;
  uint64_t max_executions;  // the budget: room above the execution that finds it
  model::Property expect;
  uint64_t found_at;     // the execution that finds it (random search, seed 1)
  const char* text = nullptr;  // a scenario of the test's own
};

// syscall_loop without its max_runnable_latency assertion: main waits behind a goroutine making
// 5 us system calls on its P, which retake-no-sysretake never takes back. Only the starvation
// property can see it now.
const char kSyscallLoopNoAssertion[] = R"(
func {
  name: "main"
  op { go { func: "caller" } }
  op { go { func: "caller" } }
  op { compute { duration: "45us" } }
  op { gosched {} }
}
func {
  name: "caller"
  op { loop { count: 5000 op { syscall { duration: "5us" } } } }
}
)";

// netpoll_strand with each reader's 1 ms compute replaced by 1,000 sends on a buffered channel of
// its own: the reader that runs first stays in the runtime (chansend) the whole time, so while the
// others wait behind it on its P, the other P idle, no quiescent point comes, and work conservation
// at quiescent points cannot see them. Only stranding can: injectglist-all-local is found by it,
// and by nothing in 2,000 random executions without it.
const char kNetpollStrandBusy[] = R"(
chan { name: "buf0" cap: 1000 }
chan { name: "buf1" cap: 1000 }
chan { name: "buf2" cap: 1000 }
conn { name: "c0" count: 1 duration: "50us" start: "2ms" }
conn { name: "c1" count: 1 duration: "50us" start: "2ms" }
conn { name: "c2" count: 1 duration: "50us" start: "2ms" }
waitgroup { name: "wg" }
func {
  name: "main"
  op { add { wg: "wg" n: 3 } }
  op { go { func: "r0" } }
  op { go { func: "r1" } }
  op { go { func: "r2" } }
  op { wait { wg: "wg" } }
}
func { name: "r0" op { read { conn: "c0" } } op { loop { count: 1000 op { send { chan: "buf0" } } } }
       op { write { conn: "c0" } } op { done { wg: "wg" } } }
func { name: "r1" op { read { conn: "c1" } } op { loop { count: 1000 op { send { chan: "buf1" } } } }
       op { write { conn: "c1" } } op { done { wg: "wg" } } }
func { name: "r2" op { read { conn: "c2" } } op { loop { count: 1000 op { send { chan: "buf2" } } } }
       op { write { conn: "c2" } } op { done { wg: "wg" } } }
)";

constexpr Case kCases[] = {
    {"no-needspinning", "ready2", 2, false, 300, model::kWorkConservation, 20},
    {"resetspinning-no-wakep", "spawn2", 3, false, 300, model::kWorkConservation, 132},
    {"injectglist-all-local", "netpoll_strand", 2, false, 50, model::kWorkConservation, 0},
    {"retake-no-sysretake", "syscall_loop_no_assertion", 2, true, 20, model::kStarvation, 0, kSyscallLoopNoAssertion},
    {"injectglist-all-local", "netpoll_strand_busy", 2, false, 50, model::kStranding, 0, kNetpollStrandBusy},
};

model::CheckReport search(const Case& c, const scenario::Scenario& sc) {
  model::CheckConfig cfg;
  cfg.setup.scenario = &sc;
  cfg.setup.profile = &cost::default_profile();
  cfg.setup.procs = c.procs;
  cfg.setup.strict_time = c.strict_time;  // properties: the defaults
  cfg.strategy = "random";
  cfg.max_executions = c.max_executions;
  cfg.shrink = false;
  cfg.states = false;
  return model::run_check(cfg);
}

}  // namespace

TEST_CASE("the default properties find the mutants with random search and the port passes", "[mutants][properties]") {
  for (const Case& c : kCases) {
    const scenario::Scenario sc =
        c.text != nullptr ? scenario::parse_scenario(c.text, std::string(c.scenario) + ".textproto")
                          : scenario::load_scenario(std::string(GMP_SOURCE_DIR) + "/sim/scenarios/check/" + c.scenario +
                                                    ".textproto");
    INFO(c.mutant << " on " << c.scenario << " at " << c.procs << " Ps" << (c.strict_time ? ", strict time" : ""));
    rt::setActiveMutant(rt::mutantFromName(c.mutant));
    const model::CheckReport found = search(c, sc);
    rt::setActiveMutant(rt::Mutant::None);
    REQUIRE(found.found);
    INFO(model::property_name(found.found->violation.property) << " at execution " << found.found->execution << ": "
                                                                << found.found->violation.message);
    CHECK(found.found->violation.property == c.expect);
    CHECK(found.found->execution == c.found_at);
    const model::CheckReport clean = search(c, sc);
    INFO((clean.found ? clean.found->violation.message : std::string("none")));
    CHECK(!clean.found);
  }
}
