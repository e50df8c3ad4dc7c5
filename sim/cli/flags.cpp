#include "sim/cli/flags.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "sim/scenario/duration.h"
#include "sim/scenario/settings.h"

namespace gmp::cli {

void usage_error(const std::string& msg) {
  std::fprintf(stderr, "gmpsim: %s (see gmpsim help)\n", msg.c_str());
  std::exit(2);
}

uint64_t parse_uint(const std::string& flag, const std::string& text, uint64_t lo, uint64_t hi) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  // Digits only: strtoull would also take leading blanks, a sign and "-1" as 2^64-1.
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || errno != 0 || *end != '\0' || v < lo || v > hi) {
    usage_error(flag + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                text + "'");
  }
  return v;
}

int64_t parse_duration(const std::string& flag, const std::string& text, int64_t lo, int64_t hi,
                       const std::string& range) {
  int64_t ns = 0;
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    ns = static_cast<int64_t>(parse_uint(flag, text, 0, INT64_MAX));
  } else {
    const scenario::ParsedDuration d = scenario::parse_duration(text);
    if (!d.error.empty()) usage_error(flag + ": expected a duration such as 10ms or 500us, got '" + text + "': " + d.error);
    ns = d.ns;
  }
  if (ns < lo || ns > hi) usage_error(flag + ": expected a duration " + range + ", got '" + text + "'");
  return ns;
}

std::vector<int64_t> parse_list(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    out.push_back(static_cast<int64_t>(parse_uint(flag, item, static_cast<uint64_t>(lo), static_cast<uint64_t>(hi))));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::optional<int64_t> parse_byte_count(const std::string& s) { return scenario::parse_byte_count(s); }

std::vector<int64_t> parse_procs_list(const std::string& flag, const std::string& text, int64_t hi) {
  std::vector<int64_t> out;
  for (const std::string& item : split_list(text)) {
    if (item == "auto") {
      out.push_back(0);
      continue;
    }
    const bool digits = !item.empty() && item.find_first_not_of("0123456789") == std::string::npos;
    const uint64_t v = digits && item.size() <= 18 ? std::strtoull(item.c_str(), nullptr, 10) : 0;
    if (v < 1 || v > static_cast<uint64_t>(hi)) {
      usage_error(flag + ": expected auto or an integer in [1, " + std::to_string(hi) + "], got '" + item + "'");
    }
    out.push_back(static_cast<int64_t>(v));
  }
  return out;
}

std::vector<double> parse_cpus_list(const std::string& flag, const std::string& text) {
  std::vector<double> out;
  for (const std::string& item : split_list(text)) {
    // Digits, at most one '.', and a digit somewhere: no sign, exponent, "inf" or "nan".
    const bool form = !item.empty() && item.size() <= 24 && item.find_first_not_of("0123456789.") == std::string::npos &&
                      std::count(item.begin(), item.end(), '.') <= 1 && item.find_first_of("0123456789") != std::string::npos;
    const double v = form ? std::strtod(item.c_str(), nullptr) : -1;
    if (!(v >= 0 && v <= scenario::kMaxQuotaCpus)) {
      usage_error(flag + ": expected CPUs such as 2.5, 0 (no limit) or above 0 and at most " +
                  scenario::cpus_text(scenario::kMaxQuotaCpus) + ", got '" + item + "'");
    }
    out.push_back(v);
  }
  return out;
}

int32_t parse_gogc(const std::string& flag, const std::string& text) {
  if (text == "off") return -1;
  const auto n = scenario::parse_int(text, 32);
  if (!n || *n > kMaxGOGC) {
    usage_error(flag + ": expected off or a percentage in [0, " + std::to_string(kMaxGOGC) + "] (GOGC), got '" +
                text + "'");
  }
  return *n < 0 ? -1 : static_cast<int32_t>(*n);  // setGCPercent: any negative is off
}

int64_t parse_memlimit(const std::string& flag, const std::string& text) {
  if (text == "off") return std::numeric_limits<int64_t>::max();
  const auto n = parse_byte_count(text);
  if (!n) {
    usage_error(flag + ": expected off or a size in bytes with an optional B, KiB, MiB, GiB or TiB suffix, such as "
                       "512MiB (GOMEMLIMIT), at most 2^63-1 bytes, got '" + text + "'");
  }
  return *n;
}

std::string gogc_text(int32_t gogc) { return gogc < 0 ? "off" : std::to_string(gogc); }

std::string memlimit_text(int64_t limit) {
  if (limit == std::numeric_limits<int64_t>::max()) return "off";
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && limit != 0 && limit % 1024 == 0) {
    limit /= 1024;
    u++;
  }
  return std::to_string(limit) + units[u];
}

const std::string& Args::next() {
  cur_ = argv_[i_++];
  is_flag_ = cur_.size() > 2 && cur_[0] == '-' && cur_[1] == '-';
  has_inline_ = false;
  flag_.clear();
  if (is_flag_) {
    const size_t eq = cur_.find('=');
    if (eq != std::string::npos) {
      flag_ = cur_.substr(0, eq);
      inline_ = cur_.substr(eq + 1);
      has_inline_ = true;
    } else {
      flag_ = cur_;
    }
  }
  return cur_;
}

std::string Args::value() {
  if (has_inline_) return inline_;
  if (i_ >= argv_.size()) usage_error(flag_ + ": missing value");
  return argv_[i_++];
}

}  // namespace gmp::cli
