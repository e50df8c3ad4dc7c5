// See arrivals.h.
#include "sim/scenario/arrivals.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "sim/scenario/duration.h"
#include "sim/scenario/limits.h"
#include "sim/textproto/read_file.h"

namespace gmp::scenario {

namespace {

// The file's text, or why it cannot be had. The type is checked on the path first, so that opening
// cannot block (a FIFO with no writer), and again on the descriptor, in case the path changed.
std::string slurp(const std::string& path, std::string& why) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    why = std::string("cannot open: ") + std::strerror(errno);
    return {};
  }
  auto kind = [&](const struct stat& s) -> const char* {
    if (S_ISDIR(s.st_mode)) return "is a directory, not a file";
    if (!S_ISREG(s.st_mode)) return "is not a regular file";
    if (static_cast<uint64_t>(s.st_size) > textproto::kMaxFileBytes) return "is larger than 64 MiB";
    return nullptr;
  };
  if (const char* bad = kind(st)) {
    why = bad;
    return {};
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    why = std::string("cannot open: ") + std::strerror(errno);
    return {};
  }
  std::string text;
  if (::fstat(fd, &st) != 0 || kind(st) != nullptr) {
    why = "is not a regular file";
  } else {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        why = std::string("cannot read: ") + std::strerror(errno);
        break;
      }
      if (n == 0) break;
      if (text.size() + static_cast<size_t>(n) > textproto::kMaxFileBytes) {
        why = "is larger than 64 MiB";
        break;
      }
      text.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return why.empty() ? text : std::string();
}

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A non-negative decimal integer of at most `max`, or -1.
int64_t integer(std::string_view s, int64_t max) {
  if (!digits(s) || s.size() > 18) return -1;
  int64_t v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v <= max ? v : -1;
}

}  // namespace

ArrivalTimes read_arrivals(const std::string& path, int64_t conns, bool array, int64_t max_arrivals) {
  std::string unreadable;
  const std::string text = slurp(path, unreadable);
  if (!unreadable.empty()) {
    ArrivalTimes out;
    out.unreadable = std::move(unreadable);
    return out;
  }
  return parse_arrivals(text, path, conns, array, max_arrivals);
}

ArrivalTimes parse_arrivals(std::string_view text, const std::string& path, int64_t conns, bool array,
                            int64_t max_arrivals) {
  ArrivalTimes out;
  // Per connection, its times in file order; flattened at the end.
  std::vector<std::vector<int64_t>> per(static_cast<size_t>(conns));
  std::vector<int64_t> last_line(static_cast<size_t>(conns), 0);
  int64_t total = 0;
  auto fail = [&](int64_t line, size_t column, std::string message) {
    out.errors.push_back({path, static_cast<int>(std::min<int64_t>(line, INT32_MAX)), static_cast<int>(column + 1),
                          std::move(message)});
  };
  int64_t line = 0;
  for (size_t at = 0; at < text.size() && out.errors.empty();) {
    line++;
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view row(text.data() + at, end - at);
    at = end + 1;
    if (const size_t hash = row.find('#'); hash != std::string_view::npos) row = row.substr(0, hash);
    // The columns: runs of characters between spaces, tabs and a carriage return.
    std::vector<std::pair<size_t, std::string_view>> cols;
    for (size_t i = 0; i < row.size();) {
      if (row[i] == ' ' || row[i] == '\t' || row[i] == '\r') {
        i++;
        continue;
      }
      size_t j = i;
      while (j < row.size() && row[j] != ' ' && row[j] != '\t' && row[j] != '\r') j++;
      cols.emplace_back(i, row.substr(i, j - i));
      i = j;
    }
    if (cols.empty()) continue;
    if (cols.size() > (array ? 2u : 1u)) {
      fail(line, cols[array ? 2 : 1].first,
           array ? "too many columns: a time and, optionally, a connection index"
                 : "too many columns: a single connection's file has one time a line (an index needs an array)");
      break;
    }
    const std::string time_text(cols[0].second);
    int64_t t = -1;
    if (digits(time_text)) {
      t = integer(time_text, kMaxDurationNs);
      if (t < 0) {
        fail(line, cols[0].first,
             "time " + time_text + "ns is too long: at most " + std::to_string(kMaxDurationNs) + "ns");
        break;
      }
    } else {
      const ParsedDuration d = parse_duration(time_text);
      if (!d.error.empty()) {
        fail(line, cols[0].first, d.error);
        break;
      }
      if (d.ns > kMaxDurationNs) {
        fail(line, cols[0].first,
             "time " + time_text + " is too long: at most " + std::to_string(kMaxDurationNs) + "ns");
        break;
      }
      t = d.ns;
    }
    int64_t lo = 0, hi = conns;  // the connections the line is an arrival on
    if (cols.size() == 2) {
      const int64_t k = integer(cols[1].second, conns - 1);
      if (k < 0) {
        fail(line, cols[1].first, "connection index " + std::string(cols[1].second) + " is not one of 0 to " +
                                      std::to_string(conns - 1));
        break;
      }
      lo = k;
      hi = k + 1;
    }
    if (hi - lo > max_arrivals - total) {
      fail(line, cols[0].first, "more than " + std::to_string(max_arrivals) +
                                    " arrivals: the requests of all connections together (each arrival "
                                    "times its burst, with those declared before this file) are at most " +
                                    std::to_string(kMaxConnRequests));
      break;
    }
    for (int64_t e = lo; e < hi && out.errors.empty(); e++) {
      std::vector<int64_t>& v = per[static_cast<size_t>(e)];
      if (!v.empty() && t < v.back()) {
        fail(line, cols[0].first,
             "time " + time_text + " is earlier than connection " + std::to_string(e) + "'s arrival before it (line " +
                 std::to_string(last_line[static_cast<size_t>(e)]) + "): times must not decrease");
        break;
      }
      v.push_back(t);
      last_line[static_cast<size_t>(e)] = line;
      total++;
    }
  }
  if (!out.errors.empty()) return out;
  out.first.push_back(0);
  for (const auto& v : per) {
    out.times.insert(out.times.end(), v.begin(), v.end());
    out.first.push_back(static_cast<int64_t>(out.times.size()));
  }
  return out;
}

}  // namespace gmp::scenario
