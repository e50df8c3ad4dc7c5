# Hand-made chart for docs/studies/d-claims.md, claim 1: runqsteal calls per run, from
# docs/studies/d-claims.sh's output (run of 2026-12-01).
import os

data = {1: (0, 0, 0), 2: (606, 349, 675), 4: (3852, 3543, 3210)}
names = ("port (gmpsim, default profile)", "real Go 1.23", "real Go 1.19")
colors = ("#1f77b4", "#ff7f0e", "#2ca02c")
W, H, L, B, T = 720, 360, 70, 300, 50
ymax = 4000
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       '<rect width="100%" height="100%" fill="white"/>',
       f'<text x="{W//2}" y="24" text-anchor="middle" font-size="15">runtime.runqsteal calls, 2,400 requests '
       '(d-requests / TestServe)</text>',
       f'<line x1="{L}" y1="{B}" x2="{W-240}" y2="{B}" stroke="black"/>',
       f'<line x1="{L}" y1="{T}" x2="{L}" y2="{B}" stroke="black"/>']
for v in range(0, ymax + 1, 1000):
    y = B - (B - T) * v / ymax
    out.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W-240}" y2="{y:.1f}" stroke="#ddd"/>')
    out.append(f'<text x="{L-6}" y="{y+4:.1f}" text-anchor="end">{v}</text>')
gw = (W - 180 - L) / 3
for i, (p, vals) in enumerate(data.items()):
    x0 = L + i * gw + 20
    for j, v in enumerate(vals):
        h = (B - T) * v / ymax
        x = x0 + j * 34
        out.append(f'<rect x="{x:.1f}" y="{B-h:.1f}" width="30" height="{h:.1f}" fill="{colors[j]}"/>')
        out.append(f'<text x="{x+15:.1f}" y="{B-h-4:.1f}" text-anchor="middle" font-size="10">{v}</text>')
    out.append(f'<text x="{x0+49:.1f}" y="{B+18}" text-anchor="middle">{p}</text>')
out.append(f'<text x="{(L+W-240)//2}" y="{B+40}" text-anchor="middle">GOMAXPROCS</text>')
for j, n in enumerate(names):
    y = T + 10 + j * 20
    out.append(f'<rect x="{W-230}" y="{y-9}" width="12" height="12" fill="{colors[j]}"/>')
    out.append(f'<text x="{W-212}" y="{y+1}">{n}</text>')
out.append('</svg>')
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "images", "d-runqsteal.svg")
with open(path, "w") as f:
    f.write("\n".join(out) + "\n")
