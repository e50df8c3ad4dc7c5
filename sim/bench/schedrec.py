"""Records what the Linux scheduler does to one process's threads (`perf sched record`) and computes
from the raw sched events the OS-placement figures that `gmpsim run --events` prints on its
`os placement:` line, with the same definitions:

  wakeups             times a thread of the process that was asleep (switched out blocked, not
                      preempted) became runnable again: a sched_wakeup event (sched_waking where the
                      recording has no sched_wakeup), i.e. the thread is put on a run queue. A
                      wake-up of a thread that is still on its CPU (woken on its way to sleep) is
                      not one.
  on_prev             of those wake-ups, the fraction whose next run started on the CPU the thread
                      last ran on (wake-ups that never ran before the end are left out).
  migrations_per_s    times a thread of the process starts running (sched_switch to it) on another
                      CPU than the one it last ran on, its first run left out, per second of the span.
  idle_wait_ms_per_s  time during which at least one thread of the process is runnable but not
                      running (woken, new or preempted, until it is switched in) in the queue of
                      a busy CPU (the woken one's target_cpu, the preempted one's own, a
                      migration's dest_cpu) while at least one CPU runs the idle task (pid 0), in
                      ms per second of the span. A thread woken onto an idle CPU is not waiting
                      behind anyone: its time to run is that CPU's wake-up, not counted.

The span runs from the process's first event under the test binary's name (after the exec) to its
last event (its exit). A CPU's state is known from its first event on; a CPU of the machine with
no event yet (perf's header gives the number online) is taken to be idle.

Used by realsched.py (the ping-pong report) and placement_check.py (suite and held-out shapes).
Needs perf with the sched tracepoints (Debian: linux-perf) and the right to record them (root).
"""
import collections
import os
import re
import shutil
import subprocess
import tempfile

LONG_SLEEP_MS = 1.0  # the split between short and long sleeps in the wait-by-sleep-length figures

# One line of `perf script -F comm,pid,tid,cpu,time,event,trace`: the task that was current on the
# CPU (its comm may hold spaces), its process and thread ids, the CPU, seconds, the event, its fields.
EVENT = re.compile(r"^\s*(.*?)\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s*(.*)$")
NRCPUS = re.compile(r"^#\s*nrcpus online\s*:\s*(\d+)")
SCRIPT_FIELDS = "comm,pid,tid,cpu,time,event,trace"


class PerfUnavailable(Exception):
    """perf is not installed or may not record the sched tracepoints here."""


def _field(name, text):
    m = re.search(r"(?:^|\s)" + name + r"=(\S+)", text)
    return m.group(1) if m else None


def _int_field(name, text):
    v = _field(name, text)
    return int(v) if v is not None else None


class Analysis:
    """The figures of one process in one recording. Times in ms unless named otherwise."""

    def __init__(self):
        self.tgid = None
        self.start_ms = self.end_ms = None
        self.wakeups = 0
        self.wakeups_ran = 0      # the wake-ups whose next run was seen
        self.wakeups_on_prev = 0
        self.migrations = 0
        self.idle_wait_ms = 0.0
        self.wake_event = None    # "sched_wakeup" or "sched_waking": what marked a wake-up
        self.threads = set()
        self.cpu_ms = collections.Counter()    # tid -> ms on a CPU (sched_stat_runtime)
        self.ready_ms = collections.Counter()  # tid -> ms runnable but not running
        self.idle_ms = collections.Counter()   # cpu -> ms idle within the span
        self.placement = collections.Counter()  # (state of the previous CPU, sleep kind, where it ran)
        self.delays = {"short": [], "long": []}  # ms from a wake-up to running, by sleep length
        self.preempted = []                      # ms from a preemption to running again
        self.migrate_task_events = 0             # sched_migrate_task of the process's threads

    @property
    def span_s(self):
        if self.start_ms is None or self.end_ms is None:
            return 0.0
        return (self.end_ms - self.start_ms) / 1e3

    def metrics(self):
        """The four figures of the `os placement:` line plus the span, as a JSON-ready dict."""
        span = self.span_s
        return {
            "wakeups": self.wakeups,
            "on_prev": (self.wakeups_on_prev / self.wakeups_ran) if self.wakeups_ran else None,
            "migrations_per_s": self.migrations / span if span > 0 else None,
            "idle_wait_ms_per_s": self.idle_wait_ms / span if span > 0 else None,
            "span_s": span,
        }

    def extras(self):
        """The cheap figures beyond the four, JSON-ready: waits for a CPU (us quantiles) after a
        wake-up by sleep length and after a preemption; wake-ups by the previous CPU's state."""
        def q(d):
            d = sorted(d)
            at = lambda p: round(d[min(len(d) - 1, int(p * len(d)))] * 1e3, 1)
            return {"n": len(d), "p50_us": at(0.5), "p90_us": at(0.9), "p99_us": at(0.99)} if d else {"n": 0}
        return {
            "wait_after_wakeup": {"sleep under %g ms" % LONG_SLEEP_MS: q(self.delays["short"]),
                                  "sleep %g ms or more" % LONG_SLEEP_MS: q(self.delays["long"])},
            "wait_after_preemption": q(self.preempted),
            "wakeups_by_previous_cpu": {" / ".join(k): n for k, n in sorted(self.placement.items())},
            "sched_migrate_task_events": self.migrate_task_events,
        }


def _lines_of(source):
    """source: a path (opened afresh on each call) or a sequence of lines."""
    if isinstance(source, str):
        with open(source, errors="replace") as f:
            yield from f
    else:
        yield from source


def analyse(source, tgid, comm=None):
    """Computes the figures of process `tgid` from `perf script --header -F SCRIPT_FIELDS` output
    (`source`: a path or a list of lines). `comm`: the name the process runs under after its exec
    (the span starts at its first event under that name; None: at its first event)."""
    a = Analysis()
    a.tgid = tgid
    comm = comm[:15] if comm else None  # the kernel keeps 15 characters of a task's name

    # Pass 1: the process's threads (any task seen current with its process id), the span, the
    # machine's CPUs and which wake-up event the recording has.
    ncpus = 0
    start = end = first = None
    has_wakeup = False
    for line in _lines_of(source):
        if line.startswith("#"):
            m = NRCPUS.match(line)
            if m:
                ncpus = int(m.group(1))
            continue
        m = EVENT.match(line)
        if not m:
            continue
        if m.group(6) == "sched_wakeup":
            has_wakeup = True
        if int(m.group(2)) != tgid:
            continue
        t = float(m.group(5)) * 1e3
        a.threads.add(int(m.group(3)))
        if first is None:
            first = t
        if start is None and (comm is None or m.group(1) == comm):
            start = t
        end = t
    a.start_ms = start if start is not None else first
    a.end_ms = end
    a.wake_event = "sched_wakeup" if has_wakeup else "sched_waking"
    if a.start_ms is None:
        return a
    start, end, ours = a.start_ms, a.end_ms, a.threads

    # Pass 2: replay the events. running: cpu -> tid on it (0: idle); state: tid -> "run", "sleep",
    # "ready" or "dead"; waiting: our ready tids.
    running = {c: 0 for c in range(ncpus)}  # the machine's CPUs, taken as idle until their first event
    idle_since = {c: float("-inf") for c in range(ncpus)}  # cpu -> idle since (None: busy)
    seen_cpus = set()
    state, last_cpu, asleep_since, ready_since, preempted_at, woken = {}, {}, {}, {}, {}, {}
    waiting = set()
    queued_on = {}  # a waiting tid -> the CPU whose queue holds it (unknown: taken as busy)
    clock = None

    def in_span(t):
        return start <= t <= end

    def count_idle(cpu, t):
        lo, hi = max(idle_since[cpu], start), min(t, end)
        if hi > lo:
            a.idle_ms[cpu] += hi - lo

    def set_cpu(cpu, tid, t):
        prev = running.get(cpu)
        if prev == 0 and tid != 0:
            count_idle(cpu, t)
            idle_since[cpu] = None
        elif tid == 0 and prev != 0:
            idle_since[cpu] = t
        running[cpu] = tid

    for line in _lines_of(source):
        m = EVENT.match(line)
        if not m:
            continue
        cur_tid, cpu, t, name, rest = int(m.group(3)), int(m.group(4)), float(m.group(5)) * 1e3, m.group(6), m.group(7)
        # The time since the last event counts as idle waiting if one of ours waited in the queue of
        # a busy CPU while a CPU idled. A thread woken onto an idle CPU is not waiting there behind
        # anyone: the time until it runs is that CPU's wake-up (an IPI and the exit from idle, on a
        # VM an exit to the host), which the simulator counts in os_idle_exit_latency, not here.
        if clock is not None and waiting and any(p == 0 for p in running.values()) and \
                any(running.get(queued_on.get(w), 1) != 0 for w in waiting):
            lo, hi = max(clock, start), min(t, end)
            if hi > lo:
                a.idle_wait_ms += hi - lo
        clock = t
        if cpu not in seen_cpus:
            # The first event on this CPU shows the task current there.
            seen_cpus.add(cpu)
            if cur_tid != 0:
                running[cpu], idle_since[cpu] = cur_tid, None  # busy all along
            elif cpu not in running:
                running[cpu], idle_since[cpu] = 0, t
        if cur_tid in ours and cur_tid not in last_cpu:
            last_cpu[cur_tid] = cpu
            state[cur_tid] = "run"

        if name == "sched_switch":
            prev, nxt, pstate = _int_field("prev_pid", rest), _int_field("next_pid", rest), _field("prev_state", rest) or "?"
            if prev in ours:
                last_cpu[prev] = cpu
                if pstate.startswith("R"):
                    state[prev] = "ready"
                    waiting.add(prev)
                    queued_on[prev] = cpu
                    ready_since[prev] = t
                    preempted_at[prev] = t
                elif pstate[0] in "XZ":
                    state[prev] = "dead"
                else:
                    state[prev] = "sleep"
                    asleep_since[prev] = t
            set_cpu(cpu, nxt, t)
            if nxt in ours:
                if nxt in ready_since:
                    if in_span(t):
                        a.ready_ms[nxt] += t - max(ready_since[nxt], start)
                    del ready_since[nxt]
                waiting.discard(nxt)
                if nxt in woken:
                    at, slept, prev_cpu, where, counted = woken.pop(nxt)
                    if counted:
                        a.wakeups_ran += 1
                        on_prev = cpu == prev_cpu
                        a.wakeups_on_prev += on_prev
                        kind = "short" if slept < LONG_SLEEP_MS else "long"
                        a.placement[(where, kind, "ran on it" if on_prev else "ran elsewhere")] += 1
                        a.delays[kind].append(t - at)
                elif nxt in preempted_at:
                    if in_span(t):
                        a.preempted.append(t - preempted_at[nxt])
                preempted_at.pop(nxt, None)
                if nxt in last_cpu and last_cpu[nxt] != cpu and in_span(t):
                    a.migrations += 1
                last_cpu[nxt] = cpu
                state[nxt] = "run"
        elif name == a.wake_event or name == "sched_wakeup_new":
            pid = _int_field("pid", rest)
            if pid not in ours:
                continue
            target = _int_field("target_cpu", rest)
            if name == "sched_wakeup_new":
                state[pid] = "ready"
                waiting.add(pid)
                queued_on[pid] = target
                ready_since[pid] = t
                continue
            if state.get(pid) != "sleep":
                continue  # still on its CPU (woken on its way to sleep), or already runnable
            state[pid] = "ready"
            waiting.add(pid)
            queued_on[pid] = target
            ready_since[pid] = t
            prev_cpu = last_cpu.get(pid)
            counted = in_span(t)
            if counted:
                a.wakeups += 1
            busy = running.get(prev_cpu, 0) != 0
            others_idle = any(p == 0 for c, p in running.items() if c != prev_cpu)
            where = ("previous CPU idle" if not busy else
                     "previous CPU busy, another idle" if others_idle else "every CPU busy")
            woken[pid] = (t, t - asleep_since.pop(pid, t), prev_cpu, where, counted)
        elif name == "sched_stat_runtime":
            pid = _int_field("pid", rest)
            if pid in ours and in_span(t):
                a.cpu_ms[pid] += _int_field("runtime", rest) / 1e6
        elif name == "sched_migrate_task":
            pid = _int_field("pid", rest)
            if pid in ours and pid in waiting:
                queued_on[pid] = _int_field("dest_cpu", rest)
            if pid in ours and in_span(t):
                a.migrate_task_events += 1
    for cpu, since in idle_since.items():
        if since is not None and running.get(cpu) == 0:
            count_idle(cpu, end)
    return a


def check_perf():
    """Raises PerfUnavailable unless perf can record the sched tracepoints here."""
    perf = shutil.which("perf")
    if perf is None:
        raise PerfUnavailable("perf not found (Debian: apt-get install linux-perf)")
    work = tempfile.mkdtemp(prefix="schedrec-probe-")
    try:
        r = subprocess.run(["perf", "sched", "record", "-o", os.path.join(work, "probe.data"), "--", "true"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise PerfUnavailable("perf may not record the sched tracepoints here (root, or "
                                  "kernel.perf_event_paranoid=-1 and access to tracefs, is needed):\n" + "\n".join(r.stderr.strip().splitlines()[:3]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def record(argv, work, cwd=None, name="sched"):
    """Runs argv (a program and its arguments) under `perf sched record` (all CPUs, plus
    sched_wakeup), keeping perf's data in the folder `work`. Returns (tgid, comm, stdout of the
    program, path of the `perf script` text, perf's warnings). Raises RuntimeError if perf fails."""
    data = os.path.join(work, name + ".data")
    pidfile = os.path.join(work, name + ".pid")
    # A shell notes its own pid, then execs the program: the recorded process has that pid.
    wrapper = ["sh", "-c", 'echo $$ > "$0"; shift; exec "$@"', pidfile, "--"] + list(argv)
    events = []
    lst = subprocess.run(["perf", "list", "sched:sched_wakeup"], capture_output=True, text=True)
    if "sched:sched_wakeup " in lst.stdout:
        events = ["-e", "sched:sched_wakeup"]
    rec = subprocess.run(["perf", "sched", "record", "-o", data, "-m", "16M"] + events + ["--"] + wrapper,
                         cwd=cwd, capture_output=True, text=True)
    if rec.returncode != 0 or not os.path.exists(pidfile):
        raise RuntimeError("perf sched record failed (status %d):\n%s%s" % (rec.returncode, rec.stdout[-2000:], rec.stderr[-2000:]))
    with open(pidfile) as f:
        tgid = int(f.read().strip())
    warnings = [l.strip() for l in rec.stderr.splitlines() if "lost" in l.lower() or "LOST" in l]
    text = os.path.join(work, name + ".script")
    with open(text, "w") as out:
        sc = subprocess.run(["perf", "script", "-i", data, "--header", "-F", SCRIPT_FIELDS], stdout=out,
                            stderr=subprocess.PIPE, text=True)
    if sc.returncode != 0:
        raise RuntimeError("perf script failed:\n" + sc.stderr[-2000:])
    return tgid, os.path.basename(argv[0]), rec.stdout, text, warnings


SIM_LINE = re.compile(r"^os placement: wakeups=(\d+) on_prev=(\S+) migrations_per_s=(\S+) idle_wait_ms_per_s=(\S+)\s*$")
SIM_END = re.compile(r"^ended: .* at ([0-9.]+)(ns|us|ms|s) virtual")


def parse_sim(text):
    """Reads `gmpsim run --events` output: the `os placement:` figures and the virtual end time.
    Returns a dict like Analysis.metrics() (span_s: the run's virtual time; None if not printed), or
    None if the output has no `os placement:` line."""
    out = None
    span = None
    for line in text.splitlines():
        m = SIM_LINE.match(line)
        if m:
            out = {"wakeups": int(m.group(1)), "on_prev": float(m.group(2)),
                   "migrations_per_s": float(m.group(3)), "idle_wait_ms_per_s": float(m.group(4))}
        m = SIM_END.match(line)
        if m:
            span = float(m.group(1)) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]
    if out is not None:
        out["span_s"] = span
        if out["wakeups"] == 0 or out["on_prev"] != out["on_prev"]:  # no wake-ups, or nan
            out["on_prev"] = None
    return out
