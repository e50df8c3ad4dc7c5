#!/usr/bin/env python3
"""The real echo server of sim/bench/echo inside a cgroup with a CPU quota (docs/containers.md).

For each quota (CPUs; cpu.cfs_quota_us over cpu.cfs_period_us, or cgroup v2's cpu.max) and each
server GOMAXPROCS, a fresh cgroup and a fresh server process that joins it before Go starts (so
its runtime sees the quota from the first instruction); the load generator (GOMAXPROCS 1) runs
outside the cgroup. Two loads per point: closed loop (16 requests outstanding: the capacity under
the quota) and open loop at --rate requests/s (below every quota's capacity: the tails). The
cgroup's cpu.stat is read just before and just after the load generator runs, so nr_periods,
nr_throttled and throttled time cover its 0.5 s warm-up, its window and its drain. The grid is
run --reps times in the same order (A B A B: drift and neighbours spread over every point), and
the table gives, per point, the median and the [min-max] of the repetitions. Then one closed-loop
run per quota with GOMAXPROCS unset, to show the toolchain's own default inside the cgroup (Go
1.23 takes the CPUs the affinity mask allows and ignores the quota; Go 1.25 added the quota).

Every cgroup it makes is removed on exit, failure and SIGINT/SIGTERM included; it exits non-zero
if a build, a server, a load generator run or a cgroup operation fails or a reply is lost. Needs
root and a cpu controller (v1 at /sys/fs/cgroup/cpu, or v2 with "cpu" in cgroup.controllers).
It is a benchmark, not a test: nothing in .ci runs it.

  sim/bench/containers/run.py [--goroot /usr/lib/go-1.23] [--seconds 2] [--reps 3]
      [--quotas 0.5,1,1.5] [--procs 1,2] [--rate 5500] [--period-us 100000]
  e.g. sim/bench/containers/run.py | tee sim/bench/containers/measurements-go1.23.txt

The measurement file's "raw" lines are one repetition each; sim/bench/containers/compare.py reads
them (and nothing else) and sets the simulation beside them.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ECHO = os.path.normpath(os.path.join(HERE, "..", "echo"))


class Failure(Exception):
    pass


def log(msg):
    print(msg, flush=True)


# ---- cgroups -------------------------------------------------------------------------------------


def find_cgroup_root():
    """Returns (version, path) of a mounted cpu controller: v1's cpu hierarchy first, else v2's."""
    v1, v2 = None, None
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 4:
                continue
            mnt, fstype, opts = parts[1], parts[2], parts[3].split(",")
            if fstype == "cgroup" and "cpu" in opts and v1 is None:
                if os.path.exists(os.path.join(mnt, "cpu.cfs_quota_us")):
                    v1 = mnt
            elif fstype == "cgroup2" and v2 is None:
                try:
                    with open(os.path.join(mnt, "cgroup.controllers")) as c:
                        if "cpu" in c.read().split():
                            v2 = mnt
                except OSError:
                    pass
    if v1:
        return 1, v1
    if v2:
        return 2, v2
    raise Failure("no cpu cgroup controller is mounted (v1 'cpu' or v2 with cpu in cgroup.controllers)")


def write(path, text):
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise Failure(f"writing {text!r} to {path}: {e}")


class Cgroup:
    """One child cgroup with a quota; removed by remove() (and by the script's exit)."""

    made = []  # every cgroup made and not yet removed, for the exit path

    def __init__(self, version, root, name, quota_cpus, period_us):
        self.version = version
        self.path = os.path.join(root, name)
        quota_us = int(round(quota_cpus * period_us))
        if version == 2:
            # A v2 child gets the cpu controller only if its parent hands it down.
            sub = os.path.join(root, "cgroup.subtree_control")
            with open(sub) as f:
                if "cpu" not in f.read().split():
                    write(sub, "+cpu")
        try:
            os.mkdir(self.path)
        except OSError as e:
            raise Failure(f"mkdir {self.path}: {e}")
        Cgroup.made.append(self.path)
        if version == 1:
            write(os.path.join(self.path, "cpu.cfs_period_us"), str(period_us))
            write(os.path.join(self.path, "cpu.cfs_quota_us"), str(quota_us))
        else:
            write(os.path.join(self.path, "cpu.max"), f"{quota_us} {period_us}")

    def stat(self):
        """cpu.stat's nr_periods, nr_throttled and the throttled time in ms."""
        vals = {}
        with open(os.path.join(self.path, "cpu.stat")) as f:
            for line in f:
                k, _, v = line.partition(" ")
                vals[k] = int(v)
        if "throttled_time" in vals:  # v1: ns
            thr = vals["throttled_time"] / 1e6
        else:  # v2: us
            thr = vals.get("throttled_usec", 0) / 1e3
        return vals.get("nr_periods", 0), vals.get("nr_throttled", 0), thr

    @staticmethod
    def remove_path(path):
        # The server has exited by now, but its exit may still be in flight: retry briefly.
        for _ in range(100):
            try:
                os.rmdir(path)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)
        else:
            raise Failure(f"cannot remove cgroup {path}")
        if path in Cgroup.made:
            Cgroup.made.remove(path)

    def remove(self):
        Cgroup.remove_path(self.path)


# ---- processes -----------------------------------------------------------------------------------

running = []  # processes started and not yet reaped, for the exit path


def end(p):
    """SIGTERM, SIGKILL after 2 s; reaps p."""
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(2)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in running:
        running.remove(p)


def start_server(bin_dir, cgroup, procs, iters, size):
    """A server that moves itself into cgroup before exec; returns (process, addr, its GOMAXPROCS)."""
    env = dict(os.environ)
    env.pop("GOMAXPROCS", None)
    if procs != "unset":
        env["GOMAXPROCS"] = str(procs)
    procs_file = os.path.join(cgroup.path, "cgroup.procs")

    def join():
        with open(procs_file, "w") as f:
            f.write(str(os.getpid()))

    err = tempfile.TemporaryFile()
    p = subprocess.Popen([os.path.join(bin_dir, "server"), "-work", str(iters), "-size", str(size)],
                         stdout=subprocess.PIPE, stderr=err, env=env, preexec_fn=join)
    running.append(p)
    addr = p.stdout.readline().decode().strip()
    if not addr.startswith("127.0.0.1:"):
        end(p)
        err.seek(0)
        raise Failure(f"the server gave no address: {err.read().decode().strip()}")
    # Its stderr's first line says "echo_server: go1.x, GOMAXPROCS=N, ...".
    gmp = "?"
    for _ in range(100):
        err.seek(0)
        text = err.read().decode()
        if "GOMAXPROCS=" in text:
            gmp = text.split("GOMAXPROCS=")[1].split(",")[0]
            break
        time.sleep(0.01)
    with open(procs_file) as f:
        if str(p.pid) not in f.read().split():
            end(p)
            raise Failure(f"the server (pid {p.pid}) is not in {cgroup.path}")
    return p, addr, gmp, err


def stop_server(p, err):
    p.terminate()
    try:
        rc = p.wait(5)
    except subprocess.TimeoutExpired:
        end(p)
        raise Failure("the server did not exit on SIGTERM")
    running.remove(p)
    if rc != 0:
        err.seek(0)
        raise Failure(f"the server exited with {rc}: {err.read().decode().strip()}")


def load(bin_dir, addr, conns, size, rate, secs, lg_procs):
    env = dict(os.environ, GOMAXPROCS=str(lg_procs))
    p = subprocess.Popen([os.path.join(bin_dir, "loadgen"), "-addr", addr, "-conns", str(conns),
                          "-size", str(size), "-rate", str(rate), "-duration", f"{secs}s",
                          "-warmup", "500ms"], stdout=subprocess.PIPE, env=env)
    running.append(p)
    try:
        out, _ = p.communicate(timeout=secs + 15)
    except subprocess.TimeoutExpired:
        end(p)
        raise Failure(f"the load generator did not finish (rate {rate})")
    running.remove(p)
    if p.returncode != 0:
        raise Failure(f"the load generator failed at rate {rate} (exit {p.returncode}): {out.decode().strip()}")
    return dict(kv.split("=", 1) for kv in out.decode().split())


# ---- the run -------------------------------------------------------------------------------------


def fmt_num(x):
    if float(x).is_integer() or abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.1f}"


def summary(vals):
    """'median [min-max]'."""
    m = statistics.median(vals)
    if len(vals) == 1:
        return fmt_num(m)
    return f"{fmt_num(m)} [{fmt_num(min(vals))}-{fmt_num(max(vals))}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--goroot", default="/usr/lib/go-1.23")
    ap.add_argument("--seconds", type=int, default=2, help="measurement window per run (after 0.5 s warm-up)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quotas", default="0.5,1,1.5", help="CPUs")
    ap.add_argument("--procs", default="1,2", help="server GOMAXPROCS values")
    ap.add_argument("--rate", type=int, default=5500, help="open-loop requests/s (0: closed loop only)")
    ap.add_argument("--period-us", type=int, default=100000)
    ap.add_argument("--conns", type=int, default=16)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--work-us", type=int, default=15)
    ap.add_argument("--loadgen-procs", type=int, default=1)
    ap.add_argument("--no-default", action="store_true", help="skip the GOMAXPROCS-unset runs")
    a = ap.parse_args()
    try:
        quotas = [float(q) for q in a.quotas.split(",")]
        procs = [int(p) for p in a.procs.split(",")]
    except ValueError:
        raise Failure("--quotas and --procs are comma-separated numbers")
    if a.seconds < 1 or a.reps < 1 or a.rate < 0 or not (1000 <= a.period_us <= 1000000):
        raise Failure("--seconds and --reps at least 1, --rate not negative, --period-us 1000 to 1000000")
    ncpu = len(os.sched_getaffinity(0))
    for q in quotas:
        if q * a.period_us < 1000 or q > ncpu:
            raise Failure(f"quota {q}: below 1 ms per period or above the {ncpu} CPUs")
    go = os.path.join(a.goroot, "bin", "go")
    if not os.access(go, os.X_OK):
        raise Failure(f"{go}: no Go toolchain there")
    if os.geteuid() != 0:
        raise Failure("creating a cgroup needs root")
    version, root = find_cgroup_root()

    work = tempfile.mkdtemp(prefix="gmpsim-containers-")
    try:
        env = dict(os.environ, GOCACHE=os.path.join(work, "cache"), GOFLAGS="", GOPROXY="off",
                   GOTOOLCHAIN="local", CGO_ENABLED="0")
        r = subprocess.run([go, "build", "-o", work + "/", "./server", "./loadgen"], cwd=ECHO, env=env)
        if r.returncode != 0:
            raise Failure("building the echo server and load generator failed")
        iters = int(subprocess.run([os.path.join(work, "server"), "-calibrate", f"{a.work_us}us"],
                                   capture_output=True, check=True).stdout)
        goversion = subprocess.run([go, "version"], capture_output=True, text=True).stdout.strip()
        model = "?"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        loadavg = lambda: " ".join(open("/proc/loadavg").read().split()[:3])
        log(f"# {goversion}; {ncpu} CPUs, {model}")
        log(f"# cgroup v{version} cpu controller at {root}; period {a.period_us} us; "
            f"the load generator (GOMAXPROCS={a.loadgen_procs}) outside the cgroup")
        log(f"# {a.conns} connections, {a.size}-byte requests and replies, cpuWork({iters}) per request "
            f"({a.work_us} us calibrated)")
        log(f"# each run: a fresh cgroup and server; {a.seconds} s after a 0.5 s warm-up; loads: closed loop "
            f"({a.conns} outstanding)" + (f" and open loop at {a.rate} requests/s" if a.rate else ""))
        log(f"# {a.reps} repetitions of the whole grid in the same order; cpu.stat over the load generator's run")
        log(f"# load average at start: {loadavg()}")
        loads = ["closed"] + ([str(a.rate)] if a.rate else [])
        rows = {}  # (quota, procs, load) -> list of dicts
        seq = 0

        def point(rep, q, p, ld):
            nonlocal seq
            seq += 1
            cg = Cgroup(version, root, f"gmpsim-{os.getpid()}-{seq}", q, a.period_us)
            try:
                srv, addr, gmp, err = start_server(work, cg, p, iters, a.size)
                try:
                    before = cg.stat()
                    res = load(work, addr, a.conns, a.size, 0 if ld == "closed" else int(ld), a.seconds,
                               a.loadgen_procs)
                    after = cg.stat()
                finally:
                    if srv in running:
                        stop_server(srv, err)
            finally:
                cg.remove()
            d = {"achieved": float(res["achieved"]), "p50": float(res["p50"]), "p99": float(res["p99"]),
                 "p999": float(res["p999"]), "lag_p99": float(res["lag_p99"]),
                 "nr_periods": after[0] - before[0], "nr_throttled": after[1] - before[1],
                 "throttled_ms": after[2] - before[2], "gomaxprocs": gmp}
            log(f"raw rep={rep} quota={q:g} procs={p} load={ld} gomaxprocs={gmp} achieved={d['achieved']:.0f} "
                f"p50={d['p50']:.1f} p99={d['p99']:.1f} p999={d['p999']:.1f} lag_p99={d['lag_p99']:.1f} "
                f"nr_periods={d['nr_periods']} nr_throttled={d['nr_throttled']} "
                f"throttled_ms={d['throttled_ms']:.1f}")
            return d

        for rep in range(1, a.reps + 1):
            for q in quotas:
                for p in procs:
                    for ld in loads:
                        rows.setdefault((q, p, ld), []).append(point(rep, q, p, ld))
        defaults = {}
        if not a.no_default:
            for q in quotas:
                defaults[q] = point(1, q, "unset", "closed")

        log(f"# load average at end: {loadavg()}")
        log("# medians over the repetitions, [min-max]; latencies in us; lag_p99: the generator's own send delay "
            "(open loop; of the size of p99: the tail is the generator's); throttled: nr_throttled of nr_periods")
        hdr = (f"{'quota':>5} {'gmp':>5} {'load':>6} {'achieved/s':>20} {'p50_us':>20} {'p99_us':>22} "
               f"{'p99.9_us':>10} {'lag_p99':>8} {'periods':>8} {'throttled':>18} {'thr_ms':>8}")
        log(hdr)
        for (q, p, ld), rs in rows.items():
            col = lambda k: [r[k] for r in rs]
            log(f"{q:>5g} {p:>5} {ld:>6} {summary(col('achieved')):>20} {summary(col('p50')):>20} "
                f"{summary(col('p99')):>22} {fmt_num(statistics.median(col('p999'))):>10} "
                f"{fmt_num(statistics.median(col('lag_p99'))):>8} "
                f"{statistics.median(col('nr_periods')):>8.0f} {summary(col('nr_throttled')):>18} "
                f"{statistics.median(col('throttled_ms')):>8.0f}")
        for q, d in defaults.items():
            log(f"{q:>5g} {'unset':>5} {'closed':>6} {fmt_num(d['achieved']):>20} {fmt_num(d['p50']):>20} "
                f"{fmt_num(d['p99']):>22} {fmt_num(d['p999']):>10} {fmt_num(d['lag_p99']):>8} {d['nr_periods']:>8} "
                f"{d['nr_throttled']:>18} {d['throttled_ms']:>8.0f}   # GOMAXPROCS unset: the runtime chose "
                f"{d['gomaxprocs']}")
    finally:
        subprocess.run(["rm", "-rf", work])


def on_signal(signum, _frame):
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    rc = 0
    try:
        main()
    except Failure as e:
        print(f"run.py: {e}", file=sys.stderr)
        rc = 1
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    finally:
        for p in list(running):
            end(p)
        for path in list(Cgroup.made):
            try:
                Cgroup.remove_path(path)
            except Failure as e:
                print(f"run.py: {e}", file=sys.stderr)
                rc = rc or 1
    sys.exit(rc)
