#include "traces/text.h"

#include <cstdarg>
#include <cstdio>

namespace gmp::trace {

std::string strfmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

std::string human_ns(double ns) {
  if (ns < 1e3) return strfmt("%.0fns", ns);
  if (ns < 1e6) return strfmt("%.1fus", ns / 1e3);
  if (ns < 1e9) return strfmt("%.2fms", ns / 1e6);
  return strfmt("%.2fs", ns / 1e9);
}

}  // namespace gmp::trace
