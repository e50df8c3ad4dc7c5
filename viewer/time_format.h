// Times as text, both ways: durations with adaptive units for the ruler and tooltips, and the
// times a user types (--view T0:T1, "jump to time"): a number with an optional unit ns, us, ms, s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gmp::view {

// Writes `ns` with a unit chosen for `resolution_ns` (the smallest difference worth showing).
void format_time(char* buf, size_t n, double ns, double resolution_ns);
// Writes a duration with 3 significant digits: "1.25 ms".
void format_duration(char* buf, size_t n, double ns);
// The same on a trace's axis: time, or, when `steps` (model.h step_axis), event numbers:
// "step 12" and "5 steps".
void format_point(char* buf, size_t n, double t, double resolution, bool steps);
void format_span(char* buf, size_t n, double d, bool steps);
// Writes a byte count with a binary unit and 3 significant digits: "512 B", "4.00 MiB".
void format_bytes(char* buf, size_t n, int64_t bytes);
// Parses "1500", "1.5us", "2 ms", "0.1s" into ns; false on anything else.
bool parse_time(std::string_view text, double& ns);
// The ruler's tick spacing: 1, 2 or 5 times a power of ten, at least `min_ns`.
double nice_step(double min_ns);

}  // namespace gmp::view
