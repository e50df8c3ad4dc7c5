// The viewer's interaction, driven through ImGui's input with no window: wheel zoom around the
// cursor, drag to pan, shift-drag to select, a click that follows a G, WASD, the step list of a
// counterexample, compare mode's shared axis, and a trace that does not load.
#include "viewer/app.h"

#include <imgui.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <functional>
#include <string>

#include "tests/view/small_trace.h"
#include "viewer/layout.h"

namespace fs = std::filesystem;
using namespace gmp::view;

namespace {

constexpr int kDown = 264, kUp = 265;  // GLFW's key codes, as the GLFW backend maps them

struct Ui {
  fs::path dir;
  Ui() {
    std::string tmpl = (fs::temp_directory_path() / "gmp_view_app.XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1400, 700);
    io.DeltaTime = 1.0f / 60;
    io.KeyMap[ImGuiKey_DownArrow] = kDown;
    io.KeyMap[ImGuiKey_UpArrow] = kUp;
    unsigned char* px;
    int w, h;
    io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);
  }
  ~Ui() {
    ImGui::DestroyContext();
    fs::remove_all(dir);
  }
  std::string trace(const std::string& name, const std::string& producer = "gmpview test") {
    const std::string p = (dir / name).string();
    testing::write_small_trace(p, producer);
    return p;
  }
  void frame(App& app, const std::function<void(ImGuiIO&)>& input = {}) {
    ImGuiIO& io = ImGui::GetIO();
    if (input) input(io);
    ImGui::NewFrame();
    app.frame(1.0f / 60);
    ImGui::Render();
    io.MouseWheel = 0;
  }
};

// Screen y of a lane's centre in doc d.
float lane_y(App& app, size_t d, uint32_t ref) {
  const Doc& doc = app.doc(d);
  return doc.vp.rows_y() - doc.state.scroll_y + doc.layout.lane_center(ref);
}

}  // namespace

TEST_CASE("view app: the wheel zooms around the cursor, a drag pans") {
  Ui ui;
  AppOptions opt;
  opt.paths = {ui.trace("a.gmptrace")};
  App app(opt);
  REQUIRE(app.ok());
  ui.frame(app);
  Doc& d = app.doc(0);
  const float x = d.vp.lanes_x() + 300, y = lane_y(app, 0, lane_ref(LaneType::P, 1));
  const double zoom = d.state.ns_per_px;
  const double t_under = d.state.axis(d.vp).t(x);
  ui.frame(app, [&](ImGuiIO& io) { io.MousePos = ImVec2(x, y); });
  ui.frame(app, [&](ImGuiIO& io) { io.MouseWheel = 1; });
  CHECK(d.state.ns_per_px == Approx(zoom * 0.8));
  CHECK(d.state.axis(d.vp).t(x) == Approx(t_under));
  // Drag 100 px right in two moves: the view moves 100 px left in time.
  const double t0 = d.state.t0, npp = d.state.ns_per_px;
  ui.frame(app, [&](ImGuiIO& io) { io.MouseDown[0] = true; });
  ui.frame(app, [&](ImGuiIO& io) { io.MousePos.x += 50; });
  ui.frame(app, [&](ImGuiIO& io) { io.MousePos.x += 50; });
  ui.frame(app, [&](ImGuiIO& io) { io.MouseDown[0] = false; });
  CHECK(d.state.t0 == Approx(t0 - 100 * npp));
  CHECK_FALSE(d.state.has_selection);
  CHECK(d.state.selected_g == kNoG);  // a drag is not a click
}

TEST_CASE("view app: shift-drag selects a range, a click follows a G and lists its life") {
  Ui ui;
  AppOptions opt;
  opt.paths = {ui.trace("a.gmptrace")};
  opt.view = std::make_pair(0.0, 1400.0);
  App app(opt);
  ui.frame(app);
  Doc& d = app.doc(0);
  const TimeAxis ax = d.state.axis(d.vp);
  const float y = lane_y(app, 0, lane_ref(LaneType::P, 0));
  ui.frame(app, [&](ImGuiIO& io) { io.MousePos = ImVec2(ax.x(200), y), io.KeyShift = true; });
  ui.frame(app, [&](ImGuiIO& io) { io.MouseDown[0] = true; });
  ui.frame(app, [&](ImGuiIO& io) { io.MousePos.x = ax.x(600); });
  ui.frame(app, [&](ImGuiIO& io) { io.MouseDown[0] = false, io.KeyShift = false; });
  REQUIRE(d.state.has_selection);
  CHECK(d.state.sel_t0 == Approx(200).margin(3));
  CHECK(d.state.sel_t1 == Approx(600).margin(3));
  CHECK(d.sel.t0 == d.state.sel_t0);  // the statistics panel computed the selection's figures
  CHECK(d.sel.starts == 2);
  // Click G1's first run on P0.
  ui.frame(app, [&](ImGuiIO& io) { io.MousePos = ImVec2(ax.x(300), y); });
  ui.frame(app, [&](ImGuiIO& io) { io.MouseDown[0] = true; });
  ui.frame(app, [&](ImGuiIO& io) { io.MouseDown[0] = false; });
  REQUIRE(d.state.selected_g == 1);
  std::vector<int> kinds;
  for (uint32_t i : d.life) kinds.push_back(d.model.events[i].kind);
  using namespace gmp::trace;
  CHECK(kinds == std::vector<int>{KIND_GO_CREATE, KIND_GO_START, KIND_GO_STOP, KIND_GO_START, KIND_GO_EXIT});
  CHECK(d.life_latency[1] == 90);
  CHECK(d.life_latency[3] == 700);
}

TEST_CASE("view app: W and S zoom, A and D pan, as in Tracy") {
  Ui ui;
  AppOptions opt;
  opt.paths = {ui.trace("a.gmptrace")};
  App app(opt);
  ui.frame(app);
  Doc& d = app.doc(0);
  const double npp = d.state.ns_per_px, t0 = d.state.t0;
  ui.frame(app, [&](ImGuiIO& io) { io.KeysDown['W'] = true; });
  CHECK(d.state.ns_per_px == Approx(npp * std::exp(-2.5 / 60)));
  ui.frame(app, [&](ImGuiIO& io) { io.KeysDown['W'] = false, io.KeysDown['S'] = true; });
  ui.frame(app, [&](ImGuiIO& io) { io.KeysDown['S'] = false; });
  CHECK(d.state.ns_per_px == Approx(npp));
  const double t1 = d.state.t0;
  ui.frame(app, [&](ImGuiIO& io) { io.KeysDown['D'] = true; });
  ui.frame(app, [&](ImGuiIO& io) { io.KeysDown['D'] = false; });
  CHECK(d.state.t0 > t1);
  CHECK(t1 != t0);  // zooming about the centre moved the left edge
}

TEST_CASE("view app: a counterexample opens on its steps and the cursor follows the step list") {
  Ui ui;
  AppOptions opt;
  opt.paths = {ui.trace("cx.gmptrace", "gmpsim check")};
  App app(opt);
  Doc& d = app.doc(0);
  REQUIRE(d.model.step_axis);
  CHECK(d.model.clock_ts[5] == 20);  // the checker's clock is kept for the tooltip and the list
  CHECK(app.step() == 0);
  ui.frame(app);
  CHECK(d.state.cursor_ts == 0);
  ui.frame(app, [&](ImGuiIO& io) { io.KeysDown[kDown] = true; });
  ui.frame(app, [&](ImGuiIO& io) { io.KeysDown[kDown] = false; });
  CHECK(app.step() == 1);
  CHECK(d.state.cursor_ts == 1);
  ui.frame(app, [&](ImGuiIO& io) { io.KeysDown[kUp] = true; });
  ui.frame(app, [&](ImGuiIO& io) { io.KeysDown[kUp] = false; });
  CHECK(app.step() == 0);
  // Zoomed in on the start, a step far right re-centres the view on it.
  app.show_range(0, 4);
  app.set_step(25);
  const TimeAxis ax = d.state.axis(d.vp);
  CHECK(ax.x(25) == Approx(d.vp.lanes_x() + d.vp.lanes_w() / 2).margin(1));
  // A click on the timeline moves the step to the event there.
  ui.frame(app, [&](ImGuiIO& io) { io.MousePos = ImVec2(ax.x(26), lane_y(app, 0, lane_ref(LaneType::P, 0))); });
  ui.frame(app, [&](ImGuiIO& io) { io.MouseDown[0] = true; });
  ui.frame(app, [&](ImGuiIO& io) { io.MouseDown[0] = false; });
  CHECK(app.step() == 26);
  app.set_step(1000);
  CHECK(app.step() == 31);  // clamped to the last event
}

TEST_CASE("view app: compare mode keeps one time axis, a bad trace shows its error") {
  Ui ui;
  AppOptions opt;
  opt.paths = {ui.trace("a.gmptrace"), ui.trace("b.gmptrace")};
  App app(opt);
  ui.frame(app);
  REQUIRE(app.docs().size() == 2);
  Doc& a = app.doc(0);
  Doc& b = app.doc(1);
  CHECK(b.vp.y > a.vp.y + a.vp.h - 10);
  ui.frame(app,
           [&](ImGuiIO& io) { io.MousePos = ImVec2(b.vp.lanes_x() + 200, lane_y(app, 1, lane_ref(LaneType::P, 0))); });
  ui.frame(app, [&](ImGuiIO& io) { io.MouseWheel = -2; });
  CHECK(a.state.ns_per_px == b.state.ns_per_px);
  CHECK(a.state.t0 == b.state.t0);
  CHECK(b.state.ns_per_px > 0);

  AppOptions bad;
  bad.paths = {(ui.dir / "missing.gmptrace").string()};
  App broken(bad);
  CHECK_FALSE(broken.ok());
  CHECK_THAT(broken.doc(0).error, Catch::Contains("at byte offset 0: cannot open"));
  ui.frame(broken);  // draws the message, does not crash
}
