#!/usr/bin/env python3
"""The real echo server in a cgroup beside its simulation (docs/containers.md).

Reads the real runs (run.py's "raw" lines in the measurements file), takes per point (quota,
server GOMAXPROCS, load) the median of the repetitions, runs `gmpsim run` on the matching
two-process scenario (sim/scenarios/containers-echo-closed.textproto for the closed loop,
containers-echo-open.textproto for the open loop at 5,500 requests/s; a copy with the point's
quota in the server's cgroup) and prints both side by side: throughput, p50, p99 and the
throttled periods (nr_throttled of nr_periods). Builds nothing and runs no Go.

  sim/bench/containers/compare.py [--gmpsim ./build/bin/gmpsim]
      [--measurements sim/bench/containers/measurements-go1.23.txt] [--profile epyc-vm-fitted]
      [--cores 2] [--seed 1]

What differs by construction: the real latency is the load generator's (send to reply read), the
simulated one is what gmpsim reports for the process named by --latency-from (the load generator's
block if it reports requests, else the server's: arrival at the server to its write); the real
cpu.stat covers the load generator's warm-up, window and drain, the simulated one the whole run.
The throttled fraction (nr_throttled / nr_periods) is the figure to compare, not the counts.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
import gmpsim_out  # noqa: E402

SCENARIOS = {"closed": os.path.join(ROOT, "sim/scenarios/containers-echo-closed.textproto"),
             "open": os.path.join(ROOT, "sim/scenarios/containers-echo-open.textproto")}
OPEN_RATE = 5500  # containers-echo-open.textproto's rate


def read_real(path):
    """{(quota, procs, load): [raw dict, ...]} from run.py's raw lines ('unset' runs apart)."""
    rows = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("raw "):
                continue
            d = dict(kv.split("=", 1) for kv in line.split()[1:])
            key = (float(d["quota"]), d["procs"], d["load"])
            rows.setdefault(key, []).append(d)
    if not rows:
        sys.exit(f"compare.py: {path}: no 'raw' lines (run.py's output)")
    return rows


def with_quota(path, quota, tmp):
    text = open(path).read()
    new, n = re.subn(r"(cgroup \{ quota: )[\d.]+", lambda m: m.group(1) + f"{quota:g}", text, count=1)
    if n != 1:
        sys.exit(f"compare.py: {path}: no 'cgroup {{ quota: ' to set")
    out = os.path.join(tmp, f"q{quota:g}-{os.path.basename(path)}")
    with open(out, "w") as f:
        f.write(new)
    return out


def simulate(a, scenario, procs):
    args = [a.gmpsim, "run", scenario, "--procs", procs, "--cores", str(a.cores), "--profile", a.profile,
            "--seed", str(a.seed)]
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        sys.exit(f"compare.py: {' '.join(args)}: over 600 s")
    if r.returncode != 0:
        sys.exit(f"compare.py: {' '.join(args)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    lat = gmpsim_out.figures(r.stdout, a.latency_from)
    if lat["p50"] is None:
        lat = gmpsim_out.figures(r.stdout, "server")
    thr = gmpsim_out.figures(r.stdout, "server")
    if lat["rps"] is None:
        sys.exit(f"compare.py: no requests line in the output of {' '.join(args)}\n{r.stdout}")
    return lat, thr


def cell(v, fmt="{:.0f}"):
    return "-" if v is None else fmt.format(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gmpsim", default=os.environ.get("GMPSIM", os.path.join(ROOT, "build/bin/gmpsim")))
    ap.add_argument("--measurements", default=os.path.join(HERE, "measurements-go1.23.txt"))
    ap.add_argument("--profile", default="epyc-vm-fitted")
    ap.add_argument("--cores", type=int, default=2, help="the real machine's CPUs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--latency-from", default="loadgen", help="the process whose request latencies to print")
    a = ap.parse_args()
    if not os.access(a.gmpsim, os.X_OK):
        sys.exit(f"compare.py: {a.gmpsim}: no gmpsim binary there (ninja -C build gmpsim)")
    real = read_real(a.measurements)
    print(f"# real: {os.path.basename(a.measurements)} (median of the repetitions); simulated: gmpsim run, "
          f"profile {a.profile}, {a.cores} cores, seed {a.seed}")
    print("# latencies in us; throttled: nr_throttled/nr_periods")
    hdr = (f"{'quota':>5} {'gmp':>4} {'load':>6} | {'real/s':>7} {'sim/s':>7} | {'real_p50':>8} {'sim_p50':>8} | "
           f"{'real_p99':>8} {'sim_p99':>8} | {'real_thr':>9} {'sim_thr':>9}")
    print(hdr)
    with tempfile.TemporaryDirectory(prefix="gmpsim-compare-") as tmp:
        for (q, p, ld), rs in real.items():
            if p == "unset":
                continue
            kind = "closed" if ld == "closed" else "open"
            if kind == "open" and int(ld) != OPEN_RATE:
                print(f"# {q:g} {p} {ld}: no scenario at this rate (containers-echo-open is {OPEN_RATE}/s)")
                continue
            med = lambda k: statistics.median(float(r[k]) for r in rs)
            lat, thr = simulate(a, with_quota(SCENARIOS[kind], q, tmp), p)
            real_thr = f"{med('nr_throttled'):.0f}/{med('nr_periods'):.0f}"
            sim_thr = ("-" if thr["nr_throttled"] is None
                       else f"{thr['nr_throttled']}/{cell(thr['nr_periods'])}")
            print(f"{q:>5g} {p:>4} {ld:>6} | {med('achieved'):>7.0f} {cell(lat['rps']):>7} | "
                  f"{med('p50'):>8.1f} {cell(lat['p50'], '{:.1f}'):>8} | {med('p99'):>8.0f} {cell(lat['p99']):>8} | "
                  f"{real_thr:>9} {sim_thr:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
