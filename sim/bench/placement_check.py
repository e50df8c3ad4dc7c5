#!/usr/bin/env python3
"""Sets the simulator's OS placement beside what Linux really did: for each benchmark of
sim/calibration/suite and sim/calibration/heldout that has a scenario (BenchmarkX.textproto beside
it), at each -cpu, records the real benchmark under `perf sched record` (schedrec.py), simulates
the scenario at --procs = -cpu with `gmpsim run --events`, and prints the four figures of the
`os placement:` line side by side.

  sim/bench/placement_check.py [--go GO] [--gmpsim GMPSIM] [--profile P] [--cpu 1,2]
                               [--bench REGEX] [--benchtime 0.5s] [--markdown] [--saved DIR [--refresh]]

Figures (schedrec.py defines them as gmpsim does): wake-ups per second (the line's count over the
run's span: the real recording's, the simulation's virtual time), on_prev (the fraction of wake-ups
that ran on their previous CPU), migrations per second, and ms per second during which a thread
of the process waited for a CPU while a CPU idled. A figure is marked `*` when real and simulated
differ by more than 20% of the real figure and by more than the figure's floor (FLOORS: 10
wake-ups/s, 10 migrations/s, 1 ms/s), so that two figures near zero agree; on_prev is marked when
the fractions differ by more than 20 points. The ratio is simulated / real (`inf` where the real
figure is 0 and the simulated is not, `-` where both are 0 or one is missing).

Each package's test binary is built once (`go test -c`) in a temporary folder, where perf's data
stays too; -test.benchtime (default 0.5s) makes each recording about 0.5-1 s. With --saved DIR the
real figures (with extras: the wait for a CPU after a wake-up by sleep length, after a preemption,
and where wake-ups ran by the state of the previous CPU) are stored as DIR/BenchmarkX-cpuN.json and
reused by later runs (no perf needed);
--refresh records again. Progress goes to stderr. Exit status: 0, 1 if a benchmark could not be
recorded or simulated, 2 if perf is missing or may not record.
"""
import argparse
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

import schedrec

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SETS = ("suite", "heldout")

# The figures, in table order: (key, heading, format).
METRICS = (("wakeups_per_s", "wake-ups/s", "%.0f"), ("on_prev", "on prev CPU", "%.2f"),
           ("migrations_per_s", "migrations/s", "%.0f"), ("idle_wait_ms_per_s", "idle-wait ms/s", "%.1f"))
REL = 0.20            # a relative difference over this is marked
ON_PREV_POINTS = 0.20  # on_prev: a difference of the fractions over this is marked
FLOORS = {"wakeups_per_s": 10.0, "migrations_per_s": 10.0, "idle_wait_ms_per_s": 1.0}


def differs(metric, real, sim):
    """True if real and simulated differ enough to mark, None if either is missing."""
    if real is None or sim is None:
        return None
    if metric == "on_prev":
        return abs(sim - real) > ON_PREV_POINTS
    return abs(sim - real) > max(REL * abs(real), FLOORS[metric])


def ratio(real, sim):
    """sim / real: inf where real is 0 and sim is not, nan where both are 0, None if one is missing."""
    if real is None or sim is None:
        return None
    if real == 0:
        return math.nan if sim == 0 else math.inf
    return sim / real


def with_rates(m):
    """m (schedrec's metrics) plus wakeups_per_s over its span."""
    out = dict(m)
    span = m.get("span_s")
    out["wakeups_per_s"] = m["wakeups"] / span if span else None
    return out


def benchmarks(pattern):
    """[(set, name)] of the benchmarks with a scenario beside them whose name matches pattern."""
    found = []
    for s in SETS:
        folder = os.path.join(ROOT, "sim", "calibration", s)
        for f in sorted(os.listdir(folder)):
            if not f.endswith("_test.go"):
                continue
            with open(os.path.join(folder, f)) as src:
                for name in re.findall(r"^func (Benchmark\w+)\(b \*testing\.B\)", src.read(), re.M):
                    if os.path.exists(os.path.join(folder, name + ".textproto")) and re.search(pattern, name):
                        found.append((s, name))
    return found


def progress(msg):
    print("placement_check: " + msg, file=sys.stderr, flush=True)


class Builder:
    """Builds each set's test binary once, from a copy of its package in the work folder."""

    def __init__(self, go, work):
        self.go, self.work, self.built = go, work, {}

    def binary(self, s):
        if s not in self.built:
            pkg = os.path.join(self.work, s)
            os.makedirs(pkg)
            src = os.path.join(ROOT, "sim", "calibration", s)
            for f in os.listdir(src):
                if f.endswith(".go") or f in ("go.mod", "go.sum"):
                    shutil.copy(os.path.join(src, f), pkg)
            progress("building %s's test binary with %s" % (s, self.go))
            out = os.path.join(pkg, s + ".test")
            env = dict(os.environ, GOFLAGS="", GOTOOLCHAIN="local")
            r = subprocess.run([self.go, "test", "-c", "-o", out, "."], cwd=pkg, env=env, capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError("go test -c in %s failed:\n%s" % (s, r.stderr[-2000:]))
            self.built[s] = out
        return self.built[s]


def record_real(builder, s, name, cpu, benchtime, work):
    exe = builder.binary(s)
    tag = "%s-cpu%d" % (name, cpu)
    progress("recording %s -test.cpu %d under perf" % (name, cpu))
    tgid, comm, out, script, warnings = schedrec.record(
        [exe, "-test.run", "^$", "-test.bench", "^%s$" % name, "-test.cpu", str(cpu), "-test.benchtime", benchtime],
        work, cwd=os.path.dirname(exe), name=tag)
    a = schedrec.analyse(script, tgid, comm)
    for f in (script, os.path.join(work, tag + ".data")):
        os.remove(f)
    bench = re.search(r"^%s(?:-\d+)?\s+(\d+)\s+([0-9.]+) ns/op" % name, out, re.M)
    skipped = "--- SKIP" in out or bench is None
    for w in warnings:
        progress("%s: perf: %s" % (tag, w))
    return {
        "benchmark": name, "set": s, "cpu": cpu, "benchtime": benchtime, "go": builder.go,
        "kernel": platform.release(), "skipped": skipped,
        "iterations": int(bench.group(1)) if bench else None, "ns_per_op": float(bench.group(2)) if bench else None,
        "metrics": a.metrics(), "wake_event": a.wake_event, "threads": len(a.threads),
        "extras": a.extras(),
        "perf_warnings": warnings,
    }


def simulate(gmpsim, s, name, cpu, profile):
    scenario = os.path.join(ROOT, "sim", "calibration", s, name + ".textproto")
    progress("simulating %s --procs %d --profile %s" % (name, cpu, profile))
    r = subprocess.run([gmpsim, "run", scenario, "--procs", str(cpu), "--profile", profile, "--events"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("gmpsim run %s --procs %d failed (status %d):\n%s" % (name, cpu, r.returncode, r.stderr[-2000:]))
    return schedrec.parse_sim(r.stdout)


def cell(v, f):
    if v is None:
        return "-"
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    if isinstance(v, float) and math.isnan(v):
        return "-"
    return f % v


def table(rows, markdown):
    head = ["benchmark", "-cpu"]
    for _, h, _ in METRICS:
        head += [h + " real", "sim", "ratio" if h != "on prev CPU" else "diff pts"]
    head.append("note")
    body = []
    for r in rows:
        line = [r["name"], str(r["cpu"])]
        for key, _, f in METRICS:
            real, sim = r["real"].get(key) if r["real"] else None, r["sim"].get(key) if r["sim"] else None
            if key == "on_prev":
                cmp = cell(None if real is None or sim is None else 100 * (sim - real), "%+.0f")
            else:
                cmp = cell(ratio(real, sim), "%.2f")
            d = differs(key, real, sim)
            line += [cell(real, f), cell(sim, f), cmp + (" *" if d else "")]
        line.append(r["note"])
        body.append(line)
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(l) + " |" for l in body]
    else:
        widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
        fmt = lambda l: "  ".join((x.ljust(w) if i in (0, len(l) - 1) else x.rjust(w)) for i, (x, w) in enumerate(zip(l, widths))).rstrip()
        out = [fmt(head)] + [fmt(l) for l in body]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--go", default="/usr/lib/go-1.23/bin/go", help="the Go command that builds the benchmarks")
    ap.add_argument("--gmpsim", default=os.path.join(ROOT, "build", "bin", "gmpsim"))
    ap.add_argument("--profile", default="epyc-vm-fitted", help="gmpsim's --profile (a name or a file)")
    ap.add_argument("--cpu", default="1,2", help="comma-separated -test.cpu values (gmpsim --procs)")
    ap.add_argument("--bench", default=".", help="a regular expression the benchmark's name must contain a match of")
    ap.add_argument("--benchtime", default="0.5s", help="-test.benchtime of the recorded runs")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table (for docs)")
    ap.add_argument("--saved", metavar="DIR", help="store the real figures here as JSON and reuse them")
    ap.add_argument("--refresh", action="store_true", help="with --saved: record again even if saved")
    args = ap.parse_args()
    try:
        cpus = [int(c) for c in args.cpu.split(",")]
        if any(c < 1 for c in cpus):
            raise ValueError
    except ValueError:
        ap.error("--cpu: a comma-separated list of positive integers, not %r" % args.cpu)
    try:
        re.compile(args.bench)
    except re.error as e:
        ap.error("--bench: %s" % e)
    if not os.access(args.gmpsim, os.X_OK):
        ap.error("--gmpsim: %s is not an executable (build it: ninja -C build gmpsim)" % args.gmpsim)
    todo = benchmarks(args.bench)
    if not todo:
        ap.error("--bench: no benchmark with a scenario matches %r" % args.bench)

    saved = {}
    need = []
    for s, name in todo:
        for cpu in cpus:
            path = os.path.join(args.saved, "%s-cpu%d.json" % (name, cpu)) if args.saved else None
            if path and not args.refresh and os.path.exists(path):
                with open(path) as f:
                    saved[(name, cpu)] = json.load(f)
            else:
                need.append((s, name, cpu, path))
    if need:
        if not os.access(args.go, os.X_OK):
            ap.error("--go: %s is not an executable Go command" % args.go)
        try:
            schedrec.check_perf()
        except schedrec.PerfUnavailable as e:
            print("placement_check: %s" % e, file=sys.stderr)
            return 2
        if args.saved:
            os.makedirs(args.saved, exist_ok=True)

    failed = False
    work = tempfile.mkdtemp(prefix="placement-check-")
    try:
        builder = Builder(args.go, work)
        for s, name, cpu, path in need:
            try:
                rec = record_real(builder, s, name, cpu, args.benchtime, work)
            except RuntimeError as e:
                progress("%s -cpu %d: %s" % (name, cpu, e))
                failed = True
                continue
            saved[(name, cpu)] = rec
            if path:
                with open(path, "w") as f:
                    json.dump(rec, f, indent=1, sort_keys=True)
                    f.write("\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    rows = []
    for s, name in todo:
        for cpu in cpus:
            rec = saved.get((name, cpu))
            note = []
            real = with_rates(rec["metrics"]) if rec and not rec["skipped"] else None
            if rec is None:
                note.append("not recorded")
            elif rec["skipped"]:
                note.append("real run skipped at this -cpu")
            sim = None
            if real is not None:
                try:
                    m = simulate(args.gmpsim, s, name, cpu, args.profile)
                except RuntimeError as e:
                    progress(str(e))
                    failed = True
                    m = None
                    note.append("simulation failed")
                else:
                    if m is None:
                        note.append("gmpsim printed no `os placement:` line")
                    else:
                        sim = with_rates(m)
            rows.append({"name": name, "cpu": cpu, "real": real, "sim": sim, "note": "; ".join(note)})
    print(table(rows, args.markdown))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
