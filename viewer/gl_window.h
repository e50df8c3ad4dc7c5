// A GLFW window with an OpenGL 3 context and Dear ImGui on it, for the interactive viewer, the
// screenshot command and the frame benchmark.
//
// Protocol:
//   - GlWindow(w, h, title, visible) opens the window (throws std::runtime_error with GLFW's
//     message when there is no display: run under xvfb-run) and creates the ImGui context.
//   - An offscreen window (visible = false) renders into a framebuffer object of exactly w x h, so
//     what read_pixels returns does not depend on the window manager.
//   - begin_frame(dt) / end_frame() bracket one ImGui frame; end_frame renders it and, when
//     visible, swaps buffers. read_pixels returns the last frame as RGBA rows, top row first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct GLFWwindow;

namespace gmp::view {

class GlWindow {
 public:
  GlWindow(int w, int h, const std::string& title, bool visible);
  ~GlWindow();
  GlWindow(const GlWindow&) = delete;
  GlWindow& operator=(const GlWindow&) = delete;

  bool should_close() const;
  void poll();
  void begin_frame(float dt);
  void end_frame();
  // end_frame in two halves: ImGui::Render (CPU), then OpenGL drawing and the swap.
  void render_ui();
  void draw_gl();
  // Blocks until the GPU (llvmpipe) has finished the frame.
  void finish();
  void read_pixels(std::vector<uint8_t>& rgba) const;

 private:
  GLFWwindow* win_ = nullptr;
  int w_, h_;
  bool visible_;
  unsigned fbo_ = 0, color_ = 0;
};

// Writes RGBA rows (top first) as a PNG; false on failure.
bool write_png(const std::string& path, int w, int h, const std::vector<uint8_t>& rgba);

}  // namespace gmp::view
