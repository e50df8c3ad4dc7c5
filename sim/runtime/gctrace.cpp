// gcMarkTermination's gctrace print (mgc.go) and the number formatting it uses.
#include "sim/runtime/gctrace.h"

namespace gmp::rt {

// itoaDiv (mgc.go).
std::string itoaDiv(uint64_t val, int dec) {
  char buf[32];
  int i = static_cast<int>(sizeof buf) - 1;
  const int idec = i - dec;
  while (val >= 10 || i >= idec) {
    buf[i--] = static_cast<char>('0' + val % 10);
    if (i == idec) buf[i--] = '.';
    val /= 10;
  }
  buf[i] = static_cast<char>('0' + val);
  return std::string(buf + i, buf + sizeof buf);
}

// fmtNSAsMS (mgc.go).
std::string fmtNSAsMS(uint64_t ns) {
  if (ns >= 10'000'000) return itoaDiv(ns / 1'000'000, 0);
  uint64_t x = ns / 1000;
  if (x == 0) return "0";
  int dec = 3;
  while (x >= 100) {
    x /= 10;
    dec--;
  }
  return itoaDiv(x, dec);
}

namespace {
uint64_t ns(int64_t v) { return static_cast<uint64_t>(v); }  // Go prints uint64(ns): as it is
}  // namespace

// gcMarkTermination's `if debug.gctrace > 0` block (mgc.go).
std::string gctraceLine(const GCCycleRecord& c, int utilPercent) {
  std::string s = "gc " + std::to_string(c.n) + " @" + itoaDiv(ns(c.start) / 1'000'000, 3) + "s " +
                  std::to_string(utilPercent) + "%: ";
  s += fmtNSAsMS(ns(c.sweepTermWall)) + "+" + fmtNSAsMS(ns(c.markWall)) + "+" + fmtNSAsMS(ns(c.markTermWall));
  s += " ms clock, ";
  s += fmtNSAsMS(ns(c.sweepTermCpu)) + "+" + fmtNSAsMS(ns(c.assistCpu)) + "/" + fmtNSAsMS(ns(c.backgroundCpu)) + "/" +
       fmtNSAsMS(ns(c.idleCpu)) + "+" + fmtNSAsMS(ns(c.markTermCpu));
  s += " ms cpu, " + std::to_string(c.heapStart >> 20) + "->" + std::to_string(c.heapEnd >> 20) + "->" +
       std::to_string(c.heapLive >> 20) + " MB, " + std::to_string(c.heapGoal >> 20) + " MB goal, " +
       std::to_string(c.stacks >> 20) + " MB stacks, " + std::to_string(c.globals >> 20) + " MB globals, " +
       std::to_string(c.procs) + " P";
  if (c.forced) s += " (forced)";
  return s;
}

std::vector<std::string> gctraceLines(const GCStats& s) {
  std::vector<std::string> out;
  double gcCpu = 0;  // work.cpuStats.GCTotalTime - GCIdleTime so far
  for (const GCCycleRecord& c : s.cycles) {
    gcCpu += static_cast<double>(c.sweepTermCpu) + static_cast<double>(c.assistCpu) +
             static_cast<double>(c.backgroundCpu) + static_cast<double>(c.markTermCpu);
    const double end = static_cast<double>(c.start) + static_cast<double>(c.sweepTermWall) +
                       static_cast<double>(c.markWall) + static_cast<double>(c.markTermWall);
    const double total = static_cast<double>(c.procs) * end;  // cpuStats.TotalTime at tEnd
    out.push_back(gctraceLine(c, total > 0 ? static_cast<int>(gcCpu / total * 100) : 0));
  }
  return out;
}

}  // namespace gmp::rt
