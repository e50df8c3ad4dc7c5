#!/usr/bin/env bash
# Wall time against simulated time for the scheduler-bound shapes: for each shape and GOMAXPROCS,
# prints virtual time, wall time, wall/virtual, events, events per wall second and peak RSS.
# Usage: speed.sh [PROCS...]   (default 1 4 16 64 256; GMPSIM chooses the binary)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${GMPSIM:-$root/build/bin/gmpsim}
procs=("$@"); [ ${#procs[@]} -eq 0 ] && procs=(1 4 16 64 256)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sed 's/100000/30000/g' "$root/sim/bench/scenarios/spawnstorm.textproto" > "$tmp/spawnstorm30k.textproto"
printf '%-14s %5s %12s %9s %8s %12s %10s %8s\n' shape procs virtual_ms wall_s ratio events Mev/s rss_MiB
for s in "$root/sim/scenarios/pingpong.textproto" "$root/sim/bench/scenarios/chanring.textproto" \
         "$root/sim/bench/scenarios/gosched.textproto" "$root/sim/bench/scenarios/spawnstorm.textproto" \
         "$tmp/spawnstorm30k.textproto" "$root/sim/scenarios/goroutines.textproto"; do
  for p in "${procs[@]}"; do
    name=$(basename "$s" .textproto)
    /usr/bin/time -f '%e %M' -o "$tmp/time" timeout ${SPEED_TIMEOUT:-300} "$bin" run "$s" --procs "$p" > "$tmp/out" 2>/dev/null
    line=$(grep '^ended' "$tmp/out")
    if [ -z "$line" ]; then printf '%-14s %5s %12s\n' "$name" "$p" failed; continue; fi
    read -r wall rss < <(tail -1 "$tmp/time")
    python3 - "$name" "$p" "$wall" "$rss" "$line" <<'PY'
import re, sys
name, p, wall, rss, line = sys.argv[1:]
m = re.search(r'at ([0-9.]+)(ms|us|s|ns) virtual, (\d+) scheduler events', line)
v = float(m.group(1)) * {'s': 1e3, 'ms': 1, 'us': 1e-3, 'ns': 1e-6}[m.group(2)]
ev = int(m.group(3)); wall = float(wall)
print(f"{name:<14} {p:>5} {v:12.3f} {wall:9.2f} {wall*1e3/v:8.2f} {ev:12d} {ev/max(wall,1e-3)/1e6:10.1f} {int(rss)/1024:8.1f}")
PY
  done
done
