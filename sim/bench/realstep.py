#!/usr/bin/env python3
"""Measures the real ping-pong's step between two -cpu values on this machine, robustly enough to
compare with gmpsim: runs sim/bench/pingpong_test.go as K pairs of alternating runs (the order
flips every pair, so drift and warm-up fall on both sides alike) and prints each side's median
ns/op, the median of the per-pair ratios and its bootstrap 95% interval.

  sim/bench/realstep.py [--go /usr/lib/go-1.23/bin/go] [--cpus 1,2] [--trips 2000000] [--pairs 30]
                        [--pin CPU]   (taskset both runs to one CPU)
"""
import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import pingpong_build

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--go", default="/usr/lib/go-1.23/bin/go")
ap.add_argument("--cpus", default="1,2")
ap.add_argument("--trips", type=int, default=2000000)
ap.add_argument("--pairs", type=int, default=30)
ap.add_argument("--pin", type=int, default=None)
args = ap.parse_args()
cpus = args.cpus.split(",")
if len(cpus) != 2 or not all(c.isdigit() and int(c) > 0 for c in cpus):
    sys.exit("realstep.py: --cpus: expected two positive counts like 1,2, got %r" % args.cpus)

work = tempfile.mkdtemp()
try:
    pingpong_build.build(args.go, work, "realstep.py")
    version = subprocess.run([args.go, "version"], capture_output=True, text=True).stdout.strip()

    def run(cpu):
        cmd = ([] if args.pin is None else ["taskset", "-c", str(args.pin)]) + [
            "./pp.test", "-test.bench", "PingPong$", "-test.cpu", cpu, "-test.benchtime", "%dx" % args.trips]
        out = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=True).stdout
        m = re.search(r"([0-9.]+) ns/op", out)
        if not m:
            sys.exit("realstep.py: no ns/op in the benchmark's output:\n" + out)
        return float(m.group(1))

    a, b = [], []
    for i in range(args.pairs):
        if i % 2 == 0:
            a.append(run(cpus[0])); b.append(run(cpus[1]))
        else:
            b.append(run(cpus[1])); a.append(run(cpus[0]))
        if sys.stderr.isatty():
            print("\rpair %d/%d" % (i + 1, args.pairs), end="", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print(file=sys.stderr)
finally:
    shutil.rmtree(work, ignore_errors=True)

ratios = [y / x for x, y in zip(a, b)]
rng = random.Random(1)
boot = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
print("%s, %d pairs of %d round trips%s" % (version, args.pairs, args.trips,
                                             "" if args.pin is None else ", pinned to CPU %d" % args.pin))
print("-cpu %s: median %.1f ns/op" % (cpus[0], statistics.median(a)))
print("-cpu %s: median %.1f ns/op" % (cpus[1], statistics.median(b)))
print("ratio -cpu %s / -cpu %s: median %.3f, bootstrap 95%% interval %.3f-%.3f, pairs from %.2f to %.2f"
      % (cpus[1], cpus[0], statistics.median(ratios), boot[50], boot[1949], min(ratios), max(ratios)))
