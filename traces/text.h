// Small text helpers shared by the trace tools' reports (stats.h, critical_path.h).
#pragma once

#include <string>

namespace gmp::trace {

// printf into a std::string (at most 511 bytes).
std::string strfmt(const char* f, ...) __attribute__((format(printf, 1, 2)));

// A duration for people: 950ns, 12.5us, 3.20ms, 1.50s.
std::string human_ns(double ns);

}  // namespace gmp::trace
