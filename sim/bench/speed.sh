#!/usr/bin/env bash
# Wall time against simulated time for the scheduler-bound shapes: for each shape and GOMAXPROCS,
# prints virtual time, wall time, wall/virtual, CPU time (user+sys) and CPU/virtual, events, events
# per CPU second and peak RSS. On a shared machine the CPU time is the steadier figure: wall time
# also counts the time spent waiting for a core.
# Usage: speed.sh [PROCS...]   (default 1 4 16 64 256; GMPSIM chooses the binary; SPEED_REPEAT=N
# runs each point N times and keeps the least wall and CPU time)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${GMPSIM:-$root/build/bin/gmpsim}
procs=("$@"); [ ${#procs[@]} -eq 0 ] && procs=(1 4 16 64 256)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sed 's/100000/30000/g' "$root/sim/bench/scenarios/spawnstorm.textproto" > "$tmp/spawnstorm30k.textproto"
printf '%-14s %5s %11s %7s %6s %7s %6s %11s %8s %8s\n' shape procs virtual_ms wall_s ratio cpu_s ratio events Mev/cpu-s rss_MiB
for s in "$root/sim/scenarios/pingpong.textproto" "$root/sim/bench/scenarios/chanring.textproto" \
         "$root/sim/bench/scenarios/gosched.textproto" "$root/sim/bench/scenarios/spawnstorm.textproto" \
         "$tmp/spawnstorm30k.textproto" "$root/sim/scenarios/goroutines.textproto"; do
  for p in "${procs[@]}"; do
    name=$(basename "$s" .textproto)
    : > "$tmp/times"
    for ((k = 0; k < ${SPEED_REPEAT:-1}; k++)); do
      /usr/bin/time -f '%e %M %U %S' -o "$tmp/time" timeout ${SPEED_TIMEOUT:-300} "$bin" run "$s" --procs "$p" > "$tmp/out" 2>/dev/null
      tail -1 "$tmp/time" >> "$tmp/times"
    done
    line=$(grep '^ended' "$tmp/out")
    if [ -z "$line" ]; then printf '%-14s %5s %12s\n' "$name" "$p" failed; continue; fi
    python3 - "$name" "$p" "$tmp/times" "$line" <<'PY'
import re, sys
name, p, times, line = sys.argv[1:]
runs = [l.split() for l in open(times) if l.strip()]
wall = min(float(r[0]) for r in runs)  # the least disturbed of SPEED_REPEAT runs
rss = max(int(r[1]) for r in runs)
cpu = min(float(r[2]) + float(r[3]) for r in runs)
m = re.search(r'at ([0-9.]+)(ms|us|s|ns) virtual, (\d+) scheduler events', line)
v = float(m.group(1)) * {'s': 1e3, 'ms': 1, 'us': 1e-3, 'ns': 1e-6}[m.group(2)]
ev = int(m.group(3)); wall = float(wall)
print(f"{name:<14} {p:>5} {v:11.3f} {wall:7.2f} {wall*1e3/v:6.2f} {cpu:7.2f} {cpu*1e3/v:6.2f} {ev:11d} {ev/max(cpu,1e-2)/1e6:8.1f} {int(rss)/1024:8.1f}")
PY
  done
done
