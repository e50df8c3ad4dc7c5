#include "model/strategy.h"

#include <algorithm>
#include <stdexcept>

namespace gmp::model {

uint32_t RandomStrategy::choose(std::span<const uint32_t> runnable, uint32_t) {
  return runnable[rng_.below(static_cast<uint32_t>(runnable.size()))];
}

uint32_t ReplayStrategy::choose(std::span<const uint32_t> runnable, uint32_t current) {
  if (pos_ < schedule_.size()) {
    const uint32_t want = schedule_[pos_];
    if (std::find(runnable.begin(), runnable.end(), want) == runnable.end()) {
      std::string can;
      for (uint32_t t : runnable) can += (can.empty() ? "" : ", ") + std::to_string(t);
      throw ScheduleError("schedule step " + std::to_string(pos_) + " picks thread " + std::to_string(want) +
                          ", which cannot run there (runnable: " + can + ")");
    }
    pos_++;
    return want;
  }
  if (std::find(runnable.begin(), runnable.end(), current) != runnable.end()) return current;
  return runnable.front();
}

std::string format_schedule(const std::vector<uint32_t>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (i) out += '.';
    out += std::to_string(s[i]);
  }
  return out;
}

namespace {

// The character at `i` as it can be shown in a message: printable ASCII as itself, else \xNN.
std::string shown(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static const char kHex[] = "0123456789abcdef";
  return std::string("byte \\x") + kHex[u >> 4] + kHex[u & 15];
}

[[noreturn]] void bad(size_t offset, const std::string& what) {
  throw ScheduleError("schedule: " + what + " at byte offset " + std::to_string(offset));
}

}  // namespace

std::vector<uint32_t> parse_schedule(const std::string& text, uint32_t threads) {
  std::vector<uint32_t> out;
  if (text.empty()) return out;
  uint64_t v = 0;
  size_t start = 0;  // offset of the current index's first character
  for (size_t i = 0; i <= text.size(); i++) {
    if (i == text.size() || text[i] == '.') {
      if (i == start) {
        bad(i, i == text.size() ? "expected a thread index, found the end" : "expected a thread index, found '.'");
      }
      if (v >= threads) {
        bad(start, "thread index " + std::to_string(v) + " out of range (threads are 0 to " +
                       std::to_string(threads - 1) + ")");
      }
      if (out.size() == kMaxScheduleSteps) {
        bad(start, "more than " + std::to_string(kMaxScheduleSteps) + " steps");
      }
      out.push_back(static_cast<uint32_t>(v));
      v = 0;
      start = i + 1;
    } else if (text[i] >= '0' && text[i] <= '9') {
      v = v * 10 + static_cast<uint64_t>(text[i] - '0');
      if (v > 0xffffffffu) bad(start, "thread index too large");
    } else {
      bad(i, "unexpected " + shown(text[i]) + ", expected a digit or '.'");
    }
  }
  return out;
}

}  // namespace gmp::model
