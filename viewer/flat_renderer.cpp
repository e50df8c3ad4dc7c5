// The flat-colour rectangle renderer: see flat_renderer.h.
#include "viewer/flat_renderer.h"

#include <GL/gl.h>
#include <GL/glext.h>
#include <GLFW/glfw3.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "viewer/rect_batch.h"
#include "viewer/timeline_draw.h"

namespace gmp::view {

namespace {

struct Gl {
  PFNGLCREATESHADERPROC CreateShader;
  PFNGLSHADERSOURCEPROC ShaderSource;
  PFNGLCOMPILESHADERPROC CompileShader;
  PFNGLGETSHADERIVPROC GetShaderiv;
  PFNGLCREATEPROGRAMPROC CreateProgram;
  PFNGLATTACHSHADERPROC AttachShader;
  PFNGLLINKPROGRAMPROC LinkProgram;
  PFNGLGETPROGRAMIVPROC GetProgramiv;
  PFNGLUSEPROGRAMPROC UseProgram;
  PFNGLDELETEPROGRAMPROC DeleteProgram;
  PFNGLDELETESHADERPROC DeleteShader;
  PFNGLGETUNIFORMLOCATIONPROC GetUniformLocation;
  PFNGLGETATTRIBLOCATIONPROC GetAttribLocation;
  PFNGLUNIFORM2FPROC Uniform2f;
  PFNGLGENBUFFERSPROC GenBuffers;
  PFNGLDELETEBUFFERSPROC DeleteBuffers;
  PFNGLBINDBUFFERPROC BindBuffer;
  PFNGLBUFFERDATAPROC BufferData;
  PFNGLVERTEXATTRIBPOINTERPROC VertexAttribPointer;
  PFNGLENABLEVERTEXATTRIBARRAYPROC EnableVertexAttribArray;
  PFNGLGENVERTEXARRAYSPROC GenVertexArrays;
  PFNGLDELETEVERTEXARRAYSPROC DeleteVertexArrays;
  PFNGLBINDVERTEXARRAYPROC BindVertexArray;
};

struct Vertex {
  float x, y;
  uint32_t col;
};

struct Renderer {
  Gl gl{};
  GLuint program = 0, vao = 0, vbo = 0;
  GLint u_size = -1;
  std::vector<Vertex> opaque, translucent;  // reused every frame
};

Renderer* g_renderer = nullptr;

template <class F>
void load(F& f, const char* name) {
  f = reinterpret_cast<F>(glfwGetProcAddress(name));
  if (f == nullptr) throw std::runtime_error(std::string("OpenGL lacks ") + name);
}

GLuint compile(const Gl& gl, GLenum kind, const char* src) {
  const GLuint s = gl.CreateShader(kind);
  gl.ShaderSource(s, 1, &src, nullptr);
  gl.CompileShader(s);
  GLint ok = 0;
  gl.GetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) throw std::runtime_error("the flat-colour shader does not compile");
  return s;
}

void push_rect(std::vector<Vertex>& v, const FlatRect& r) {
  const Vertex a{r.x0, r.y0, r.col}, b{r.x1, r.y0, r.col}, c{r.x1, r.y1, r.col}, d{r.x0, r.y1, r.col};
  v.push_back(a), v.push_back(b), v.push_back(c);
  v.push_back(a), v.push_back(c), v.push_back(d);
}

void draw(Renderer& r, const std::vector<Vertex>& v) {
  if (v.empty()) return;
  r.gl.BufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(v.size() * sizeof(Vertex)), v.data(), GL_STREAM_DRAW);
  glDrawArrays(GL_TRIANGLES, 0, static_cast<GLsizei>(v.size()));
}

void callback(const ImDrawList*, const ImDrawCmd* cmd) {
  Renderer* r = g_renderer;
  const auto* batch = static_cast<const RectBatch*>(cmd->UserCallbackData);
  if (r == nullptr || batch == nullptr) return;
  r->opaque.clear();
  r->translucent.clear();
  for (const FlatRect& rect : batch->rects()) push_rect((rect.col >> 24) == 0xff ? r->opaque : r->translucent, rect);
  const ImDrawData* dd = ImGui::GetDrawData();
  const ImVec2 size = dd != nullptr ? dd->DisplaySize : ImGui::GetIO().DisplaySize;
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_CULL_FACE);
  glDisable(GL_DEPTH_TEST);
  r->gl.UseProgram(r->program);
  r->gl.Uniform2f(r->u_size, size.x, size.y);
  r->gl.BindVertexArray(r->vao);
  r->gl.BindBuffer(GL_ARRAY_BUFFER, r->vbo);
  glDisable(GL_BLEND);
  draw(*r, r->opaque);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  draw(*r, r->translucent);
}

}  // namespace

void install_flat_renderer() {
  if (g_renderer != nullptr) return;
  auto r = std::make_unique<Renderer>();
  Gl& gl = r->gl;
  load(gl.CreateShader, "glCreateShader");
  load(gl.ShaderSource, "glShaderSource");
  load(gl.CompileShader, "glCompileShader");
  load(gl.GetShaderiv, "glGetShaderiv");
  load(gl.CreateProgram, "glCreateProgram");
  load(gl.AttachShader, "glAttachShader");
  load(gl.LinkProgram, "glLinkProgram");
  load(gl.GetProgramiv, "glGetProgramiv");
  load(gl.UseProgram, "glUseProgram");
  load(gl.DeleteProgram, "glDeleteProgram");
  load(gl.DeleteShader, "glDeleteShader");
  load(gl.GetUniformLocation, "glGetUniformLocation");
  load(gl.GetAttribLocation, "glGetAttribLocation");
  load(gl.Uniform2f, "glUniform2f");
  load(gl.GenBuffers, "glGenBuffers");
  load(gl.DeleteBuffers, "glDeleteBuffers");
  load(gl.BindBuffer, "glBindBuffer");
  load(gl.BufferData, "glBufferData");
  load(gl.VertexAttribPointer, "glVertexAttribPointer");
  load(gl.EnableVertexAttribArray, "glEnableVertexAttribArray");
  load(gl.GenVertexArrays, "glGenVertexArrays");
  load(gl.DeleteVertexArrays, "glDeleteVertexArrays");
  load(gl.BindVertexArray, "glBindVertexArray");
  const GLuint vs = compile(gl, GL_VERTEX_SHADER,
                            "#version 130\n"
                            "uniform vec2 size;\n"
                            "in vec2 pos;\n"
                            "in vec4 col;\n"
                            "out vec4 c;\n"
                            "void main() {\n"
                            "  c = col;\n"
                            "  gl_Position = vec4(pos.x / size.x * 2.0 - 1.0, 1.0 - pos.y / size.y * 2.0, 0, 1);\n"
                            "}\n");
  const GLuint fs = compile(gl, GL_FRAGMENT_SHADER,
                            "#version 130\n"
                            "in vec4 c;\n"
                            "out vec4 o;\n"
                            "void main() { o = c; }\n");
  r->program = gl.CreateProgram();
  gl.AttachShader(r->program, vs);
  gl.AttachShader(r->program, fs);
  gl.LinkProgram(r->program);
  gl.DeleteShader(vs);
  gl.DeleteShader(fs);
  GLint ok = 0;
  gl.GetProgramiv(r->program, GL_LINK_STATUS, &ok);
  if (!ok) throw std::runtime_error("the flat-colour shader does not link");
  r->u_size = gl.GetUniformLocation(r->program, "size");
  gl.GenVertexArrays(1, &r->vao);
  gl.GenBuffers(1, &r->vbo);
  gl.BindVertexArray(r->vao);
  gl.BindBuffer(GL_ARRAY_BUFFER, r->vbo);
  const auto pos = static_cast<GLuint>(gl.GetAttribLocation(r->program, "pos"));
  const auto col = static_cast<GLuint>(gl.GetAttribLocation(r->program, "col"));
  gl.EnableVertexAttribArray(pos);
  gl.VertexAttribPointer(pos, 2, GL_FLOAT, GL_FALSE, sizeof(Vertex), reinterpret_cast<void*>(offsetof(Vertex, x)));
  gl.EnableVertexAttribArray(col);
  gl.VertexAttribPointer(col, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof(Vertex),
                         reinterpret_cast<void*>(offsetof(Vertex, col)));
  gl.BindVertexArray(0);
  r->opaque.reserve(6 << 15);
  r->translucent.reserve(6 << 10);
  g_renderer = r.release();
  set_flat_draw_callback(&callback);
}

void uninstall_flat_renderer() {
  if (g_renderer == nullptr) return;
  set_flat_draw_callback(nullptr);
  Gl& gl = g_renderer->gl;
  gl.DeleteBuffers(1, &g_renderer->vbo);
  gl.DeleteVertexArrays(1, &g_renderer->vao);
  gl.DeleteProgram(g_renderer->program);
  delete g_renderer;
  g_renderer = nullptr;
}

}  // namespace gmp::view
