// gmpview --screenshot end to end, under X (CTest runs each test through xvfb-run -a): the pixels
// of the small known trace (lanes where the layout puts them, segments in their G's colour, a
// steal arrow between P0 and P1, the selected G outlined) and bad input (a message on stderr with
// the byte offset, exit status 1).
#include <stb_image.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/temp_dir.h"
#include "tests/view/small_trace.h"
#include "traces/trace_writer.h"
#include "viewer/colors.h"
#include "viewer/layout.h"
#include "viewer/model.h"

namespace fs = std::filesystem;
using namespace gmp::view;

namespace {

struct Result {
  int status;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result gmpview(const TempDir& dir, const std::string& args) {
  const std::string out = dir.file("stdout"), err = dir.file("stderr");
  const int rc = std::system((std::string(GMPVIEW) + " " + args + " >" + out + " 2>" + err).c_str());
  return Result{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(out), slurp(err)};
}

struct Image {
  int w = 0, h = 0;
  unsigned char* px = nullptr;
  explicit Image(const std::string& path) {
    int n = 0;
    px = stbi_load(path.c_str(), &w, &h, &n, 4);
  }
  ~Image() { stbi_image_free(px); }
  uint32_t at(float x, float y) const {
    const int xi = static_cast<int>(x), yi = static_cast<int>(y);
    REQUIRE(xi >= 0);
    REQUIRE(xi < w);
    REQUIRE(yi >= 0);
    REQUIRE(yi < h);
    const unsigned char* p = px + (static_cast<size_t>(yi) * static_cast<size_t>(w) + static_cast<size_t>(xi)) * 4;
    return rgba(p[0], p[1], p[2]);
  }
};

// The numbers gmpview printed for timeline 0.
struct Geometry {
  float lanes_x = 0, rows_y = 0;
  double t0 = 0, ns_per_px = 0;
  float x(double t) const { return lanes_x + static_cast<float>((t - t0) / ns_per_px); }
};

Geometry parse(const std::string& out) {
  Geometry g;
  float x, y, w, h, scroll;
  REQUIRE(std::sscanf(out.c_str(),
                      "timeline 0: x %f y %f w %f h %f lanes_x %f rows_y %f t0 %lf ns_per_px %lf scroll %f", &x, &y, &w,
                      &h, &g.lanes_x, &g.rows_y, &g.t0, &g.ns_per_px, &scroll) == 9);
  CHECK(scroll == 0);
  return g;
}

std::string hex(uint32_t c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06x", c & 0xffffff);
  return buf;
}

}  // namespace

TEST_CASE("view screenshot: lanes, segment colours, an arrow and the selected G") {
  TempDir dir("gmp_view_shot");
  const std::string trace = dir.file("small.gmptrace"), png = dir.file("shot.png");
  testing::write_small_trace(trace);
  const Result r = gmpview(dir, "--screenshot " + png + " --size 1000x600 --view 0:1400 --select 3 " + trace);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const Geometry g = parse(r.out);
  CHECK(g.t0 == 0);
  const Image img(png);
  REQUIRE(img.px != nullptr);
  CHECK(img.w == 1000);
  CHECK(img.h == 600);
  // Where the layout puts each lane (the same code as the viewer's).
  const Model m = load_trace(trace);
  Layout l;
  l.build(m, LayoutOptions{});
  const float p0 = g.rows_y + l.rows()[5].y, p1 = g.rows_y + l.rows()[6].y, m1 = g.rows_y + l.rows()[8].y;
  auto check = [&](double t, float y, uint32_t want) {
    INFO("at t " << t << " y " << y);
    CHECK(hex(img.at(g.x(t), y)) == hex(want));
  };
  check(130, p0 + 4, g_color(1));  // G1 runs on P0 from 100 to 500
  check(130, p0 + 16, g_color(1));
  check(60, p0 + 10, kBackground);          // nothing on P0 before 100
  check(175, p1 + 10, kSpinning);           // P1 spins from 150 to 200
  check(300, p1 + 4, g_color(2));           // G2 on P1
  check(850, p0 + 17, darker(g_color(3)));  // G3's syscall, drawn darker and lower
  check(850, p0 + 3, kBackground);
  check(650, m1 + 16, kParked);       // M1 parked from 620 to 700
  check(1100, p0 + 10, kBackground);  // P0 idle at 1100
  // The selected G3 is outlined in white; G1 is not.
  check(600, p0 + 0.5f, kHighlight);
  check(300, p0 + 0.5f, g_color(1));
  // The steal at 200 draws a red line from P0 down to P1, across the gap between the lanes.
  const float gap = p0 + 20 + 1;
  bool red = false;
  for (int dx = -1; dx <= 1; ++dx)
    red |= img.at(g.x(200) + static_cast<float>(dx), gap) == arrow_color(ArrowKind::Steal);
  CHECK(red);
  // Different Gs, different colours; the stable colour of G1 in the image.
  CHECK(g_color(1) != g_color(2));
}

TEST_CASE("view screenshot: a missing, foreign, truncated or newer trace is refused with its offset") {
  TempDir dir("gmp_view_shot");
  const std::string png = dir.file("shot.png");
  SECTION("missing") {
    const Result r = gmpview(dir, "--screenshot " + png + " " + dir.file("none.gmptrace"));
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::Contains("at byte offset 0: cannot open"));
  }
  SECTION("foreign") {
    std::ofstream(dir.file("x.txt")) << "hello, not a trace";
    const Result r = gmpview(dir, "--screenshot " + png + " " + dir.file("x.txt"));
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::Contains("at byte offset 0: not a gmpsim trace"));
  }
  SECTION("truncated") {
    const std::string trace = dir.file("small.gmptrace");
    testing::write_small_trace(trace);
    fs::resize_file(trace, fs::file_size(trace) - 3);
    const Result r = gmpview(dir, "--screenshot " + png + " " + trace);
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::Contains("truncated"));
    CHECK_THAT(r.err, Catch::Contains("at byte offset "));
    // The window shows the message too: the PNG exists, with red text on it.
    REQUIRE(fs::exists(png));
  }
  SECTION("newer schema") {
    gmp::trace::Header h;
    h.set_schema_version(gmp::trace::kSchemaVersion + 1);
    gmp::trace::TraceWriter w(dir.file("new.gmptrace"), h);
    w.close();
    const Result r = gmpview(dir, "--screenshot " + png + " " + dir.file("new.gmptrace"));
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::Contains("unsupported schema version 2"));
    CHECK_THAT(r.err, Catch::Contains("reads its schema version"));
  }
  SECTION("bad usage") {
    CHECK(gmpview(dir, "--screenshot " + png).status == 2);
    CHECK(gmpview(dir, "--view 5:1 x.gmptrace").status == 2);
    CHECK(gmpview(dir, "--frobnicate x.gmptrace").status == 2);
  }
}

TEST_CASE("view screenshot: compare mode draws two timelines on one time axis") {
  TempDir dir("gmp_view_shot");
  const std::string a = dir.file("a.gmptrace"), png = dir.file("cmp.png");
  testing::write_small_trace(a);
  const Result r = gmpview(dir, "--screenshot " + png + " --size 1000x700 --view 0:1400 " + a + " " + a);
  INFO(r.err);
  REQUIRE(r.status == 0);
  float y0 = 0, y1 = 0;
  double t0a = 0, t0b = 0, npa = 0, npb = 0;
  float dummy;
  const size_t nl = r.out.find('\n');
  REQUIRE(nl != std::string::npos);
  REQUIRE(std::sscanf(r.out.c_str(), "timeline 0: x %f y %f w %f h %f lanes_x %f rows_y %f t0 %lf ns_per_px %lf",
                      &dummy, &y0, &dummy, &dummy, &dummy, &dummy, &t0a, &npa) == 8);
  REQUIRE(std::sscanf(r.out.c_str() + nl + 1,
                      "timeline 1: x %f y %f w %f h %f lanes_x %f rows_y %f t0 %lf ns_per_px %lf", &dummy, &y1, &dummy,
                      &dummy, &dummy, &dummy, &t0b, &npb) == 8);
  CHECK(y1 > y0 + 200);  // one above the other
  CHECK(t0a == t0b);     // one time axis
  CHECK(npa == npb);
}

TEST_CASE("view window: the interactive loop opens a trace from gmpsim's format and runs") {
  TempDir dir("gmp_view_shot");
  const std::string trace = dir.file("small.gmptrace");
  testing::write_small_trace(trace);
  const Result r = gmpview(dir, "--frames 5 --size 800x500 " + trace);
  INFO(r.err);
  CHECK(r.status == 0);
  const Result bad = gmpview(dir, "--frames 5 " + dir.file("none.gmptrace"));
  CHECK(bad.status == 1);
  CHECK_THAT(bad.err, Catch::Contains("at byte offset 0"));
}
