// Command-line flag parsing shared by gmpsim's commands: every bad flag or value ends the program
// with a message naming the flag and what was expected, and exit status 2.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/limits.h"

namespace gmp::cli {

[[noreturn]] void usage_error(const std::string& msg);

uint64_t parse_uint(const std::string& flag, const std::string& text, uint64_t lo, uint64_t hi);
// A duration with Go's units ("1ms", "500us", "2s") or plain nanoseconds, in [lo, hi] ns;
// `range` says that range in words for the error ("that is positive, at most 1e18ns").
int64_t parse_duration(const std::string& flag, const std::string& text, int64_t lo, int64_t hi,
                       const std::string& range);
// A comma-separated list of integers in [lo, hi]: "1,2,4,8".
std::vector<int64_t> parse_list(const std::string& flag, const std::string& text, int64_t lo, int64_t hi);

// The items of a comma-separated list, each as written ("50,100,off").
std::vector<std::string> split_list(const std::string& text);

// The largest --gogc (sim/scenario/limits.h: a process's gogc has the same bound).
inline constexpr int32_t kMaxGOGC = scenario::kMaxGOGC;
// GOGC as Go reads it (readGOGC, setGCPercent): "off", or a decimal integer with an optional sign,
// a negative one meaning off as in Go; -1 for off, else 0 .. kMaxGOGC (0: collect continuously).
int32_t parse_gogc(const std::string& flag, const std::string& text);
// GOMEMLIMIT as Go reads it (readGOMEMLIMIT): "off" (no limit, INT64_MAX) or a byte count.
int64_t parse_memlimit(const std::string& flag, const std::string& text);
// parseByteCount (runtime/string.go): a non-negative decimal integer, optionally followed by B,
// KiB, MiB, GiB or TiB, that fits an int64; nothing when s is not one.
std::optional<int64_t> parse_byte_count(const std::string& s);
// --procs: a comma-separated list of GOMAXPROCS values in [1, hi], or "auto" (Go's default,
// from the affinity and the cgroup's quota), given as 0.
std::vector<int64_t> parse_procs_list(const std::string& flag, const std::string& text, int64_t hi);
// --cpu-quota: a comma-separated list of CPUs ("0.5,1,2.5"), each 0 (no limit) or above 0 and at
// most scenario::kMaxQuotaCpus; decimal digits with an optional fraction.
std::vector<double> parse_cpus_list(const std::string& flag, const std::string& text);
// How the report names a setting: "100" or "off"; "64MiB", "1000B" or "off".
std::string gogc_text(int32_t gogc);
std::string memlimit_text(int64_t limit);

// Walks argv: positional arguments and --flag value pairs (also --flag=value).
class Args {
 public:
  Args(int argc, char** argv) : argv_(argv, argv + argc) {}
  bool done() const { return i_ >= argv_.size(); }
  // The next argument; sets flag() if it is a flag.
  const std::string& next();
  bool is_flag() const { return is_flag_; }
  const std::string& flag() const { return flag_; }
  // The current flag's value (from --flag=value or the next argument).
  std::string value();

 private:
  std::vector<std::string> argv_;
  size_t i_ = 0;
  std::string cur_, flag_, inline_;
  bool is_flag_ = false, has_inline_ = false;
};

}  // namespace gmp::cli
