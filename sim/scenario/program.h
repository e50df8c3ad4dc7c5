// The compiled form of a scenario: what the engine interprets, one program counter per goroutine.
//
// Design:
//   - Channels, mutexes, wait groups, devices, functions, loops and named go statements (spawns)
//     are dense integer ids: indexes into the vectors of Scenario, in declaration order
//     (functions: declared ones first, then the synthetic bodies of `parallel` ops in the order
//     they appear). Nothing is keyed by hash. Assertions refer to them by id.
//   - A function is a flat array of Instr. Control flow is jumps to absolute pcs within the same
//     function; pc == code.size() means the function returns (for main: the program ends).
//   - Counted loops are LoopStart ... LoopNext over a per-goroutine counter: slot `obj` of an
//     array of Function::num_counters int64 (nested loops use distinct slots, sibling loops share
//     them). Range loops are RangeRecv ... Jump; forever loops are ... Jump; break is a Jump.
//   - Select cases live in Function::cases; each case's target is the pc of its body, and every
//     body ends with a jump past the select.
//   - Expressions (expr.h) live in Scenario::exprs; an Instr names them by id (-1: none) and the
//     value computed at run time replaces the literal field it stands for. A goroutine's variables
//     are an array of Function::num_vars int64: its parameters (slots 0 .. params-1), then the
//     index variables of counted loops (nested loops use distinct slots, sibling loops share them).
//   - A channel array is one Channel of `length` elements; an operation on it names the element by
//     an index expression (Instr::index, SelectCase::index).
//   - Times are int64 ns. Compute given in iterations keeps `iterations` apart from `ns`, so the
//     engine can scale it by the speed of the core it runs on (the cost profile's business).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/expr.h"

namespace gmp::scenario {

enum class Opcode : uint8_t {
  Compute,         // run ns + iterations (scaled by core speed); cgo: not async-preemptible
  Go,              // start a goroutine running funcs[obj]
  Exit,            // runtime.Goexit
  Jump,            // pc = target
  LoopStart,       // counter[obj] = count; if count == 0, pc = target (past the loop)
  LoopNext,        // if --counter[obj] > 0, pc = target (the body's first pc)
  RangeRecv,       // receive from chans[obj]; if it is closed, pc = target (past the loop)
  Gosched,         // runtime.Gosched
  Send,            // chans[obj] <- struct{}{}
  Recv,            // <-chans[obj]
  Close,           // close(chans[obj])
  Select,          // cases[first_case, first_case + num_cases); if none is ready and
                   // has_default, pc = target (the default's body)
  Lock,            // mutexes[obj].Lock()
  Unlock,          // mutexes[obj].Unlock()
  WgAdd,           // waitgroups[obj].Add(count)
  WgDone,          // waitgroups[obj].Done()
  WgWait,          // waitgroups[obj].Wait()
  Sleep,           // time.Sleep(ns)
  AfterFunc,       // time.AfterFunc(ns, funcs[obj]): the timer starts the goroutine when it fires
  Syscall,         // a system call of ns in the kernel: blocked, or working on the CPU (on_cpu)
  BusyPoll,        // repeat { compute ns + iterations; check } until a non-blocking receive on
                   // chans[obj] succeeds (obj >= 0), a completion is taken from
                   // devices[device]'s queue (device >= 0) or count polls are done (count >= 0);
                   // safe_point: a cooperative preemption point per poll; cgo: as Compute
  LockOSThread,    // runtime.LockOSThread
  UnlockOSThread,  // runtime.UnlockOSThread
  Parallel,        // b.RunParallel: GOMAXPROCS goroutines run funcs[obj], sharing count
                   // iterations of loops[loop]; the caller waits for all of them
  ParallelNext,    // pb.Next(): take one iteration of the enclosing Parallel, or pc = target
  Submit,          // hand one request to devices[device]
  Bench,           // testing's runN: start funcs[obj] as the benchmark goroutine, wait for it
  ResetTimer,      // b.ResetTimer(): the benchmark's timer starts again from now
  AtomicAdd,       // atomic.AddInt64(&vars[obj], count)
  Read,            // conns[obj].Read: take an arrived request, or wait in the network poller
  Write,           // conns[obj].Write: answer the oldest request read
                   // (both: exprs[index] picks an array's element; failing, pc = target if >= 0)
  Accept,          // listeners[obj].Accept: vars[var] = the accepted connection's index
  CloseConn,       // conns[obj].Close (exprs[index] picks an array's element)
  Alloc,           // count objects of bytes each (mallocgc); retain: they stay reachable
  Release,         // bytes of the retained objects become garbage
  GC,              // runtime.GC
  ReadMemStats,    // runtime.ReadMemStats: stops the world and starts it again
  Gomaxprocs,      // runtime.GOMAXPROCS(exprs[bytes_expr] or bytes): resize the Ps (0: read only)
  Local,           // vars[var] = a new object's handle (LocalOp): a channel of capacity count
                   // (or exprs[expr]), a WaitGroup or a mutex (Instr::local_kind)
};

// What a handle names (Instr::handle, Instr::local_kind, a typed parameter).
enum class ObjKind : uint8_t { None, Chan, WaitGroup, Mutex };

const char* opcode_name(Opcode op);

struct Instr {
  Opcode op = Opcode::Jump;
  bool cgo = false;          // Compute, BusyPoll
  bool safe_point = false;   // BusyPoll
  bool has_default = false;  // Select
  bool on_cpu = false;       // Syscall: kernel work on the thread's core, not a sleep
  bool nanosleep = false;    // Syscall: a timed sleep, woken as late as the OS wakes sleepers
  bool retain = false;       // Alloc: the objects stay reachable until released
  int32_t obj = -1;          // the id the opcode's comment names; -1 when none
  int32_t device = -1;       // Submit, BusyPoll: devices[device]; -1 when none
  int32_t loop = -1;         // LoopStart, LoopNext, Parallel, ParallelNext: loops[loop]
  int32_t target = -1;       // a pc of the same function
  int32_t first_case = 0;    // Select
  int32_t num_cases = 0;     // Select
  int32_t line = 0;          // the source line of the operation (1-based)
  int32_t spawn = -1;        // Go, AfterFunc: spawns[spawn], when the statement has a name; else -1
  int64_t ns = 0;            // Compute, Sleep, AfterFunc, Syscall, BusyPoll (per poll)
  int64_t iterations = 0;    // Compute, BusyPoll (per poll)
  double memory_share = 0;   // Compute: the share of its time that is memory traffic (0 to 1)
  int64_t count = 0;         // LoopStart, WgAdd, Parallel; BusyPoll: max polls or -1
  // exprs[expr] computes at run time what the literal would give: ns (Compute, Sleep, Syscall),
  // iterations (Compute, when expr_iterations), count (LoopStart, WgAdd, Parallel); -1 when none.
  int32_t expr = -1;
  bool expr_iterations = false;
  // Send, Recv, Close, RangeRecv, BusyPoll, Read, Write, Lock, Unlock, WgAdd, WgDone, WgWait:
  // exprs[index] picks obj's element. Local: exprs[index] is a constant at the local's name, the
  // position of the panic of a run that makes more than kMaxLocals.
  int32_t index = -1;
  int32_t var = -1;    // LoopStart, LoopNext: the loop variable's slot, or -1; Local: the handle's slot
  // Go, AfterFunc: the callee's arguments are exprs[Function::args[first_arg + k]], k < num_args.
  int32_t first_arg = 0;
  int32_t num_args = 0;
  // Alloc: bytes per object (count: objects); Release: bytes released. bytes_expr: exprs[bytes_expr]
  // computes bytes at run time (count's expression, for Alloc, is expr); -1 when none.
  int32_t bytes_expr = -1;
  int64_t bytes = 0;
  // Values (docs/scenarios.md, "Values"). Send: exprs[value] is the value sent (-1: 0).
  // Recv, RangeRecv, Select's cases: bind (a var slot) gets the value received, bind_ok 1 or 0
  // (received, or the channel was closed); -1 when not bound.
  int32_t value = -1;
  int32_t bind = -1;
  int32_t bind_ok = -1;
  // An operation on a local or a typed parameter: vars[handle] holds the object's handle (the
  // interpreter's numbering), and obj is -1. -1: obj names a declared object.
  int32_t handle = -1;
  ObjKind local_kind = ObjKind::None;  // Local
};

struct SelectCase {
  bool send = false;  // ch <- v; otherwise <-ch
  int32_t chan = -1;
  int32_t target = -1;  // the pc of the case's body
  int32_t index = -1;   // the element of a channel array: exprs[index]
  int32_t value = -1;   // as Instr's
  int32_t bind = -1;
  int32_t bind_ok = -1;
  int32_t handle = -1;
};

struct Function {
  std::string name;
  std::vector<Instr> code;
  std::vector<SelectCase> cases;
  int32_t num_counters = 0;  // loop counters a goroutine running this function needs
  int32_t num_params = 0;    // variables bound by the caller: slots 0 .. num_params-1
  int32_t num_vars = 0;      // variables a goroutine running this function needs (params first)
  std::vector<ObjKind> param_kinds;  // per parameter: None (an int64) or the object it takes
  std::vector<int32_t> args;  // Go and AfterFunc arguments (expr ids), see Instr::first_arg
};

enum class LoopKind : uint8_t { Count, Range, Forever, Parallel };

struct Loop {
  std::string name;  // empty when unnamed
  LoopKind kind = LoopKind::Count;
  int32_t func = -1;
  int32_t begin = -1;  // pc of the loop's first instruction (LoopStart, RangeRecv, Parallel, ...)
  int32_t end = -1;    // pc right after the loop
};

struct Channel {
  std::string name;
  int64_t capacity = 0;
  int64_t length = 0;  // a channel array's elements; 0 for a plain channel
};

struct Mutex {
  std::string name;
  int64_t length = 0;  // an array's elements; 0 for a single mutex
};

struct Var {
  std::string name;
};

struct WaitGroup {
  std::string name;
  int64_t length = 0;  // an array's elements; 0 for a single WaitGroup
};

// A device (scenario.proto's DeviceDecl): serves requests in order, service ns each.
struct Device {
  std::string name;
  int64_t service = 0;
};

// A connection (scenario.proto's ConnDecl): count requests, one every interval ns (poisson: on
// average), burst of them at a time. An array (length > 0) is that many connections, each with
// count requests; the first request of element i arrives at start + i * stagger, or with no start
// (start < 0), one gap after i * stagger.
struct Conn {
  std::string name;
  int64_t count = 0;
  int64_t interval = 0;
  bool poisson = false;
  int64_t length = 0;   // a connection array's elements; 0 for a single connection
  int64_t start = -1;   // ns from the run's start; -1: one gap
  int64_t stagger = 0;  // ns between the starts of consecutive elements
  int64_t burst = 1;    // requests arriving together at each arrival time
  int32_t listener = -1;  // listeners[listener] connects it; -1: open from the run's start
  int64_t write_service = 0;  // ns for an answer to leave; 0: it leaves as it is written
  int64_t send_buffer = 1;    // answers written and not yet gone that the send side holds
  // A dialled connection (ConnDecl.dial): Scenario::processes[dial_process]'s listeners[dial_listener]
  // accepts it; -1: a connection whose requests come from its arrivals.
  int32_t dial_process = -1;
  int32_t dial_listener = -1;
  // The other end of a connection between processes, on both sides: the process and its conn
  // (the dialled listener's conn array, or the dialling one); element k joins element k. A conn
  // with a peer has no count, interval or arrival times: its requests are the peer's writes.
  int32_t peer_process = -1;
  int32_t peer_conn = -1;
  // From an arrival file (arrivals.h): element e's arrival times are times[first[e]] ..
  // times[first[e+1] - 1], each one a burst, and count is unused (each element has its own);
  // first is empty when the times are generated.
  std::vector<int64_t> times;
  std::vector<int64_t> first;
  // The requests of element e.
  int64_t requests(int64_t e) const {
    if (first.empty()) return count;
    return (first[static_cast<size_t>(e) + 1] - first[static_cast<size_t>(e)]) * burst;
  }
};

// A listener (scenario.proto's ListenerDecl): the elements of conns[conn] connect one after
// another, the first at start (or one gap after the run's start, start < 0), then a gap apart.
struct Listener {
  std::string name;
  int32_t conn = -1;
  int64_t interval = 0;
  bool poisson = false;
  int64_t start = -1;
};

// A named go statement (go { func: "f" name: "n" }): assertions refer to its goroutines by name.
struct Spawn {
  std::string name;
  int32_t func = -1;  // the function its goroutines run
};

// An assertion (scenario.proto's AssertDecl), checked by workload::AssertionChecker.
enum class AssertKind : uint8_t {
  StartLatency,        // each readying of the goroutines to their next start: at most limit ns
  ChanEmptyAtExit,     // chans[chan] has no buffered element and no waiter at exit
  FinishedAtExit,      // the goroutines started have all ended by exit
  MaxRunnableLatency,  // every program goroutine: runnable to running, at most limit ns
};

struct Assertion {
  AssertKind kind = AssertKind::StartLatency;
  // StartLatency, FinishedAtExit: the goroutines started by spawns[spawn], or (spawn < 0) every
  // goroutine running funcs[func] (funcs[entry]: the main goroutine among them).
  int32_t spawn = -1;
  int32_t func = -1;
  int32_t chan = -1;   // ChanEmptyAtExit
  int64_t limit = 0;   // StartLatency, MaxRunnableLatency: ns
  int32_t line = 0;    // the position of its `assertion`, 1-based
  int32_t column = 0;
  std::string text;    // as written, on one line: "start_latency { goroutine: \"w\" ns: 1000 }"
};

// ns/op of loops[loop], or of funcs[func] run with b.N = n, reported under `name` as
// `go test -bench` would.
struct Benchmark {
  std::string name;
  int32_t loop = -1;
  int32_t func = -1;
  int64_t n = 0;
};

// A process's cgroup (scenario.proto's CgroupDecl), in engine units: quota in ns per period.
struct Cgroup {
  int64_t quota = -1;           // ns per period; -1: no limit
  int64_t period = 100'000'000; // ns
  int64_t burst = 0;            // ns
  std::vector<int32_t> cpuset;  // ascending; empty: every core
  struct Change {
    int64_t at = 0;     // ns from the run's start
    int64_t quota = -1; // ns per period; -1: no limit
  };
  std::vector<Change> changes;
  bool limited() const { return quota >= 0 || !cpuset.empty() || !changes.empty(); }
};

struct Scenario;

// One process of several (scenario.proto's ProcessDecl).
struct ProcessSpec {
  std::string name;
  int32_t procs = 0;        // 0: the --procs flag's
  bool procs_auto = false;  // Go's default GOMAXPROCS
  Cgroup cgroup;
  std::optional<int64_t> gogc;      // -1: off
  std::optional<int64_t> memlimit;  // bytes
  bool daemon = false;
  int32_t containermaxprocs = -1, updatemaxprocs = -1;  // GODEBUG; -1: not set
  std::shared_ptr<const Scenario> program;
};

struct Scenario {
  std::string source;  // the path or name it was loaded from
  std::vector<Channel> chans;
  std::vector<Mutex> mutexes;
  std::vector<Var> vars;
  std::vector<WaitGroup> waitgroups;
  std::vector<Device> devices;
  std::vector<Conn> conns;
  std::vector<Listener> listeners;
  std::vector<Function> funcs;
  std::vector<Loop> loops;
  int32_t entry = -1;  // funcs[entry] is "main"
  std::optional<Benchmark> benchmark;
  std::vector<Spawn> spawns;  // the named go statements, in source order
  std::vector<Assertion> assertions;  // in source order
  std::vector<Expr> exprs;  // every expression, in the order compiled
  // Several processes: each one's program; the fields above are then empty. Empty: one process,
  // the fields above.
  std::vector<ProcessSpec> processes;
};

}  // namespace gmp::scenario
