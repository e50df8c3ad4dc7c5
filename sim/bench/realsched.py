#!/usr/bin/env python3
"""Records what the OS scheduler does to the real ping-pong's threads (`perf sched record`) and
prints the figures docs/figures.md quotes: each thread's run and wait time, where a woken thread
runs when its previous CPU is busy, and how long it waits for a CPU by how long it slept.

  sim/bench/realsched.py [--go /usr/lib/go-1.23/bin/go] [--cpu 2] [--trips 4000000]

Needs perf with the sched tracepoints (Debian: linux-perf) and permission to record them (root).
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pingpong_build

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--go", default="/usr/lib/go-1.23/bin/go")
ap.add_argument("--cpu", type=int, default=2)
ap.add_argument("--trips", type=int, default=4000000)
args = ap.parse_args()
if shutil.which("perf") is None:
    sys.exit("realsched.py: perf not found (Debian: apt-get install linux-perf)")

LONG_SLEEP_MS = 1.0  # the split between short and long sleeps in the tables below

work = tempfile.mkdtemp()
try:
    pingpong_build.build(args.go, work, "realsched.py")
    data = os.path.join(work, "sched.data")
    rec = subprocess.run(["perf", "sched", "record", "-o", data, "--", "./pp.test", "-test.bench", "PingPong$",
                          "-test.cpu", str(args.cpu), "-test.benchtime", "%dx" % args.trips],
                         cwd=work, capture_output=True, text=True)
    if rec.returncode != 0:
        sys.exit("realsched.py: perf sched record failed:\n" + rec.stderr)
    bench = re.search(r"BenchmarkPingPong\S*\s+\d+\s+([0-9.]+) ns/op", rec.stdout)
    script = subprocess.run(["perf", "script", "-i", data, "-F", "cpu,time,event,trace"],
                            capture_output=True, text=True, check=True).stdout
    timehist = subprocess.run(["perf", "sched", "timehist", "--state", "-i", data],
                              capture_output=True, text=True, check=True).stdout
finally:
    shutil.rmtree(work, ignore_errors=True)

# Per thread and per CPU, from perf's own accounting: each timehist row is one switch-out, with
# the time the task spent off its CPU before (wait: asleep, or ready if it had been preempted),
# waited ready after a wake-up (sch delay), ran, and the state it left in (R: preempted).
row = re.compile(r"\s*[\d.]+\s+\[(\d+)\]\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s*$")
ran = collections.Counter()
ready = collections.Counter()
idle = collections.Counter()
delays = {"short": [], "long": []}  # ms of sch delay after a short or a long sleep
preempted = []                      # ms a preempted thread waited to run again
left_in = {}                        # task -> the state its last run ended in
for line in timehist.splitlines():
    m = row.match(line)
    if not m:
        continue
    cpu, task, off, delay, run, state = (int(m.group(1)), m.group(2), float(m.group(3)), float(m.group(4)),
                                         float(m.group(5)), m.group(6))
    if task.startswith("<idle>"):
        idle[cpu] += run
    elif task.startswith("pp.test"):
        ran[task] += run
        if left_in.get(task) == "R":
            ready[task] += off
            preempted.append(off)
        elif task in left_in:
            ready[task] += delay
            delays["short" if off < LONG_SLEEP_MS else "long"].append(delay)
        left_in[task] = state

# Where woken threads run, from the raw events: the CPU each thread last ran on (sched_waking's
# target_cpu), whether that CPU and the others were busy then, and where the thread ran next.
event = re.compile(r"\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)")
field = lambda name, text: re.search(name + r"=(\S+)", text).group(1)
running = {}       # cpu -> pid on it (0: idle)
asleep_since = {}  # pid -> when it went to sleep
woken = {}         # pid -> (short or long sleep, previous cpu, state of the cpus) until it runs
placement = collections.Counter()
for line in script.splitlines():
    m = event.match(line)
    if not m:
        continue
    cpu, t, name, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
    if name == "sched_switch":
        prev, nxt, state = int(field("prev_pid", rest)), int(field("next_pid", rest)), field("prev_state", rest)
        if state[0] in "SD":
            asleep_since[prev] = t
        running[cpu] = nxt
        if nxt in woken:
            kind, prev_cpu, where = woken.pop(nxt)
            placement[(where, kind, "ran on it" if cpu == prev_cpu else "ran elsewhere")] += 1
    elif name == "sched_waking" and field("comm", rest) == "pp.test":
        pid, prev_cpu = int(field(" pid", " " + rest)), int(field("target_cpu", rest))
        if pid not in asleep_since or prev_cpu not in running:
            continue
        busy = running[prev_cpu] != 0
        others_idle = any(p == 0 for c, p in running.items() if c != prev_cpu)
        where = ("previous CPU idle" if not busy else
                 "previous CPU busy, another idle" if others_idle else "every CPU busy")
        slept = (t - asleep_since.pop(pid)) * 1e3
        woken[pid] = ("short" if slept < LONG_SLEEP_MS else "long", prev_cpu, where)

print("BenchmarkPingPong-%d: %s ns/op under perf" % (args.cpu, bench.group(1) if bench else "?"))
print("\nper thread: ms on a CPU, ms ready and waiting for one (perf sched timehist)")
for task in sorted(ran):
    if ran[task] + ready[task] > 0.5:
        print("  %-24s %8.1f %8.1f" % (task, ran[task], ready[task]))
print("idle ms per CPU: " + ", ".join("%d: %.1f" % (c, idle[c]) for c in sorted(idle)))
print("\nwake-ups by the state of the woken thread's previous CPU (short sleep < %g ms):" % LONG_SLEEP_MS)
for key in sorted(placement):
    print("  %-32s %-6s %-14s %6d" % (key[0], key[1], key[2], placement[key]))
print("\nwait for a CPU after a wake-up, by sleep length:")
for kind in ("short", "long"):
    d = sorted(delays[kind])
    if not d:
        continue
    q = lambda p: d[min(len(d) - 1, int(p * len(d)))] * 1e3
    over = sum(1 for x in d if x > 0.1)
    print("  %-5s n=%-6d p50 %7.1f us  p90 %7.1f us  p99 %7.1f us  over 100 us: %d (%.0f%%)" %
          (kind, len(d), q(0.5), q(0.9), q(0.99), over, 100.0 * over / len(d)))
d = sorted(preempted)
if d:
    q = lambda p: d[min(len(d) - 1, int(p * len(d)))] * 1e3
    long_waits = [x for x in d if x > 1]
    print("\nwait to run again after being preempted: n=%d p50 %.1f us p90 %.1f us p99 %.1f us; over 1 ms: %d, "
          "%.1f ms in all" % (len(d), q(0.5), q(0.9), q(0.99), len(long_waits), sum(long_waits)))
