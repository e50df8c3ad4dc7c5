// gmpview --screenshot: see screenshot.h.
#include "viewer/screenshot.h"

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "viewer/gl_window.h"

namespace gmp::view {

int run_screenshot(const AppOptions& opt, const std::string& out, int w, int h) {
  try {
    GlWindow win(w, h, "gmpview", false);
    App app(opt);
    // The first frame sets the view from the window's size; the next ones settle ImGui's layout.
    for (int i = 0; i < 3; ++i) {
      win.begin_frame(1.0f / 60);
      app.frame(1.0f / 60);
      win.end_frame();
    }
    win.finish();
    std::vector<uint8_t> rgba;
    win.read_pixels(rgba);
    if (!write_png(out, w, h, rgba)) {
      std::fprintf(stderr, "gmpview: cannot write %s\n", out.c_str());
      return 1;
    }
    for (size_t i = 0; i < app.docs().size(); ++i) {
      const Doc& d = *app.docs()[i];
      std::printf("timeline %zu: x %g y %g w %g h %g lanes_x %g rows_y %g t0 %.17g ns_per_px %.17g scroll %g\n", i,
                  d.vp.x, d.vp.y, d.vp.w, d.vp.h, d.vp.lanes_x(), d.vp.rows_y(), d.state.t0, d.state.ns_per_px,
                  d.state.scroll_y);
    }
    return app.ok() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gmpview: %s\n", e.what());
    return 1;
  }
}

}  // namespace gmp::view
