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

// GOMAXPROCS, as --procs, a process's procs and the gomaxprocs operation give it, and the P counts
// the calibration readers take (a -N suffix, gctrace's "N P", --cpus). Go sets no bound of its own
// (procresize grows allp to any count); this one keeps a run's memory in proportion: the port's
// per-P state is a few KiB (its runq of 256 is Go's), so 4096 Ps cost tens of MiB.
inline constexpr int64_t kMaxProcs = 4096;

// Processes of one scenario file (ProcessDecl): each is a whole Go runtime with its own threads,
// so the bound keeps a file's memory and the engine's thread count in proportion to its text.
inline constexpr int64_t kMaxProcesses = 64;

// A cgroup's CPU bandwidth (CgroupDecl, --cpu-quota, --cpu-period): the period's range and the
// least quota per period are cgroup v2's (kernel/sched/core.c: min_cfs_quota_period 1 ms,
// max_cfs_quota_period 1 s; tg_set_cfs_bandwidth refuses a quota below 1 ms); the default period
// is the kernel's (default_cfs_period, 100 ms). Whether a quota exceeds the machine's cores is
// known only at run time; here a quota is at most kMaxQuotaCpus CPUs.
inline constexpr int64_t kMinCpuPeriodNs = 1'000'000;
inline constexpr int64_t kMaxCpuPeriodNs = 1'000'000'000;
inline constexpr int64_t kDefaultCpuPeriodNs = 100'000'000;
inline constexpr int64_t kMinQuotaNs = 1'000'000;
inline constexpr double kMaxQuotaCpus = 4096;
// A cpuset's core numbers: 0 to 4095 (the machine's own cores are checked at run time).
inline constexpr int32_t kMaxCpusetCore = 4095;

// GOGC, as --gogc and a process's gogc give it: -1 (off) or 0 to this. Go takes any int32; beyond
// this the heap may grow to 10,001 times the live heap, far past any memory limit.
inline constexpr int32_t kMaxGOGC = 1'000'000;

// A duration (compute, sleep, syscall, busy_poll per poll, a device's service time): at most
// 10^15 ns, 1,000,000 s or about 11.6 days of virtual time.
inline constexpr int64_t kMaxDurationNs = 1'000'000'000'000'000;

// Iterations of a compute or of one busy_poll poll: at most 10^12 (with the profile's
// speed_ns_per_iteration of at most 1000 ns, at most kMaxDurationNs of work).
inline constexpr int64_t kMaxIterations = 1'000'000'000'000;

// A loop's, a parallel's or a busy_poll's count: at most 10^15 (a run of that many operations
// would take years of real time; the bound keeps counters far from int64's end).
inline constexpr int64_t kMaxCount = 1'000'000'000'000'000;
// Requests on all the connections of a scenario together: the network keeps each one's arrival time
// until it is read, and each answered one's latency until the run ends.
inline constexpr int64_t kMaxConnRequests = 10'000'000;
// Connections of a scenario together (a conn's `conns`, summed over its declarations): each is a
// pollDesc and its queues, made when the run starts.
inline constexpr int64_t kMaxConns = 100'000;
// A connection's send buffer, in answers.
inline constexpr int64_t kMaxSendBuffer = 1'000'000;

// An integer expression (expr.h): at most 1000 characters of text, and at most 100 parentheses
// and unary minuses inside one another (the parser recurses once per level; the limit is
// kMaxNesting's, for the same reason).
inline constexpr int kMaxExprLength = 1000;
inline constexpr int kMaxExprNesting = 100;

// A function's parameters: at most 64, far more than any Go function declares; a goroutine's
// variables are its parameters and one per counted loop with `var` open around the code.
inline constexpr int kMaxParams = 64;

// A channel array's length: at most 1,000,000 (each element is a runtime hchan, allocated when the
// run starts).
inline constexpr int64_t kMaxChanArray = 1'000'000;
// A mutex or WaitGroup array's length: at most 1,000,000 (each element is made when the run starts).
inline constexpr int64_t kMaxSyncArray = 1'000'000;

// Objects a run makes with `local` (LocalOp), all goroutines together: at most 1,000,000. A local
// lives until the run ends (the simulator has no garbage collector of objects), so the bound keeps
// a run's memory in proportion; past it the local panics. A local channel's capacity: 0 to
// 1,000,000 elements.
inline constexpr int64_t kMaxLocals = 1'000'000;
inline constexpr int64_t kMaxLocalChanCap = 1'000'000;

// An alloc (scenario.proto's AllocOp): objects of 1 byte to 1 GiB each (far above any single
// object a server makes; Go gives each large object a span of its own), 0 to 2^40 of them, and at
// most 1 TiB in all per alloc, so that bytes times count never overflows and a heap built from
// allocs stays far from int64's end for any run that finishes in real time. A release names at
// most 1 TiB too.
inline constexpr int64_t kMaxObjectBytes = int64_t{1} << 30;
inline constexpr int64_t kMaxAllocCount = int64_t{1} << 40;
inline constexpr int64_t kMaxAllocBytes = int64_t{1} << 40;

// A benchmark func's b.N: from 1 to 10^12 (go test's own b.N tops out at 10^9; a simulated
// operation takes at least the ns of one instruction).
inline constexpr int64_t kMaxBenchN = 1'000'000'000'000;

}  // namespace gmp::scenario
