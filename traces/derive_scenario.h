// A scenario derived from a trace (`gmpsim replay`), so that a recorded run can be replayed as a
// what-if at other GOMAXPROCS and core counts. The result is scenario text (sim/scenario's format)
// that users can read and edit.
//
// The derivation, per goroutine of the program (the runtime's own goroutines are left out: the
// simulated runtime starts its own):
//   - its running time becomes `compute`, cut where it started or readied another goroutine;
//   - starting a goroutine becomes `go`; readying one becomes a send on that goroutine's wake
//     channel (buffered: a waker never blocks on it), and the wait it ended a receive from it;
//   - a wait nobody in the program ended (a timer, the netpoller, the runtime) becomes `sleep` for
//     as long as it lasted (a wait that ended less than 100 us past a whole millisecond is replayed
//     as the whole milliseconds: the replay's own netpoll rounds timer waits up to milliseconds as
//     Go's does, and would otherwise add one more), a system call `syscall` for as long as it
//     lasted, a yield `gosched`.
//     A trace does not say whether a system call slept in the kernel or worked there; one shorter
//     than kOnCpuSyscallNs is taken as kernel work on the thread's core (`on_cpu: true`: no
//     context switch when it returns), a longer one as a sleep;
//   - a wait that never ended becomes a receive nobody sends on;
//   - a goroutine that was already there when the trace began, or whose creator is not in the
//     program, is started by main first and sleeps until it appeared.
// The heap, when the trace has the collector's events (an imported Go trace, a simulated run that
// allocates): the heap counter (HEAP_ALLOC: heapLive, which rises as Ms take spans for
// allocation) rises are allocation, `alloc { bytes: B count: 1 }` by the goroutine whose M raised it
// (the G the event names, else the one running on its M, else main), placed at that time in its
// running time; the counter at the trace's start is main's first allocation. Which bytes stay
// reachable comes from each GC cycle's end, where the counter is reset to the heap the cycle
// marked: when the marked heap grew since the last cycle, the first allocations after it are
// retained (`retain: true`) up to the growth; when it shrank, the difference is released
// (`release`) before the first allocation after the last cycle. So the replay's live heap, which
// the collector's pace follows, is the traced one at each cycle's end, and the replay ends with
// the last marked heap retained. Object sizes are not in a trace: each rise is one object.
// Shared mode (the default) replays worker pools differently: replay_pool.h finds them, each
// member's running time is cut into the items it took, the feeders send each item's work as a value
// on one channel per pool (`poolN`, as large as the pool's items), and each member becomes a range
// loop over it (`compute { duration_expr: "v" }`, then the wake-ups the item carries); a member's
// end that woke a waiter becomes a WaitGroup (`poolN_end`) that waiter waits on. Everything else is
// derived as above, so a trace without pools gives the same text in both modes.
// Preemptions are not replayed: the simulated scheduler preempts on its own. The running time kept
// includes what the runtime spent on the goroutine's behalf (its channel operations, say), which
// the replay spends again: a replay at the trace's own GOMAXPROCS runs a little longer.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "traces/timeline.h"

namespace gmp::trace {

// The line between a system call that worked in the kernel and one that slept there: 20 us, the
// time after which Go's own sysmon first treats a call as blocked and retakes its P (its shortest
// sleep, sysmon's 20 us delay). A judgement, not a measurement: a 4 KiB page-cache write takes
// about 0.7 us, a read that waits for the network as long as the network takes.
inline constexpr int64_t kOnCpuSyscallNs = 20000;

// How goroutines' work is replayed. Pinned: each goroutine replays the work it did in the trace
// (today's derivation). Shared: goroutines found to share one work source (a pool: same start
// function, blocked at the same receive site, unblocked by the same senders; replay_pool.h) pull
// their work items from one channel, each item's size sent as its value, so work follows the items
// at any GOMAXPROCS; goroutines without that structure stay pinned.
enum class ReplayMode : uint8_t { Shared, Pinned };

struct DeriveOptions {
  ReplayMode mode = ReplayMode::Shared;
  // What one replayed operation (go, a send, a receive, a system call, a sleep, a yield) costs the
  // replay in running time that the trace's running time already holds: taken out of the compute
  // before it (after it, for a receive). gmpsim replay fits it (sim/simulation/replay_fit.h); 0:
  // nothing taken out.
  int64_t op_overhead_ns = 0;
};

struct DerivedScenario {
  std::string text;         // the scenario
  uint64_t goroutines = 0;  // of the program, one function each
  uint64_t runtime_gs = 0;  // the runtime's, left out
  uint64_t ops = 0;
  uint64_t sync_ops = 0;   // go, send, receive, syscall, sleep and gosched operations
  int64_t running_ns = 0;  // the program's goroutines' running time in the trace
  uint64_t alloc_bytes = 0;      // allocated, all told (the heap counter's rises, and its start)
  uint64_t alloc_ops = 0;        // alloc operations written
  int64_t retained_bytes = 0;    // retained less released: the live heap the replay ends with
  uint64_t trace_gc_cycles = 0;  // GC cycles that ended in the trace
  int64_t span = 0;   // of the trace
  int32_t procs = 0;  // the trace's GOMAXPROCS (its header's num_ps)
  uint64_t tracer_gs = 0;       // the tracer's own goroutines, left out (replay_clean.h)
  int64_t tracer_running_ns = 0;  // their running time, left out
  // Shared mode: one line per pool found ("8 goroutines of main.worker at main.go:21, fed by
  // G1: pooled, 5000 items") and per candidate that could not be pooled, with the reason.
  std::vector<std::string> pools;
  // What the user should know about the result (OS wait taken out, running time over what the
  // cores could give, the fit at its cap, ...): printed as "warning: ..." lines.
  std::vector<std::string> warnings;
};

// `source`: how the header comment names the trace (its path).
// A trace replay cannot derive one program from: one of several processes (Header.processes with
// more than one). Replay models one Go program, and the other processes' share of the cores is not
// a workload it can write; the message says which processes the trace has.
class DeriveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws DeriveError for a trace of several processes.
DerivedScenario derive_scenario(const Timeline& tl, const std::string& source, const DeriveOptions& opt = {});

// Whether a wait reason is one only the runtime's own goroutines wait for (GC workers, sweeper,
// scavenger, forcegc, finalizers, the GOMAXPROCS updater, ...).
bool runtime_wait_reason(const std::string& label);

}  // namespace gmp::trace
