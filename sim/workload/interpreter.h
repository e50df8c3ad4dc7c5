// The interpreter of scenario programs: runs a goroutine's compiled code (sim/scenario/program.h)
// on that goroutine's own stack, calling the ported runtime for everything that is not plain
// computation: channels, select, sync.Mutex, WaitGroup, time.Sleep, system calls, Gosched,
// LockOSThread, and `go`. Devices (a NIC, a disk) are modelled here, outside the runtime: a
// device is hardware, so it needs no thread; its state is a function of the virtual clock.
//
// A goroutine's interpreter state (function, pc, loop counters) lives in a Task owned here, never
// on the goroutine's stack, so a stack abandoned at the end of a run holds nothing to free.
//
// Safe points: every operation starts with a function call in Go (a runtime call, or the
// scenario's own function), so each checks for a cooperative preemption request first. Compute is
// user code: an asynchronous preemption may stop it, unless it runs inside a cgo call, which is
// modelled as Go does it: entersyscall, the C code, exitsyscall.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "sim/platform/arena.h"
#include "sim/runtime/runtime.h"
#include "sim/runtime/select.h"
#include "sim/scenario/program.h"
#include "sim/workload/fd_mutex.h"
#include "sim/workload/network.h"

namespace gmp::rt {
struct hchan;
struct syncMutex;
struct WaitGroup;
}  // namespace gmp::rt

namespace gmp::workload {

// An object made by `local` (one of the three, by its kind).
struct LocalObj {
  rt::hchan* chan = nullptr;  // the runtime owns it
  std::unique_ptr<rt::syncMutex> mu;
  std::unique_ptr<rt::WaitGroup> wg;
};

struct Task {
  int32_t func = -1;
  int32_t spawn = -1;  // the named go statement that started the goroutine (Scenario::spawns), or -1
  int32_t pc = 0;
  std::vector<int64_t> counters;
  std::vector<int64_t> vars;  // the function's parameters, then its loops' vars (program.h)
  bool bench = false;         // the benchmark func's goroutine: its run is what is measured
  int32_t parallel = -1;  // the Parallel group this goroutine belongs to, if any
  int64_t pb_cache = 0;   // iterations taken and not yet run (testing.PB's cache)
  bool pb_took = false;   // whether this goroutine has taken iterations before
  // Scratch for select, kept here rather than on the goroutine's stack (see above).
  std::vector<rt::scase> sel_cases;
  std::vector<int32_t> sel_which;   // per scase: its case's number in the select's source order
  std::vector<int64_t> sel_values;  // per case (source order): the value it sends, or receives
  std::vector<rt::hchan*> sel_chans;  // per case (source order): its channel
  std::vector<uint16_t> sel_order;
  // The element a send hands the runtime (chan.h: ep must outlive a park, so not on the stack).
  int64_t elem = 0;
};

// What the benchmark loop measured.
struct Measurement {
  bool started = false;
  bool finished = false;
  int64_t begin = 0;  // virtual ns
  int64_t end = 0;
  int64_t ops = 0;
};

class Interpreter {
 public:
  // clock reads the driver's time without taking part in the run (for measurements).
  // seed and nanotime_epoch (what nanotime reads at clock 0) are the network's (network.h).
  Interpreter(const scenario::Scenario& sc, rt::Runtime& r, std::function<int64_t()> clock, double ns_per_iteration,
              uint64_t seed = 1, int64_t nanotime_epoch = 0);
  ~Interpreter();

  // The task for the main goroutine.
  Task* main_task();
  // Runs gp's code until its function returns (Host::runGoroutine).
  void run(rt::g* gp);

  const Measurement& measurement() const { return meas_; }
  // The runtime's channel for the scenario's chans[id], a plain channel (for assertions about it
  // at exit).
  const rt::hchan* chan(int32_t id) const { return chans_[chan_base_[static_cast<size_t>(id)]]; }
  // The scenario's connections (nullptr when it has none).
  const Network* network() const { return net_.get(); }
  Network* network() { return net_.get(); }  // to join dialled connections (connect_dials) and set the wake

 private:
  struct Parallel;
  // A device: completions, in order, at the virtual times they are or will be served.
  struct Device {
    int64_t service = 0;
    int64_t free_at = 0;          // when the device finishes the last request submitted
    std::deque<int64_t> done_at;  // the completion time of each request not yet reaped
  };
  bool pb_next(Task& t);  // testing.PB.Next for t's Parallel group
  void submit(Device& d);
  bool reap(Device& d);  // takes a completion that is ready by now, if there is one
  void compute(rt::g* gp, const scenario::Instr& in);
  int64_t work_of(const scenario::Instr& in) const;
  Task* new_task(int32_t func);
  // The value of exprs[id] for t; a value that cannot be computed ends the run as a Go panic.
  int64_t value(int32_t id, const Task& t);
  // in with the values of its expression filled in, each checked against the literal's bounds.
  scenario::Instr resolved(const scenario::Instr& in, const Task& t);
  // The value of exprs[index] as an index into an array of length elements (out of range: a Go panic).
  int64_t element(int32_t index, int64_t length, const Task& t);
  // chans[id], or for an array its element exprs[index] (out of range: a Go panic); with handle >= 0,
  // the channel whose handle t.vars[handle] holds (a local or a typed parameter).
  rt::hchan* channel(int32_t id, int32_t index, int32_t handle, const Task& t);
  // The mutex or WaitGroup an Lock, Unlock, WgAdd, WgDone or WgWait names (as channel's).
  rt::syncMutex* mutex(const scenario::Instr& in, const Task& t);
  rt::WaitGroup* waitgroup(const scenario::Instr& in, const Task& t);
  template <class T, class Decl>
  T* sync_object(const scenario::Instr& in, const Task& t, const std::vector<std::unique_ptr<T>>& all,
                 const std::vector<size_t>& base_of, const std::vector<Decl>& decls,
                 std::unique_ptr<T> LocalObj::*of_local, const char* kind);
  // The local that handle h names (h >= 0: locals_[h]); a declared object's handle is -1-id.
  const LocalObj& local(int64_t h) const;
  void op_local(const scenario::Instr& in, Task& t);
  // The network's number for conns[id], or for an array its element exprs[index].
  int32_t connection(int32_t id, int32_t index, const Task& t);
  // Binds the callee's parameters: child's vars[k] = the k-th argument of in, evaluated for t.
  void bind_args(const scenario::Instr& in, const Task& t, Task& child);
  [[noreturn]] void panic(const scenario::Expr& e, const std::string& what) const;
  // run's loop hands each instruction to step, which calls the function of its opcode (or of its
  // family of opcodes); each takes t, whose pc is already past the instruction.
  void step(rt::g* gp, Task& t, const scenario::Function& fn, const scenario::Instr& in,
            const scenario::Loop* bench);
  Task* spawned_task(const scenario::Instr& in, const Task& t);
  void op_go(const scenario::Instr& in, const Task& t);
  void op_after_func(const scenario::Instr& in, const Task& t);
  void op_loop_start(const scenario::Instr& in, Task& t, const scenario::Loop* bench);
  void op_loop_next(const scenario::Instr& in, Task& t);
  void op_send(const scenario::Instr& in, Task& t);
  void op_recv(const scenario::Instr& in, Task& t);
  void op_range_recv(const scenario::Instr& in, Task& t);
  void op_select(const scenario::Instr& in, Task& t, const scenario::Function& fn);
  void op_syscall(const scenario::Instr& in, const Task& t);
  void op_busy_poll(rt::g* gp, const scenario::Instr& in, const Task& t);
  void op_parallel(const scenario::Instr& in, const Task& t, const scenario::Loop* bench);
  void op_bench(const scenario::Instr& in);
  void op_read(const scenario::Instr& in, Task& t);
  void op_write(const scenario::Instr& in, Task& t);
  void op_accept(const scenario::Instr& in, Task& t);
  void op_close_conn(const scenario::Instr& in, const Task& t);
  // The value of exprs[id] for t, which must lie in [lo, hi] (outside: a Go panic naming them).
  int64_t bounded(int32_t id, const Task& t, int64_t lo, int64_t hi);
  void op_alloc(const scenario::Instr& in, const Task& t);
  void op_release(const scenario::Instr& in, const Task& t);
  // The measured loop starts with `ops` iterations to go, or ends; both read the clock.
  void begin_measure(int64_t ops) {
    meas_.started = true;
    meas_.begin = clock_();
    meas_.ops = ops;
  }
  void end_measure() {
    meas_.finished = true;
    meas_.end = clock_();
  }

  const scenario::Scenario& sc_;
  rt::Runtime& r_;
  std::function<int64_t()> clock_;
  double ns_per_iteration_;
  plat::Arena<Task> tasks_;
  std::vector<Task*> free_tasks_;  // tasks of goroutines that have ended, for new_task to reuse
  std::vector<rt::hchan*> chans_;     // every channel, an array's elements in a row
  std::vector<size_t> chan_base_;      // chans[id]'s first element in chans_
  rt::hchan* bench_done_ = nullptr;    // testing's b.signal: the benchmark goroutine is done
  std::vector<int64_t> eval_stack_;    // scratch for expressions (evaluation never blocks)
  std::vector<std::unique_ptr<rt::syncMutex>> mutexes_;  // every mutex, an array's elements in a row
  std::vector<size_t> mutex_base_;                       // mutexes[id]'s first element in mutexes_
  std::vector<size_t> wg_base_;                          // waitgroups[id]'s first element in wgs_
  std::deque<Atomic<int64_t>> vars_;  // the scenario's shared variables (a deque: cells never move)
  std::vector<std::unique_ptr<rt::WaitGroup>> wgs_;
  // The objects `local` made, in the order the run made them: a handle h >= 0 is locals_[h]. Their
  // semaphores' ids are kLocalSyncIdBase + h, apart from the declared objects' and the network's.
  std::vector<LocalObj> locals_;
  std::vector<std::unique_ptr<Parallel>> parallels_;
  std::vector<Device> devices_;
  std::unique_ptr<Network> net_;
  // internal/poll's fdMutex of each descriptor: the network's connections, then its listeners.
  std::deque<FdMutex> fds_;
  std::deque<rt::Sema> csemas_;  // each descriptor's fd.csema: Close waits there for destroy
  void destroy_fd(size_t fd);
  template <class Call>
  void fd_call(size_t fd, rt::pollDesc* pd, int32_t mode, Call call);
  // Which descriptors (fds_'s numbering) the program has opened: fd.Init's
  // serverInit.Do(runtime_pollServerInit), which starts the poller. A connection counts as opened
  // when Accept returns it, or at its first read or write if no listener hands it out; a listener
  // at its first accept.
  std::vector<uint8_t> opened_;
  void open_fd(size_t fd) {
    if (opened_[fd] != 0) return;
    opened_[fd] = 1;
    r_.netpollGenericInit();
  }
  Measurement meas_;
  uint64_t parallel_id_base_ = 0;
};

}  // namespace gmp::workload
