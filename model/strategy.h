// Strategies pick the next thread at a scheduling point of the Explorer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gmp::model {

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Picks one of `runnable` (thread indices, ascending, never empty); `current` is the thread that
  // just reached the point (it may or may not be runnable).
  virtual uint32_t choose(std::span<const uint32_t> runnable, uint32_t current) = 0;
};

// SplitMix64 (Steele, Lea, Flood 2014): the seeded generator for every choice the project makes.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), by Lemire's multiply-shift (bias below 2^-32 for the n used here).
  uint32_t below(uint32_t n) {
    return static_cast<uint32_t>((static_cast<uint64_t>(static_cast<uint32_t>(next() >> 32)) * n) >> 32);
  }

 private:
  uint64_t s_;
};

// Uniformly random pick at every point, from a seed.
class RandomStrategy final : public Strategy {
 public:
  explicit RandomStrategy(uint64_t seed) : rng_(seed) {}
  uint32_t choose(std::span<const uint32_t> runnable, uint32_t current) override;

 private:
  SplitMix64 rng_;
};

// Replays a recorded schedule; past its end, keeps the current thread running when it can.
class ReplayStrategy final : public Strategy {
 public:
  explicit ReplayStrategy(std::vector<uint32_t> schedule) : schedule_(std::move(schedule)) {}
  uint32_t choose(std::span<const uint32_t> runnable, uint32_t current) override;

 private:
  std::vector<uint32_t> schedule_;
  size_t pos_ = 0;
};

// A schedule as text: thread indices separated by dots ("0.1.1.0"), and back.
std::string format_schedule(const std::vector<uint32_t>& s);
std::vector<uint32_t> parse_schedule(const std::string& text);

}  // namespace gmp::model
