// A GLFW window with ImGui on OpenGL 3: see gl_window.h.
#include "viewer/gl_window.h"

#include <GL/gl.h>
#include <GL/glext.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb_image_write.h>

#include <stdexcept>

#include "viewer/flat_renderer.h"

namespace gmp::view {

namespace {

// Framebuffer objects are OpenGL 3 core; their entry points come from the context.
PFNGLGENFRAMEBUFFERSPROC gen_framebuffers;
PFNGLBINDFRAMEBUFFERPROC bind_framebuffer;
PFNGLGENRENDERBUFFERSPROC gen_renderbuffers;
PFNGLBINDRENDERBUFFERPROC bind_renderbuffer;
PFNGLRENDERBUFFERSTORAGEPROC renderbuffer_storage;
PFNGLFRAMEBUFFERRENDERBUFFERPROC framebuffer_renderbuffer;
PFNGLCHECKFRAMEBUFFERSTATUSPROC check_framebuffer_status;
PFNGLDELETEFRAMEBUFFERSPROC delete_framebuffers;
PFNGLDELETERENDERBUFFERSPROC delete_renderbuffers;

std::string glfw_error;

void on_glfw_error(int, const char* text) { glfw_error = text; }

template <class F>
void load(F& f, const char* name) {
  f = reinterpret_cast<F>(glfwGetProcAddress(name));
  if (f == nullptr) throw std::runtime_error(std::string("OpenGL lacks ") + name);
}

}  // namespace

GlWindow::GlWindow(int w, int h, const std::string& title, bool visible) : w_(w), h_(h), visible_(visible) {
  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    throw std::runtime_error("cannot open a display (" + glfw_error + "); run under xvfb-run -a for --screenshot");
  }
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  win_ = glfwCreateWindow(w, h, title.c_str(), nullptr, nullptr);
  if (win_ == nullptr) {
    glfwTerminate();
    throw std::runtime_error("cannot create an OpenGL 3 window: " + glfw_error);
  }
  glfwMakeContextCurrent(win_);
  glfwSwapInterval(visible ? 1 : 0);
  if (!visible) {
    load(gen_framebuffers, "glGenFramebuffers");
    load(bind_framebuffer, "glBindFramebuffer");
    load(gen_renderbuffers, "glGenRenderbuffers");
    load(bind_renderbuffer, "glBindRenderbuffer");
    load(renderbuffer_storage, "glRenderbufferStorage");
    load(framebuffer_renderbuffer, "glFramebufferRenderbuffer");
    load(check_framebuffer_status, "glCheckFramebufferStatus");
    load(delete_framebuffers, "glDeleteFramebuffers");
    load(delete_renderbuffers, "glDeleteRenderbuffers");
    gen_framebuffers(1, &fbo_);
    bind_framebuffer(GL_FRAMEBUFFER, fbo_);
    gen_renderbuffers(1, &color_);
    bind_renderbuffer(GL_RENDERBUFFER, color_);
    renderbuffer_storage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    framebuffer_renderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_);
    if (check_framebuffer_status(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
      throw std::runtime_error("cannot create an offscreen framebuffer");
    }
  }
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  ImGui::StyleColorsDark();
  ImGui::GetStyle().ItemSpacing = ImVec2(6, 3);
  if (visible) ImGui_ImplGlfw_InitForOpenGL(win_, true);
  ImGui_ImplOpenGL3_Init("#version 130");
  install_flat_renderer();
}

GlWindow::~GlWindow() {
  uninstall_flat_renderer();
  ImGui_ImplOpenGL3_Shutdown();
  if (visible_) ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  if (fbo_ != 0) {
    delete_framebuffers(1, &fbo_);
    delete_renderbuffers(1, &color_);
  }
  glfwDestroyWindow(win_);
  glfwTerminate();
}

bool GlWindow::should_close() const { return glfwWindowShouldClose(win_); }

void GlWindow::poll() { glfwPollEvents(); }

void GlWindow::begin_frame(float dt) {
  ImGui_ImplOpenGL3_NewFrame();
  ImGuiIO& io = ImGui::GetIO();
  if (visible_) {
    ImGui_ImplGlfw_NewFrame();
    glfwGetFramebufferSize(win_, &w_, &h_);
  } else {
    io.DisplaySize = ImVec2(static_cast<float>(w_), static_cast<float>(h_));
    io.DeltaTime = dt > 0 ? dt : 1.0f / 60;
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  }
  ImGui::NewFrame();
}

void GlWindow::end_frame() {
  render_ui();
  draw_gl();
}

void GlWindow::render_ui() { ImGui::Render(); }

void GlWindow::draw_gl() {
  if (fbo_ != 0) bind_framebuffer(GL_FRAMEBUFFER, fbo_);
  glViewport(0, 0, w_, h_);
  glClearColor(30 / 255.0f, 30 / 255.0f, 34 / 255.0f, 1);  // colors.h kBackground
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  if (visible_) glfwSwapBuffers(win_);
}

void GlWindow::finish() { glFinish(); }

void GlWindow::read_pixels(std::vector<uint8_t>& rgba) const {
  rgba.resize(static_cast<size_t>(w_) * static_cast<size_t>(h_) * 4);
  std::vector<uint8_t> row(static_cast<size_t>(w_) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w_, h_, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
  // OpenGL's first row is the bottom one.
  for (int y = 0; y < h_ / 2; ++y) {
    uint8_t* a = rgba.data() + static_cast<size_t>(y) * row.size();
    uint8_t* b = rgba.data() + static_cast<size_t>(h_ - 1 - y) * row.size();
    std::copy(a, a + row.size(), row.data());
    std::copy(b, b + row.size(), a);
    std::copy(row.data(), row.data() + row.size(), b);
  }
}

bool write_png(const std::string& path, int w, int h, const std::vector<uint8_t>& rgba) {
  return stbi_write_png(path.c_str(), w, h, 4, rgba.data(), w * 4) != 0;
}

}  // namespace gmp::view
