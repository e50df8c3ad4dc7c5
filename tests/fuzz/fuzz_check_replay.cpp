// Fuzzes `gmpsim check --replay SCHEDULE` (sim/cli/cmd_check.cpp): Schedule::parse on the input as
// text, then, if it parses, a strict replay of a small whole-program scenario (two workers and a
// WaitGroup at 2 Ps) under the checker, bounded by a small step limit. A ScheduleError (bad text,
// a pick of a thread that cannot run, a schedule whose length does not fit) is the expected answer
// to bad input. Anything else escaping, or a violated property on this correct program, is a bug,
// and aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "model/search.h"
#include "sim/cost/profile.h"
#include "sim/scenario/scenario.h"

namespace {
const char kScenario[] = R"(
waitgroup { name: "wg" }
func {
  name: "main"
  op { add { wg: "wg" n: 2 } }
  op { go { func: "worker" } }
  op { go { func: "worker" } }
  op { wait { wg: "wg" } }
}
func {
  name: "worker"
  op { compute { ns: 200 } }
  op { done { wg: "wg" } }
}
)";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const gmp::scenario::Scenario sc = gmp::scenario::parse_scenario(kScenario, "fuzz");
  const std::string text(reinterpret_cast<const char*>(data), size);
  gmp::model::CheckSetup setup;
  setup.scenario = &sc;
  setup.profile = &gmp::cost::default_profile();
  setup.procs = 2;
  setup.max_steps = 5'000;
  try {
    const gmp::model::Execution ex = gmp::model::replay(setup, gmp::model::Schedule::parse(text), "");
    if (ex.end == gmp::model::Execution::End::Violation) {
      std::fprintf(stderr, "fuzz_check_replay: %s: %s\n", gmp::model::property_name(ex.violation.property),
                   ex.violation.message.c_str());
      std::abort();
    }
  } catch (const gmp::model::ScheduleError&) {
  }
  return 0;
}
