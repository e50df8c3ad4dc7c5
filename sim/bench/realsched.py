#!/usr/bin/env python3
"""Records what the OS scheduler does to the real ping-pong's threads (`perf sched record`) and
prints the figures docs/figures.md quotes: each thread's CPU time and time ready but waiting,
where a woken thread runs when its previous CPU is busy, how long it waits for a CPU by how long
it slept, and how long a preempted thread waits to run again.

  sim/bench/realsched.py [--go /usr/lib/go-1.23/bin/go] [--cpu 2] [--trips 4000000]

Needs perf with the sched tracepoints (Debian: linux-perf) and permission to record them (root);
exits with status 2 without. The recording and the figures are schedrec.py's (placement_check.py
uses them for the calibration benchmarks); the last line is the `os placement:` line's figures.
"""
import argparse
import re
import shutil
import sys
import tempfile

import pingpong_build
import schedrec

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--go", default="/usr/lib/go-1.23/bin/go")
ap.add_argument("--cpu", type=int, default=2)
ap.add_argument("--trips", type=int, default=4000000)
args = ap.parse_args()
try:
    schedrec.check_perf()
except schedrec.PerfUnavailable as e:
    print("realsched.py: %s" % e, file=sys.stderr)
    sys.exit(2)

work = tempfile.mkdtemp()
try:
    pingpong_build.build(args.go, work, "realsched.py")
    try:
        tgid, comm, out, script, warnings = schedrec.record(
            ["./pp.test", "-test.run", "^$", "-test.bench", "PingPong$", "-test.cpu", str(args.cpu),
             "-test.benchtime", "%dx" % args.trips], work, cwd=work)
    except RuntimeError as e:
        sys.exit("realsched.py: %s" % e)
    bench = re.search(r"BenchmarkPingPong\S*\s+\d+\s+([0-9.]+) ns/op", out)
    # Everything below comes from the raw events (schedrec.py). (perf sched timehist's per-task run
    # times are not used: on this kernel they credit a sleeping thread with hundreds of ms that its
    # sched_stat_runtime events do not show.)
    a = schedrec.analyse(script, tgid, comm)
finally:
    shutil.rmtree(work, ignore_errors=True)
for w in warnings:
    print("realsched.py: perf: " + w, file=sys.stderr)


def quantiles(d, unit=1e3):
    d = sorted(d)
    q = lambda p: d[min(len(d) - 1, int(p * len(d)))] * unit
    return "n=%-6d p50 %7.1f us  p90 %7.1f us  p99 %7.1f us" % (len(d), q(0.5), q(0.9), q(0.99))


print("BenchmarkPingPong-%d: %s ns/op under perf" % (args.cpu, bench.group(1) if bench else "?"))
print("\nper thread: ms on a CPU, ms ready and waiting for one")
for pid in sorted(a.threads):
    if a.cpu_ms[pid] + a.ready_ms[pid] > 0.5:
        print("  %-8d %8.1f %8.1f" % (pid, a.cpu_ms[pid], a.ready_ms[pid]))
print("idle ms per CPU: " + ", ".join("%d: %.1f" % (c, a.idle_ms[c]) for c in sorted(a.idle_ms)))
print("\nwake-ups by the state of the woken thread's previous CPU (short sleep < %g ms):" % schedrec.LONG_SLEEP_MS)
for key in sorted(a.placement):
    print("  %-32s %-6s %-14s %6d" % (key[0], key[1], key[2], a.placement[key]))
print("\nwait for a CPU after a wake-up, by sleep length:")
for kind in ("short", "long"):
    if a.delays[kind]:
        over = sum(1 for x in a.delays[kind] if x > 0.1)
        print("  %-5s %s  over 100 us: %d (%.0f%%)" % (kind, quantiles(a.delays[kind]), over,
                                                       100.0 * over / len(a.delays[kind])))
if a.preempted:
    long_waits = [x for x in a.preempted if x > 1]
    print("\nwait to run again after being preempted: %s; over 1 ms: %d, %.1f ms in all" %
          (quantiles(a.preempted), len(long_waits), sum(long_waits)))
m = a.metrics()
fmt = lambda v, f: "-" if v is None else f % v
print("\nos placement (as gmpsim prints it): wakeups=%d on_prev=%s migrations_per_s=%s idle_wait_ms_per_s=%s "
      "over %.3f s" % (m["wakeups"], fmt(m["on_prev"], "%.3f"), fmt(m["migrations_per_s"], "%.1f"),
                       fmt(m["idle_wait_ms_per_s"], "%.2f"), m["span_s"]))
