#include "sim/workload/interpreter.h"

#include <algorithm>
#include <cmath>

#include "sim/platform/context.h"
#include "sim/platform/platform.h"
#include "sim/platform/throw.h"
#include "sim/runtime/chan.h"
#include "sim/runtime/select.h"
#include "sim/runtime/sync_mutex.h"
#include "sim/runtime/time.h"
#include "sim/runtime/waitgroup.h"
#include "sim/scenario/limits.h"

namespace gmp::workload {

using scenario::Instr;
using scenario::Opcode;

// b.RunParallel's shared state: the iterations taken (testing.PB's globalN), the grain each
// goroutine takes them by, and the goroutines still running.
struct Interpreter::Parallel {
  Atomic<int64_t> taken;
  int64_t count = 0;
  int64_t grain = 0;  // 0 until set from the first iterations (see ParallelNext)
  int64_t begin = 0;  // virtual ns
  std::unique_ptr<rt::WaitGroup> wg;
};

namespace {
// goFunc (time/sleep.go), time.AfterFunc's timer function: go f(), from whichever M runs the timer, onto
// that M's P.
void goFunc(void* arg, uintptr_t seq, int64_t delay) {
  (void)seq;
  (void)delay;
  Task* t = static_cast<Task*>(arg);
  rt::Runtime::current()->newproc(static_cast<uintptr_t>(t->func) + 1, t);
}
}  // namespace

Interpreter::Interpreter(const scenario::Scenario& sc, rt::Runtime& r, std::function<int64_t()> clock,
                         double ns_per_iteration, uint64_t seed, int64_t nanotime_epoch)
    : sc_(sc), r_(r), clock_(std::move(clock)), ns_per_iteration_(ns_per_iteration) {
  if (!sc.conns.empty()) {
    net_ = std::make_unique<Network>(sc.conns, seed, nanotime_epoch, sc.listeners);
    net_->set_clock(clock_);
    r.net = net_.get();
    // Their semaphores' ids, three per descriptor, lie far above the ones the program's objects take.
    for (size_t k = 0; k < net_->conns() + sc.listeners.size(); k++) {
      fds_.emplace_back((uint64_t{1} << 40) + 3 * k, (uint64_t{1} << 40) + 3 * k + 1);
      csemas_.emplace_back((uint64_t{1} << 40) + 3 * k + 2);
    }
    opened_.assign(fds_.size(), 0);
  }
  uint64_t id = 1;
  for (const auto& c : sc.chans) {
    chan_base_.push_back(chans_.size());
    for (int64_t k = 0; k < std::max<int64_t>(c.length, 1); k++) chans_.push_back(rt::makechan(r, c.capacity));
  }
  // Ids in declaration order, an array's elements in a row (without arrays: one id per declaration).
  for (const auto& m : sc.mutexes) {
    mutex_base_.push_back(mutexes_.size());
    for (int64_t k = 0; k < std::max<int64_t>(m.length, 1); k++) mutexes_.push_back(std::make_unique<rt::syncMutex>(id++));
  }
  vars_.resize(sc.vars.size());
  for (const auto& w : sc.waitgroups) {
    wg_base_.push_back(wgs_.size());
    for (int64_t k = 0; k < std::max<int64_t>(w.length, 1); k++) wgs_.push_back(std::make_unique<rt::WaitGroup>(id++));
  }
  parallel_id_base_ = id;
  for (const auto& d : sc.devices) devices_.push_back(Device{d.service, 0, {}});
  // testing's b.signal is unbuffered: the benchmark goroutine's last act is a send on it.
  if (sc.benchmark && sc.benchmark->func >= 0) bench_done_ = rt::makechan(r, 0);
}

Interpreter::~Interpreter() = default;

// A goroutine that ended gave its task back (run's end): reuse it, so that tasks are bounded by the
// goroutines alive at once, not by all the program ever started.
Task* Interpreter::new_task(int32_t func) {
  Task* t;
  if (free_tasks_.empty()) {
    t = tasks_.make();
  } else {
    t = free_tasks_.back();
    free_tasks_.pop_back();
    t->pc = 0;
    t->spawn = -1;
    t->parallel = -1;
    t->pb_cache = 0;
    t->pb_took = false;
    t->bench = false;
  }
  t->func = func;
  t->counters.assign(static_cast<size_t>(sc_.funcs[static_cast<size_t>(func)].num_counters), 0);
  t->vars.assign(static_cast<size_t>(sc_.funcs[static_cast<size_t>(func)].num_vars), 0);
  return t;
}

// The run ends as Go's does on an unrecovered panic: "panic: <what>", exit status 2; the
// position is the expression's field, for the goroutine trace Go would print.
void Interpreter::panic(const scenario::Expr& e, const std::string& what) const {
  const std::string text = e.text.size() <= 40 ? e.text : e.text.substr(0, 37) + "...";
  throw plat::GoFatal(plat::GoFatal::Kind::Panic, what + "\n\tat " + sc_.source + ":" + std::to_string(e.line) +
                                                      ":" + std::to_string(e.column) + ": " + e.field + " \"" +
                                                      text + "\"");
}

int64_t Interpreter::value(int32_t id, const Task& t) {
  const scenario::Expr& e = sc_.exprs[static_cast<size_t>(id)];
  const scenario::ExprValue v =
      scenario::eval_expr(e, t.vars.data(), sc_.benchmark ? sc_.benchmark->n : 0, eval_stack_);
  if (v.error != nullptr) panic(e, std::string("runtime error: ") + v.error);
  return v.value;
}

// The bounds are the literal's (limits.h): what the engine's clocks and counters can hold.
Instr Interpreter::resolved(const Instr& in, const Task& t) {
  if (in.expr < 0) return in;
  Instr out = in;
  const int64_t v = value(in.expr, t);
  const scenario::Expr& e = sc_.exprs[static_cast<size_t>(in.expr)];
  auto check = [&](int64_t max) {
    if (v < 0 || v > max) {
      panic(e, e.field + " is " + std::to_string(v) + ": out of range, from 0 to " + std::to_string(max));
    }
    return v;
  };
  switch (in.op) {
    case Opcode::Compute:
      if (in.expr_iterations) {
        out.iterations = check(scenario::kMaxIterations);
      } else {
        out.ns = check(scenario::kMaxDurationNs);
      }
      break;
    case Opcode::Sleep:
    case Opcode::Syscall: out.ns = check(scenario::kMaxDurationNs); break;
    case Opcode::WgAdd: out.count = check(INT32_MAX); break;
    default: out.count = check(scenario::kMaxCount); break;  // LoopStart, Parallel
  }
  return out;
}

int64_t Interpreter::element(int32_t index, int64_t length, const Task& t) {
  const int64_t k = value(index, t);
  if (k < 0 || k >= length) {
    panic(sc_.exprs[static_cast<size_t>(index)],
          "runtime error: index out of range [" + std::to_string(k) + "] with length " + std::to_string(length));
  }
  return k;
}

namespace {
// Local objects' semaphore ids: above the declared objects' and Parallel's (counted up from 1) and
// the network's descriptors' (from 2^40).
constexpr uint64_t kLocalSyncIdBase = uint64_t{1} << 41;
}  // namespace

const LocalObj& Interpreter::local(int64_t h) const {
  // The compiler lets only a slot that holds a handle of the right kind reach here.
  if (h < 0 || static_cast<uint64_t>(h) >= locals_.size()) {
    throw plat::GoFatal(plat::GoFatal::Kind::Throw, "scenario: handle " + std::to_string(h) + " names no local object");
  }
  return locals_[static_cast<size_t>(h)];
}

rt::hchan* Interpreter::channel(int32_t id, int32_t index, int32_t handle, const Task& t) {
  if (handle >= 0) {
    const int64_t h = t.vars[static_cast<size_t>(handle)];
    if (h < 0) return chans_[chan_base_[static_cast<size_t>(-1 - h)]];
    rt::hchan* c = local(h).chan;
    if (c == nullptr) throw plat::GoFatal(plat::GoFatal::Kind::Throw, "scenario: a local of another kind used as a channel");
    return c;
  }
  const size_t base = chan_base_[static_cast<size_t>(id)];
  if (index < 0) return chans_[base];
  return chans_[base + static_cast<size_t>(element(index, sc_.chans[static_cast<size_t>(id)].length, t))];
}

// A mutex or a WaitGroup: a local's or a typed parameter's handle (a declared single one's is
// -1 - id), or a declared one, an array's element picked by in.index.
template <class T, class Decl>
T* Interpreter::sync_object(const Instr& in, const Task& t, const std::vector<std::unique_ptr<T>>& all,
                            const std::vector<size_t>& base_of, const std::vector<Decl>& decls,
                            std::unique_ptr<T> LocalObj::*of_local, const char* kind) {
  if (in.handle >= 0) {
    const int64_t h = t.vars[static_cast<size_t>(in.handle)];
    if (h < 0) return all[base_of[static_cast<size_t>(-1 - h)]].get();
    T* x = (local(h).*of_local).get();
    if (x == nullptr) {
      throw plat::GoFatal(plat::GoFatal::Kind::Throw, std::string("scenario: a local of another kind used as a ") + kind);
    }
    return x;
  }
  const size_t base = base_of[static_cast<size_t>(in.obj)];
  if (in.index < 0) return all[base].get();
  return all[base + static_cast<size_t>(element(in.index, decls[static_cast<size_t>(in.obj)].length, t))].get();
}

rt::syncMutex* Interpreter::mutex(const Instr& in, const Task& t) {
  return sync_object(in, t, mutexes_, mutex_base_, sc_.mutexes, &LocalObj::mu, "mutex");
}

rt::WaitGroup* Interpreter::waitgroup(const Instr& in, const Task& t) {
  return sync_object(in, t, wgs_, wg_base_, sc_.waitgroups, &LocalObj::wg, "waitgroup");
}

// make(chan int, cap), or a zero sync.WaitGroup or sync.Mutex: a new object each time, its handle
// the next in the run's order of making them.
inline void Interpreter::op_local(const Instr& in, Task& t) {
  if (locals_.size() >= static_cast<size_t>(scenario::kMaxLocals)) {
    panic(sc_.exprs[static_cast<size_t>(in.index)],
          "more than " + std::to_string(scenario::kMaxLocals) + " local objects in one run (the simulator's bound)");
  }
  const auto h = static_cast<int64_t>(locals_.size());
  LocalObj& o = locals_.emplace_back();
  switch (in.local_kind) {
    case scenario::ObjKind::Chan:
      o.chan = rt::makechan(r_, in.expr >= 0 ? bounded(in.expr, t, 0, scenario::kMaxLocalChanCap) : in.count);
      break;
    case scenario::ObjKind::Mutex: o.mu = std::make_unique<rt::syncMutex>(kLocalSyncIdBase + static_cast<uint64_t>(h)); break;
    case scenario::ObjKind::WaitGroup: o.wg = std::make_unique<rt::WaitGroup>(kLocalSyncIdBase + static_cast<uint64_t>(h)); break;
    case scenario::ObjKind::None: break;
  }
  t.vars[static_cast<size_t>(in.var)] = h;
}

int32_t Interpreter::connection(int32_t id, int32_t index, const Task& t) {
  if (index < 0) return net_->conn(id, 0);
  const scenario::Conn& d = sc_.conns[static_cast<size_t>(id)];
  const int64_t k = element(index, d.length, t);
  // A listener's connection exists for the program only once Accept has returned it.
  if (d.listener >= 0 && k >= net_->accepted(d.listener)) {
    panic(sc_.exprs[static_cast<size_t>(index)],
          "use of connection " + d.name + "[" + std::to_string(k) + "] before its listener accepted it");
  }
  return net_->conn(id, k);
}

void Interpreter::bind_args(const Instr& in, const Task& t, Task& child) {
  const scenario::Function& fn = sc_.funcs[static_cast<size_t>(t.func)];
  for (int32_t k = 0; k < in.num_args; k++) {
    child.vars[static_cast<size_t>(k)] = value(fn.args[static_cast<size_t>(in.first_arg + k)], t);
  }
}

Task* Interpreter::main_task() { return new_task(sc_.entry); }

int64_t Interpreter::work_of(const Instr& in) const {
  return in.ns + static_cast<int64_t>(std::llround(static_cast<double>(in.iterations) * ns_per_iteration_));
}

// A request is served once the device is free, service ns after that. Requests queue without
// bound, so the sum can pass any clock: it saturates at INT64_MAX, a completion never reached.
void Interpreter::submit(Device& d) {
  const int64_t start = std::max(d.free_at, clock_());
  d.free_at = d.service > INT64_MAX - start ? INT64_MAX : start + d.service;
  d.done_at.push_back(d.free_at);
}

bool Interpreter::reap(Device& d) {
  if (d.done_at.empty() || d.done_at.front() > clock_()) return false;
  d.done_at.pop_front();
  return true;
}

// testing.PB.Next: a goroutine takes `grain` iterations from the shared count at a time.
// RunParallel sets the grain to ~100us of iterations from the previous run's ns/op (clamped to
// 1..10,000); a simulation has no previous run, so the first iterations, taken one at a time,
// stand for it: the grain is set when a goroutine first comes back for more.
bool Interpreter::pb_next(Task& t) {
  Parallel& par = *parallels_[static_cast<size_t>(t.parallel)];
  if (t.pb_cache == 0) {
    if (par.grain == 0 && t.pb_took) {
      const int64_t elapsed = std::max<int64_t>(clock_() - par.begin, 1);
      par.grain = std::clamp<int64_t>(100'000 * par.taken.peek() / elapsed, 1, 10'000);
    }
    const int64_t grain = std::max<int64_t>(par.grain, 1);
    const int64_t n = par.taken.Add(grain);
    t.pb_took = true;
    if (n <= par.count) {
      t.pb_cache = grain;
    } else if (n < par.count + grain) {
      t.pb_cache = par.count + grain - n;
    } else {
      return false;
    }
  }
  t.pb_cache--;
  return true;
}

// User computation: async-preemptible, unless it is a cgo call (entersyscall, C code, exitsyscall).
void Interpreter::compute(rt::g* gp, const Instr& in) {
  int64_t left = work_of(in);
  if (in.cgo) {
    r_.entersyscall();
    rt::m* mp = plat::getg()->m;
    mp->incgo = true;
    mp->ncgocall++;
    while (left > 0) left = plat::compute(left, in.memory_share);
    mp->incgo = false;
    r_.exitsyscall();
    return;
  }
  // Go code that starts while the GC marks runs with the write barrier on: the profile's
  // write_barrier_slowdown stretches it (no pointer writes exist here to charge one by one).
  if (r_.gcphase.peek() == rt::_GCmark && r_.gccost.writeBarrierSlowdown > 0) {
    left = static_cast<int64_t>(static_cast<double>(left) * (1.0 + r_.gccost.writeBarrierSlowdown));
  }
  while (left > 0) {
    gp->stack->async_safe = true;
    left = plat::compute(left, in.memory_share);
    gp->stack->async_safe = false;
    if (gp->asyncPreemptInjected) {
      // The signal handler pushed a call to asyncPreempt: make it.
      gp->asyncPreemptInjected = false;
      r_.asyncPreempt2();
    }
  }
}

// internal/poll's fd.destroy: the last reference of a closed descriptor is gone. runtime_pollClose
// (the network forgets the socket: no more events), the close system call (a dialled end's peer
// gets its end of file from it), and Close's wait on csema ends.
void Interpreter::destroy_fd(size_t fd) {
  if (fd < static_cast<size_t>(net_->conns())) net_->close(static_cast<int32_t>(fd), clock_());
  r_.entersyscall();
  plat::charge(plat::Cost::SyscallEnterExit);
  r_.exitsyscall();
  rt::semrelease(&csemas_[fd]);
}

// What internal/poll's fd.Read, fd.Write and fd.Accept share: the descriptor's read or write
// lock (one goroutine at a time per mode); prepareRead/prepareWrite (runtime_pollReset); the
// system call (`call`, which returns false on EAGAIN); on EAGAIN, a wait in the poller
// (runtime_pollWait) and the call again. A closed descriptor fails the lock, the reset or the
// wait, and `call`'s result stands as it was set before. The lock's last reference on a closed
// descriptor destroys it.
template <class Call>
inline void Interpreter::fd_call(size_t fd, rt::pollDesc* pd, int32_t mode, Call call) {
  open_fd(fd);
  FdMutex& mu = fds_[fd];
  const bool read = mode == 'r';
  if (!mu.rwlock(read)) return;
  const bool open = r_.pollReset(pd, mode);
  while (open) {
    r_.entersyscall();
    plat::charge(plat::Cost::SyscallEnterExit);
    const bool done = call();
    r_.exitsyscall();
    if (done || !r_.pollWait(pd, mode)) break;
  }
  if (mu.rwunlock(read)) destroy_fd(fd);
}

// ---- The opcodes: one function per opcode or family of opcodes, called by step(). Those that are
// one call into the runtime and nothing more are made in step() itself. All are inline, so that
// run's loop compiles to what one switch in it did: the instructions executed per scenario stay
// within 0.15% of that switch's (cachegrind), where op_read and op_write, which GCC would keep
// out of line, are forced in.

// Go and AfterFunc: a task for funcs[in.obj], its parameters bound to the arguments' values now.
inline Task* Interpreter::spawned_task(const Instr& in, const Task& t) {
  Task* child = new_task(in.obj);
  child->spawn = in.spawn;
  bind_args(in, t, *child);
  return child;
}

inline void Interpreter::op_go(const Instr& in, const Task& t) {
  r_.newproc(static_cast<uintptr_t>(in.obj) + 1, spawned_task(in, t));
}

inline void Interpreter::op_after_func(const Instr& in, const Task& t) {
  rt::afterFunc(in.ns, &goFunc, spawned_task(in, t));
}

inline void Interpreter::op_loop_start(const Instr& in, Task& t, const scenario::Loop* bench) {
  const int64_t count = in.expr >= 0 ? resolved(in, t).count : in.count;
  if (bench != nullptr && !meas_.started && t.func == bench->func && t.pc - 1 == bench->begin) {
    begin_measure(count);
  }
  t.counters[static_cast<size_t>(in.obj)] = count;
  if (in.var >= 0) t.vars[static_cast<size_t>(in.var)] = 0;
  if (count <= 0) t.pc = in.target;
}

inline void Interpreter::op_loop_next(const Instr& in, Task& t) {
  if (--t.counters[static_cast<size_t>(in.obj)] > 0) {
    t.pc = in.target;
    if (in.var >= 0) t.vars[static_cast<size_t>(in.var)]++;
  }
}

// ch <- v: the channel (its element, in an array) is evaluated first, then the value, as in Go.
inline void Interpreter::op_send(const Instr& in, Task& t) {
  rt::hchan* c = channel(in.obj, in.index, in.handle, t);
  if (in.value < 0) {
    rt::chansend(c, nullptr, true);  // the value 0
    return;
  }
  t.elem = value(in.value, t);
  rt::chansend(c, &t.elem, true);
}

// v, ok := <-ch: the runtime writes v straight into its variable (the Task's, on the heap).
inline void Interpreter::op_recv(const Instr& in, Task& t) {
  void* ep = in.bind >= 0 ? &t.vars[static_cast<size_t>(in.bind)] : nullptr;
  auto [selected, received] = rt::chanrecv(channel(in.obj, in.index, in.handle, t), ep, true);
  (void)selected;
  if (in.bind_ok >= 0) t.vars[static_cast<size_t>(in.bind_ok)] = received ? 1 : 0;
}

inline void Interpreter::op_range_recv(const Instr& in, Task& t) {
  void* ep = in.bind >= 0 ? &t.vars[static_cast<size_t>(in.bind)] : nullptr;
  auto [selected, received] = rt::chanrecv(channel(in.obj, in.index, in.handle, t), ep, true);
  (void)selected;
  if (!received) t.pc = in.target;
}

inline void Interpreter::op_select(const Instr& in, Task& t, const scenario::Function& fn) {
  // Sends first, then receives, as the compiler lays out scases for selectgo.
  std::vector<rt::scase>& cases = t.sel_cases;
  std::vector<int32_t>& which = t.sel_which;
  std::vector<int64_t>& values = t.sel_values;
  cases.clear();
  which.clear();
  // Sized before any element points into it: it must not move while the goroutine is parked.
  values.assign(static_cast<size_t>(in.num_cases), 0);
  // Go evaluates the channel operands and the sent values once, in source order, on entering the
  // select (so a panic in one is the first one's): first that, by source case k, then the scases
  // laid out sends first.
  std::vector<rt::hchan*>& chans = t.sel_chans;
  chans.assign(static_cast<size_t>(in.num_cases), nullptr);
  for (int32_t k = 0; k < in.num_cases; k++) {
    const scenario::SelectCase& sc = fn.cases[static_cast<size_t>(in.first_case + k)];
    chans[static_cast<size_t>(k)] = channel(sc.chan, sc.index, sc.handle, t);
    if (sc.send && sc.value >= 0) values[static_cast<size_t>(k)] = value(sc.value, t);
  }
  int nsends = 0;  // selectgo takes the send cases first
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) nsends = static_cast<int>(cases.size());
    for (int32_t k = 0; k < in.num_cases; k++) {
      const scenario::SelectCase& sc = fn.cases[static_cast<size_t>(in.first_case + k)];
      if (sc.send != (pass == 0)) continue;
      rt::scase c{};
      c.c = chans[static_cast<size_t>(k)];
      // A send case's value, or where a receive case's value lands (copied to the case's var if
      // the case is chosen).
      if ((sc.send && sc.value >= 0) || (!sc.send && sc.bind >= 0)) c.elem = &values[static_cast<size_t>(k)];
      cases.push_back(c);
      which.push_back(k);
    }
  }
  std::vector<uint16_t>& order = t.sel_order;
  order.assign(2 * cases.size(), 0);
  auto [chosen, recvOK] = rt::selectgo(cases.data(), order.data(), nsends, static_cast<int>(cases.size()) - nsends,
                                       !in.has_default);
  if (chosen < 0) {
    t.pc = in.target;
    return;
  }
  const int32_t k = which[static_cast<size_t>(chosen)];
  const scenario::SelectCase& sc = fn.cases[static_cast<size_t>(in.first_case + k)];
  if (sc.bind >= 0) t.vars[static_cast<size_t>(sc.bind)] = values[static_cast<size_t>(k)];
  if (sc.bind_ok >= 0) t.vars[static_cast<size_t>(sc.bind_ok)] = recvOK ? 1 : 0;
  t.pc = sc.target;
}

inline void Interpreter::op_syscall(const Instr& in, const Task& t) {
  r_.entersyscall();
  plat::charge(plat::Cost::SyscallEnterExit);
  if (in.on_cpu) {
    plat::kernel_work(resolved(in, t).ns);
  } else if (in.nanosleep) {
    plat::timer_sleep(resolved(in, t).ns);
  } else {
    plat::block_for(resolved(in, t).ns);
  }
  r_.exitsyscall();
}

inline void Interpreter::op_busy_poll(rt::g* gp, const Instr& in, const Task& t) {
  // A poll loop: compute, then check. The check is a non-blocking receive standing for a
  // flag, or a device's completion-queue read; it is a safe point only if the scenario
  // says the body makes a call (safe_point).
  // A poll of a channel alone, with no count, is a spin-wait (plat::SpinLoop): a poll that finds
  // the channel empty leaves nothing changed, so the next finds it empty too until another thread
  // writes. A device's completions come with time, and a count changes each poll: those are not.
  const bool spin = in.count < 0 && in.device < 0;
  plat::SpinLoop loop(true);
  for (int64_t polls = 0;;) {
    if (spin) loop.begin();
    if (in.safe_point) r_.morestackPreemptCheck();
    compute(gp, in);
    polls++;
    if (in.obj >= 0 || in.handle >= 0) {
      auto [selected, received] = rt::chanrecv(channel(in.obj, in.index, in.handle, t), nullptr, false);
      (void)received;
      if (selected) break;
    }
    if (in.device >= 0 && reap(devices_[static_cast<size_t>(in.device)])) break;
    if (in.count >= 0 && polls >= in.count) break;
    if (spin) loop.again();
  }
}

inline void Interpreter::op_parallel(const Instr& in, const Task& t, const scenario::Loop* bench) {
  // b.RunParallel: GOMAXPROCS goroutines share in.count iterations; wait for all.
  const int64_t count = resolved(in, t).count;
  parallels_.push_back(std::make_unique<Parallel>());
  Parallel& par = *parallels_.back();
  par.count = count;
  par.begin = clock_();
  par.wg = std::make_unique<rt::WaitGroup>(parallel_id_base_ + parallels_.size());
  const bool measured = bench != nullptr && sc_.benchmark->loop == in.loop;
  if (measured) begin_measure(count);
  const int32_t procs = r_.gomaxprocs;
  par.wg->Add(procs);
  for (int32_t k = 0; k < procs; k++) {
    Task* child = new_task(in.obj);
    child->parallel = static_cast<int32_t>(parallels_.size() - 1);
    // The body reads the caller's variables in scope, as a closure does (program.h).
    std::copy_n(t.vars.begin(), sc_.funcs[static_cast<size_t>(in.obj)].num_params, child->vars.begin());
    r_.newproc(static_cast<uintptr_t>(in.obj) + 1, child);
  }
  par.wg->Wait();
  if (measured) end_measure();
}

inline void Interpreter::op_bench(const Instr& in) {
  // testing's runN: the function runs in a goroutine of its own; its caller waits for it.
  Task* child = new_task(in.obj);
  child->bench = true;
  r_.newproc(static_cast<uintptr_t>(in.obj) + 1, child);
  rt::chanrecv(bench_done_, nullptr, true);
}

[[gnu::always_inline]] inline void Interpreter::op_read(const Instr& in, Task& t) {
  // internal/poll's fd.Read. End of file, or an error once this end was closed, leaves the
  // innermost loop around it. On a dialled client end it reads an answer (EAGAIN parks it in
  // netpoll until the server's write delivers one).
  const int32_t c = connection(in.obj, in.index, t);
  Network::Got got = Network::Got::Closed;
  fd_call(static_cast<size_t>(c), net_->pd(c), 'r', [&] {
    got = net_->read(c, clock_());
    return got != Network::Got::Again;
  });
  if (got != Network::Got::Request && in.target >= 0) t.pc = in.target;
}

[[gnu::always_inline]] inline void Interpreter::op_write(const Instr& in, Task& t) {
  // internal/poll's fd.Write: EAGAIN when the send buffer is full, until an answer has left. On a
  // dialled end the write delivers to the peer within the system call (and wakes its poller).
  const int32_t c = connection(in.obj, in.index, t);
  Network::Wrote w = Network::Wrote::Closed;
  fd_call(static_cast<size_t>(c), net_->pd(c), 'w', [&] {
    w = net_->write(c, clock_());
    return w != Network::Wrote::Full;
  });
  // Full at the end: the wait for room failed, the descriptor was closed.
  if ((w == Network::Wrote::Closed || w == Network::Wrote::Full) && in.target >= 0) t.pc = in.target;
}

inline void Interpreter::op_accept(const Instr& in, Task& t) {
  // internal/poll's fd.Accept, on the listener (the workers of a pool take turns at its lock).
  int64_t k = -1;
  fd_call(static_cast<size_t>(net_->conns() + in.obj), net_->listener_pd(in.obj), 'r', [&] {
    k = net_->accept(in.obj, clock_());
    return k >= 0;
  });
  if (k >= 0) open_fd(static_cast<size_t>(net_->conn(sc_.listeners[static_cast<size_t>(in.obj)].conn, k)));
  if (k >= 0 && in.var >= 0) t.vars[static_cast<size_t>(in.var)] = k;
}

inline void Interpreter::op_close_conn(const Instr& in, const Task& t) {
  // internal/poll's fd.Close: mark the descriptor closed (its lock's waiters fail), take it
  // out of the poller (runtime_pollUnblock readies the goroutines parked on it), drop Close's
  // reference, and wait on csema until the last reference is gone (destroy, by whoever drops
  // it, makes the close system call and releases csema). A goroutine between its lock and its
  // system call still reads or writes the open socket. Closing it again does nothing (Go
  // returns an error).
  const int32_t c = connection(in.obj, in.index, t);
  FdMutex& fd = fds_[static_cast<size_t>(c)];
  if (fd.increfAndClose()) {
    r_.pollUnblock(net_->pd(c));
    if (fd.decref()) destroy_fd(static_cast<size_t>(c));
    rt::semacquire(&csemas_[static_cast<size_t>(c)]);
  }
}

int64_t Interpreter::bounded(int32_t id, const Task& t, int64_t lo, int64_t hi) {
  const int64_t v = value(id, t);
  if (v < lo || v > hi) {
    const scenario::Expr& e = sc_.exprs[static_cast<size_t>(id)];
    panic(e, e.field + " is " + std::to_string(v) + ": out of range, from " + std::to_string(lo) + " to " +
                 std::to_string(hi));
  }
  return v;
}

// count objects of bytes each, for the GC to see (the bounds are the literal's, limits.h; both
// literals' product was checked when the scenario was loaded).
inline void Interpreter::op_alloc(const Instr& in, const Task& t) {
  const int64_t bytes = in.bytes_expr >= 0 ? bounded(in.bytes_expr, t, 1, scenario::kMaxObjectBytes) : in.bytes;
  const int64_t count = in.expr >= 0 ? bounded(in.expr, t, 0, scenario::kMaxAllocCount) : in.count;
  if (count > scenario::kMaxAllocBytes / bytes) {
    panic(sc_.exprs[static_cast<size_t>(in.expr >= 0 ? in.expr : in.bytes_expr)],
          std::to_string(count) + " objects of " + std::to_string(bytes) + " bytes: more than " +
              std::to_string(scenario::kMaxAllocBytes) + " bytes in one alloc");
  }
  r_.mallocgc(static_cast<uint64_t>(bytes), static_cast<uint64_t>(count), in.retain);
}

inline void Interpreter::op_release(const Instr& in, const Task& t) {
  const int64_t bytes = in.bytes_expr >= 0 ? bounded(in.bytes_expr, t, 0, scenario::kMaxAllocBytes) : in.bytes;
  r_.releaseHeap(static_cast<uint64_t>(bytes));
}

// One instruction of t, which runs fn; t.pc is already past it. Inlined into run, so that the
// dispatch costs what the switch inside run's loop did.
[[gnu::always_inline]] inline void Interpreter::step(rt::g* gp, Task& t, const scenario::Function& fn, const Instr& in,
                                                const scenario::Loop* bench) {
  const auto obj = static_cast<size_t>(in.obj);
  switch (in.op) {
    case Opcode::Compute: compute(gp, resolved(in, t)); break;
    case Opcode::Go: op_go(in, t); break;
    case Opcode::Exit: t.pc = static_cast<int32_t>(fn.code.size()); break;
    case Opcode::Jump: t.pc = in.target; break;
    case Opcode::LoopStart: op_loop_start(in, t, bench); break;
    case Opcode::LoopNext: op_loop_next(in, t); break;
    case Opcode::RangeRecv: op_range_recv(in, t); break;
    case Opcode::Gosched: r_.Gosched(); break;
    case Opcode::ReadMemStats: r_.ReadMemStats(); break;
    case Opcode::Send: op_send(in, t); break;
    case Opcode::Recv: op_recv(in, t); break;
    case Opcode::Close: rt::closechan(channel(in.obj, in.index, in.handle, t)); break;
    case Opcode::Select: op_select(in, t, fn); break;
    case Opcode::Lock: mutex(in, t)->Lock(); break;
    case Opcode::Unlock: mutex(in, t)->Unlock(); break;
    case Opcode::WgAdd: waitgroup(in, t)->Add(static_cast<int>(resolved(in, t).count)); break;
    case Opcode::WgDone: waitgroup(in, t)->Done(); break;
    case Opcode::WgWait: waitgroup(in, t)->Wait(); break;
    case Opcode::Sleep: rt::timeSleep(resolved(in, t).ns); break;
    case Opcode::AfterFunc: op_after_func(in, t); break;
    case Opcode::Syscall: op_syscall(in, t); break;
    case Opcode::BusyPoll: op_busy_poll(gp, in, t); break;
    case Opcode::LockOSThread: r_.LockOSThread(); break;
    case Opcode::UnlockOSThread: r_.UnlockOSThread(); break;
    case Opcode::Parallel: op_parallel(in, t, bench); break;
    case Opcode::Submit: submit(devices_[static_cast<size_t>(in.device)]); break;
    case Opcode::ParallelNext:
      if (!pb_next(t)) t.pc = in.target;
      break;
    case Opcode::Bench: op_bench(in); break;
    case Opcode::AtomicAdd: vars_[obj].Add(in.count); break;  // wraps as Go's does, on the unsigned bits
    case Opcode::ResetTimer:
      if (meas_.started && !meas_.finished) meas_.begin = clock_();
      break;
    case Opcode::Read: op_read(in, t); break;
    case Opcode::Write: op_write(in, t); break;
    case Opcode::Accept: op_accept(in, t); break;
    case Opcode::CloseConn: op_close_conn(in, t); break;
    case Opcode::Alloc: op_alloc(in, t); break;
    case Opcode::Release: op_release(in, t); break;
    case Opcode::GC: r_.GC(); break;
    case Opcode::Gomaxprocs:
      r_.GOMAXPROCS(static_cast<int32_t>(in.bytes_expr >= 0 ? bounded(in.bytes_expr, t, 0, scenario::kMaxProcs) : in.bytes));
      break;
    case Opcode::Local: op_local(in, t); break;
  }
}

void Interpreter::run(rt::g* gp) {
  Task* t = static_cast<Task*>(gp->task);
  if (t == nullptr) {
    t = main_task();
    gp->task = t;
  }
  const scenario::Loop* bench =
      sc_.benchmark && sc_.benchmark->loop >= 0 ? &sc_.loops[static_cast<size_t>(sc_.benchmark->loop)] : nullptr;
  // testing's runN: the timer starts as the benchmark function is called, in its goroutine.
  if (t->bench) begin_measure(sc_.benchmark->n);
  for (;;) {
    const scenario::Function& fn = sc_.funcs[static_cast<size_t>(t->func)];
    if (bench != nullptr && meas_.started && !meas_.finished && t->func == bench->func && t->pc == bench->end &&
        bench->kind != scenario::LoopKind::Parallel) {
      end_measure();
    }
    if (t->pc >= static_cast<int32_t>(fn.code.size())) break;  // the function returns
    const Instr& in = fn.code[static_cast<size_t>(t->pc)];
    t->pc++;
    if (in.op != Opcode::Jump && in.op != Opcode::LoopNext) r_.morestackPreemptCheck();
    step(gp, *t, fn, in, bench);
  }
  if (t->bench) {
    end_measure();
    rt::chansend(bench_done_, nullptr, true);
  }
  if (t->parallel >= 0) parallels_[static_cast<size_t>(t->parallel)]->wg->Done();
  // The goroutine is done with its task (gdestroy clears gp->task), and nothing else holds it.
  free_tasks_.push_back(t);
}

}  // namespace gmp::workload
