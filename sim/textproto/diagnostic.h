// A problem in a text file (a scenario, a cost profile) at a 1-based line and column, and the
// text that reports several at once: one `path:line:column: message` per line, in source order.
#pragma once

#include <string>
#include <vector>

namespace gmp::textproto {

struct Diagnostic {
  std::string source;
  int line = 0;  // 0 when the problem has no position (the file cannot be read)
  int column = 0;
  std::string message;

  std::string str() const;  // "path:line:column: message", or "path: message" without a position
};

// The diagnostics' str(), one a line.
std::string join(const std::vector<Diagnostic>& ds);

}  // namespace gmp::textproto
