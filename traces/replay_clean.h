// Cleaning a trace before `gmpsim replay` derives a scenario from it (traces/derive_scenario.h):
// what the trace shows that is not the program's work.
//
// - The tracer's own goroutines (tracer_goroutine): the goroutines Go's execution tracer starts
//   to read its buffers and CPU samples and to advance its generations. derive_scenario leaves them
//   out and counts them (DerivedScenario::tracer_gs, tracer_running_ns).
// - OS waits. A Go trace counts a goroutine as running from its start to its stop, also while the
//   OS kept its thread off a core; the replay would turn that wait into work. clean_timeline sets
//   Interval::off_cpu on the Running intervals where the trace shows such a wait:
//   (a) wherever more goroutines were running at once than the traced machine had cores
//       (CleanOptions::traced_cores: `replay --traced-cores` or the trace's header (header_cores);
//       not applied when neither says, so that a replay does not depend on the machine that
//       replays), the excess (running - cores) x the stretch is off-CPU,
//       shared equally among the goroutines running then;
//   (b) when the process's measured CPU time is given (CleanOptions::cpu_time_ns) and the trace's
//       running time exceeds it, the excess is off-CPU: first what (a) already took out counts
//       toward it, the rest is taken out of every running interval in proportion to its
//       remaining work.
//   Off-CPU time is taken out of every goroutine's running intervals, the runtime's and the
//   tracer's too (they held cores as well), though only the program's are replayed.
// - What it cannot take out, it reports (CleanReport::warnings): running time above what the
//   cores could give (span x cores), and stretches where a P was held with no goroutine running
//   while one waited to run (a gap on a P longer than kHeldIdleNs between one goroutine's stop
//   and the next one's start, that next goroutine runnable all through it): the replay has no
//   such stretches, so it runs shorter by about that much.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/timeline.h"

namespace gmp::trace {

// A gap on a P longer than this, with a goroutine runnable all through it, is reported as a P held
// with nothing running: 100 us, a judgement: more than any path of the scheduler takes to find and
// start a runnable goroutine (a few us), far less than the OS's time slice (a few ms) that a
// descheduled M waits out.
inline constexpr int64_t kHeldIdleNs = 100000;

// A trace with fewer events than this is refused by replay as too short to derive a program from.
inline constexpr uint64_t kMinReplayEvents = 8;

// A trace whose span is longer than this (2^53 ns, about 104 days) is refused: every difference of
// its timestamps then fits in an int64 many times over, and a double holds it to the ns.
inline constexpr int64_t kMaxReplaySpanNs = int64_t{1} << 53;

// Saturating arithmetic for sums and products of durations that a crafted trace can push past
// int64 (running time summed over many goroutines, span x cores): clamped to INT64_MIN..INT64_MAX.
int64_t sat_add(int64_t a, int64_t b);
int64_t sat_sub(int64_t a, int64_t b);
int64_t sat_mul(int64_t a, int64_t b);

// The function a goroutine started in, for matching and reporting: its start function (GO_CREATE's
// label) or, for a goroutine whose creation is not in the trace, read from its first park's stack:
// the outermost frame outside package runtime ("runtime." and "internal/runtime/" functions:
// runtime.main, runtime.goexit below it, and the park's own runtime.gopark, chanrecv, ... above
// it), so that a goroutine parked in a helper is still named by its entry ("main.worker", not
// "main.helper" or "runtime.chanrecv2"); a runtime goroutine (every frame the runtime's) by its
// outermost frame other than runtime.goexit ("runtime.bgsweep"). The key's G1 with no creation in
// the trace is Go's main goroutine: "main.main". "" when the trace says nothing.
std::string start_function(const GKey& key, const GLife& life);
// The same for a goroutine that is not G1.
std::string start_function(const GLife& life);

// Whether a goroutine is one of Go's execution tracer's own: it started in, or parked in, the
// tracer's reader, CPU-sample reader or generation advancer (Go 1.19 to 1.23's names).
bool tracer_goroutine(const GLife& life);

// Whether a goroutine is the runtime's: a GC mark worker, one that waits for a wait reason only the
// runtime's goroutines use (derive_scenario.h's runtime_wait_reason), or one whose start function
// (start_function) is in package runtime ("runtime.bgsweep", "runtime.forcegchelper",
// "runtime.gcBgMarkWorker", ...; "runtime.main" is G1's and is main.main).
bool runtime_goroutine(const Timeline& tl, const GKey& key, const GLife& life);

// A goroutine of the program: neither the runtime's nor the tracer's.
bool program_goroutine(const Timeline& tl, const GKey& key, const GLife& life);

// A goroutine's work in the trace: its running time less what the OS held it off its core.
int64_t work_ns(const GLife& life);

// The traced machine's cores as the trace's header says them (metadata "cores", which a simulated
// trace has); 0 when it does not say (an imported Go trace).
int32_t header_cores(const Timeline& tl);

struct CleanOptions {
  int32_t traced_cores = 0;  // the traced machine's cores; <= 0: not known, (a) is not applied
  int64_t cpu_time_ns = -1;  // the traced process's measured CPU time; < 0: not given
};

struct CleanReport {
  uint64_t tracer_gs = 0;
  int64_t tracer_running_ns = 0;
  int64_t running_ns = 0;       // every goroutine's running time, as read
  int64_t capacity_ns = 0;      // span x traced cores (0 when the cores are not known)
  int64_t over_cores_ns = 0;    // (a): taken out where more ran than the cores
  int64_t over_cpu_time_ns = 0; // (b): taken out beyond (a) to meet the measured CPU time
  int64_t held_idle_ns = 0;     // P held, nothing running, a goroutine waiting (not taken out)
  uint64_t held_idle_stretches = 0;
  std::vector<std::string> warnings;
};

// Sets Interval::off_cpu on tl's Running intervals (adding to what is there) and reports.
CleanReport clean_timeline(Timeline& tl, const CleanOptions& opt);

// Reads the trace at `path` into tl and checks that replay can derive a program from it: the
// reader's error (a cut or corrupt file: its byte offset), the validator's first problem (an
// unblock of a goroutine that is not blocked, ...: its event), fewer than kMinReplayEvents events,
// no goroutine of the program, a span over kMaxReplaySpanNs. Returns the message ("PATH: ...") or ""
// when it is fine.
std::string read_replay_trace(const std::string& path, Timeline& tl);

// "12.345 ms"
std::string ms_text(int64_t ns);

}  // namespace gmp::trace
