// See arrivals.h.
#include "sim/scenario/arrivals.h"

#include <algorithm>
#include <string_view>

#include "sim/scenario/duration.h"
#include "sim/scenario/limits.h"
#include "sim/textproto/read_file.h"

namespace gmp::scenario {

namespace {

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
  // Only a regular file: a FIFO with no writer would block the scenario's loading.
  textproto::FileText file = textproto::read_file(path, {.regular_only = true});
  if (!file.error.empty()) {
    ArrivalTimes out;
    out.unreadable = std::move(file.error);
    return out;
  }
  return parse_arrivals(file.text, path, conns, array, max_arrivals);
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
