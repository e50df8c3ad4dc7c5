#!/usr/bin/env python3
"""Records what the OS scheduler does to the real ping-pong's threads (`perf sched record`) and
prints the figures docs/figures.md quotes: each thread's CPU time and time ready but waiting,
where a woken thread runs when its previous CPU is busy, how long it waits for a CPU by how long
it slept, and how long a preempted thread waits to run again.

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
finally:
    shutil.rmtree(work, ignore_errors=True)

# Everything below comes from the raw events. (perf sched timehist's per-task run times are not
# used: on this kernel they credit a sleeping thread with hundreds of ms that its
# sched_stat_runtime events do not show.)
event = re.compile(r"\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)")
field = lambda name, text: re.search(name + r"=(\S+)", text).group(1)
cpu_ms = collections.Counter()     # pid -> ms on a CPU (sched_stat_runtime)
ready_ms = collections.Counter()   # pid -> ms ready but not running (woken or preempted)
idle_ms = collections.Counter()    # cpu -> ms idle
idle_since = {}                    # cpu -> when it went idle
running = {}                       # cpu -> pid on it (0: idle)
asleep_since = {}                  # pid -> when it went to sleep
preempted_at = {}                  # pid -> when it was preempted
woken = {}                         # pid -> (when, ms asleep, previous cpu, state of the cpus then)
placement = collections.Counter()
delays = {"short": [], "long": []}  # ms from a wake-up until running, after a short or a long sleep
preempted = []                      # ms from a preemption until running again
ours = set()
for line in script.splitlines():
    m = event.match(line)
    if not m:
        continue
    cpu, t, name, rest = int(m.group(1)), float(m.group(2)) * 1e3, m.group(3), m.group(4)
    if name == "sched_stat_runtime":
        if field("comm", rest) == "pp.test":
            cpu_ms[int(field(" pid", " " + rest))] += int(field("runtime", rest)) / 1e6
    elif name == "sched_switch":
        prev, nxt, state = int(field("prev_pid", rest)), int(field("next_pid", rest)), field("prev_state", rest)
        if field("prev_comm", rest) == "pp.test":
            ours.add(prev)
            if state[0] in "SD":
                asleep_since[prev] = t
            elif state[0] == "R":
                preempted_at[prev] = t
        if prev == 0 and cpu in idle_since:
            idle_ms[cpu] += t - idle_since.pop(cpu)
        if nxt == 0:
            idle_since[cpu] = t
        running[cpu] = nxt
        if nxt in woken:
            at, slept, prev_cpu, where = woken.pop(nxt)
            kind = "short" if slept < LONG_SLEEP_MS else "long"
            placement[(where, kind, "ran on it" if cpu == prev_cpu else "ran elsewhere")] += 1
            delays[kind].append(t - at)
            ready_ms[nxt] += t - at
        elif nxt in preempted_at:
            wait = t - preempted_at.pop(nxt)
            preempted.append(wait)
            ready_ms[nxt] += wait
    elif name == "sched_waking" and field("comm", rest) == "pp.test":
        pid, prev_cpu = int(field(" pid", " " + rest)), int(field("target_cpu", rest))
        if pid not in asleep_since or prev_cpu not in running:
            continue  # not asleep yet (woken on its way to sleep), or before the CPUs are known
        busy = running[prev_cpu] != 0
        others_idle = any(p == 0 for c, p in running.items() if c != prev_cpu)
        where = ("previous CPU idle" if not busy else
                 "previous CPU busy, another idle" if others_idle else "every CPU busy")
        woken[pid] = (t, t - asleep_since.pop(pid), prev_cpu, where)


def quantiles(d, unit=1e3):
    d = sorted(d)
    q = lambda p: d[min(len(d) - 1, int(p * len(d)))] * unit
    return "n=%-6d p50 %7.1f us  p90 %7.1f us  p99 %7.1f us" % (len(d), q(0.5), q(0.9), q(0.99))


print("BenchmarkPingPong-%d: %s ns/op under perf" % (args.cpu, bench.group(1) if bench else "?"))
print("\nper thread: ms on a CPU, ms ready and waiting for one")
for pid in sorted(ours):
    if cpu_ms[pid] + ready_ms[pid] > 0.5:
        print("  %-8d %8.1f %8.1f" % (pid, cpu_ms[pid], ready_ms[pid]))
print("idle ms per CPU: " + ", ".join("%d: %.1f" % (c, idle_ms[c]) for c in sorted(idle_ms)))
print("\nwake-ups by the state of the woken thread's previous CPU (short sleep < %g ms):" % LONG_SLEEP_MS)
for key in sorted(placement):
    print("  %-32s %-6s %-14s %6d" % (key[0], key[1], key[2], placement[key]))
print("\nwait for a CPU after a wake-up, by sleep length:")
for kind in ("short", "long"):
    if delays[kind]:
        over = sum(1 for x in delays[kind] if x > 0.1)
        print("  %-5s %s  over 100 us: %d (%.0f%%)" % (kind, quantiles(delays[kind]), over,
                                                       100.0 * over / len(delays[kind])))
if preempted:
    long_waits = [x for x in preempted if x > 1]
    print("\nwait to run again after being preempted: %s; over 1 ms: %d, %.1f ms in all" %
          (quantiles(preempted), len(long_waits), sum(long_waits)))
