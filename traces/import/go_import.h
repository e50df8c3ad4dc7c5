// Converts a Go execution trace into the gmpsim schema (traces/trace.proto).
//
// Protocol:
//   - open_go_reader picks the reader by the header (or as `format` forces) over the file's bytes.
//   - GoConverter turns the format-neutral stream (go_event.h) into schema Events. It keeps the
//     schema's state machine (traces/state_machine.h) over the events it writes, so which M holds
//     each P is what the validator will see, and where each G was last made runnable. It is fed in
//     two passes: scan() the events of the first generation, or until GOMAXPROCS is known (the
//     header needs it and the time origin), then header(), then convert() every event from the start,
//     which hands the schema events to the sink in order.
//   - Mapping (docs/traces.md has the table): P start/stop/steal become P_ACQUIRE/P_RELEASE; G
//     create, start, stop, block, unblock, exit and syscalls become the GO_* kinds with Go's
//     reason strings mapped to Reason and WaitReason (unlisted ones in label). A G that existed
//     before the trace is not created: it shows at its first event (GO_START for one running,
//     GO_SYSCALL_ENTER for one in a syscall), as traces/validate.h expects of a trace that starts
//     in the middle of a run; a P first seen held gets a P_ACQUIRE. A syscall exit that got a P
//     and the start Go writes after it are one GO_SYSCALL_EXIT. A G made runnable on one P that
//     starts on another yields a STEAL first; each M appears with an M_CREATE before its first
//     event (Header.num_ms is 0). GC cycles become GC_BEGIN/GC_END (value: the cycle's number
//     counted from the trace's start), world stops STW_BEGIN/STW_END (Go's reason string mapped
//     to StwReason), mark assists GC_MARK_ASSIST_BEGIN/END on their G, sweeps
//     GC_SWEEP_BEGIN/END, HeapAlloc/HeapGoal HEAP_ALLOC/HEAP_GOAL (value: bytes); a mark
//     worker's GO_START carries its gc_worker_mode (from the label Go gives the start, which
//     the readers put in the kGoStart's reason). A range in progress at the trace's start (Go's *Active events
//     of the first generation) begins there. CPU samples are dropped. User tasks, regions and
//     logs become ANNOTATIONs (USER_OP_CUSTOM). Every imported trace passes
//     `gmpsim trace validate`.
//   - import_go_trace reads IN, converts it and writes OUT through TraceWriter, so OUT appears
//     only when the whole import succeeded. Bad input throws TraceFormatError (byte offset).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "traces/import/go_event.h"
#include "traces/state_machine.h"
#include "traces/trace.pb.h"

namespace gmp::trace::go {

enum class FormatChoice { kAuto, kV1, kV2 };

std::unique_ptr<GoTraceReader> open_go_reader(const std::string& path, std::string_view data, FormatChoice format);

// The whole file; throws TraceFormatError (offset 0) if it cannot be read.
std::string read_file(const std::string& path);

class GoConverter {
 public:
  using Sink = std::function<void(const Event&)>;

  void scan(const GoEvent& ev);
  Header header(const std::string& go_version) const;
  void convert(const GoEvent& ev, const Sink& sink);

  int64_t gomaxprocs() const { return gomaxprocs_; }

 private:
  struct GInfo {
    int64_t ready_p = -1;     // the P whose queue it was put on when it last became runnable
    int64_t resumes_on = -1;  // the M whose syscall exit with an idle P has it run on already
  };
  Event& make(const GoEvent& ev, Kind kind);
  void emit(const Sink& sink) {
    sink(out_);
    written_.apply(out_);
  }
  void acquire(const GoEvent& ev, int64_t m, int64_t p, const Sink& sink);
  void release(const GoEvent& ev, int64_t p, Reason reason, const Sink& sink);
  void introduce_g(const GoEvent& ev, const Sink& sink);
  static void set_text(std::string* field, std::string_view s);

  void note_m(const GoEvent& ev, int64_t m, const Sink& sink);
  void convert_gc(const GoEvent& ev, const Sink& sink);

  // scan()
  bool scanned_any_ = false;
  int64_t origin_ = 0;
  int64_t gomaxprocs_ = 0;
  int64_t max_initial_p_ = -1;
  // convert()
  Event out_;
  std::unordered_map<int64_t, GInfo> gs_;  // looked up, never iterated
  // The events written so far, as the validator follows them (mid-run: the trace is CLOCK_REAL).
  StateMachine written_{StateMachine::Options{false}};
  std::unordered_set<int64_t> ms_seen_;  // Ms introduced so far
  int64_t last_m_ = -1;                  // the M note_m saw last (already introduced)
  int64_t gc_cycle_ = 0;  // GC cycles begun so far
};

struct ImportResult {
  std::string go_version;
  uint64_t go_events = 0;                   // events the Go reader produced (Go's own, synthesized ones included)
  uint64_t events_written = 0;              // schema events
  std::array<uint64_t, 256> type_counts{};  // Go events read from the file, by Go's type number
};

// The conversion in memory: `data` is the Go trace (`name` names it in errors); on_header gets the
// schema header once the first pass is done, then sink every schema event.
ImportResult convert_go_trace(const std::string& name, std::string_view data, FormatChoice format,
                              const std::function<void(const Header&)>& on_header, const GoConverter::Sink& sink);

ImportResult import_go_trace(const std::string& in, const std::string& out, FormatChoice format);

}  // namespace gmp::trace::go
