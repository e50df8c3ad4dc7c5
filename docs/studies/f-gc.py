#!/usr/bin/env python3
"""Study F (docs/studies/f-gc.md): GOGC and GOMAXPROCS on a latency-sensitive server.

  python3 docs/studies/f-gc.py [--profile epyc-vm-fitted] [--seeds 3]

Runs docs/studies/f-gc-server.textproto at GOGC 50, 100, 200, 400, off and GOMAXPROCS 2, 4, 8
(what `gmpsim sweep docs/studies/f-gc-server.textproto --gogc 50,100,200,400,off --procs 2,4,8`
sweeps; here one `gmpsim run` per point so the figures come from run's fixed lines), prints p99
request latency, GC CPU share and throughput per point (the median over the seeds), and draws
docs/studies/images/f-gc-p99.svg and f-gc-cpu.svg (hand-written SVG: no matplotlib). Run from
the repository root after building gmpsim (build/bin/gmpsim, or GMPSIM=...).
"""
import argparse
import importlib.util
import os
import re
import statistics
import subprocess
import sys

GMPSIM = os.environ.get("GMPSIM", "./build/bin/gmpsim")
SCENARIO = "docs/studies/f-gc-server.textproto"
IMAGES = "docs/studies/images"
GOGC = ["50", "100", "200", "400", "off"]
PROCS = [2, 4, 8]

UNITS = {"ns": 1e-3, "us": 1, "µs": 1, "ms": 1e3, "s": 1e6}


def us(text):
    m = re.fullmatch(r"([\d.]+)(ns|us|µs|ms|s)", text)
    return float(m.group(1)) * UNITS[m.group(2)]


def run_point(gogc, procs, seed, profile):
    """(p99 us, GC CPU %, requests/s, GC cycles) of one run."""
    args = [GMPSIM, "run", SCENARIO, "--procs", str(procs), "--gogc", gogc, "--seed", str(seed),
            "--profile", profile]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {out.returncode}\n{out.stderr}")
    req = re.search(r"^requests: .*?p99 (\S+) .*?; (\d+) requests/s", out.stdout, re.M)
    if not req:
        sys.exit(f"{' '.join(args)}: no requests line\n{out.stdout}")
    # `GC: N cycles, ...` (gmpsim run prints it when the program allocated): the first
    # percentage on it is the GC CPU share.
    gc = re.search(r"^GC: (\d+) cycles(.*)$", out.stdout, re.M)
    cycles, cpu = (0, 0.0)
    if gc:
        cycles = int(gc.group(1))
        pct = re.search(r"([\d.]+)%", gc.group(2))
        cpu = float(pct.group(1)) if pct else 0.0
    return us(req.group(1)), cpu, float(req.group(2)), cycles


def svg_lines(path, title, xlabels, series, ylabel, note=""):
    """Study C's line chart (docs/studies/c-goroutines.py), shared rather than copied."""
    spec = importlib.util.spec_from_file_location(
        "c_goroutines", os.path.join(os.path.dirname(os.path.abspath(__file__)), "c-goroutines.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.svg_lines(path, title, xlabels, series, ylabel, note=note)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="epyc-vm-fitted")
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args()
    res = {}
    for p in PROCS:
        for g in GOGC:
            runs = [run_point(g, p, s, a.profile) for s in range(1, a.seeds + 1)]
            res[g, p] = tuple(statistics.median(r[k] for r in runs) for k in range(4))
            print(f"GOGC={g:>3} GOMAXPROCS={p}: p99 {res[g, p][0]:.1f} us, GC CPU {res[g, p][1]:.1f}%, "
                  f"{res[g, p][2]:.0f} requests/s, {res[g, p][3]:.0f} GC cycles", file=sys.stderr)
    print(f"| GOGC | " + " | ".join(f"p99 us, {p} P | GC CPU, {p} P | req/s, {p} P" for p in PROCS) + " |")
    print("|---|" + "---|---|---|" * len(PROCS))
    for g in GOGC:
        print(f"| {g} | " + " | ".join(f"{res[g, p][0]:.1f} | {res[g, p][1]:.1f}% | {res[g, p][2]:.0f}"
                                       for p in PROCS) + " |")
    os.makedirs(IMAGES, exist_ok=True)
    svg_lines(f"{IMAGES}/f-gc-p99.svg", "p99 request latency by GOGC (40k requests/s, 32 MiB live)",
              GOGC, [(f"GOMAXPROCS {p}", [res[g, p][0] for g in GOGC]) for p in PROCS], "p99 latency (us)",
              note=f"GOGC ({a.profile}, median of {a.seeds} seeds)")
    svg_lines(f"{IMAGES}/f-gc-cpu.svg", "GC CPU share by GOGC", GOGC,
              [(f"GOMAXPROCS {p}", [res[g, p][1] for g in GOGC]) for p in PROCS], "GC CPU (% of GOMAXPROCS)",
              note=f"GOGC ({a.profile}, median of {a.seeds} seeds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
