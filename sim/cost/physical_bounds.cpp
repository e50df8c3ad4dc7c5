// The physical ranges of profile values: see physical_bounds.h. One row per parameter; values in
// ns. The ranges are wide on purpose (a slow VM, an old or a small core), and narrow enough that a
// value outside one names a different operation than the parameter's.
#include "sim/cost/physical_bounds.h"

namespace gmp::cost {

namespace {

const std::vector<PhysicalBound> kTable = {
    {"speed_ns_per_iteration", 0.05, 20, "one LCG step (a multiply and an add): 1 to 50 cycles"},
    {"atomic_load", 0.1, 20, "a load from the core's own cache; a miss is cacheline_transfer's"},
    {"atomic_store", 0.1, 50, "a store with a full fence (xchg): a locked instruction on an owned line"},
    {"atomic_store_release", 0.1, 20, "a plain store on x86, stlr on arm64"},
    {"atomic_cas", 0.5, 100, "a locked instruction on an owned line: 2 to 100 cycles"},
    {"atomic_xadd", 0.5, 100, "a locked instruction on an owned line: 2 to 100 cycles"},
    {"atomic_xchg", 0.5, 100, "a locked instruction on an owned line: 2 to 100 cycles"},
    {"atomic_and_or", 0.5, 100, "a locked instruction on an owned line: 2 to 100 cycles"},
    {"cacheline_transfer", 5, 500, "a line moved between two cores' caches: 5 ns (shared L2) to 500 ns (far socket)"},
    {"cacheline_transfer_cluster", 5, 500, "a line moved inside one cluster: as cacheline_transfer"},
    {"plain_access", 0.1, 20, "an ordinary load or store that hits the cache"},
    {"lock_uncontended", 0.5, 100, "the runtime lock's fast path: one or two atomic instructions"},
    {"lock_contended_handoff", 10, 10000, "a lock passed on under contention: a line transfer up to a futex"},
    {"futex_wake", 100, 50000, "the waker's futex(WAKE): a system call, with an IPI on a VM"},
    {"futex_wake_latency", 500, 200000, "from futex(WAKE) to the sleeper running: an IPI and an idle exit"},
    {"futex_sleep", 100, 50000, "futex(WAIT) up to the switch away: a system call"},
    {"osyield", 50, 50000, "sched_yield: a system call and, if anything waits, a switch"},
    {"usleep_min_latency", 1000, 1000000, "the shortest nanosleep: the timer slack (50 us on Linux) and a wake-up"},
    {"nanotime", 5, 2000, "a vDSO clock read; 1-2 us where a VM's clock source traps"},
    {"thread_create", 2000, 1000000, "clone and a stack mmap: tens of microseconds"},
    {"gogo", 0.5, 100, "a register and stack switch in user space"},
    {"mcall", 0.5, 100, "a register and stack switch in user space"},
    {"schedule_pass", 5, 5000, "one pass of the scheduler's loop in user space: 5 ns to 5 us"},
    {"newproc", 20, 5000, "a goroutine's creation: take a g, set its stack, queue it"},
    {"goexit", 10, 5000, "a goroutine's end: free its g and stack"},
    {"chan_op", 2, 1000, "a channel operation under its lock, without the lock"},
    {"select_op", 5, 2000, "a select's locking and scan of its cases"},
    {"mutex_fast_path", 0.5, 100, "sync.Mutex's uncontended path: one atomic instruction"},
    {"signal_send", 200, 100000, "tgkill: a system call with an IPI"},
    {"signal_delivery_latency", 500, 200000, "from tgkill to the handler running: an IPI and a kernel entry"},
    {"async_preempt_handler", 200, 50000, "a signal handler's frame, the handler and sigreturn"},
    {"syscall_enter_exit", 10, 2000, "entering and leaving the kernel plus the runtime's bookkeeping"},
    {"timer_add", 10, 5000, "a timer put on a P's heap under its lock"},
    {"netpoll_check", 50, 20000, "a non-blocking epoll_wait: a system call"},
    {"procyield", 0.1, 500, "30 PAUSE instructions: 1 cycle (arm64 yield) to 140 cycles each"},
    {"os_context_switch", 200, 50000, "the kernel's switch between two threads"},
    {"wakeup_jitter", 0, 500000, "the spread of wake-up latencies: 0 (none) to half a millisecond"},
    {"os_idle_exit_latency", 0, 500000, "an idle core's exit from its sleep state: 0 to deep C-states"},
    {"os_wake_ipi", 0, 200000, "the IPI that wakes a thread on another core: 0 to a slow VM's"},
    // The gc section (profile.proto's GC message), each in its own unit.
    {"alloc_ns_per_object", 1, 1000, "mallocgc's fast path: a size-class lookup and a free slot, 1 ns to 1 us"},
    {"alloc_ns_per_byte", 0.005, 2, "zeroing and initialising memory: 200 GB/s down to 0.5 GB/s per core (ns/byte)"},
    {"sweep_ns_per_page", 5, 100000, "one 8 KiB span's mark bits and free counts: 5 ns to 100 us (ns/page)"},
    {"mark_ns_per_byte", 0.01, 20, "scanning and marking the heap: 100 GB/s down to 50 MB/s per core (ns/byte)"},
    {"stack_scan_ns_per_byte", 0.01, 20, "scanning stack frames with their pointer maps: as marking (ns/byte)"},
    {"write_barrier_slowdown", 0, 2, "the mutator's slowdown while marking: none to three times slower (a fraction)"},
    {"sweep_termination_ns", 0, 1000000, "sweep termination's work with the world stopped: 0 to 1 ms"},
    {"mark_termination_ns", 0, 1000000, "mark termination's work with the world stopped: 0 to 1 ms"},
    {"mark_ns_per_object", 0, 1000, "marking one object (mark bit, queue, a cache miss on a large heap): 0 to 1 us"},
};

}  // namespace

const std::vector<PhysicalBound>& physical_bounds() { return kTable; }

std::optional<PhysicalBound> physical_bound(std::string_view name) {
  for (const PhysicalBound& b : kTable) {
    if (b.name == name) return b;
  }
  return std::nullopt;
}

}  // namespace gmp::cost
