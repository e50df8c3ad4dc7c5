// What gmpsim prints for a sweep (sim/cli/report.h) from results of any value: a merged sweep's
// come from part files, which may say anything the part reader takes.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "sim/cli/report.h"

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) n++;
  return n;
}

}  // namespace

TEST_CASE("a sweep's chart ends for values near the largest double and beyond", "[report]") {
  for (const double ns : {DBL_MAX, DBL_MAX / 1.1, HUGE_VAL, std::nan(""), -DBL_MAX, DBL_TRUE_MIN}) for (size_t seeds : {1, 2}) {
    INFO(ns << " x " << seeds);
    gmp::cli::SweepPoint p;
    p.procs = 2;
    p.cores = 4;
    p.runs.resize(seeds);
    for (gmp::engine::SimResult& r : p.runs) {
      r.measured = true;
      r.ns_per_op = ns;
    }
    const std::string svg = gmp::cli::sweep_svg({p}, "title");
    CHECK(svg.find("</svg>") != std::string::npos);
    CHECK(count(svg, "stroke=\"#ddd\"") <= 100);
  }
}
