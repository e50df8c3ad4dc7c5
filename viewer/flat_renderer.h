// Draws a RectBatch with OpenGL 3: one flat-colour shader, no texture, blending only for
// translucent colours. Installed as the timeline's ImGui draw callback (timeline_draw.h), so the
// rectangles land between what ImGui drew before and after them.
//
// Protocol: install_flat_renderer() after the OpenGL context and ImGui exist (GlWindow does it);
// it registers its draw callback with the timeline (set_flat_draw_callback, timeline_draw.h).
// Without it (tests with no window) the timeline fills its RectBatch and nothing draws it.
#pragma once

#include <imgui.h>

namespace gmp::view {

void install_flat_renderer();
void uninstall_flat_renderer();

}  // namespace gmp::view
