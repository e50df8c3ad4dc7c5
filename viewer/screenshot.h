// gmpview --screenshot: renders the viewer offscreen (under X, e.g. xvfb-run -a) for a few frames,
// writes the last one as a PNG and exits.
//
// Protocol: returns the exit status: 0 when the PNG was written and every trace loaded; 1 when a
// trace did not load (the PNG, if a display was found, shows the message; stderr has it with the
// byte offset), there is no display, or the PNG cannot be written. On success it prints one line
// per timeline to stdout, for tests and scripts:
//   timeline I: x X y Y w W h H lanes_x LX rows_y RY t0 T0 ns_per_px NPP scroll S
#pragma once

#include <string>

#include "viewer/app.h"

namespace gmp::view {

int run_screenshot(const AppOptions& opt, const std::string& out, int w, int h);

}  // namespace gmp::view
