#!/usr/bin/env python3
"""Study C (docs/studies/c-goroutines.md): the runs that `gmpsim sweep` cannot do by itself.

  python3 docs/studies/c-goroutines.py count   # N = 100 .. 50,000 goroutines at GOMAXPROCS 4, 4 cores
  python3 docs/studies/c-goroutines.py pool    # goroutine per request vs a 200-worker pool, 1x, 4x, 6x

Each prints its table and writes its chart under docs/studies/images/. Run from the repository
root after building gmpsim (build/bin/gmpsim). The charts are drawn from the printed numbers only.
"""
import os
import re
import subprocess
import sys
import tempfile

GMPSIM = os.environ.get("GMPSIM", "./build/bin/gmpsim")
IMAGES = "docs/studies/images"

# published-figures.md, section C: N -> (total ms, us per goroutine), 4-core Linux server, Go 1.21.
PUBLISHED = {100: (1.2, 12.0), 1000: (8.5, 8.5), 5000: (52.0, 10.4), 10000: (168.0, 16.8),
             50000: (1350.0, 27.0)}


def run(scenario_text, name, args):
    """Runs gmpsim on a scenario given as text; returns its stdout."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(scenario_text)
        out = subprocess.run([GMPSIM, "run", path] + args, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"gmpsim run {name} {' '.join(args)}: exit {out.returncode}\n{out.stderr}")
        return out.stdout


def ns_per_op(stdout):
    m = re.search(r"^Benchmark\S+\s+\d+\s+(\d+) ns/op", stdout, re.M)
    return int(m.group(1))


# ---------------------------------------------------------------------------------------------
# A small SVG line/bar chart writer (same look as gmpsim's --svg charts).

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"]


def svg_lines(path, title, xlabels, series, ylabel, log_y=False, note=""):
    """series: list of (name, [y or None per x]). x positions are evenly spaced."""
    import math
    w, h, x0, x1, y0, y1 = 780, 440, 80, 560, 380, 50
    ys = [v for _, vals in series for v in vals if v is not None]
    if log_y:
        lo = 10 ** math.floor(math.log10(min(ys)))
        hi = 10 ** math.ceil(math.log10(max(ys)))
        ticks = []
        t = lo
        while t <= hi * 1.0001:
            ticks.append(t)
            t *= 10
        f = lambda v: y0 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (y0 - y1)
    else:
        hi = max(ys) * 1.1
        step = 10 ** math.floor(math.log10(hi / 5))
        for m in (1, 2, 5, 10):
            if hi / (step * m) <= 6:
                step *= m
                break
        ticks = [i * step for i in range(int(hi / step) + 2) if i * step <= hi + step * 0.01]
        hi = ticks[-1]
        f = lambda v: y0 - v / hi * (y0 - y1)
    n = len(xlabels)
    xp = lambda i: x0 + (i + 0.5) * (x1 - x0) / n
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
         f'font-size="12">', '<rect width="100%" height="100%" fill="white"/>',
         f'<text x="{w/2}" y="24" text-anchor="middle" font-size="15">{title}</text>',
         f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="black"/>',
         f'<line x1="{x0}" y1="{y1}" x2="{x0}" y2="{y0}" stroke="black"/>']
    for t in ticks:
        label = f"{t:g}"
        o.append(f'<text x="{x0-6}" y="{f(t)+4:.1f}" text-anchor="end">{label}</text>')
        o.append(f'<line x1="{x0}" y1="{f(t):.1f}" x2="{x1}" y2="{f(t):.1f}" stroke="#ddd"/>')
    for i, lab in enumerate(xlabels):
        o.append(f'<text x="{xp(i):.1f}" y="{y0+18}" text-anchor="middle">{lab}</text>')
    o.append(f'<text x="{(x0+x1)/2}" y="{y0+40}" text-anchor="middle">{note}</text>')
    o.append(f'<text x="20" y="{(y0+y1)/2}" text-anchor="middle" '
             f'transform="rotate(-90 20 {(y0+y1)/2})">{ylabel}</text>')
    for k, (name, vals) in enumerate(series):
        c = COLOURS[k % len(COLOURS)]
        pts = [(xp(i), f(v)) for i, v in enumerate(vals) if v is not None]
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


# ---------------------------------------------------------------------------------------------
# (1) The goroutine-count sweep: sim/scenarios/goroutines.textproto with N in place of 10000.

def count():
    base = open("sim/scenarios/goroutines.textproto").read()
    assert base.count("10000") == 3  # n: 10000, count: 10000, the benchmark's name
    ns = [100, 1000, 5000, 10000, 50000]
    profiles = ["default", "epyc-vm-fitted"]
    res = {}
    for p in profiles:
        for n in ns:
            out = run(base.replace("10000", str(n)), f"goroutines{n}.textproto",
                      ["--procs", "4", "--cores", "4", "--profile", p])
            res[p, n] = ns_per_op(out)
    print("GOMAXPROCS=4, --cores 4; total = the benchmark loop's ns/op; us/G = total / N")
    print(f"{'N':>7} | {'published ms':>12} {'us/G':>6} |" +
          "".join(f" {p+' ms':>19} {'us/G':>6} |" for p in profiles))
    for n in ns:
        pm, pu = PUBLISHED[n]
        row = f"{n:>7} | {pm:>12g} {pu:>6g} |"
        for p in profiles:
            t = res[p, n]
            row += f" {t/1e6:>19.3f} {t/1e3/n:>6.3f} |"
        print(row)
    series = [("published (Go 1.21)", [PUBLISHED[n][1] for n in ns])]
    series += [(f"simulated, {p}", [res[p, n] / 1e3 / n for n in ns]) for p in profiles]
    svg_lines(f"{IMAGES}/c-count.svg", "N goroutines summing 0..999, GOMAXPROCS 4, 4 cores",
              [f"{n:,}" for n in ns], series, "us per goroutine (log scale)", log_y=True,
              note="N (goroutines)")


# ---------------------------------------------------------------------------------------------
# (4) The worker-pool question: c-pergoroutine.textproto (A) and c-pool.textproto (B) at 1x, 4x
# and 6x load (BATCH = 8, 32, 48 requests a tick of about 1 ms), request latency from the trace.

LOADS = [("1x", 8), ("4x", 32), ("6x", 48)]
TICKS = 250
SEED = os.environ.get("SEED", "1")  # SEED=2 python3 docs/studies/c-goroutines.py pool: another seed


def scenario_at(path, batch):
    text = open(path).read()
    old = ("count: 8                                     # BATCH",
           "n: 2000 } }                      # TICKS * BATCH")
    assert text.count(old[0]) == 1
    text = text.replace(old[0], f"count: {batch}                                     # BATCH")
    if "c-pergoroutine" in path:
        assert text.count(old[1]) == 1
        text = text.replace(old[1], f"n: {TICKS * batch} }} }}                      # TICKS * BATCH")
    return text


def percentile(sorted_vals, q):
    """The nearest-rank percentile."""
    import math
    return sorted_vals[max(0, math.ceil(q / 100 * len(sorted_vals)) - 1)]


def latencies(trace_path):
    """Reads the markers of a trace: returns (arrival times, latencies in ns, most Gs alive)."""
    names, marks, created, born = {}, {}, [], {}
    alive = peak = 0
    dump = subprocess.Popen([GMPSIM, "trace", trace_path], stdout=subprocess.PIPE, text=True)
    for line in dump.stdout:
        f = line.split()
        if len(f) < 3 or not f[0].isdigit():
            continue
        t, kind = int(f[0]), f[1]
        if kind == "KIND_GO_SYSCALL_ENTER":
            marks.setdefault(f[2], []).append(t)
        elif kind == "KIND_GO_CREATE":
            g = f[2]
            names[g] = line.rsplit('"', 2)[-2]
            if names[g] in ("handle", "worker"):
                created.append(g)
                born[g] = t
            alive += 1
            peak = max(peak, alive)
        elif kind == "KIND_GO_EXIT":
            alive -= 1
    if dump.wait() != 0:
        sys.exit(f"gmpsim trace {trace_path} failed")
    arrivals = sorted(t for g, n in names.items() if n == "ticker" for t in marks[g])
    if names[created[0]] == "handle":  # variant A: the goroutine is the request, created on arrival
        lat = [marks[g][0] - born[g] for g in created]
    else:  # variant B: each worker marks taken, done, taken, done ...; the k-th taken is request k
        pairs = []
        for g in created:
            m = marks.get(g, [])
            assert len(m) % 2 == 0
            pairs += [(m[i], m[i + 1]) for i in range(0, len(m), 2)]
        pairs.sort()
        lat = [d - a for a, (_, d) in zip(arrivals, pairs)]
    assert len(lat) == len(arrivals), (len(lat), len(arrivals))
    return arrivals, lat, peak


def pool():
    variants = [("A: goroutine per request", "docs/studies/c-pergoroutine.textproto"),
                ("B: 200-worker pool", "docs/studies/c-pool.textproto")]
    rows = {}
    print(f"GOMAXPROCS=4, --cores 4, default profile, seed {SEED}; latency: arrival (A: the handler's creation, B: the "
          "ticker's marker) to the request's done marker")
    print(f"{'variant':<26} {'load':>4} {'requests':>8} {'req/s':>7} {'CPU %':>6} {'max Gs':>7} "
          f"{'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'run ms':>7}")
    for vname, path in variants:
        for load, batch in LOADS:
            with tempfile.TemporaryDirectory() as d:
                scen = os.path.join(d, os.path.basename(path))
                with open(scen, "w") as fh:
                    fh.write(scenario_at(path, batch))
                trace = os.path.join(d, "run.trace")
                out = subprocess.run([GMPSIM, "run", scen, "--procs", "4", "--cores", "4",
                                      "--seed", SEED, "--trace", trace], capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit(f"gmpsim run {path} BATCH={batch}: exit {out.returncode}\n{out.stderr}")
                arrivals, lat, peak = latencies(trace)
            util = [float(x) for x in re.findall(r"P\d+ ([\d.]+)%", out.stdout)]
            rate = (len(arrivals) - 1) / ((arrivals[-1] - arrivals[0]) / 1e9)
            lat.sort()
            r = dict(n=len(lat), rate=rate, cpu=sum(util) / len(util), peak=peak,
                     p50=percentile(lat, 50) / 1e6, p99=percentile(lat, 99) / 1e6,
                     max=lat[-1] / 1e6, run=ns_per_op(out.stdout) / 1e6)
            rows[vname, load] = r
            print(f"{vname:<26} {load:>4} {r['n']:>8} {r['rate']:>7.0f} {r['cpu']:>6.1f} {r['peak']:>7} "
                  f"{r['p50']:>7.2f} {r['p99']:>7.2f} {r['max']:>7.2f} {r['run']:>7.1f}")
    series = [(f"{v.split(':')[0]} p99", [rows[v, l]["p99"] for l, _ in LOADS]) for v, _ in variants]
    svg_lines(f"{IMAGES}/c-pool.svg" if SEED == "1" else os.devnull,
              "Request latency P99: goroutine per request vs 200 workers",
              [f"{l} ({b} per tick)" for l, b in LOADS], series, "P99 latency (ms, log scale)",
              log_y=True, note="load (requests per ~1 ms tick; 4 cores serve at most 40 per ms)")


if __name__ == "__main__":
    cmds = {"count": count, "pool": pool}
    if len(sys.argv) != 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]]()
