// The format-neutral stream of Go scheduler events that both Go execution-trace readers produce
// (go_trace_v1.h, go_trace_v2.h) and go_import.h converts into the gmpsim schema.
//
// Protocol:
//   - A reader yields GoEvents in the order Go's own parser would (generations, batches, sequence
//     numbers), with timestamps in nanoseconds that never decrease. Events that Go's parser
//     synthesizes (the block and start implied by a coroutine switch, the P released by a
//     goroutine that exits in a system call) are yielded as Go's parser yields them.
//   - Every event carries its scheduling context: the M, P and G that performed it (-1: none), as
//     Go's ordering computed it; arg_* name the resource the event is about when that is another
//     one (the G created, started or unblocked, the P started or stolen, the M stolen from).
//   - A range that is in progress when the trace starts (a GC cycle, a G's mark assist, a P's
//     sweep: Go's *Active events of the first generation) comes as its begin with status 1; the
//     same events of later generations restate what is known and come as kDropped.
//   - Strings (reasons, names, stack text) are views into the reader's tables: valid until the
//     next call to next().
//   - Bad input throws TraceFormatError (traces/trace_reader.h) naming the byte offset in the
//     file where the bad part starts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gmp::trace::go {

enum class GoKind : uint8_t {
  kProcsChange,          // value: the new GOMAXPROCS
  kProcStatus,           // arg_p; status / old_status: PStatus
  kProcStart,            // arg_p: the P the M (m) acquires
  kProcStop,             // the M releases its P (p)
  kProcSteal,            // arg_p taken from M arg_m (-1 if it had none) which sits in a syscall
  kGoStatus,             // arg_g, arg_m (-1: none); status / old_status: GStatus (old kUnknown: first seen);
                         // a G in a syscall on another M than the stating one: m is that M, p -1
  kGoCreate,             // arg_g created by g (-1 if none); stack: the creator's; new_stack
  kGoCreateBlocked,      // as kGoCreate, the new G starts blocked
  kGoCreateSyscall,      // arg_g appears on m in a syscall (a cgo callback)
  kGoStart,              // arg_g starts running on m/p; reason: a GC mark worker's label ("GC (idle)")
  kGoStop,               // g stops and stays runnable (reason: Go's string)
  kGoBlock,              // g blocks (reason: Go's string)
  kGoUnblock,            // arg_g becomes runnable, readied by g (-1 if none)
  kGoDestroy,            // g ends
  kGoDestroySyscall,     // g ends while in a syscall (a cgo callback returns)
  kGoSyscallBegin,       // g enters a system call on m, leaving p in syscall state
  kGoSyscallEnd,         // g returns from a system call and keeps its P
  kGoSyscallEndBlocked,  // g returns from a system call that lost its P; g is runnable
  kGoSyscallBlocked,     // first format: g's system call blocks and its P moves on without it
  kUserTaskBegin,        // value: task id; reason: its name
  kUserTaskEnd,          // value: task id
  kUserRegionBegin,      // value: task id; reason: the region's name
  kUserRegionEnd,        // value: task id; reason: the region's name
  kUserLog,              // value: task id; reason: "key=value"
  kGoLabel,              // reason: the label (a GC mark worker's GoStart is followed by its mode's)
  kGCBegin,              // a GC cycle begins (or, first seen, is in progress: synthetic false, status 1)
  kGCEnd,                // the cycle in progress ends
  kSTWBegin,             // g stops the world; reason: Go's stwReason string ("GC sweep termination")
  kSTWEnd,               // the world restarts; reason: as its begin's
  kGCMarkAssistBegin,    // g starts a mark assist (first seen in one: arg_g, status 1)
  kGCMarkAssistEnd,      // g's assist ends
  kGCSweepBegin,         // m on p starts sweeping (first seen sweeping: arg_p, status 1)
  kGCSweepEnd,           // value: bytes swept
  kHeapAlloc,            // value: the live heap in bytes (heapLive)
  kHeapGoal,             // value: the heap goal in bytes
  kDropped,              // CPU samples, GC ranges restated each generation, alloc/free experiments
};

// Go's stwReason strings (runtime/proc.go stwReasonStrings) by Go's number: what the second
// format's STWBegin names, and what the first format's STW kind numbers stand for.
inline constexpr std::string_view kGoStwReasons[] = {
    "unknown",
    "GC mark termination",
    "GC sweep termination",
    "write heap dump",
    "goroutine profile",
    "goroutine profile cleanup",
    "all goroutines stack trace",
    "read mem stats",
    "AllThreadsSyscall",
    "GOMAXPROCS",
    "start trace",
    "stop trace",
    "CountPagesInUse (test)",
    "ReadMetricsSlow (test)",
    "ReadMemStatsSlow (test)",
    "PageCachePagesLeaked (test)",
    "ResetDebugLog (test)",
};

// G and P states as Go's status events state them; kUnknown: before the trace started (the
// first status event of a resource), kNotExist: the resource did not exist.
enum class GStatus : uint8_t { kUnknown, kNotExist, kRunnable, kRunning, kSyscall, kWaiting };
enum class PStatus : uint8_t { kUnknown, kNotExist, kRunning, kIdle, kSyscall, kSyscallAbandoned };

struct GoEvent {
  GoKind kind = GoKind::kDropped;
  uint8_t type = 0;  // Go's own event type number (v1 or v2 numbering), for counts
  uint8_t status = 0;
  uint8_t old_status = 0;
  bool synthetic = false;  // added by Go's ordering rules, not read from the file
  int64_t ts = 0;          // ns
  int64_t g = -1, p = -1, m = -1;
  int64_t arg_g = -1, arg_p = -1, arg_m = -1;
  uint64_t value = 0;
  std::string_view reason;
  std::string_view stack;      // frames innermost first, one "function file:line" a line
  std::string_view new_stack;  // kGoCreate: the new G's start
  uint64_t offset = 0;         // byte offset of the event in the file
};

// A reader of either format.
class GoTraceReader {
 public:
  virtual ~GoTraceReader() = default;
  // The next event into `ev`; false at the end of the trace.
  virtual bool next(GoEvent& ev) = 0;
  // "1.23" etc.: the Go version the trace header names.
  virtual std::string go_version() const = 0;
  // Name of Go's event type `type` (for counts and messages).
  virtual std::string_view type_name(uint8_t type) const = 0;
  // The generation of the event next() gave last (the first format has one: 1).
  virtual uint64_t generation() const = 0;
  // Starts over from the first event.
  virtual void rewind() = 0;
};

}  // namespace gmp::trace::go
