// The frame half of gmp_view_bench: ms per frame of the whole viewer (build, render, glFinish) on
// an offscreen 1600x900 window, fully zoomed out, at 1/100 of the trace and deeply zoomed in
// (20 us and 200 ns), and the heap allocations made per frame (operator new and ImGui's
// allocator, counted after warm-up frames; with GMP_TRACE_ALLOCS set in the environment, each
// one's backtrace goes to stderr).
#pragma once

#include "viewer/model.h"

namespace gmp::view {

// Prints the figures; takes the model over.
void bench_frames(Model& m, int frames);

}  // namespace gmp::view
