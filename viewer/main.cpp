// gmpview: the timeline viewer of gmpsim traces (README "Viewing a trace").
//   gmpview [OPTIONS] TRACE [TRACE2]
// Two traces open in compare mode, on a shared time axis, one above the other.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "viewer/app.h"
#include "viewer/gl_window.h"
#include "viewer/screenshot.h"
#include "viewer/time_format.h"

namespace {

[[noreturn]] void usage(const std::string& problem) {
  if (!problem.empty()) std::fprintf(stderr, "gmpview: %s\n", problem.c_str());
  std::fprintf(stderr,
               "usage: gmpview [--g-lanes] [--no-counters] [--view T0:T1] [--range T0:T1] [--select G] [--gc-cycle N] [--step N]\n"
               "               [--axis time|steps] [--size WxH] [--screenshot OUT.png] TRACE [TRACE2]\n"
               "  TRACE2          compare mode: both traces on one time axis, statistics side by side\n"
               "  --view T0:T1    initial time range, e.g. 1ms:1.5ms (units ns, us, ms, s; default ns)\n"
               "  --range T0:T1   select that range (its statistics in the side panel)\n"
               "  --select G      follow goroutine G (highlight and life)\n"
               "  --gc-cycle N    show GC cycle N's statistics, as a click on it in the GC band does\n"
               "  --g-lanes       one lane per G as well\n"
               "  --no-counters   without the counter rows (queues, spinning Ms, idle Ps)\n"
               "  --step N        put the step cursor on event N (and show the step list)\n"
               "  --axis A        time: the trace's clock; steps: one unit per event (default: steps for\n"
               "                  a gmpsim check counterexample, time otherwise); --view is in that unit\n"
               "  --size WxH      window or image size (default 1600x900)\n"
               "  --screenshot F  render offscreen (needs X: xvfb-run -a), write the PNG F and exit\n"
               "  --frames N      exit after N frames of the window (for tests)\n"
               "In the window: wheel or W/S zoom, drag or A/D pan, shift-drag selects a range, click a G.\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  gmp::view::AppOptions opt;
  std::string shot;
  int w = 1600, h = 900;
  long frames = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage("");
    } else if (a == "--g-lanes") {
      opt.g_lanes = true;
    } else if (a == "--no-counters") {
      opt.counters = false;
    } else if (a == "--screenshot") {
      shot = value();
    } else if (a == "--size") {
      const std::string v = value();
      if (std::sscanf(v.c_str(), "%dx%d", &w, &h) != 2 || w < 200 || h < 150 || w > 8192 || h > 8192) {
        usage("--size: expected WxH between 200x150 and 8192x8192, not '" + v + "'");
      }
    } else if (a == "--view" || a == "--range") {
      const std::string v = value();
      const size_t colon = v.find(':');
      double t0, t1;
      if (colon == std::string::npos || !gmp::view::parse_time(std::string_view(v).substr(0, colon), t0) ||
          !gmp::view::parse_time(std::string_view(v).substr(colon + 1), t1) || t1 <= t0) {
        usage(a + ": expected T0:T1 with T0 < T1, e.g. 1ms:2ms, not '" + v + "'");
      }
      (a == "--view" ? opt.view : opt.range) = std::make_pair(t0, t1);
    } else if (a == "--select") {
      const std::string v = value();
      char* end = nullptr;
      const long g = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != 0 || g < 0 || g > INT32_MAX) usage("--select: expected a goid, not '" + v + "'");
      opt.select_g = static_cast<int32_t>(g);
    } else if (a == "--frames") {
      const std::string v = value();
      char* end = nullptr;
      frames = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != 0 || frames < 1) usage("--frames: expected a positive count, not '" + v + "'");
    } else if (a == "--gc-cycle") {
      const std::string v = value();
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != 0 || n < 0) usage("--gc-cycle: expected a cycle number, not '" + v + "'");
      opt.gc_cycle = n;
    } else if (a == "--step") {
      const std::string v = value();
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != 0 || n < 0) usage("--step: expected an event number, not '" + v + "'");
      opt.step = n;
    } else if (a == "--axis") {
      const std::string v = value();
      if (v == "time") {
        opt.axis = gmp::view::LoadOptions::Axis::Time;
      } else if (v == "steps") {
        opt.axis = gmp::view::LoadOptions::Axis::Steps;
      } else {
        usage("--axis: expected time or steps, not '" + v + "'");
      }
    } else if (a.rfind("--", 0) == 0) {
      usage("unknown flag '" + a + "'");
    } else {
      opt.paths.push_back(a);
    }
  }
  if (opt.paths.empty() || opt.paths.size() > 2) usage("expected one TRACE, or two to compare");
  if (!shot.empty()) return gmp::view::run_screenshot(opt, shot, w, h);
  try {
    gmp::view::GlWindow win(w, h, "gmpview: " + opt.paths[0], true);
    gmp::view::App app(opt);
    auto last = std::chrono::steady_clock::now();
    for (long n = 0; !win.should_close() && n != frames; ++n) {
      win.poll();
      const auto now = std::chrono::steady_clock::now();
      const float dt = std::chrono::duration<float>(now - last).count();
      last = now;
      win.begin_frame(dt);
      app.frame(dt);
      win.end_frame();
    }
    return app.ok() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gmpview: %s\n", e.what());
    return 1;
  }
}
