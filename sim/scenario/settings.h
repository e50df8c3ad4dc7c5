// The settings a process takes, as text (shared by the scenario compiler and gmpsim's flags, so
// a value means the same in a file and on the command line): cpusets, GODEBUG's maxprocs keys,
// byte counts (GOMEMLIMIT) and a quota in CPUs turned into ns per period. Each parser returns the
// value or an error text that says what was expected; the caller adds where (a file position or
// a flag).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gmp::scenario {

// strconv.ParseInt(s, 10, bits): an optional sign, then decimal digits, in the signed range.
std::optional<int64_t> parse_int(const std::string& s, int bits);

// parseByteCount (runtime/string.go): a non-negative decimal integer, optionally followed by B,
// KiB, MiB, GiB or TiB, that fits an int64; nothing when s is not one.
std::optional<int64_t> parse_byte_count(const std::string& s);

// cpuset.cpus syntax: comma-separated cores ("8") and ranges ("0-3"), each 0 to kMaxCpusetCore,
// a range's first no larger than its last. The cores ascending, each once.
struct ParsedCpuset {
  std::vector<int32_t> cpus;
  std::string error;  // empty on success
};
ParsedCpuset parse_cpuset(const std::string& text);

// GODEBUG's GOMAXPROCS keys: "containermaxprocs=0,updatemaxprocs=1" (either or both, each 0 or 1,
// once). -1: not given.
struct ParsedGodebug {
  int32_t containermaxprocs = -1;
  int32_t updatemaxprocs = -1;
  std::string error;
};
ParsedGodebug parse_godebug(const std::string& text);

// A quota of `cpus` CPUs over a period of `period` ns (kMinCpuPeriodNs to kMaxCpuPeriodNs), as
// cpu.max holds it: ns per period, rounded to the nearest ns. 0 CPUs: no limit (-1). Otherwise
// the CPUs are finite and at most kMaxQuotaCpus, and the ns at least kMinQuotaNs.
struct QuotaNs {
  int64_t ns = -1;
  std::string error;
};
QuotaNs quota_ns(double cpus, int64_t period);

// How messages write a quota in CPUs ("2.5") and a duration in ns ("100ms", "1.5ms", "250us").
std::string cpus_text(double cpus);
std::string ns_text(int64_t ns);

}  // namespace gmp::scenario
