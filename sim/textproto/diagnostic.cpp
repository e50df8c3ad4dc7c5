// Formatting of diagnostics.
#include "sim/textproto/diagnostic.h"

namespace gmp::textproto {

std::string Diagnostic::str() const {
  if (line <= 0) return source + ": " + message;
  return source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

std::string join(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const Diagnostic& d : ds) {
    if (!out.empty()) out += '\n';
    out += d.str();
  }
  return out;
}

}  // namespace gmp::textproto
