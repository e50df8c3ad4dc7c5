#!/usr/bin/env python3
"""Study G (docs/studies/g-automaxprocs.md): GOMAXPROCS under a CPU quota, beside automaxprocs's README.

  python3 docs/studies/g-automaxprocs.py [--profile default] [--seeds 3]

Part 1: docs/studies/g-automaxprocs.textproto (a 2-CPU quota on 24 cores) at GOMAXPROCS 1, 2, 4,
8, 24, one `gmpsim run` per point and seed; prints the medians over the seeds beside
uber-go/automaxprocs's published figures and draws docs/studies/images/g-automaxprocs-rps.svg and
g-automaxprocs-latency.svg (hand-written SVG, study C's line chart: no matplotlib here).
Part 2: docs/studies/g-automaxprocs-2.5.textproto (2.5 CPUs on 64 cores) at GOMAXPROCS 2, 3, 64
and auto. Latencies are the load generator's if gmpsim reports them per process, else the
server's; throttled periods are the server cgroup's cpu.stat. Run from the repository root after
building gmpsim (build/bin/gmpsim, or GMPSIM=...).
"""
import argparse
import importlib.util
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "sim", "bench", "containers"))
import gmpsim_out  # noqa: E402

GMPSIM = os.environ.get("GMPSIM", os.path.join(ROOT, "build/bin/gmpsim"))
IMAGES = os.path.join(HERE, "images")
PART1 = ("docs/studies/g-automaxprocs.textproto", 24, ["1", "2", "4", "8", "24"])
PART2 = ("docs/studies/g-automaxprocs-2.5.textproto", 64, ["2", "3", "64", "auto"])
# uber-go/automaxprocs README, "Performance": 2-CPU quota on a 24-core host.
PUBLISHED = {"1": (28893, 1.46, 19.70), "2": (44715, 0.84, 26.38), "4": (41071, 0.57, 42.94),
             "8": (33112, 0.43, 64.32), "24": (22191, 0.45, 76.19)}  # requests/s, p50 ms, p99.9 ms
KEYS = ["rps", "p50", "p99", "p999", "nr_periods", "nr_throttled", "throttled_ms"]


def run_point(scenario, cores, procs, seed, profile):
    args = [GMPSIM, "run", os.path.join(ROOT, scenario), "--procs", procs, "--cores", str(cores),
            "--profile", profile, "--seed", str(seed)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    lat = gmpsim_out.figures(r.stdout, "loadgen")
    if lat["p50"] is None:
        lat = gmpsim_out.figures(r.stdout, "server")
    srv = gmpsim_out.figures(r.stdout, "server")
    if lat["rps"] is None:
        sys.exit(f"{' '.join(args)}: no requests line\n{r.stdout}")
    procs_line = [ln for ln in r.stdout.splitlines() if "GOMAXPROCS" in ln][:3]
    return {**{k: lat[k] for k in ["rps", "p50", "p99", "p999"]},
            **{k: srv[k] for k in ["nr_periods", "nr_throttled", "throttled_ms"]}}, procs_line


def sweep(part, profile, seeds):
    scenario, cores, procs = part
    res = {}
    for p in procs:
        runs = []
        for s in range(1, seeds + 1):
            fig, lines = run_point(scenario, cores, p, s, profile)
            runs.append(fig)
        res[p] = {k: (statistics.median(r[k] for r in runs) if all(r[k] is not None for r in runs) else None)
                  for k in KEYS}
        print(f"{scenario} GOMAXPROCS={p}: {res[p]}  ({' | '.join(lines)})", file=sys.stderr)
    return res


def ms(v):
    return "-" if v is None else f"{v / 1000:.2f}"


def thr(r):
    if r["nr_throttled"] is None:
        return "-"
    return f"{r['nr_throttled']:.0f} of {r['nr_periods']:.0f}" if r["nr_periods"] is not None else f"{r['nr_throttled']:.0f}"


def svg_lines(path, title, xlabels, series, ylabel, log_y=False, note=""):
    """Study C's line chart (docs/studies/c-goroutines.py), shared rather than copied."""
    spec = importlib.util.spec_from_file_location("c_goroutines", os.path.join(HERE, "c-goroutines.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.svg_lines(path, title, xlabels, series, ylabel, log_y=log_y, note=note)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="default")
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args()
    if not os.access(GMPSIM, os.X_OK):
        sys.exit(f"{GMPSIM}: no gmpsim binary (ninja -C build gmpsim, or GMPSIM=...)")
    r1 = sweep(PART1, a.profile, a.seeds)
    print(f"Part 1: 2-CPU quota, 24 cores, profile {a.profile}, median of {a.seeds} seeds; published: "
          "uber-go/automaxprocs README")
    print()
    print("| GOMAXPROCS | req/s published | req/s sim | p50 ms published | p50 ms sim | p99.9 ms published "
          "| p99.9 ms sim | p99 ms sim | throttled periods sim |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p in PART1[2]:
        pub, r = PUBLISHED[p], r1[p]
        print(f"| {p} | {pub[0]:,} | {r['rps']:,.0f} | {pub[1]:.2f} | {ms(r['p50'])} | {pub[2]:.2f} | "
              f"{ms(r['p999'])} | {ms(r['p99'])} | {thr(r)} |")
    r2 = sweep(PART2, a.profile, a.seeds)
    print()
    print(f"Part 2: 2.5-CPU quota, 64 cores, profile {a.profile}, median of {a.seeds} seeds")
    print()
    print("| GOMAXPROCS | req/s | p50 ms | p99 ms | p99.9 ms | throttled periods | throttled ms |")
    print("|---|---|---|---|---|---|---|")
    for p in PART2[2]:
        r = r2[p]
        print(f"| {p} | {r['rps']:,.0f} | {ms(r['p50'])} | {ms(r['p99'])} | {ms(r['p999'])} | {thr(r)} | "
              f"{'-' if r['throttled_ms'] is None else round(r['throttled_ms'])} |")
    os.makedirs(IMAGES, exist_ok=True)
    xs = PART1[2]
    note = f"GOMAXPROCS (2-CPU quota, 24 cores; sim: {a.profile}, median of {a.seeds} seeds)"
    svg_lines(os.path.join(IMAGES, "g-automaxprocs-rps.svg"), "Throughput under a 2-CPU quota", xs,
              [("published (automaxprocs README)", [PUBLISHED[p][0] for p in xs]),
               ("simulated", [r1[p]["rps"] for p in xs])], "requests/s", note=note)
    svg_lines(os.path.join(IMAGES, "g-automaxprocs-latency.svg"), "Latency under a 2-CPU quota", xs,
              [("p50 published", [PUBLISHED[p][1] for p in xs]),
               ("p50 simulated", [None if r1[p]["p50"] is None else r1[p]["p50"] / 1000 for p in xs]),
               ("p99.9 published", [PUBLISHED[p][2] for p in xs]),
               ("p99.9 simulated", [None if r1[p]["p999"] is None else r1[p]["p999"] / 1000 for p in xs])],
              "latency (ms, log scale)", log_y=True, note=note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
