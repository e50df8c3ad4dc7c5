#include "sim/scenario/settings.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "sim/scenario/limits.h"

namespace gmp::scenario {

std::optional<int64_t> parse_int(const std::string& s, int bits) {
  size_t i = 0;
  const bool neg = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) i = 1;
  if (i == s.size()) return std::nullopt;
  const uint64_t cutoff = uint64_t{1} << (bits - 1);  // |min|; max is one less
  uint64_t n = 0;
  for (; i < s.size(); i++) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    const auto d = static_cast<uint64_t>(s[i] - '0');
    if (n > (cutoff - d) / 10) return std::nullopt;  // n*10 + d > cutoff
    n = n * 10 + d;
  }
  if (!neg && n >= cutoff) return std::nullopt;
  return neg ? static_cast<int64_t>(0 - n) : static_cast<int64_t>(n);
}

std::optional<int64_t> parse_byte_count(const std::string& s) {
  if (s.empty()) return std::nullopt;
  const char last = s.back();
  if (last >= '0' && last <= '9') {
    const auto n = parse_int(s, 64);
    if (!n || *n < 0) return std::nullopt;
    return n;
  }
  // Otherwise it ends in B, after a digit (plain bytes) or after a binary prefix's "i".
  if (last != 'B' || s.size() < 2) return std::nullopt;
  const char c = s[s.size() - 2];
  if (c >= '0' && c <= '9') {
    const auto n = parse_int(s.substr(0, s.size() - 1), 64);
    if (!n || *n < 0) return std::nullopt;
    return n;
  }
  if (c != 'i' || s.size() < 4) return std::nullopt;
  int power = 0;
  switch (s[s.size() - 3]) {
    case 'K': power = 1; break;
    case 'M': power = 2; break;
    case 'G': power = 3; break;
    case 'T': power = 4; break;
    default: return std::nullopt;
  }
  uint64_t m = 1;
  for (int i = 0; i < power; i++) m *= 1024;
  const auto n = parse_int(s.substr(0, s.size() - 3), 64);
  if (!n || *n < 0) return std::nullopt;
  const auto un = static_cast<uint64_t>(*n);
  if (un > std::numeric_limits<uint64_t>::max() / m) return std::nullopt;
  if (un * m > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(un * m);
}

namespace {
// A core number: digits only, at most kMaxCpusetCore.
std::optional<int32_t> core(const std::string& s) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const long v = std::stol(s);
  if (v > kMaxCpusetCore) return std::nullopt;
  return static_cast<int32_t>(v);
}
}  // namespace

ParsedCpuset parse_cpuset(const std::string& text) {
  ParsedCpuset out;
  const std::string expected = "expected cores and ranges such as \"0-3,8\", each core 0 to " +
                               std::to_string(kMaxCpusetCore);
  if (text.empty()) {
    out.error = "an empty cpuset has no core: " + expected;
    return out;
  }
  std::set<int32_t> cpus;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t dash = item.find('-');
    const auto lo = core(item.substr(0, dash));
    const auto hi = dash == std::string::npos ? lo : core(item.substr(dash + 1));
    if (!lo || !hi) {
      out.error = "\"" + item + "\" is not a core or a range: " + expected;
      return out;
    }
    if (*lo > *hi) {
      out.error = "range \"" + item + "\" runs backwards: its first core is larger than its last";
      return out;
    }
    for (int32_t c = *lo; c <= *hi; c++) cpus.insert(c);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  out.cpus.assign(cpus.begin(), cpus.end());
  return out;
}

ParsedGodebug parse_godebug(const std::string& text) {
  ParsedGodebug out;
  if (text.empty()) return out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    int32_t* field = key == "containermaxprocs" ? &out.containermaxprocs
                     : key == "updatemaxprocs"  ? &out.updatemaxprocs
                                                : nullptr;
    if (field == nullptr) {
      out.error = "unknown GODEBUG setting \"" + key + "\": expected containermaxprocs or updatemaxprocs";
      return out;
    }
    if (eq == std::string::npos || (value != "0" && value != "1")) {
      out.error = "GODEBUG " + key + " takes 0 or 1 (" + key + "=0), got \"" + item + "\"";
      return out;
    }
    if (*field >= 0) {
      out.error = "GODEBUG " + key + " is given twice";
      return out;
    }
    *field = value == "1" ? 1 : 0;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

QuotaNs quota_ns(double cpus, int64_t period) {
  QuotaNs out;
  if (cpus == 0) return out;
  if (!(cpus > 0 && cpus <= kMaxQuotaCpus)) {  // NaN fails both
    out.error = "quota " + cpus_text(cpus) + " CPUs is out of range: 0 (no limit) or above 0, at most " +
                cpus_text(kMaxQuotaCpus);
    return out;
  }
  out.ns = std::llround(cpus * static_cast<double>(period));
  if (out.ns < kMinQuotaNs) {
    out.error = "quota " + cpus_text(cpus) + " CPUs of a " + ns_text(period) + " period is " + ns_text(out.ns) +
                " per period: at least " + ns_text(kMinQuotaNs) + " (cgroup v2's least)";
  }
  return out;
}

std::string cpus_text(double cpus) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", cpus);
  return buf;
}

std::string ns_text(int64_t ns) {
  struct Unit {
    int64_t ns;
    const char* name;
  };
  static const Unit units[] = {{1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}};
  for (const Unit& u : units) {
    if (ns >= u.ns) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g%s", static_cast<double>(ns) / static_cast<double>(u.ns), u.name);
      return buf;
    }
  }
  return std::to_string(ns) + "ns";
}

}  // namespace gmp::scenario
