"""Reading `gmpsim run`'s text output, for sim/bench/containers/compare.py and
docs/studies/g-automaxprocs.py.

A run of a file with several processes prints a block per process; this reader takes the lines of
the named process's block (from a line that names it, "process NAME" or "NAME:", up to the next
process's) when the output has such blocks, and the whole output otherwise. From it: the
`requests:` line's p50, p99, p99.9 (in us) and requests/s (a server's: arrival to answer), or, for a
process that only dials (a load generator), its `round trips:` line's (write to answer read, and
round trips/s), and cpu.stat's nr_periods,
nr_throttled and throttled time (ms) from its `cpu.stat: nr_periods N nr_throttled N
throttled_usec N` line.
"""

import re

UNITS = {"ns": 1e-3, "us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6}


def us(text):
    """A Go duration as gmpsim prints it (62ns, 44.852us, 1.2ms, 3.5s, 0s) in microseconds."""
    m = re.fullmatch(r"([\d.]+)(ns|us|µs|ms|s)", text.strip().rstrip(",;"))
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


def block(out, process):
    """The lines of process's block, or all lines if the output has no per-process blocks."""
    lines = out.splitlines()
    if not process:
        return lines
    head = re.compile(r"^\W*process\s+(\S+?)[:\s]|^\W*process\s+(\S+)$|^(\S+):\s*$")
    starts = []
    for i, line in enumerate(lines):
        m = head.match(line)
        if m:
            starts.append((i, next(g for g in m.groups() if g)))
    mine = [k for k, (_, name) in enumerate(starts) if name.strip('"') == process]
    if not mine:
        return lines
    k = mine[0]
    end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
    return lines[starts[k][0]:end]


def figures(out, process=None):
    """{'rps','p50','p99','p999','nr_periods','nr_throttled','throttled_ms'} from process's block;
    a figure the output lacks is None."""
    f = dict.fromkeys(["rps", "p50", "p99", "p999", "nr_periods", "nr_throttled", "throttled_ms"])
    for line in block(out, process):
        if re.match(r"^\s*(requests|round trips): ", line):
            for key, name in (("p50", "p50"), ("p99", "p99"), ("p999", r"p99\.9")):
                m = re.search(rf"\b{name}\s+(\S+)", line)
                if m:
                    f[key] = us(m.group(1))
            m = re.search(r"([\d.]+) (?:requests|round trips)/s", line)
            if m:
                f["rps"] = float(m.group(1))
        m = re.search(r"nr_periods[\s=:]+(\d+)", line)
        if m:
            f["nr_periods"] = int(m.group(1))
        m = re.search(r"nr_throttled[\s=:]+(\d+)", line)
        if m:
            f["nr_throttled"] = int(m.group(1))
        m = re.search(r"throttled_usec[\s=:]+(\d+)", line)
        if m:
            f["throttled_ms"] = int(m.group(1)) / 1e3
    return f
