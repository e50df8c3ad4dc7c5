#!/usr/bin/env python3
"""What-if validation of `gmpsim replay` with real Go programs (issue 26, item 5; docs/replay.md).

Builds the programs of sim/bench/replay/whatif (pool, pipeline, fanout, mergesort) and the README's
workers test (sim/bench/replay/gotest) with Go, then for each program:

  1. measures its real wall time at each GOMAXPROCS of --procs (default 1,2), interleaved: round 1
     runs every program at every GOMAXPROCS once (pool@1 pool@2 pipeline@1 ...), round 2 again, and
     so on for --rounds rounds, so that a drift of the machine falls on every point alike; the
     table gives the median and [min-max]. The programs print their own work's wall time (from the
     start of the work to its end); the workers test, which prints none, is timed from outside
     minus the median of the same binary running no test, measured in the same rounds;
  2. traces it --traces times at each GOMAXPROCS of --trace-procs (default 1,2), interleaved the
     same way, and imports the traces (`gmpsim trace import`);
  3. replays the traces of each traced GOMAXPROCS at every GOMAXPROCS of --procs on --cores cores
     (default: the CPUs this process may use): `gmpsim replay T1 T2 T3 --procs ... --cores ...
     --jobs 1 --cpu-time C1,C2,C3 --traced-cores N` (each trace's process CPU time, which the
     program printed; the CPUs the traces ran on) where this gmpsim takes them, else one replay per
     trace and the median of their predictions;
  4. runs the hand-written scenarios (sim/scenarios/whatif-pool.textproto, whatif-fanout.textproto)
     at the same GOMAXPROCS with `gmpsim sweep`.

The table: program, the traced GOMAXPROCS, the replayed one, the real median [min-max], the
prediction, its error against the real median, the aim and whether it is met: 10% for a 1-P trace
replayed at 2 Ps and a 2-P trace at 1 P; 15% for a 2-P trace at 16 Ps (on a machine with 16 cores).
Other rows are for reading (no aim). Measure on a quiet machine: nothing else running. Each real
run is `setsid sh -c 'echo -20 > /proc/self/autogroup; exec PROGRAM'` (its own session, hence its
own autogroup, at the highest priority where the kernel lets us; without root the write fails and
the run goes on at the default).

  sim/bench/replay/whatif/run.py [--goroot /usr/lib/go-1.23] [--gmpsim build/bin/gmpsim]
      [--rounds 7] [--traces 3] [--procs 1,2] [--trace-procs 1,2] [--cores N]
      [--programs pool,pipeline,fanout,mergesort,workers] [--mode shared|pinned] [--no-hand]
      [--real-traced] [--keep DIR]
  e.g. sim/bench/replay/whatif/run.py | tee whatif.txt               (a 2-core machine)
       sim/bench/replay/whatif/run.py --procs 1,2,4,8,16              (a 16-core machine)

stdout: a header, one "raw" line per run (real and traced), the replays' own report lines, then
the table; stderr: progress. Exit status non-zero when a build, a run, an import or a replay fails.
"""

import argparse
import html
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = os.path.dirname(HERE)  # sim/bench/replay: module replaybench
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
PROGRAMS = ["pool", "pipeline", "fanout", "mergesort", "workers"]
HAND = {"pool": "whatif-pool.textproto", "fanout": "whatif-fanout.textproto"}
WRAP = 'echo -20 > /proc/self/autogroup 2>/dev/null; exec "$0" "$@"'


class Failure(Exception):
    pass


def log(msg):
    print(msg, flush=True)


def progress(msg):
    print(f"whatif: {msg}", file=sys.stderr, flush=True)


def aim_for(traced, replayed):
    """The issue's aim for a prediction from a trace at `traced` Ps to `replayed` Ps, or None."""
    if (traced, replayed) in ((1, 2), (2, 1)):
        return 10.0
    if traced == 2 and replayed == 16:
        return 15.0
    return None


def fmt_ms(x):
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def summary(vals):
    """'median [min-max]' in ms."""
    m = statistics.median(vals)
    if len(vals) == 1:
        return fmt_ms(m)
    return f"{fmt_ms(m)} [{fmt_ms(min(vals))}-{fmt_ms(max(vals))}]"


# ---- the programs --------------------------------------------------------------------------------


class Program:
    def __init__(self, name, work):
        self.name = name
        self.work = work
        self.binary = os.path.join(work, "workers.test" if name == "workers" else name)

    def argv(self, trace):
        """The command line; trace is a path or None."""
        if self.name == "workers":
            return [self.binary, "-test.run", "^TestWorkers$", "-test.count", "1"] + (
                ["-test.trace", trace] if trace else [])
        return [self.binary, trace or "-"]


def run_once(argv, procs, cwd):
    """Runs argv at GOMAXPROCS procs in its own session; returns (outside wall ns, child CPU ns, stdout)."""
    env = dict(os.environ, GOMAXPROCS=str(procs))
    env.pop("GODEBUG", None)
    out = tempfile.TemporaryFile()
    t0 = time.perf_counter_ns()
    p = subprocess.Popen(["setsid", "sh", "-c", WRAP] + argv, cwd=cwd, env=env, stdout=out,
                         stderr=subprocess.STDOUT)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter_ns() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    text = out.read().decode(errors="replace")
    if p.returncode != 0:
        raise Failure(f"{' '.join(argv)} at GOMAXPROCS {procs} failed (exit {p.returncode}):\n{text}")
    cpu = int((ru.ru_utime + ru.ru_stime) * 1e9)
    return wall, cpu, text


def measure(prog, procs, trace, cwd, baseline):
    """One run: (wall ns, cpu ns). The programs print theirs; the workers test is timed from
    outside, less baseline[procs] (the same binary running no test: start-up and exit)."""
    if prog.name == "workers":
        wall, cpu, _ = run_once(prog.argv(trace), procs, cwd)
        b = baseline.get(procs)
        if b:
            wall -= int(statistics.median(x[0] for x in b))
            cpu -= int(statistics.median(x[1] for x in b))
        return wall, max(cpu, 1)
    _, _, text = run_once(prog.argv(trace), procs, cwd)
    m = re.search(r"^whatif: wall_ns=(\d+) cpu_ns=(\d+) gomaxprocs=(\d+)$", text, re.M)
    if not m:
        raise Failure(f"{prog.name}: no 'whatif:' line in its output:\n{text}")
    if int(m.group(3)) != procs:
        raise Failure(f"{prog.name}: ran at GOMAXPROCS {m.group(3)}, not {procs}")
    return int(m.group(1)), int(m.group(2))


# ---- gmpsim --------------------------------------------------------------------------------------


def parse_virtual_time(text):
    """The sweep's 'virtual time (ms)' table: {GOMAXPROCS: ms} (the first core column)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "virtual time (ms)":
            res = {}
            for row in lines[i + 2:]:
                parts = row.split()
                if len(parts) < 2 or not parts[0].isdigit():
                    break
                try:
                    res[int(parts[0])] = float(parts[1])
                except ValueError:
                    break
            return res
    return {}


def gmpsim_run(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


class Replayer:
    """Replays traces with whatever this gmpsim offers: several traces in one replay, --cpu-time
    (each trace's process CPU time) and --traced-cores (the cores the traces ran on) where it has
    them, else one replay per trace and the median of their predictions. The forms are tried in
    that order (a gmpsim without a flag refuses it before it reads anything); the first that works
    is used for every program."""

    def __init__(self, gmpsim, cores, traced_cores, mode, work, profile=None):
        self.gmpsim = gmpsim
        self.profile = profile
        self.cores = cores
        self.traced_cores = traced_cores
        self.mode = mode
        self.work = work
        _, out, err = gmpsim_run([gmpsim, "replay", "--help"])
        self.has_mode = "--mode" in out + err
        self.form = None  # the form that worked, for the header

    def forms(self, traces, cpus):
        """(label, groups of traces replayed together, flags per group)."""
        durs = [f"{int(max(c, 1))}ns" for c in cpus]  # replay takes whole, positive ns
        tc = ["--traced-cores", str(self.traced_cores)]
        forms = []
        if len(traces) > 1:
            forms.append(("several traces, --cpu-time, --traced-cores", [traces],
                          lambda g: ["--cpu-time", ",".join(durs)] + tc))
            forms.append(("several traces", [traces], lambda g: []))
        forms.append(("one replay per trace, --cpu-time, --traced-cores", [[t] for t in traces],
                      lambda g: ["--cpu-time", durs[traces.index(g[0])]] + tc))
        forms.append(("one replay per trace", [[t] for t in traces], lambda g: []))
        return forms

    def replay(self, name, traces, cpus, procs):
        """Returns ({P: [predictions]}, report lines)."""
        forms = self.forms(traces, cpus)
        if self.form is not None:  # what worked before works again
            forms = [f for f in forms if f[0] == self.form] or forms
        errors = []
        for label, groups, flags in forms:
            preds, report, ok = {}, [], True
            for gi, group in enumerate(groups):
                out_path = os.path.join(self.work, f"{name}-{gi}.replay.textproto")
                argv = [self.gmpsim, "replay"] + group + [
                    "--procs", ",".join(map(str, procs)), "--cores", str(self.cores), "--jobs", "1",
                    "-o", out_path, "--svg", os.devnull] + flags(group)
                if self.mode and self.has_mode:
                    argv += ["--mode", self.mode]
                if self.profile:
                    argv += ["--profile", self.profile]
                rc, out, err = gmpsim_run(argv)
                vt = parse_virtual_time(out)
                if rc != 0 or not vt:
                    ok = False
                    errors.append(f"[{label}] {' '.join(argv)}: exit {rc}\n{err.strip() or out.strip()}")
                    break
                for p, ms in vt.items():
                    preds.setdefault(p, []).append(ms)
                # replay's own lines: everything before the sweep's tables, and stderr
                head = out.split("\nsweep of ")[0]
                report += [line for line in (head + "\n" + err).splitlines() if line.strip()]
            if ok:
                self.form = label
                return preds, report
        raise Failure(f"replaying {name} failed in every form this gmpsim might take:\n" + "\n".join(errors))


def hand_written(gmpsim, scenario, procs, cores, profile=None):
    """{P: ms} of the scenario swept at procs, or an error text."""
    argv = [gmpsim, "sweep", scenario, "--procs", ",".join(map(str, procs)), "--cores", str(cores),
            "--jobs", "1", "--svg", os.devnull] + (["--profile", profile] if profile else [])
    rc, out, err = gmpsim_run(argv)
    vt = parse_virtual_time(out)
    if rc != 0 or not vt:
        return (err.strip() or out.strip() or f"exit {rc}").splitlines()[0]
    return vt


def scenario_unit(path):
    """The unit cost (ns) a hand-written scenario assumes: its '# whatif-unit-ns: X' line."""
    try:
        with open(path) as f:
            m = re.search(r"^# whatif-unit-ns: ([0-9.]+)", f.read(), re.M)
        return float(m.group(1)) if m else None
    except OSError:
        return None


# ---- the run -------------------------------------------------------------------------------------


def int_list(text, flag):
    try:
        vals = [int(x) for x in text.split(",") if x]
    except ValueError:
        raise Failure(f"{flag}: a comma-separated list of integers, not {text!r}")
    if not vals or any(v < 1 or v > 1024 for v in vals):
        raise Failure(f"{flag}: GOMAXPROCS values from 1 to 1024")
    return sorted(set(vals))


def write_svg(path, rows, title):
    """A chart of the what-if rows: per row the real runs' spread around their median (grey) and
    the replay's error (a dot), in %, against the aim (dashed lines)."""
    width, left, right, top, row_h = 760, 190, 30, 50, 22
    lo = min([-15.0] + [min(r["err"], r["lo"]) - 2 for r in rows])
    hi = max([15.0] + [max(r["err"], r["hi"]) + 2 for r in rows])
    height = top + row_h * len(rows) + 40
    x = lambda v: left + (v - lo) / (hi - lo) * (width - left - right)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="20" font-size="14">{html.escape(title)}</text>',
           f'<text x="{left}" y="38" fill="#555">replay error against the real median, % (grey: the real '
           f'runs\' min to max; dashed: the aim)</text>']
    for v in range(-int(-lo // 10) * 10, int(hi) + 1, 10):
        out.append(f'<line x1="{x(v):.1f}" y1="{top - 6}" x2="{x(v):.1f}" y2="{height - 34}" stroke="#ddd"/>')
        out.append(f'<text x="{x(v):.1f}" y="{height - 20}" text-anchor="middle" fill="#555">{v:+d}%</text>')
    for i, r in enumerate(rows):
        y = top + i * row_h + row_h / 2
        if r["aim"]:
            for v in (-r["aim"], r["aim"]):
                out.append(f'<line x1="{x(v):.1f}" y1="{y - 9}" x2="{x(v):.1f}" y2="{y + 9}" stroke="#888" '
                           f'stroke-dasharray="3,2"/>')
        out.append(f'<rect x="{x(r["lo"]):.1f}" y="{y - 5}" width="{max(x(r["hi"]) - x(r["lo"]), 1):.1f}" '
                   f'height="10" fill="#ccc"/>')
        ok = r["aim"] is None or abs(r["err"]) <= r["aim"]
        out.append(f'<circle cx="{x(r["err"]):.1f}" cy="{y}" r="5" fill="{"#2a7" if ok else "#d33"}"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{html.escape(r["label"])}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--goroot", default="/usr/lib/go-1.23")
    ap.add_argument("--gmpsim", default=os.path.join(ROOT, "build", "bin", "gmpsim"))
    ap.add_argument("--rounds", type=int, default=7, help="real runs per program and GOMAXPROCS")
    ap.add_argument("--traces", type=int, default=3, help="traces per program and traced GOMAXPROCS")
    ap.add_argument("--procs", default="1,2", help="GOMAXPROCS measured and replayed")
    ap.add_argument("--trace-procs", default="1,2", help="GOMAXPROCS traced")
    ap.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)),
                    help="the replay's cores (default: the CPUs this process may use)")
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--mode", choices=["shared", "pinned"], help="replay's --mode, where it has one")
    ap.add_argument("--svg", help="write a chart of the what-if rows (the replay's error against the real spread)")
    ap.add_argument("--profile", help="the cost profile of the replays and the hand-written runs "
                    "(default: gmpsim's default; sim/cost/profiles/epyc-vm-fitted.textproto is this VM's)")
    ap.add_argument("--no-hand", action="store_true", help="skip the hand-written scenarios")
    ap.add_argument("--real-traced", action="store_true",
                    help="time the real runs with tracing on (to a scratch file), as the traces ran")
    ap.add_argument("--keep", help="keep the binaries, traces and derived scenarios in this folder")
    a = ap.parse_args()
    procs = int_list(a.procs, "--procs")
    tprocs = int_list(a.trace_procs, "--trace-procs")
    names = [n for n in a.programs.split(",") if n]
    for n in names:
        if n not in PROGRAMS:
            raise Failure(f"--programs: {n!r} is none of {', '.join(PROGRAMS)}")
    if a.rounds < 1 or a.traces < 1 or a.cores < 1:
        raise Failure("--rounds, --traces and --cores at least 1")
    go = os.path.join(a.goroot, "bin", "go")
    if not os.access(go, os.X_OK):
        raise Failure(f"{go}: no Go toolchain there")
    if not os.access(a.gmpsim, os.X_OK):
        raise Failure(f"{a.gmpsim}: build gmpsim first (ninja -C build gmpsim)")
    ncpu = len(os.sched_getaffinity(0))
    if max(procs + tprocs) > ncpu:
        progress(f"note: GOMAXPROCS up to {max(procs + tprocs)} on {ncpu} CPUs: the real runs above "
                 f"{ncpu} share cores, and traces taken so are not a fair input (docs/traces.md)")

    work = a.keep or tempfile.mkdtemp(prefix="gmpsim-whatif-")
    os.makedirs(work, exist_ok=True)
    work = os.path.abspath(work)
    try:
        env = dict(os.environ, GOCACHE=os.path.join(work, "gocache"), GOPATH=os.path.join(work, "gopath"),
                   GOFLAGS="-mod=mod", GOTOOLCHAIN="local", GOPROXY="off", CGO_ENABLED="0")
        progress("building the programs")
        pkgs = [f"./whatif/{n}" for n in names if n != "workers"] + ["./whatif/calibrate"]
        r = subprocess.run([go, "build", "-o", work + "/"] + pkgs, cwd=MODULE, env=env)
        if r.returncode != 0:
            raise Failure("building the programs failed")
        if "workers" in names:
            r = subprocess.run([go, "test", "-c", "-o", os.path.join(work, "workers.test"), "./gotest"],
                               cwd=MODULE, env=env)
            if r.returncode != 0:
                raise Failure("building the workers test failed")
        progs = [Program(n, work) for n in names]
        goversion = subprocess.run([go, "version"], capture_output=True, text=True).stdout.strip()
        unit = float(re.search(r"unit_ns=([0-9.]+)",
                               run_once([os.path.join(work, "calibrate")], 1, work)[2]).group(1))
        model = "?"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        loadavg = lambda: " ".join(open("/proc/loadavg").read().split()[:3])
        replayer = Replayer(a.gmpsim, a.cores, ncpu, a.mode, work, a.profile)
        log(f"# gmpsim what-if validation (sim/bench/replay/whatif/run.py): {goversion}; {ncpu} CPUs, {model}; profile {a.profile or 'default'}")
        log(f"# programs {','.join(names)}; real GOMAXPROCS {a.procs}, {a.rounds} rounds interleaved"
            f"{' (traced runs)' if a.real_traced else ''}; traced at {a.trace_procs}, {a.traces} each; "
            f"replayed on {a.cores} cores")
        log(f"# one unit of work (common.Work) takes {unit:.1f} ns of CPU here")
        log(f"# load average at start: {loadavg()}")

        # 1. real runs, interleaved
        real = {}  # (name, P) -> [wall ns]
        baseline = {}  # P -> [(wall, cpu)] of the workers test binary running no test
        total = a.rounds * len(progs) * len(procs)
        began, done = time.time(), 0
        scratch = os.path.join(work, "scratch.trace") if a.real_traced else None
        for rnd in range(1, a.rounds + 1):
            for prog in progs:
                for p in procs:
                    if prog.name == "workers":
                        w, c, _ = run_once([prog.binary, "-test.run", "^$", "-test.count", "1"], p, work)
                        baseline.setdefault(p, []).append((w, c))
                        log(f"raw real program=workers-baseline procs={p} round={rnd} wall_ns={w} cpu_ns={c}")
                    wall, cpu = measure(prog, p, scratch, work, baseline)
                    real.setdefault((prog.name, p), []).append(wall)
                    log(f"raw real program={prog.name} procs={p} round={rnd} wall_ns={wall} cpu_ns={cpu}")
                    done += 1
                    left = (time.time() - began) / done * (total - done)
                    progress(f"[{done}/{total}] real round {rnd} {prog.name}@{p}: {wall / 1e6:.1f} ms "
                             f"({left:.0f} s left)")

        # 2. traces, interleaved, and their import
        traces = {}  # (name, P) -> [(gmp path, cpu ns, wall ns)]
        total = a.traces * len(progs) * len(tprocs)
        began, done = time.time(), 0
        for t in range(1, a.traces + 1):
            for prog in progs:
                for p in tprocs:
                    raw = os.path.join(work, f"{prog.name}-p{p}-{t}.trace")
                    wall, cpu = measure(prog, p, raw, work, baseline)
                    gmp = raw[:-len(".trace")] + ".gmp"
                    rc, out, err = gmpsim_run([a.gmpsim, "trace", "import", raw, "-o", gmp])
                    if rc != 0:
                        raise Failure(f"gmpsim trace import {raw}: exit {rc}\n{err.strip()}")
                    traces.setdefault((prog.name, p), []).append((gmp, cpu, wall))
                    log(f"raw trace program={prog.name} procs={p} n={t} wall_ns={wall} cpu_ns={cpu}")
                    done += 1
                    progress(f"[{done}/{total}] trace {t} {prog.name}@{p}: {wall / 1e6:.1f} ms, "
                             f"CPU {cpu / 1e6:.1f} ms")
        log(f"# load average after the runs: {loadavg()}")

        # 3. replays
        preds = {}  # (name, traced P) -> {replayed P: [ms]}
        for prog in progs:
            for p in tprocs:
                ts = traces[(prog.name, p)]
                progress(f"replaying {prog.name}'s {len(ts)} traces at GOMAXPROCS {p}")
                res, report = replayer.replay(f"{prog.name}-p{p}", [x[0] for x in ts], [x[1] for x in ts], procs)
                preds[(prog.name, p)] = res
                for line in report:
                    log(f"# {prog.name}@{p}: {line}")
        log(f"# replay form: {replayer.form}" + (f", --mode {a.mode}" if a.mode and replayer.has_mode else "")
            + (f" (this gmpsim has no --mode: {a.mode} not applied)" if a.mode and not replayer.has_mode else ""))

        # 4. hand-written scenarios
        hand = {}
        if not a.no_hand:
            for prog in progs:
                if prog.name not in HAND:
                    continue
                path = os.path.join(ROOT, "sim", "scenarios", HAND[prog.name])
                progress(f"running {HAND[prog.name]}")
                hand[prog.name] = hand_written(a.gmpsim, path, procs, a.cores, a.profile)
                assumed = scenario_unit(path)
                if assumed:
                    log(f"# {HAND[prog.name]} assumes {assumed:.0f} ns a unit; measured here {unit:.1f} "
                        f"({(unit - assumed) / assumed * 100:+.1f}%)")

        # the table
        log("# real: median [min-max] of the rounds, ms; replay: the prediction, ms ([min-max] when one "
            "replay per trace); error: replay against the real median; aim: the issue's bound")
        hdr = f"{'program':<22} {'traced':>6} {'replay':>6} {'real ms':>24} {'replay ms':>24} {'error':>8} {'aim':>5} {'ok':>4}"
        log(hdr)
        log("-" * len(hdr))
        met = missed = 0
        chart = []
        for prog in progs:
            for tp in tprocs:
                for rp in procs:
                    r = real[(prog.name, rp)]
                    pv = preds[(prog.name, tp)].get(rp)
                    if not pv:
                        log(f"{prog.name:<22} {tp:>6} {rp:>6} {summary([x / 1e6 for x in r]):>24} "
                            f"{'(none)':>24}")
                        continue
                    med = statistics.median(r) / 1e6
                    pm = statistics.median(pv)
                    err = (pm - med) / med * 100
                    aim = aim_for(tp, rp)
                    ok = "-" if aim is None else ("yes" if abs(err) <= aim else "NO")
                    met += ok == "yes"
                    missed += ok == "NO"
                    if tp != rp:
                        chart.append({"label": f"{prog.name} {tp}P -> {rp}P", "err": err, "aim": aim,
                                      "lo": (min(r) / 1e6 - med) / med * 100, "hi": (max(r) / 1e6 - med) / med * 100})
                    log(f"{prog.name:<22} {tp:>6} {rp:>6} {summary([x / 1e6 for x in r]):>24} "
                        f"{summary(pv):>24} {err:>+7.1f}% {('-' if aim is None else f'{aim:.0f}%'):>5} {ok:>4}")
            if prog.name in hand:
                h = hand[prog.name]
                label = f"{prog.name} (hand-written)"
                if isinstance(h, str):
                    log(f"{label:<22} {'-':>6} {'-':>6} {'':>24} {'error':>24}  {h}")
                    continue
                for rp in procs:
                    med = statistics.median(real[(prog.name, rp)]) / 1e6
                    if rp not in h:
                        continue
                    err = (h[rp] - med) / med * 100
                    rr = real[(prog.name, rp)]
                    chart.append({"label": f"{prog.name} by hand, {rp}P", "err": err, "aim": None,
                                  "lo": (min(rr) / 1e6 - med) / med * 100, "hi": (max(rr) / 1e6 - med) / med * 100})
                    log(f"{label:<22} {'-':>6} {rp:>6} {summary([x / 1e6 for x in real[(prog.name, rp)]]):>24} "
                        f"{fmt_ms(h[rp]):>24} {err:>+7.1f}% {'-':>5} {'-':>4}")
        log(f"# aims met: {met} of {met + missed}")
        if a.svg:
            write_svg(a.svg, chart, f"gmpsim replay what-ifs against real runs ({ncpu} CPUs, profile "
                      f"{os.path.basename(a.profile) if a.profile else 'default'})")
            log(f"# chart: {a.svg}")
        log("# the traces: wall ms of the traced runs (median [min-max]) and their CPU time / wall time "
            "(above 1 at 1 P: the runtime's own threads; below the Ps' share: waiting for a core)")
        for prog in progs:
            for p in tprocs:
                ts = traces[(prog.name, p)]
                ratios = ", ".join(f"{c / w:.2f}" for _, c, w in ts if w > 0)
                log(f"#   {prog.name}@{p}: {summary([w / 1e6 for _, _, w in ts])} ms; CPU/wall {ratios}")
        if a.keep:
            progress(f"kept everything in {work}")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print(f"run.py: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
