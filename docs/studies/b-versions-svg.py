#!/usr/bin/env python3
# Writes docs/studies/images/b-versions.svg: BenchmarkRDMASendHog's ns/op at GOMAXPROCS=1, measured
# by Go version beside the simulation (docs/studies/b-busypoll.md). A hand-made chart: every number
# below was printed by a command, named in its comment.
#
#   python3 docs/studies/b-versions-svg.py > docs/studies/images/b-versions.svg

BARS = [
    # (label, ns/op, low, high, kind). low/high: the spread drawn as a whisker, or None.
    # Recorded (docs/figures.md, "The same loop sharing its P with a CPU-bound goroutine"): the
    # median of 3 runs of sim/bench/busypoll/run.sh GOROOT 1000000 3, an earlier session on this VM;
    # the whisker spans that run and the earlier run of 3 given there in parentheses.
    ("1.19.8", 2239, None, None, "recorded"),
    ("1.23.5", 2270, None, None, "recorded"),
    ("1.24.13", 2220, None, None, "recorded"),
    ("1.26.0", 3392, 3392, 3593, "recorded"),
    ("1.27rc2", 3635, 3185, 3635, "recorded"),
    # Simulated, epyc-vm profile, today: the mean of seeds 1-10 and their range, from
    # gmpsim sweep sim/scenarios/busypollhog.textproto --procs 1,2,4 --cores 2 --seeds 10
    #     --profile epyc-vm --jobs 1          (with and without --asyncpreemptoff)
    ("sim", 2081, 1596, 2602, "simulated"),
    ("sim, async-\npreemptoff", 1652, 1514, 1842, "simulated"),
]
LINK = 1337  # the emulated link's rate: one 64 KB message per 1,337 ns
COLOURS = {"recorded": "#1f77b4", "simulated": "#ff7f0e"}

W, H = 720, 440
X0, X1, Y0, Y1 = 80, 600, 380, 50  # plot area: left, right, bottom, top
YMAX = 4000


def y(v):
    return Y0 - (Y0 - Y1) * v / YMAX


out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" '
       'font-size="12">', '<rect width="100%" height="100%" fill="white"/>',
       f'<text x="{W // 2}" y="24" text-anchor="middle" font-size="15">'
       'BenchmarkRDMASendHog, GOMAXPROCS=1: real Go by version and the simulation</text>']
for v in range(0, YMAX + 1, 500):
    out.append(f'<text x="{X0 - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
    out.append(f'<line x1="{X0}" y1="{y(v):.1f}" x2="{X1}" y2="{y(v):.1f}" stroke="#ddd"/>')
out.append(f'<line x1="{X0}" y1="{Y0}" x2="{X1}" y2="{Y0}" stroke="black"/>')
out.append(f'<line x1="{X0}" y1="{Y1}" x2="{X0}" y2="{Y0}" stroke="black"/>')
out.append(f'<text transform="rotate(-90)" x="{-(Y0 + Y1) // 2}" y="20" text-anchor="middle">ns/op</text>')

slot = (X1 - X0) / len(BARS)
for i, (label, v, lo, hi, kind) in enumerate(BARS):
    cx = X0 + slot * (i + 0.5)
    bw = slot * 0.6
    out.append(f'<rect x="{cx - bw / 2:.1f}" y="{y(v):.1f}" width="{bw:.1f}" height="{Y0 - y(v):.1f}" '
               f'fill="{COLOURS[kind]}"/>')
    out.append(f'<text x="{cx:.1f}" y="{y(max(v, hi or 0)) - 6:.1f}" text-anchor="middle">{v:,}</text>')
    if lo is not None:
        out.append(f'<line x1="{cx:.1f}" y1="{y(lo):.1f}" x2="{cx:.1f}" y2="{y(hi):.1f}" stroke="black"/>')
        for e in (lo, hi):
            out.append(f'<line x1="{cx - 6:.1f}" y1="{y(e):.1f}" x2="{cx + 6:.1f}" y2="{y(e):.1f}" stroke="black"/>')
    for k, part in enumerate(label.split("\n")):
        out.append(f'<text x="{cx:.1f}" y="{Y0 + 16 + 14 * k}" text-anchor="middle">{part}</text>')

out.append(f'<line x1="{X0}" y1="{y(LINK):.1f}" x2="{X1}" y2="{y(LINK):.1f}" stroke="black" '
           'stroke-dasharray="5,4"/>')
out.append(f'<text x="{X1 + 4}" y="{y(LINK) + 4:.1f}">link rate</text>')
for k, (kind, colour) in enumerate(COLOURS.items()):
    out.append(f'<rect x="{X1 + 4}" y="{64 + 20 * k}" width="14" height="12" fill="{colour}"/>')
    out.append(f'<text x="{X1 + 22}" y="{74 + 20 * k}">{kind}</text>')
out.append(f'<text x="{(X0 + X1) // 2}" y="{H - 8}" text-anchor="middle">Go version (real, median of 3 runs of '
           '1,000,000 sends) or simulation (epyc-vm, mean of 10 seeds)</text>')
out.append("</svg>")
print("\n".join(out))
