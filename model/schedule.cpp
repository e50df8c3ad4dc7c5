#include "model/schedule.h"

#include <cctype>

namespace gmp::model {

size_t default_pick(std::span<const engine::Step> enabled, uint32_t current, uint64_t allowed) {
  auto ok = [&](const engine::Step& s) { return s.tid >= 64 || ((allowed >> s.tid) & 1) != 0; };
  size_t first = SIZE_MAX, soonest = SIZE_MAX;
  for (size_t i = 0; i < enabled.size(); i++) {
    const engine::Step& s = enabled[i];
    if (!ok(s)) continue;
    if (s.kind != engine::StepKind::Timeout) {
      if (s.tid == current) return i;
      if (first == SIZE_MAX) first = i;
    } else if (soonest == SIZE_MAX || s.deadline < enabled[soonest].deadline) {
      soonest = i;
    }
  }
  return first != SIZE_MAX ? first : soonest;
}

std::string Schedule::str() const {
  std::string out = process.empty() ? "" : process + "@";
  const size_t head = out.size();
  for (const auto& [step, tid] : picks) {
    if (out.size() > head) out += ',';
    out += std::to_string(step) + ':' + std::to_string(tid);
  }
  out += '/' + std::to_string(steps);
  return out;
}

namespace {

// The most a step index or a thread number may be: far beyond any execution the checker runs
// (its step limit is at most 10^9) and well inside uint64_t.
constexpr uint64_t kMaxNumber = uint64_t{1} << 40;

[[noreturn]] void bad(size_t at, const std::string& what) {
  throw ScheduleError("schedule: byte " + std::to_string(at) + ": " + what);
}

uint64_t number(const std::string& t, size_t& i, const char* what) {
  if (i >= t.size() || std::isdigit(static_cast<unsigned char>(t[i])) == 0) {
    bad(i, std::string("expected ") + what +
               (i >= t.size() ? ", found the end" : ", found '" + std::string(1, t[i]) + "'"));
  }
  const size_t start = i;
  uint64_t v = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) != 0) {
    v = v * 10 + static_cast<uint64_t>(t[i] - '0');
    if (v > kMaxNumber) bad(start, std::string(what) + " is too large");
    i++;
  }
  return v;
}

}  // namespace

Schedule Schedule::parse(const std::string& t) {
  Schedule s;
  size_t i = 0;
  bool first = true;
  if (const size_t at = t.find('@'); at != std::string::npos) {
    for (; i < at; i++) {
      const auto c = static_cast<unsigned char>(t[i]);
      if (std::isalnum(c) == 0 && c != '_' && c != '-' && c != '.') bad(i, "expected a process name before '@'");
    }
    if (at == 0) bad(0, "expected a process name before '@'");
    s.process = t.substr(0, at);
    i = at + 1;
  }
  while (i < t.size() && t[i] != '/') {
    if (!first) {
      if (t[i] != ',') bad(i, "expected ',' or '/', found '" + std::string(1, t[i]) + "'");
      i++;
    }
    first = false;
    const size_t at = i;
    const uint64_t step = number(t, i, "a step number");
    if (!s.picks.empty() && step <= s.picks.back().first) bad(at, "steps must increase");
    if (i >= t.size() || t[i] != ':') bad(i, "expected ':' after the step number");
    i++;
    const uint64_t tid = number(t, i, "a thread number");
    if (tid > UINT32_MAX) bad(at, "thread number too large");
    s.picks.emplace_back(step, static_cast<uint32_t>(tid));
  }
  if (i >= t.size()) bad(i, "expected '/' and the number of steps");
  i++;
  s.steps = number(t, i, "the number of steps");
  if (i != t.size()) bad(i, "unexpected '" + std::string(1, t[i]) + "' after the number of steps");
  if (!s.picks.empty() && s.picks.back().first >= s.steps) bad(t.find('/'), "a pick lies beyond the last step");
  return s;
}

}  // namespace gmp::model
