// Frame timing for gmp_view_bench: see frame_bench.h.
#include "viewer/frame_bench.h"

#include <execinfo.h>
#include <imgui.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <vector>

#include "viewer/app.h"
#include "viewer/gl_window.h"

namespace {

std::atomic<uint64_t> g_allocs{0};
bool g_trace_allocs = getenv("GMP_TRACE_ALLOCS") != nullptr;
bool g_in_frame = false;
void trace_alloc() {
  if (!g_trace_allocs || !g_in_frame) return;
  void* bt[12];
  const int n = backtrace(bt, 12);
  backtrace_symbols_fd(bt, n, 2);
  write(2, "--\n", 3);
}

void* imgui_alloc(size_t n, void*) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  trace_alloc();
  return std::malloc(n);
}
void imgui_free(void* p, void*) { std::free(p); }

double cpu_ms() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

}  // namespace

// Every allocation of the process counts; the bench reads the counter around measured frames.
void* operator new(size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  trace_alloc();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace gmp::view {

void bench_frames(Model& m, int frames) {
  try {
    ImGui::SetAllocatorFunctions(imgui_alloc, imgui_free);
    GlWindow win(1600, 900, "gmp_view_bench", false);
    const int64_t t_begin = m.t_begin, t_end = m.t_end;
    const size_t n_events = m.events.size();
    AppOptions opt;
    App app(std::move(m), opt);
    auto run = [&](const char* what, double t0, double t1) {
      app.show_range(t0, t1);
      std::vector<double> ms;
      ms.reserve(static_cast<size_t>(frames));
      double cpu = 0, proc_cpu = 0;
      uint64_t allocs = 0, vertices = 0, rects = 0;
      for (int i = 0; i < frames + 10; ++i) {
        const uint64_t a0 = g_allocs.load();
        g_in_frame = i >= 10;
        const auto c0 = std::chrono::steady_clock::now();
        const double p0 = cpu_ms();
        win.begin_frame(1.0f / 60);
        app.frame(1.0f / 60);
        win.render_ui();
        const auto c1 = std::chrono::steady_clock::now();
        win.draw_gl();
        win.finish();
        const auto c2 = std::chrono::steady_clock::now();
        const double dt = std::chrono::duration<double, std::milli>(c2 - c0).count();
        g_in_frame = false;
        if (i >= 10) {  // after warm-up: ImGui's buffers have grown to the frame's size
          allocs += g_allocs.load() - a0;
          ms.push_back(dt);  // reserved: the bench's own bookkeeping allocates nothing either
          cpu += std::chrono::duration<double, std::milli>(c1 - c0).count();
          proc_cpu += cpu_ms() - p0;
          vertices += static_cast<uint64_t>(ImGui::GetDrawData()->TotalVtxCount);
          rects += app.doc(0).batch.rects().size();
        }
        if (i == 0) app.show_range(t0, t1);  // the first frame placed the viewport
      }
      std::sort(ms.begin(), ms.end());
      double sum = 0;
      for (double v : ms) sum += v;
      const double n = static_cast<double>(ms.size());
      std::printf(
          "frame, %s: mean %.2f ms (UI %.2f ms, OpenGL %.2f ms; CPU of all threads %.2f ms), median %.2f ms, "
          "p95 %.2f ms, max %.2f ms over %zu frames; %.0f ImGui vertices + %.0f flat rectangles, %.2f heap "
          "allocations per frame\n",
          what, sum / n, cpu / n, (sum - cpu) / n, proc_cpu / n, ms[ms.size() / 2], ms[ms.size() * 95 / 100], ms.back(),
          ms.size(), static_cast<double>(vertices) / n, static_cast<double>(rects) / n,
          static_cast<double>(allocs) / n);
    };
    std::printf("frames: 1600x900, the whole viewer (timeline, counters, side panel), %zu events\n", n_events);
    const double span = static_cast<double>(t_end - t_begin);
    run("fully zoomed out", static_cast<double>(t_begin), static_cast<double>(t_end));
    const double mid = static_cast<double>(t_begin) + span / 2;
    run("zoomed in to 1/100 of the trace", mid, mid + span / 100);
    run("zoomed in to 20 us", mid, mid + 20e3);
    run("zoomed in to 200 ns", mid, mid + 200);
  } catch (const std::exception& e) {
    std::printf("frames: not measured: %s\n", e.what());
  }
}

}  // namespace gmp::view
