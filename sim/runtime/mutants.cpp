// The mutants' table (mutants.h; docs/mutants.md says the same at more length).
#include "sim/runtime/mutants.h"

#include <array>
#include <stdexcept>
#include <string>

namespace gmp::rt {

namespace {

constexpr int kCount = static_cast<int>(Mutant::Count_) - 1;

constexpr std::array<MutantInfo, kCount> kTable{{
    {Mutant::GoschedNoWakep, "gosched-no-wakep", "ad943066f6",
     "proc_g.cpp:goschedImpl",
     "Gosched puts the goroutine on the global queue without calling wakep, trusting the "
     "scheduler it enters to run it; a spinning M that is just giving up has already checked "
     "the global queue",
     "stranded work: a goroutine on the global queue while a P is idle and no M spins or will "
     "wake (it waits until its P's current goroutine blocks)"},
    {Mutant::NoNeedspinning, "no-needspinning", "8cb350d69a (golang/go#45867)",
     "proc_schedule.cpp:findRunnable",
     "an M dropping its P ignores sched.needspinning, set by a spinning M that found work but no "
     "idle P because this P was not idle yet",
     "lost wake-up: a runnable goroutine in a running P's queue while the other Ps are idle and "
     "their Ms parked"},
    {Mutant::WakepKeepsNmspinning, "wakep-keeps-nmspinning", "8cb350d69a (golang/go#45867)",
     "proc_mp.cpp:wakep",
     "wakep finds no idle P and returns without undoing its increment of sched.nmspinning (the "
     "undo that change moved from startm into wakep)",
     "sched.nmspinning counts an M that does not exist: later wakeps all return at once and Ms "
     "that could steal are not allowed to spin, so runnable goroutines wait in one P's queue "
     "while other Ps are idle"},
    {Mutant::NoRecheckAfterSpinning, "no-recheck-after-spinning", "fb6f8a96f2 (golang/go#13527)",
     "proc_schedule.cpp:findRunnable",
     "a spinning M that found nothing drops sched.nmspinning and parks without looking at the "
     "global queue and the Ps' queues again (the \"delicate dance\" skipped)",
     "lost wake-up: work submitted between the M's last look and its decrement saw an M "
     "spinning and woke nobody; it waits with a P idle and all Ms parked"},
    {Mutant::ResetspinningNoWakep, "resetspinning-no-wakep", "32fef9908a (golang/go#5586)",
     "proc_mp.cpp:resetspinning",
     "a spinning M that found work stops spinning without starting another spinning M",
     "CPU underutilisation: of two goroutines readied back to back only one gets an idle P; "
     "the other waits in the readier's queue while a P stays idle"},
    {Mutant::RunqemptySpurious, "runqempty-spurious", "fcd7c02c70",
     "runq.cpp:runqempty",
     "runqempty reads head, tail and runnext once each, so a runqput that kicks runnext into the "
     "ring and a runqget that empties runnext in between make a non-empty queue read empty",
     "lost wake-up: an M dropping its P (checkRunqsNoP) misses a runnable goroutine and parks "
     "while a P is idle"},
    {Mutant::NoTimerRecheckAfterSpinning, "no-timer-recheck-after-spinning",
     "8fdc79e18a (golang/go#38860)", "proc_schedule.cpp:findRunnable",
     "after dropping spinning, findRunnable no longer looks at the other Ps' timers, so a timer "
     "added meanwhile (whose wakeNetPoller saw an M spinning) sets no poll deadline",
     "a sleeping goroutine wakes late or never: its timer is due, no M polls for it, all Ms "
     "park"},
    {Mutant::TimerAddNoWakep, "timer-add-no-wakep", "8fdc79e18a (golang/go#38860)",
     "netpoll.cpp:wakeNetPoller",
     "adding the earliest timer wakes nobody when no M is in the poller, trusting the timer's P "
     "to get back to the scheduler in time",
     "late timer: a sleeper's timer on a P busy with a long computation fires only when that "
     "goroutine blocks or is preempted, though another P is idle"},
    {Mutant::HandoffpNoTimerWake, "handoffp-no-timer-wake", "d80ab3e85a (golang/go#35274)",
     "proc_mp.cpp:handoffp",
     "a P handed off with timers on it goes idle without waking the poller, which may sleep "
     "until a later deadline",
     "late timer: a sleeping goroutine on a P taken from a system call wakes only when the "
     "poller's longer sleep ends (or never, if nothing else is pending)"},
    {Mutant::PidlegetNoTimerpMask, "pidleget-no-timerpmask", "fc116b69e2",
     "idle.cpp:pidleget",
     "taking a P off the idle list leaves its timerpMask bit clear, though the P may get timers "
     "from then on",
     "lost timer: other Ms skip that P's timers in stealWork and checkTimersNoP, so once the P "
     "goes idle again its sleeper may never wake (a hang; checkdead sees the timer)"},
    {Mutant::RetakeNoSysretake, "retake-no-sysretake", "4166ff42c0 (golang/go#10958)",
     "sysmon.cpp:retake",
     "sysmon does not take the P from a goroutine whose time slice is used up when it happens "
     "to be in a (short) system call",
     "starvation: a goroutine making many short system calls keeps its P for its whole loop; a "
     "runnable goroutine queued behind it on that P waits far past the 10ms slice"},
    {Mutant::StartmLateMReserveID, "startm-late-mreserveid", "85afa2eb19 (golang/go#40368)",
     "proc_mp.cpp:startm; sysmon.cpp:sysmon",
     "startm drops sched.lock before the new M has an ID, so for a while that M is not counted "
     "by checkdead; sysmon starts an M for overdue timers (as before 8fdc79e18a), the one caller "
     "of startm that checkdead does not count as running",
     "a false \"checkdead: runnable g\" throw: with 1 P, a goroutine returning from a system call "
     "queues itself globally, and the last M to park finds no M running"},
    {Mutant::ExitsyscallLockedmRace, "exitsyscall-lockedm-race", "e0d029f758 (golang/go#46524)",
     "proc_syscall.cpp:exitsyscallNoP",
     "exitsyscallNoP reads gp.lockedm after putting gp on the global queue and unlocking, when "
     "another M may already run gp, which may call LockOSThread",
     "a throw (\"stoplockedm: inconsistent locking\"): this M parks as if locked to a goroutine "
     "that another M runs"},
    {Mutant::ExitsyscallNoSysmonWake, "exitsyscall-no-sysmon-wake", "658d19a53f",
     "proc_syscall.cpp:exitsyscallTryGetP,exitsyscallNoP",
     "a goroutine leaving a system call takes an idle P without waking sysmon from its deep "
     "sleep (taken while every P was idle)",
     "no preemption: sysmon sleeps on (up to 60s) while goroutines run, so a CPU-bound "
     "goroutine keeps its P and runnable ones behind it starve"},
    {Mutant::SemacquireNoRecheck, "semacquire-no-recheck", "997c00f991",
     "sema.cpp:semacquire1",
     "semacquire counts itself in nwait and queues without trying the semaphore once more, so a "
     "release that came between its first try and the count (and saw no waiter) is missed",
     "lost wake-up: a goroutine parked on a semaphore (WaitGroup.Wait, Mutex.Lock) that is "
     "available; deadlock (\"all goroutines are asleep\") or a hang"},
    {Mutant::RunqgrabNoBackoff, "runqgrab-no-backoff", "c4fe503119",
     "runq.cpp:runqgrab",
     "a thief takes a running P's runnext at once, without the short sleep that lets the P run "
     "the goroutine its current one just readied",
     "performance: goroutines that hand off to each other are stolen between Ps (more steals, "
     "more Ms woken, slower ping-pong); no hang"},
    {Mutant::StealRunnextEveryPass, "steal-runnext-every-pass", "c4fe503119",
     "proc_schedule.cpp:stealWork",
     "stealWork may take runnext on every pass over the Ps instead of only the last, before "
     "looking for Ps with fuller queues",
     "performance: more runnext steals and thrashing of paired goroutines between Ps; no hang"},
    {Mutant::RunqgrabBackoffInSyscall, "runqgrab-backoff-in-syscall", "d55ecea9e5",
     "runq.cpp:runqgrab",
     "runqgrab sleeps before taking runnext even when the victim P's goroutine is in a system "
     "call and cannot run it soon",
     "performance: a goroutine readied just before a system call starts a few microseconds "
     "later (one usleep(3) per steal); no hang"},
    {Mutant::InjectglistNoWakep, "injectglist-no-wakep", "24070cf747 (golang/go#63555)",
     "proc_mp.cpp:injectglist",
     "injectglist with a P sends to the global queue only as many goroutines as sched.npidle said "
     "were idle and queues the rest on its own P, without a final wakep: a P that went idle after "
     "the read of npidle, before the goroutines were queued, is never told",
     "stranded work: goroutines the network poller readied wait in one P's queue while another "
     "P is idle and no M spins (until the running goroutine blocks)"},
    {Mutant::StartmNoAcquirem, "startm-no-acquirem", "370682ae98 (golang/go#42237)",
     "proc_mp.cpp:wakep, startm",
     "wakep and startm run preemptible while they own a P taken from the idle list and not yet "
     "handed to an M: a goroutine readying another is preempted there by a stop-the-world, and "
     "the P it holds has no owner to stop it",
     "a stop-the-world that never completes: sched.stopwait stays above 0 while every M but the "
     "stopper is parked"},
    {Mutant::AssistHoldingLocks, "assist-holding-locks", "4f188c2d1c (golang/go#10573's sequel)",
     "mgcmark.cpp:gcAssistAlloc",
     "an allocation in allocation debt assists the collector even on the system stack or with "
     "locks held, as allocm's allocation on a borrowed P for a new M (golang/go#10573's path)",
     "a livelock: the assist is charged to a goroutine already waiting (a mark worker in "
     "gcMarkDone's forEachP), and its casgstatus spins for good"},
    {Mutant::InjectglistAllLocal, "injectglist-all-local", "24070cf747 (golang/go#63555's class)",
     "proc_mp.cpp:injectglist",
     "injectglist with a P queues every goroutine it readies on its own P, however many Ps are "
     "idle, and starts or wakes no M for them (go1.27rc2 sends up to sched.npidle of them to the "
     "global queue with an M started for each, and calls wakep after)",
     "stranded work: goroutines the network poller readied wait in the queue of a P whose "
     "goroutine runs, while another P idles and no M spins, until that goroutine blocks"},
}};

constexpr bool tableInOrder() {
  for (int i = 0; i < kCount; i++) {
    if (static_cast<int>(kTable[static_cast<size_t>(i)].id) != i + 1) return false;
  }
  return true;
}
static_assert(tableInOrder(), "kTable must list every mutant once, in enum order");

}  // namespace

std::span<const MutantInfo> mutantTable() { return kTable; }

const MutantInfo& mutantInfo(Mutant m) {
  const int i = static_cast<int>(m);
  if (i < 1 || i > kCount) throw std::out_of_range("mutantInfo: not a mutant: " + std::to_string(i));
  return kTable[static_cast<size_t>(i - 1)];
}

const char* mutantName(Mutant m) {
  if (m == Mutant::None) return "none";
  return mutantInfo(m).name;
}

Mutant mutantFromName(std::string_view name) {
  if (name.empty() || name == "none") return Mutant::None;
  for (const MutantInfo& mi : kTable) {
    if (name == mi.name) return mi.id;
  }
  std::string msg = "unknown mutant '" + std::string(name) + "'; known: none";
  for (const MutantInfo& mi : kTable) msg += std::string(", ") + mi.name;
  throw std::invalid_argument(msg);
}

void setActiveMutant(Mutant m) {
  const int i = static_cast<int>(m);
  if (i < 0 || i > kCount) throw std::out_of_range("setActiveMutant: not a mutant: " + std::to_string(i));
#ifdef GMP_MUTANTS
  activeMutant.store(i, std::memory_order_relaxed);
#else
  if (m != Mutant::None) {
    throw std::logic_error(std::string("mutant '") + mutantName(m) +
                           "' is not compiled in: configure with cmake -DGMP_MUTANTS=ON");
  }
#endif
}

Mutant activeMutantSetting() {
#ifdef GMP_MUTANTS
  return static_cast<Mutant>(activeMutant.load(std::memory_order_relaxed));
#else
  return Mutant::None;
#endif
}

}  // namespace gmp::rt
