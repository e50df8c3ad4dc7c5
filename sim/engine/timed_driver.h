// The timed driver: the virtual-time engine, a discrete-event driver of the recording platform.
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
//   - affine: Linux's fair scheduler (docs/placement.md gives each rule with its fair.c source).
//     Each core has an EEVDF queue (vruntime, lag, virtual deadline; the pick takes the eligible
//     thread with the earliest deadline, and a slice ends at the first tick past the deadline). A
//     woken thread still queued on its core as a delayed sleeper goes back there; any other one
//     is placed by wake_affine and select_idle_sibling (idle target, idle previous core, its
//     recent core, then an idle-core scan that SIS_UTIL cuts short on a busy LLC), preempting the
//     thread on a busy core if the pick now prefers it. Idle cores pull waiting threads that are
//     not cache hot when they go idle (newidle) and at their ticks (periodic balancing). The
//     constants are Costs::kernel's (the profile's machine.linux_scheduler). A thread placed on
//     a free core starts os_idle_exit_latency later, and a waker whose wake-up lands on a free
//     core pays os_wake_ipi (spread folds both into the futex costs).
// A thread that blocks (note sleep, usleep, a contended lock) gives its core to the next one
// of that core's queue. Under spread placement, while threads wait for a core, the thread
// running there whose time slice (Costs::os_quantum) has expired is moved to the queue's tail at
// its next operation; a long compute is cut at the slice's end when someone
// is waiting. Compute is scaled by the speed of the core it runs on: its group's speed times the
// group's speed curve at the number of busy cores of its cluster, over the memory term
// 1 + share x memory_slowdown x (busy cores on the machine - 1) (Core::busy_speed,
// Costs::memory_slowdown). A compute in flight is re-planned whenever those counts change (a core
// takes or loses a thread: set_core counts it, give_core and release_core re-plan): the work
// left, measured at the old speed, runs on at the new one from that moment (replan). Without a
// curve or a memory_slowdown the counts are not kept and a compute's end is fixed at its start;
// advance() never looks at any of it. A core that frees up while
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
//
// CPU bandwidth (cgroups; docs/placement.md, "CPU bandwidth (cgroups)"). A thread's process may
// sit in a group (EngineConfig::groups) with a quota per period and a cpuset. Each group has a
// pool refilled to its quota at each period boundary (periods from time 0; unused runtime carries
// over up to quota + burst); each core's queue of the group takes runtime from the pool a slice at
// a time (Costs::kernel.cfs_bandwidth_slice) while a thread of the group runs there, and when that
// runtime is spent with the pool empty the group is throttled on that core: its thread there is
// taken off the core (a compute is cut at the exact moment) and its threads queued there (affine)
// wait, parked, until a refill or the slack timer gives the queue runtime again. A cpuset keeps a
// group's threads on its cores in both placements. Without groups none of this costs anything:
// the checks sit behind rare_'s kRareBw bit, set only when some group has or will have a quota.
//
// Protocol. The timed driver guarantees: the thread that runs is always the one whose clock is
// earliest among the threads that hold a core, to the granularity of one platform operation (a
// thread that passes another's clock yields at its next operation, before that operation's effect
// on memory, so shared memory is touched in virtual-time order); its only source of randomness is
// the seed (ties, jitter, OS wake-up lateness, lock_spinbit's tail wake-ups), so the same config
// and program give the same run; and each platform operation costs a few comparisons unless
// something is due (another thread, a limit, a signal, a time slice). Its per-thread state (the
// event queue's entry, the core, the slice) is in its own thread record, TimedThread. It is
// final, so calls inside it are direct; the platform's shared-memory accesses reach it through
// fast_access without a virtual call.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/engine/driver_base.h"
#include "sim/platform/splitmix64.h"

namespace gmp::engine {

class TimedDriver final : public DriverBase {
 public:
  // cfg.chooser must be nullptr (a chooser makes the choice driver: engine.h).
  explicit TimedDriver(EngineConfig cfg);
  ~TimedDriver() override;

  // Ready at the caller's current time (or 0 before run()); the creator pays thread_create
  // through spend. daemon changes nothing here.
  uint64_t newosproc(std::string name, plat::Fiber::Entry entry, void* arg, rt::g* g0, bool daemon,
                     uint32_t process) override;
  [[noreturn]] void exit_thread() override;
  void spend(int64_t ns) override;
  int current_core() const override;

  // CPU work on the calling thread: `work` ns on a reference core. Returns the work left undone
  // when the compute was cut short (by a signal or the end of a time slice), 0 when completed.
  int64_t compute(int64_t work, double memory_share) override;
  // The calling thread blocks in the kernel for ns (a blocking system call), off its core.
  void block_for(int64_t ns) override;
  // Kernel work: the thread keeps its core for ns, as a spinning lock waiter does (no switch, no
  // wake-up latency when it ends; the OS's time slices do not cut it).
  void kernel_work(int64_t ns) override;
  // nanosleep(2): off the core for ns, then as late as the OS wakes a sleeper (usleep_min_latency:
  // the timer slack and the wake-up, plus wakeup_jitter), as usleep is.
  void timer_sleep(int64_t ns) override;
  void access(const plat::Access& a) override;
  // The same, as plat::Driver::fast_access: all the driver reads of an access.
  static void fast_access_of(plat::Driver* self, plat::Op op, uint64_t* holders);
  void lock(plat::Mutex& l) override;
  void unlock(plat::Mutex& l) override;
  void notesleep(plat::Note& n) override;
  bool notetsleep(plat::Note& n, int64_t ns) override;
  void notewakeup(plat::Note& n) override;
  void usleep(uint32_t usec) override;
  void osyield() override;
  int64_t nanotime() override;
  void tgkill(uint64_t tid, int sig) override;
  void charge(plat::Cost c) override;

 private:
  struct TimedThread;  // timed_driver.cpp

  Thread* next_to_run() override;
  void run_ended(int64_t end) override;  // the groups' open stretches and periods, into their stats

  TimedThread& cur();                    // the current thread, as this driver's record
  TimedThread& thread(size_t id);        // threads_[id], as this driver's record
  void advance(int64_t ns);              // charge ns of the current thread's time, then maybe yield
  void advance_rare(int64_t ns);         // advance's general case (see rare_)
  void advance_due(int64_t t);           // advance's limit and horizon checks, when one fired
  void yield_if_late();                  // switch away if another thread is due earlier
  void yield_if_late_inline();           // its body, for advance_due
  void reschedule();                     // the current thread stops; run the earliest one
  TimedThread* next_running();
  void block(Wait w, const void* on, int64_t deadline, bool keep_core = false);  // keep_core: busy-wait
  // A blocked thread becomes ready at `at`, woken by a thread running on core `waker` (-1: by a
  // timer). True if affine placement put it on a free core (the waker pays os_wake_ipi for that).
  bool wake(TimedThread& t, int64_t at, int waker = -1);
  bool make_ready(TimedThread& t, int64_t at, int waker = -1);  // true: as wake's
  int fastest_free_core() const;         // -1 if none
  void wait_for_core(TimedThread& t, int core, bool front);  // t joins core's queue (spread: the one queue)
  void give_core(TimedThread& t, int core, int64_t at);
  void set_core(int core, int32_t tid, int64_t at);  // core_thread_[core] := tid, with its counts
  bool others_ready(int core) const;     // a ready thread waits for this core (spread: for any)
  void idle_wait_update(int64_t at);     // the idle-wait metric after a change of cores or queues

  // Linux placement (affine; docs/placement.md, which names the kernel function of each rule).
  bool place_linux(TimedThread& t, int waker);          // select_task_rq_fair and the enqueue
  int wake_affine(TimedThread& t, int this_core, int prev, int64_t at);
  int select_idle_sibling(TimedThread& t, int prev, int target, int64_t at);
  int idle_scan_depth(int target, int64_t at);          // SIS_UTIL's nr_idle_scan, as last balanced
  void refresh_idle_scan(int core, int64_t at);         // update_idle_cpu_scan for core's LLC
  bool core_idle(int core) const;                        // nothing running or queued
  bool same_llc(int a, int b) const;
  double core_util(int core, int64_t at) const;          // cpu_util: PELT and UTIL_EST, 0..1
  double thread_util(const TimedThread& t, int64_t at) const;  // PELT util_avg, 0..1
  void set_on_cpu(TimedThread& t, bool on, int64_t at);
  static int home_core(const TimedThread& t);           // the core whose cfs_rq holds t's averages
  void util_est_sleep(TimedThread& t, int64_t at);
  void post_init_util(TimedThread& t, int core, int64_t at);
  double thread_load(const TimedThread& t, int64_t at) const;  // PELT runnable average, 0..1
  double cpu_load(int core, int64_t at) const;           // the threads' loads homed on core
  void set_runnable(TimedThread& t, bool runnable, int64_t at);
  int64_t cur_vrt(const TimedThread& t, int64_t at) const;  // a running thread's vruntime now
  __int128 vsum(int core, int64_t at, int64_t& n) const;     // sum and count of core's vruntimes
  void place_entity(TimedThread& t, int core, int64_t at, bool initial);
  void dequeue_sleep(TimedThread& t, int64_t at);        // blocking: delayed, or off the queue with its lag
  TimedThread* pick_eevdf(int core, TimedThread* curr);  // drops delayed picks
  void wakeup_preempt(int core, TimedThread& w, int64_t at);
  void rq_add_ready(TimedThread& t, int core);
  void rq_remove(TimedThread& t);
  void migrate_queued(TimedThread& t, int dst, int64_t at);  // off its queue, placed on dst
  bool task_hot(const TimedThread& t, int64_t at) const;
  bool newidle_balance(int core, int64_t at);            // a core going idle pulls a queued thread
  void balance(TimedThread& t, int64_t at);              // t's tick while queued: periodic balancing
  void yield_core_linux(bool sched_yield);
  int64_t tick_ceil(int64_t at) const { return (at + tick_ - 1) / tick_ * tick_; }
  int64_t next_tick(int64_t at) const { return (at / tick_ + 1) * tick_; }
  void release_core(TimedThread& t, int64_t at);
  bool serve_queue(int core, int64_t at);  // a free core takes its queue's head; false if none
  void move_to_faster_core(int core, int64_t at);  // a freed core takes over a slower core's compute
  static int64_t time_for(double work, double speed);  // ns for work at speed, rounded up
  double speed_now(const TimedThread& t) const;  // t's core's speed under the busy counts now
  void count_busy(int core, int delta);  // core took (+1) or lost (-1) its thread
  void replan(int64_t at);               // computes in flight go on at their cores' new speeds
  void push(TimedThread& t);             // (re)queue a running thread at its clock
  void enqueue(TimedThread& t, int64_t at);  // t's queue entry (new or replacing its old one), due at `at`
  void unqueue(TimedThread& t);          // t has no queue entry any more
  void exact_horizon();                  // horizon_ := the queue's top
  void interrupt(TimedThread& t, int64_t at);  // cut a long compute at `at`
  int64_t os_jitter();  // how much later than its fixed latency an OS wake-up lands
  int64_t line_cost(uint64_t& holders, bool write);  // a cache-line transfer, if the access needs one
  int64_t line_cost_by_distance(uint64_t others);    // line_cost by distance to the nearest of `others`
  int64_t spin_budget() const;           // how long a runtime-lock waiter spins before sleeping
  void preempt_if_slice_over();          // the current thread's slice is over and a thread waits: yield the core
  void yield_core();
  void enforce_limits();                 // stop at the event or time limit; report progress

  // CPU bandwidth (docs/placement.md, "CPU bandwidth (cgroups)"): kernel/sched/fair.c's names.
  struct BwQueue;   // a group's queue on one core (its cfs_rq's bandwidth fields)
  struct BwGroup;   // a group's pool, period and queues (its cfs_bandwidth)
  bool allowed(const TimedThread& t, int core) const;    // in t's cpuset and t's group not throttled there
  bool in_cpuset(const TimedThread& t, int core) const;  // cpus_ptr
  int free_core_for(const TimedThread& t) const;         // spread: the fastest free core t may run on
  int spread_pick(int core) const;                       // spread: the first in runq_[0] that may run on core
  void ready_timer(TimedThread& t, int64_t at);          // a Ready thread's queue entry came due
  void bw_sync(BwGroup& g, int64_t at);                  // the period boundaries up to `at`
  void bw_period(BwGroup& g, int64_t at);                // do_sched_cfs_period_timer at boundary `at`
  void bw_distribute(BwGroup& g, int64_t at);            // distribute_cfs_runtime
  bool bw_assign(BwGroup& g, BwQueue& q);                // assign_cfs_rq_runtime
  void bw_enter(TimedThread& t, int core, int64_t at);   // t starts running on core: its stretch, its runtime
  void bw_charge(TimedThread& t, int64_t at);            // account_cfs_rq_runtime up to `at`
  // t leaves core: charge, and (dequeued: it blocked, exited or moved) return_cfs_rq_runtime
  void bw_leave(TimedThread& t, int core, int64_t at, bool dequeued = true);
  void bw_set_until(TimedThread& t, int64_t at);         // when t must look at its runtime again
  void bw_expired(TimedThread& t);                       // the current thread's runtime is spent
  void bw_throttle(BwGroup& g, int core, int64_t at);    // throttle_cfs_rq; the current thread leaves
  void bw_unthrottle(BwGroup& g, int core, int64_t at);  // unthrottle_cfs_rq
  void bw_park(TimedThread& t, BwGroup& g, int core, int64_t at);  // t waits on a throttled queue
  int64_t bw_next_timer(const BwGroup& g) const;         // the period or slack timer, whichever is first
  void bw_arm(BwGroup& g);                               // parked threads' queue entries at bw_next_timer
  void bw_check();                                       // the current thread's runtime is due: look at it
  void set_next_limits();                // when enforce_limits must run next

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

  std::vector<QItem> heap_;
  std::vector<int32_t> qpos_;      // each thread's index in heap_, -1 if it has no entry
  uint32_t computing_ = 0;         // threads inside compute()
  // Ready threads waiting for a core: one FIFO per core (affine), or one for the machine (spread,
  // runq_[0]); runq_of(core) is the one that serves a core. waiting_: how many in all.
  std::vector<std::deque<uint32_t>> runq_;
  std::deque<uint32_t>& runq_of(int core) { return runq_[cfg_.costs.affine ? static_cast<size_t>(core) : 0]; }
  uint32_t waiting_ = 0;
  std::vector<int32_t> core_thread_;  // thread on each core, -1 if free
  uint32_t free_cores_ = 0;           // cores whose core_thread_ is -1
  int64_t idle_wait_last_ = 0;        // the idle-wait metric's latest time
  // Linux placement's per-core state (affine only).
  struct CoreState {
    int idle_scan = 0;           // sd_llc_shared->nr_idle_scan of its LLC, as of idle_scan_at
    int64_t idle_scan_at = -1;   // -1: not yet computed
    int64_t vbase = 0;           // the queue's average vruntime when it last emptied
    int64_t avg_idle = 0;        // rq->avg_idle
    int64_t idle_stamp = -1;     // when it went idle, -1 if busy or since woken
    int32_t balance_failed = 0;  // sd->nr_balance_failed, as this core's balancing
    int64_t failed_at = -1;      // the tick of the last failure counted
    int64_t last_idle_balance = INT64_MIN / 2, last_busy_balance = INT64_MIN / 2;
    uint32_t ready = 0;          // ready (not delayed) threads on its queue
  };
  std::vector<CoreState> cs_;
  int64_t tick_ = 1, slice_ = 1;      // the tick, and the base slice scaled for the core count
  double slowest_speed_ = 1e300;      // the slowest core's speed
  // Speeds that move with the load: some core has a speed curve or the machine a memory_slowdown.
  // Only then are the busy counts kept: per cluster (Core::cluster) and for the machine.
  bool speed_varies_ = false;
  std::vector<uint32_t> cluster_busy_;
  uint32_t busy_total_ = 0;
  bool line_distance_ = false;        // cfg_.costs.cacheline_by_distance
  // The hot path's summaries, so that an operation costs few comparisons. next_limits_: the event
  // count at which enforce_limits must run (the event limit or the next progress report).
  // horizon_: no queued entry is due before it (a lower bound: lowered by every push, raised to the
  // top's time when yield_if_late reads the queue's top and after a pop). rare_: bits for what
  // advance_rare handles.
  uint64_t next_limits_ = 0;
  int64_t horizon_ = INT64_MIN;
  // due_: the lesser of horizon_ and time_limit_ + 1, so that advance tests both with one
  // comparison; every change of horizon_ goes through set_horizon. lines_: an access may pay a
  // cache-line transfer (some transfer cost is not 0).
  int64_t due_ = INT64_MIN;
  bool lines_ = false;
  void set_horizon(int64_t h) {
    horizon_ = h;
    due_ = std::min(h, time_limit_ + 1);
  }
  // kRareBw: some group has (or will have) a quota: each operation looks at its thread's bw_until.
  static constexpr uint32_t kRareJitter = 1, kRareWaiting = 2, kRareBw = 4;
  uint32_t rare_ = 0;
  std::vector<BwGroup> bw_;  // per EngineConfig::groups
  bool constrained_ = false;  // some group has a cpuset or a quota: placement looks at allowed()
  SplitMix64 rng_;  // the driver's only source of randomness, seeded by the run seed
  uint64_t wait_seq_ = 0;
};

}  // namespace gmp::engine
