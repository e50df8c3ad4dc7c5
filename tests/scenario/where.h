// Where a piece of a scenario's text is, as its diagnostics give it: the tests of errors place
// each expected message by the text it points at.
#pragma once

#include <catch2/catch.hpp>

#include <string>

namespace gmp::scenario::testing {

struct Where {
  int line;
  int column;
};

// The 1-based position of the first `at` after the first `after` (after "" is the start).
inline Where find(const std::string& text, const std::string& at, const std::string& after = "") {
  size_t from = after.empty() ? 0 : text.find(after);
  REQUIRE(from != std::string::npos);
  size_t offset = text.find(at, from);
  REQUIRE(offset != std::string::npos);
  size_t line_start = text.rfind('\n', offset);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  int line = 1;
  for (size_t i = 0; i < offset; i++) line += text[i] == '\n';
  return {line, static_cast<int>(offset - line_start) + 1};
}

}  // namespace gmp::scenario::testing
