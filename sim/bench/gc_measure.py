#!/usr/bin/env python3
"""Measures the GC validation's points with real Go (issue 24; gmp_gc_bench reads the result).

The allocating held-out benchmarks (BenchmarkTreeBuild, BenchmarkSpawnStorm,
BenchmarkSmallAllocParallel in sim/calibration/heldout) at GOMAXPROCS 1, 2, 4 and GOGC 50, 100,
400: 27 points. The test binary is built once (`go test -c`, in a temporary copy of the folder).
Each round runs every point once, in the same order (A B C ... A B C ...), so that a drift of
the machine over the minutes of measuring falls on every point alike; several rounds give each
point a median and a spread. Each run is

    setsid sh -c 'echo -20 > /proc/self/autogroup; exec BIN -test.run ^$ -test.bench ^NAME$ \
        -test.cpu P -test.count 1 -test.benchtime T'   with GOGC=G GODEBUG=gctrace=1

(its own session, hence its own autogroup, at the autogroup's highest priority where the kernel
lets us; without root the write fails and the run goes on at the default). stdout and stderr go
through one pipe, so each gctrace line stays next to the benchmark it ran in.

The output file is what sim/calibration/gc_measurements.h reads: a header, then per run a line
`# point: NAME procs=P gogc=G round=R` and the run's output; at the end, one `# summary:` comment
per point (median ns/op and spread, median GC cycles per op and GC CPU share, for reading; the
reader recomputes them). Measure on a quiet machine: nothing else running.

    sim/bench/gc_measure.py [--go /usr/lib/go-1.23/bin/go] [--rounds 7] [--benchtime 500ms]
        [-o sim/calibration/measurements/epyc-vm-go1.23-gc.txt] [--dry-run]

--dry-run prints the plan and the estimate without running anything.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HELDOUT = os.path.join(ROOT, "sim", "calibration", "heldout")
BENCHMARKS = ["BenchmarkTreeBuild", "BenchmarkSpawnStorm", "BenchmarkSmallAllocParallel"]
PROCS = [1, 2, 4]
GOGC = [50, 100, 400]

GCLINE = re.compile(
    r"gc (\d+) @([\d.]+)s (\d+)%: ([\d.]+)\+([\d.]+)\+([\d.]+) ms clock, "
    r"([\d.]+)\+([\d.]+)/([\d.]+)/([\d.]+)\+([\d.]+) ms cpu, (\d+)->(\d+)->(\d+) MB, (\d+) MB goal, "
    r"(\d+) MB stacks, (\d+) ?MB globals, (\d+) P( \(forced\))?")
RESULT = re.compile(r"^(Benchmark\S+?)(?:-(\d+))?\s+(\d+)\s+([\d.]+) ns/op")


def parse_duration(s):
    """Seconds of a go test -benchtime duration (1s, 500ms); None for an iteration count (100x)."""
    m = re.fullmatch(r"([\d.]+)(ns|us|ms|s|m)", s)
    if not m:
        return None
    return float(m.group(1)) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}[m.group(2)]


def estimate_seconds(points, rounds, benchtime):
    """A run takes its benchtime, go test's ramp of b.N (about half as much again) and the
    process's start and set-up (BenchmarkTreeBuild builds its 8 MiB tree once per b.N round):
    about 0.4 s more."""
    bt = parse_duration(benchtime)
    per = (1.5 * bt if bt is not None else 0.5) + 0.4
    return points * rounds * per


def summarize_run(text, name, procs):
    """(ns/op, cycles per op, GC CPU share) of one run's output; the cycles after the last forced
    one, as sim/calibration/gctrace.h's gc_figures counts them. None when the result is missing."""
    cycles = []
    result = None
    pending = ""
    for raw in text.splitlines():
        m = GCLINE.search(raw)
        if m:
            pending += raw[:m.start()]
            cycles.append(m)
            continue
        line = pending + raw
        pending = ""
        r = RESULT.match(line)
        if r and r.group(1) == name and int(r.group(2) or 1) == procs:
            result = (int(r.group(3)), float(r.group(4)), list(cycles))
        if r:
            cycles = []
    if result is None:
        return None
    iters, ns, cyc = result
    start = 0
    for i, c in enumerate(cyc):
        if c.group(19):
            start = i + 1
    loop = cyc[start:]
    wall_ms = ns * iters / 1e6
    cpu = sum(float(c.group(7)) + float(c.group(8)) + float(c.group(9)) + float(c.group(11)) for c in loop)
    return ns, len(loop) / iters, cpu / (wall_ms * procs) if wall_ms > 0 else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--go", default="/usr/lib/go-1.23/bin/go")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--benchtime", default="500ms")
    ap.add_argument("-o", "--out", default=os.path.join(ROOT, "sim", "calibration", "measurements",
                                                       "epyc-vm-go1.23-gc.txt"))
    ap.add_argument("--bench", default="", help="only the benchmarks whose name contains this")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    if a.rounds < 1 or a.rounds > 1000:
        sys.exit("gc_measure: --rounds takes 1 to 1000")
    if not re.fullmatch(r"[\d.]+(ns|us|ms|s|m|x)", a.benchtime):
        sys.exit("gc_measure: --benchtime takes a go test duration (1s, 500ms) or count (100x)")

    points = [(b, p, g) for b in BENCHMARKS if a.bench in b for p in PROCS for g in GOGC]
    est = estimate_seconds(len(points), a.rounds, a.benchtime)
    print(f"gc_measure: {len(points)} points x {a.rounds} rounds at -benchtime {a.benchtime}: "
          f"about {est / 60:.1f} minutes", file=sys.stderr)
    if a.dry_run:
        for b, p, g in points:
            print(f"  {b} -cpu {p} GOGC={g}", file=sys.stderr)
        return 0
    if not os.path.exists(a.go):
        sys.exit(f"gc_measure: no Go at {a.go} (--go)")
    load = open("/proc/loadavg").read().split()[0] if os.path.exists("/proc/loadavg") else "?"
    if load != "?" and float(load) > 0.5:
        print(f"gc_measure: WARNING: load average {load}: the machine is not quiet; the figures carry that load",
              file=sys.stderr)

    work = tempfile.mkdtemp(prefix="gmp-gc-measure-")
    try:
        for f in os.listdir(HELDOUT):
            if f.endswith(".go") or f in ("go.mod", "go.sum"):
                shutil.copy(os.path.join(HELDOUT, f), work)
        binary = os.path.join(work, "heldout.test")
        env = dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
        subprocess.run([a.go, "test", "-c", "-o", binary], cwd=work, env=env, check=True)
        version = subprocess.run([a.go, "version"], capture_output=True, text=True).stdout.strip()
        out = [f"# gmp gc measurements (sim/bench/gc_measure.py): {version}, {len(points)} points, "
               f"{a.rounds} rounds interleaved, -test.benchtime {a.benchtime}, load average {load} before\n"]
        runs = {pt: [] for pt in points}
        began = time.time()
        done = 0
        for rnd in range(1, a.rounds + 1):
            for (b, p, g) in points:
                env = dict(os.environ, GOGC=str(g), GODEBUG="gctrace=1")
                cmd = ("echo -20 > /proc/self/autogroup 2>/dev/null; exec \"$0\" -test.run '^$' "
                       f"-test.bench '^{b}$' -test.cpu {p} -test.count 1 -test.benchtime {a.benchtime}")
                r = subprocess.run(["setsid", "sh", "-c", cmd, binary], cwd=work, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if r.returncode != 0:
                    sys.exit(f"gc_measure: {b} -cpu {p} GOGC={g} failed ({r.returncode}):\n{r.stdout}")
                out.append(f"# point: {b} procs={p} gogc={g} round={rnd}\n")
                out.append(r.stdout if r.stdout.endswith("\n") else r.stdout + "\n")
                s = summarize_run(r.stdout, b, p)
                if s is None:
                    sys.exit(f"gc_measure: {b} -cpu {p} GOGC={g}: no result in its output:\n{r.stdout}")
                runs[(b, p, g)].append(s)
                done += 1
                left = (time.time() - began) / done * (len(points) * a.rounds - done)
                print(f"gc_measure: [{done}/{len(points) * a.rounds}] round {rnd} {b}-{p} GOGC={g}: "
                      f"{s[0]:.1f} ns/op, {s[1]:.3g} cycles/op, GC CPU {100 * s[2]:.1f}% "
                      f"({left / 60:.1f} min left)", file=sys.stderr)
        for (b, p, g), v in runs.items():
            ns = [x[0] for x in v]
            med = statistics.median(ns)
            spread = (max(ns) - min(ns)) / med * 100 if med > 0 else 0
            out.append(f"# summary: {b} procs={p} gogc={g} n={len(v)} ns/op {med:.4g} spread {spread:.1f}% "
                       f"cycles/op {statistics.median(x[1] for x in v):.4g} "
                       f"GC CPU {100 * statistics.median(x[2] for x in v):.1f}%\n")
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            f.writelines(out)
        print(f"gc_measure: wrote {a.out} ({(time.time() - began) / 60:.1f} min)", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
