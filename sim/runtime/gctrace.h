// GODEBUG=gctrace=1's line for one finished cycle, as gcMarkTermination prints it, so a simulated
// run's cycles can be set beside a real Go program's line by line (gmpsim run --gctrace).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/runtime/mgc.h"

namespace gmp::rt {

// itoaDiv (mgc.go): val in decimal with a point placed dec digits from the right.
std::string itoaDiv(uint64_t val, int dec);
// fmtNSAsMS (mgc.go): ns as milliseconds, whole from 10 ms up, else two significant digits.
std::string fmtNSAsMS(uint64_t ns);

// The line for cycle c, without its newline: "gc N @Ts U%: ... P" and " (forced)" when forced.
// c.start counts from the program's start (Go's tSweepTerm - runtimeInitTime); utilPercent is
// int(memstats.gc_cpu_fraction * 100) as of the cycle's end.
std::string gctraceLine(const GCCycleRecord& c, int utilPercent);

// Every cycle's line. The "#%" of each is gc_cpu_fraction as gcMarkTermination computes it just
// before printing: the GC's CPU since the start, without idle marking (the cycles' pause CPU,
// assists, dedicated and fractional workers), over GOMAXPROCS times the time since the start
// (cpuStats.TotalTime with GOMAXPROCS fixed for the run, as it is here).
std::vector<std::string> gctraceLines(const GCStats& s);

}  // namespace gmp::rt
