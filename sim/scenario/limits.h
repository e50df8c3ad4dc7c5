// The scenario language's bounds (docs/scenarios.md, "Limits"): every value a scenario gives is
// checked against them when it is loaded, so the engine's virtual-time arithmetic cannot overflow
// and the parser and the compiler cannot run out of stack on deeply nested code.
#pragma once

#include <cstdint>
#include <string>

namespace gmp::scenario {

// Loops, selects and parallels inside one another in one function: far beyond what any Go
// program nests, and a small fraction of what the compiler's recursion needs in stack.
inline constexpr int kMaxNesting = 100;
// What a construct past that depth is told, by the parser or by the compiler.
inline std::string too_deep_message() {
  return "nested too deeply: at most " + std::to_string(kMaxNesting) +
         " loops, selects and parallels inside one another";
}

// protobuf's text parser counts messages: a function, then at most three per nested construct
// (op { select { case { ...) and two for the innermost operation; the rest is slack. Deeper
// text is refused by the parser before the compiler sees it.
inline constexpr int kParserRecursionLimit = 3 * kMaxNesting + 16;

// A duration (compute, sleep, syscall, busy_poll per poll, a device's service time): at most
// 10^15 ns, 1,000,000 s or about 11.6 days of virtual time.
inline constexpr int64_t kMaxDurationNs = 1'000'000'000'000'000;

// Iterations of a compute or of one busy_poll poll: at most 10^12 (with the profile's
// speed_ns_per_iteration of at most 1000 ns, at most kMaxDurationNs of work).
inline constexpr int64_t kMaxIterations = 1'000'000'000'000;

// A loop's, a parallel's or a busy_poll's count: at most 10^15 (a run of that many operations
// would take years of real time; the bound keeps counters far from int64's end).
inline constexpr int64_t kMaxCount = 1'000'000'000'000'000;

}  // namespace gmp::scenario
