// Times as text: see time_format.h.
#include "viewer/time_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>

namespace gmp::view {

namespace {

struct Unit {
  const char* name;
  double ns;
};

Unit unit_for(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return {"s", 1e9};
  if (a >= 1e6) return {"ms", 1e6};
  if (a >= 1e3) return {"us", 1e3};
  return {"ns", 1};
}

}  // namespace

void format_time(char* buf, size_t n, double ns, double resolution_ns) {
  const Unit u = unit_for(std::max(std::fabs(ns), resolution_ns));
  const double r = resolution_ns / u.ns;
  int digits = r >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(r) - 1e-9));
  if (digits > 9) digits = 9;
  std::snprintf(buf, n, "%.*f %s", digits, ns / u.ns, u.name);
}

void format_duration(char* buf, size_t n, double ns) {
  const Unit u = unit_for(ns);
  const double v = ns / u.ns;
  std::snprintf(buf, n, "%.*f %s", std::fabs(v) >= 100 || u.ns == 1 ? 0 : std::fabs(v) >= 10 ? 1 : 2, v, u.name);
}

void format_point(char* buf, size_t n, double t, double resolution, bool steps) {
  if (steps) {
    std::snprintf(buf, n, "step %.0f", t);
  } else {
    format_time(buf, n, t, resolution);
  }
}

void format_span(char* buf, size_t n, double d, bool steps) {
  if (steps) {
    std::snprintf(buf, n, "%.0f step%s", d, d == 1 ? "" : "s");
  } else {
    format_duration(buf, n, d);
  }
}

void format_bytes(char* buf, size_t n, int64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  auto v = static_cast<double>(bytes);
  size_t u = 0;
  while (std::fabs(v) >= 1024 && u + 1 < std::size(units)) v /= 1024, ++u;
  if (u == 0) {
    std::snprintf(buf, n, "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(buf, n, std::fabs(v) < 10 ? "%.2f %s" : std::fabs(v) < 100 ? "%.1f %s" : "%.0f %s", v, units[u]);
  }
}

bool parse_time(std::string_view text, double& ns) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty()) return false;
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v)) return false;
  std::string_view rest(end);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  double mul = 1;
  if (rest.empty() || rest == "ns") {
    mul = 1;
  } else if (rest == "us") {
    mul = 1e3;
  } else if (rest == "ms") {
    mul = 1e6;
  } else if (rest == "s") {
    mul = 1e9;
  } else {
    return false;
  }
  ns = v * mul;
  return true;
}

double nice_step(double min_ns) {
  if (!(min_ns > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(min_ns)));
  for (double k : {1.0, 2.0, 5.0, 10.0}) {
    if (k * p >= min_ns) return k * p;
  }
  return 10 * p;
}

}  // namespace gmp::view
