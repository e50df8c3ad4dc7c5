// Strategies pick the next thread at a scheduling point of the Explorer.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/platform/splitmix64.h"

namespace gmp::model {

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Picks one of `runnable` (thread indices, ascending, never empty); `current` is the thread that
  // just reached the point (it may or may not be runnable).
  virtual uint32_t choose(std::span<const uint32_t> runnable, uint32_t current) = 0;
};

using gmp::SplitMix64;

// Uniformly random pick at every point, from a seed.
class RandomStrategy final : public Strategy {
 public:
  explicit RandomStrategy(uint64_t seed) : rng_(seed) {}
  uint32_t choose(std::span<const uint32_t> runnable, uint32_t current) override;

 private:
  SplitMix64 rng_;
};

// A schedule that cannot be parsed (what() names the byte offset of the bad character) or
// replayed (what() names the step and the thread that cannot run there).
class ScheduleError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Replays a recorded schedule; past its end, keeps the current thread running when it can. A step
// that picks a thread that cannot run there throws ScheduleError (out of Explorer::run).
class ReplayStrategy final : public Strategy {
 public:
  explicit ReplayStrategy(std::vector<uint32_t> schedule) : schedule_(std::move(schedule)) {}
  uint32_t choose(std::span<const uint32_t> runnable, uint32_t current) override;

 private:
  std::vector<uint32_t> schedule_;
  size_t pos_ = 0;
};

// The most steps parse_schedule accepts: the Explorer's default step limit, so a longer schedule
// could never be replayed to its end.
inline constexpr size_t kMaxScheduleSteps = 10'000'000;

// A schedule as text: thread indices separated by dots ("0.1.1.0"), and back. parse_schedule
// accepts only indices below `threads` and at most kMaxScheduleSteps of them; it throws
// ScheduleError naming the byte offset of the first bad character (or of the bad index).
std::string format_schedule(const std::vector<uint32_t>& s);
std::vector<uint32_t> parse_schedule(const std::string& text, uint32_t threads = UINT32_MAX);

}  // namespace gmp::model
