#include "sim/cli/flags.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "sim/scenario/duration.h"

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
