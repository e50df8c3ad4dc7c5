// The virtual-time engine: a discrete-event driver of the recording platform.
//
// Model. The engine runs simulated OS threads (one per M, plus sysmon) on simulated cores. Each
// thread runs on execution contexts (fibers): its g0 stack and, while it runs a goroutine, that
// goroutine's stack; plat::switchto moves a thread between them (gogo, mcall). All of this happens
// on one OS thread.
//
// Time. Every running thread has its own clock: the virtual time at which its next operation
// happens. The engine always resumes the thread whose clock is earliest (ties broken by a number
// drawn from the seed when the thread was queued), so every shared-memory access of the port
// happens in virtual-time order. Each platform operation charges its cost from Costs to the
// caller's clock; if that moves the caller past another thread's clock, the caller yields. A
// thread therefore runs ahead without switching for as long as it stays earliest: most
// operations cost a comparison, not a context switch.
//
// Cores. A thread needs a core to run. Where a thread that becomes ready goes is the profile's
// placement (Costs::affine):
//   - spread: it takes a free core (the fastest free one, lowest index among equals) or waits in
//     one FIFO run queue for the machine.
//   - affine: each core has a FIFO run queue, and a thread has a previous core (the last it ran
//     on). A thread that slept less than os_wake_in_place wakes on its previous core whatever
//     that core is doing: it runs there at once if the core is free, else it goes to the head of
//     the core's queue and preempts the thread running there (Linux's EEVDF keeps a short
//     sleeper on its core's run queue, where it is woken in place and, having lag left, preempts).
//     Any other ready thread takes its previous core if free, else the fastest free core, else
//     waits at the tail of its previous core's queue (a new thread: its creator's core's), and
//     an idle core pulls it once it has waited os_balance_delay (checked again each period, as
//     the load balancer runs every few ticks).
//     A thread placed on a free core starts os_idle_exit_latency later, and a waker whose wake-up
//     lands on a free core pays os_wake_ipi (spread folds both into the futex costs).
// A thread that blocks (note sleep, usleep, a
// contended lock) gives its core to the head of that core's queue. While threads wait for a
// core, the thread running there whose time slice (Costs::os_quantum) has expired is moved to
// the queue's tail at its next operation; a long compute is cut at the slice's end when someone
// is waiting. Compute is scaled by the speed of the core it runs on. A core that frees up while
// nobody waits for it takes over the computation on the slowest core slower than it (misfit
// migration).
//
// Coherence. An access to a cell that another thread wrote since this thread last saw it (for a
// write: that any other thread holds) pays a cache-line transfer. Without
// Costs::cacheline_by_distance (a profile that gives no cluster_size) every such transfer costs
// cacheline_transfer, even from a thread that ran on the same core. With it the line comes from
// the nearest of its other holders, each taken to be on the core it last ran on: free from a
// holder on this thread's own core (the line is in that core's cache), cacheline_transfer_cluster
// from one in the same cluster (Core::cluster), cacheline_transfer from further away. Holders are
// bits of a 64-bit word by thread id % 64: for ids of 64 and more the thread whose id is the bit
// stands for all that share it.
//
// Signals. tgkill marks the signal pending on the target from now + signal_delivery_latency. A
// running target handles it at its first operation at or after that time; a target inside a long
// compute is cut short there. A blocked or waiting target handles it when it next runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <deque>
#include <string>
#include <vector>

#include "sim/engine/chooser.h"
#include "sim/engine/costs.h"
#include "sim/platform/context.h"
#include "sim/platform/driver.h"
#include "sim/platform/splitmix64.h"
#include "sim/platform/platform.h"

namespace gmp::engine {

// What nanotime reads when a run starts (virtual ns).
inline constexpr int64_t kNanotimeEpoch = 1'000'000'000;

struct Core {
  double speed = 1.0;  // relative to the reference core of the cost profile
  int32_t cluster = 0; // the cores sharing a cache have one id (Costs::cacheline_by_distance)
};

struct EngineConfig {
  std::vector<Core> cores;
  Costs costs;
  uint64_t seed = 1;
  int64_t time_limit = 0;     // virtual ns; 0: none
  uint64_t event_limit = 0;   // platform operations; 0: none
  // Stress mode: each operation costs up to this many ns more, drawn from the seed, so that
  // different seeds explore different interleavings of the same program. 0: off.
  int64_t jitter = 0;
  // Called every 2^22 events with the virtual time and the event count, for progress displays.
  // It must not touch the simulation: it only observes.
  std::function<void(int64_t now, uint64_t events)> progress;
  // Choice mode (see chooser.h): the chooser orders every step instead of the clocks; the
  // machine's cores, OS time slices, jitter and costs play no part. nullptr: timing mode.
  Chooser* chooser = nullptr;
  // Choice mode: how many timed waits of each daemon thread may end by choice per run.
  uint32_t daemon_rounds = 2;
  // Choice mode, strict time (chooser.h): timed waits end in the order of their deadlines, daemons'
  // rounds are not counted, and time_limit bounds the run instead.
  bool strict_time = false;
};

struct EngineStats {
  uint64_t events = 0;            // platform operations handled
  uint64_t os_preemptions = 0;    // time-slice expiries that moved a thread off its core
  uint64_t line_transfers = 0;    // accesses that paid a cache-line transfer
  // Placement of ready threads (affine placement counts all four; spread, only placed_on_other).
  uint64_t placed_on_prev = 0;    // on its free previous core
  uint64_t woken_in_place = 0;    // a short sleeper on its busy previous core, preempting
  uint64_t placed_on_other = 0;   // on a free core other than its previous one (spread: any free core)
  uint64_t balance_pulls = 0;     // a queued thread pulled by an idle core
};

class Engine final : public plat::Driver {
 public:
  explicit Engine(EngineConfig cfg);
  ~Engine() override;

  // Creates a simulated OS thread that will run entry(arg) on a new stack with getg() == g0,
  // ready at the caller's current time (or 0 before run()). Returns its thread id.
  // A daemon thread (sysmon) loops forever; in choice mode its waits are bounded (chooser.h).
  // `process`: the simulated process the thread belongs to (see set_process_hook).
  uint64_t newosproc(std::string name, plat::Fiber::Entry entry, void* arg, rt::g* g0, bool daemon = false,
                     uint32_t process = 0);

  // Several processes on one machine: before the engine runs a thread whose process is not the
  // process of the thread it ran last (the first thread of a run always counts as such), it calls
  // hook(ctx, process), so that the host can make that process's state current. nullptr: none.
  using ProcessHook = void (*)(void* ctx, uint32_t process);
  void set_process_hook(ProcessHook hook, void* ctx) {
    process_hook_ = hook;
    process_ctx_ = ctx;
  }

  // Stopped: choice mode's chooser ended the run (kStopRun).
  enum class Stop { AllExited, Exit, Deadlock, TimeLimit, EventLimit, Fatal, Stopped };
  struct Result {
    Stop stop = Stop::AllExited;
    int exit_code = 0;
    std::string message;
    int64_t end_time = 0;
  };
  // Runs until every thread has exited, or exit() is called, or no thread can ever run again, or
  // a limit or a Go throw stops the run. An exception that escaped a thread's stack (fail()) is
  // rethrown here, on the caller's stack, once the run has stopped.
  Result run();

  // Ends the simulation from inside a thread (Go's exit), after the current operation.
  [[noreturn]] void exit(int code);
  // The current thread's exit (Go's mexit): it never runs again.
  [[noreturn]] void exit_thread();

  // CPU work on the calling thread: `work` ns on a reference core. Returns the work left undone
  // when the compute was cut short (by a signal or the end of a time slice), 0 when completed.
  int64_t compute(int64_t work) override;
  // The calling thread blocks in the kernel for ns (a blocking system call), off its core.
  void block_for(int64_t ns) override;
  // Kernel work: the thread keeps its core for ns, as a spinning lock waiter does (no switch, no
  // wake-up latency when it ends; the OS's time slices do not cut it).
  void kernel_work(int64_t ns) override;
  // nanosleep(2): off the core for ns, then as late as the OS wakes a sleeper (usleep_min_latency:
  // the timer slack and the wake-up, plus wakeup_jitter), as usleep is.
  void timer_sleep(int64_t ns) override;
  // Charges ns of the calling thread's time as one event.
  void spend(int64_t ns);
  // The stack a thread started on (its g0's).
  plat::Context* thread_context(uint64_t tid) const;

  int64_t now() const;
  // The core the calling thread runs on (timing mode), -1 outside a thread.
  int current_core() const;
  const EngineConfig& config() const { return cfg_; }
  const EngineStats& stats() const { return stats_; }

  // Driver interface.
  void access(const plat::Access& a) override;
  // The same, as plat::Driver::fast_access: all the engine reads of an access.
  static void fast_access_of(plat::Driver* self, plat::Op op, uint64_t* holders);
  void lock(plat::Mutex& l) override;
  void unlock(plat::Mutex& l) override;
  void notesleep(plat::Note& n) override;
  bool notetsleep(plat::Note& n, int64_t ns) override;
  void notewakeup(plat::Note& n) override;
  void usleep(uint32_t usec) override;
  void osyield() override;
  int64_t nanotime() override;
  uint64_t gettid() override;
  void tgkill(uint64_t tid, int sig) override;
  void charge(plat::Cost c) override;
  void switchto(plat::Context& to) override;
  void crash(const char* msg) override;
  [[noreturn]] void fail(std::exception_ptr e) override;

 private:
  struct Thread;
  enum class State { Ready, Running, Blocked, Exited };
  enum class Wait { None, Lock, Note, Timer, Syscall, Sleep };  // the last two: choice mode

  void advance(int64_t ns);              // charge ns of the current thread's time, then maybe yield
  void advance_rare(int64_t ns);         // advance's general case (see rare_)
  void yield_if_late();                  // switch away if another thread is due earlier
  void reschedule();                     // the current thread stops; run the earliest one
  Thread* next_running();
  void block(Wait w, const void* on, int64_t deadline, bool keep_core = false);  // keep_core: busy-wait
  // A blocked thread becomes ready at `at`. True if affine placement put it on a free core (the
  // waker pays os_wake_ipi for that).
  bool wake(Thread& t, int64_t at);
  void drop_waiter(Thread& t);           // t no longer waits on its lock or note
  bool make_ready(Thread& t, int64_t at);  // true: as wake's
  bool place_affine(Thread& t);
  int fastest_free_core() const;         // -1 if none
  void wait_for_core(Thread& t, int core, bool front);  // t joins core's queue (spread: the one queue)
  void balance(Thread& t, int64_t at);   // t's balance timer: an idle core pulls it, or it waits on
  void give_core(Thread& t, int core, int64_t at);
  void release_core(Thread& t, int64_t at);
  bool serve_queue(int core, int64_t at);  // a free core takes its queue's head; false if none
  void move_to_faster_core(int core, int64_t at);  // a freed core takes over a slower core's compute
  void push(Thread& t);                  // (re)queue a running thread at its clock
  void enqueue(Thread& t, int64_t at);   // t's queue entry (new or replacing its old one), due at `at`
  void unqueue(Thread& t);               // t has no queue entry any more
  void exact_horizon();                  // horizon_ := the queue's top
  void interrupt(Thread& t, int64_t at); // cut a long compute at `at`
  void deliver_signals();
  int64_t os_jitter();  // how much later than its fixed latency an OS wake-up lands
  int64_t line_cost(uint64_t& holders, bool write);  // a cache-line transfer, if the access needs one
  int64_t line_cost_by_distance(uint64_t others);    // line_cost by distance to the nearest of `others`
  int64_t spin_budget() const;                 // how long a runtime-lock waiter spins before sleeping
  void check_slice();
  void yield_core();
  void check_limits();
  void set_next_check();
  void switch_thread(Thread& to);
  void make_current(Thread& t);  // t is the running thread from now on
  void enter_process(uint32_t process);  // make_current's call of the process hook
  [[noreturn]] void stop_run(Stop s, int code, std::string msg);
  static void thread_main(void* arg);
  Thread& cur() { return *curp_; }

  // Choice mode (engine_check.cpp).
  void check_point(Step s);              // the current thread's next step; returns once it is chosen
  Thread* check_choose();                // asks the chooser; nullptr when no thread is enabled
  void check_take(Thread& t);            // t was chosen: end its timed wait, set its clock
  int64_t check_wait_start();           // the step that reads the clock for a deadline
  void check_block(Wait w, const void* on, int64_t deadline);
  void check_wake(Thread& t, Step s);    // a waiter becomes enabled, its next step s
  std::vector<uint32_t> waiting_on(const void* on, Wait w) const;
  void check_switch_away();              // the current thread stopped: run the chosen one
  void check_access(const plat::Access& a);
  void check_lock(plat::Mutex& l);
  void check_unlock(plat::Mutex& l);
  void check_notesleep(plat::Note& n);
  bool check_notetsleep(plat::Note& n, int64_t ns);
  void check_notewakeup(plat::Note& n);
  int64_t check_compute(int64_t work);
  void check_tgkill(uint64_t tid, int sig);
  [[noreturn]] void check_exit_thread();
  std::string blocked_threads() const;

  // The event queue: at most one entry per thread (a running thread's next operation, or a
  // blocked thread's timeout), in a binary min-heap on (time, tie) that records each thread's
  // position (qpos_), so that an entry is replaced or removed in place instead of left stale.
  struct QItem {
    int64_t time;
    uint64_t tie;
    uint32_t tid;
  };
  static bool earlier(const QItem& a, const QItem& b) { return a.time != b.time ? a.time < b.time : a.tie < b.tie; }
  void q_place(size_t i, const QItem& it) {
    heap_[i] = it;
    qpos_[it.tid] = static_cast<int32_t>(i);
  }
  void q_sift_up(size_t i, QItem it);
  void q_sift_down(size_t i, QItem it);
  void q_remove_at(size_t i);
  QItem q_pop();

  EngineConfig cfg_;
  EngineStats stats_;
  std::vector<std::unique_ptr<Thread>> threads_;
  std::vector<QItem> heap_;
  std::vector<int32_t> qpos_;      // each thread's index in heap_, -1 if it has no entry
  // The threads blocked on a lock or a note and what they wait on, so that unlock and notewakeup
  // look through the waiters instead of every thread (Thread::waiter_idx: each one's index).
  struct Waiter {
    const void* on;
    uint32_t tid;
  };
  std::vector<Waiter> waiters_;
  uint32_t computing_ = 0;         // threads inside compute()
  // Ready threads waiting for a core: one FIFO per core (affine), or one for the machine (spread,
  // runq_[0]); runq_of(core) is the one that serves a core. waiting_: how many in all.
  std::vector<std::deque<uint32_t>> runq_;
  std::deque<uint32_t>& runq_of(int core) { return runq_[cfg_.costs.affine ? static_cast<size_t>(core) : 0]; }
  uint32_t waiting_ = 0;
  std::vector<int32_t> core_thread_;  // thread on each core, -1 if free
  double slowest_speed_ = 1e300;      // the slowest core's speed
  bool line_distance_ = false;        // cfg_.costs.cacheline_by_distance
  plat::Fiber main_;
  uint32_t cur_ = 0;
  Thread* curp_ = nullptr;     // threads_[cur_]
  uint64_t cur_bit_ = 1;       // cur_'s bit in a cache line's holders word
  uint64_t event_limit_ = UINT64_MAX;  // cfg_ limits, with 0 (none) as the maximum
  int64_t time_limit_ = INT64_MAX;
  // The hot path's summaries, so that an operation costs few comparisons. next_check_: the event
  // count at which check_limits must run (the event limit or the next progress report). horizon_:
  // no queued entry is due before it (a lower bound: lowered by every push, raised to the top's
  // time when yield_if_late reads the queue's top and after a pop). rare_: bits for what
  // advance_rare handles.
  uint64_t next_check_ = 0;
  int64_t horizon_ = INT64_MIN;
  static constexpr uint32_t kRareJitter = 1, kRareWaiting = 2;
  uint32_t rare_ = 0;
  bool running_ = false;
  bool stopping_ = false;
  Result result_;
  std::exception_ptr failure_;  // what fail() stopped the run with, for run() to rethrow
  Chooser* chooser_ = nullptr;  // cfg_.chooser
  int64_t now_ = 0;             // choice mode: the clock (the latest end of a timed wait)
  std::vector<Step> steps_;     // choice mode: scratch, the enabled steps at a point
  uint32_t idle_daemon_rounds_ = 0;  // choice mode: daemon waits ended with nothing else enabled
  bool chooser_stopped_ = false;     // choice mode: the chooser returned kStopRun
  SplitMix64 rng_;  // the engine's only source of randomness, seeded by the run seed
  ProcessHook process_hook_ = nullptr;
  void* process_ctx_ = nullptr;
  uint32_t cur_process_ = UINT32_MAX;  // the process of the thread made current last; none yet
  uint64_t wait_seq_ = 0;
};

}  // namespace gmp::engine
