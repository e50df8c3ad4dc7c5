// cheaprand, cheaprandn and cheaprandu64 reproduce Go's sequences exactly. The expected values are
// produced by tests/data/cheaprand/gen.go with Debian's Go (the command is in that file).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/platform/platform.h"
#include "sim/runtime/rand.h"
#include "sim/runtime/runtime2.h"

using namespace gmp;

namespace {

struct Line {
  std::string fn;
  std::vector<uint64_t> nums;
};

std::vector<Line> load_expected() {
  const std::string path = std::string(GMP_SOURCE_DIR) + "/tests/data/cheaprand/expected.txt";
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<Line> out;
  for (std::string text; std::getline(in, text);) {
    if (text.empty() || text[0] == '#') continue;
    std::istringstream ss(text);
    Line l;
    ss >> l.fn;
    for (uint64_t v; ss >> v;) l.nums.push_back(v);
    out.push_back(std::move(l));
  }
  return out;
}

// Runs fn with getg() on an M, as the runtime functions expect.
struct OnM {
  rt::m mp;
  rt::g g0;
  OnM() {
    g0.m = &mp;
    mp.g0 = &g0;
    plat::setg(&g0);
  }
  ~OnM() { plat::setg(nullptr); }
};

}  // namespace

TEST_CASE("cheaprand family matches Go's sequences", "[rand][go]") {
  const auto lines = load_expected();
  size_t checked = 0;
  OnM on;
  for (const Line& l : lines) {
    INFO(l.fn << " from state " << l.nums.at(0));
    if (l.fn == "cheaprand") {
      on.mp.cheaprand = static_cast<uint32_t>(l.nums[0]);
      for (size_t i = 1; i < l.nums.size(); i++) CHECK(rt::cheaprand() == l.nums[i]);
    } else if (l.fn == "cheaprandn") {
      on.mp.cheaprand = static_cast<uint32_t>(l.nums[0]);
      const auto n = static_cast<uint32_t>(l.nums[1]);
      for (size_t i = 2; i < l.nums.size(); i++) CHECK(rt::cheaprandn(n) == l.nums[i]);
    } else if (l.fn == "cheaprandu64") {
      on.mp.cheaprand64 = l.nums[0];
      for (size_t i = 1; i < l.nums.size(); i++) CHECK(rt::cheaprandu64() == l.nums[i]);
    } else {
      FAIL("unknown function in expected.txt: " << l.fn);
    }
    checked++;
  }
  // Every kind of line is present, so a truncated file cannot pass silently.
  CHECK(checked == lines.size());
  CHECK(std::count_if(lines.begin(), lines.end(), [](const Line& l) { return l.fn == "cheaprand"; }) > 0);
  CHECK(std::count_if(lines.begin(), lines.end(), [](const Line& l) { return l.fn == "cheaprandn"; }) > 0);
  CHECK(std::count_if(lines.begin(), lines.end(), [](const Line& l) { return l.fn == "cheaprandu64"; }) > 0);
}

TEST_CASE("cheaprandn stays below n", "[rand]") {
  OnM on;
  on.mp.cheaprand = 42;
  for (uint32_t n = 1; n < 300; n++) {
    for (int i = 0; i < 20; i++) CHECK(rt::cheaprandn(n) < n);
  }
}
