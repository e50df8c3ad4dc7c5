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
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"]

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
    """series: list of (name, [y per x]); evenly spaced x, linear y from 0."""
    import math
    w, h, x0, x1, y0, y1 = 780, 440, 80, 560, 380, 50
    hi = max(v for _, vals in series for v in vals) * 1.1 or 1
    step = 10 ** math.floor(math.log10(hi / 5))
    for m in (1, 2, 5, 10):
        if hi / (step * m) <= 6:
            step *= m
            break
    ticks = [i * step for i in range(int(hi / step) + 2) if i * step <= hi + step * 0.01]
    hi = ticks[-1]
    f = lambda v: y0 - v / hi * (y0 - y1)
    xp = lambda i: x0 + (i + 0.5) * (x1 - x0) / len(xlabels)
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
         f'font-size="12">', '<rect width="100%" height="100%" fill="white"/>',
         f'<text x="{w/2}" y="24" text-anchor="middle" font-size="15">{title}</text>',
         f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="black"/>',
         f'<line x1="{x0}" y1="{y1}" x2="{x0}" y2="{y0}" stroke="black"/>']
    for t in ticks:
        o.append(f'<text x="{x0-6}" y="{f(t)+4:.1f}" text-anchor="end">{t:g}</text>')
        o.append(f'<line x1="{x0}" y1="{f(t):.1f}" x2="{x1}" y2="{f(t):.1f}" stroke="#ddd"/>')
    for i, lab in enumerate(xlabels):
        o.append(f'<text x="{xp(i):.1f}" y="{y0+18}" text-anchor="middle">{lab}</text>')
    o.append(f'<text x="{(x0+x1)/2}" y="{y0+40}" text-anchor="middle">{note}</text>')
    o.append(f'<text x="20" y="{(y0+y1)/2}" text-anchor="middle" '
             f'transform="rotate(-90 20 {(y0+y1)/2})">{ylabel}</text>')
    for k, (name, vals) in enumerate(series):
        c = COLOURS[k % len(COLOURS)]
        pts = [(xp(i), f(v)) for i, v in enumerate(vals)]
        o.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                 % (c, " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)))
        for x, y in pts:
            o.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{c}"/>')
        o.append(f'<rect x="{x1+20}" y="{y1+k*20}" width="12" height="12" fill="{c}"/>')
        o.append(f'<text x="{x1+38}" y="{y1+k*20+11}">{name}</text>')
    o.append("</svg>")
    with open(path, "w") as fh:
        fh.write("\n".join(o) + "\n")
    print(f"chart: {path}")


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
