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
      throw std::runtime_error("schedule step " + std::to_string(pos_) + " picks thread " +
                               std::to_string(want) + ", which cannot run there");
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

std::vector<uint32_t> parse_schedule(const std::string& text) {
  std::vector<uint32_t> out;
  if (text.empty()) return out;
  uint64_t v = 0;
  bool digits = false;
  for (size_t i = 0; i <= text.size(); i++) {
    if (i == text.size() || text[i] == '.') {
      if (!digits) throw std::invalid_argument("schedule: expected a thread index at offset " + std::to_string(i));
      out.push_back(static_cast<uint32_t>(v));
      v = 0;
      digits = false;
    } else if (text[i] >= '0' && text[i] <= '9') {
      v = v * 10 + static_cast<uint64_t>(text[i] - '0');
      if (v > 0xffffffffu) throw std::invalid_argument("schedule: thread index too large at offset " + std::to_string(i));
      digits = true;
    } else {
      throw std::invalid_argument(std::string("schedule: unexpected '") + text[i] + "' at offset " +
                                  std::to_string(i) + ", expected a digit or '.'");
    }
  }
  return out;
}

}  // namespace gmp::model
