#!/usr/bin/env bash
# Wall time against simulated time for the scheduler-bound shapes: for each shape and GOMAXPROCS,
# prints virtual time, wall time, wall/virtual, CPU time (user+sys) and CPU/virtual, events, events
# per CPU second and peak RSS. Then memory: what a P adds (KiB per P, from a one-computation
# program at 1 to 4096 Ps on as many cores), and every shape at 4096 Ps on 4096 cores. On a shared
# machine the CPU time is the steadier figure: wall time also counts the time spent waiting for a
# core.
#
# The shapes: issue 28's five (ping-pong, a ring of 64 goroutines passing a token over unbuffered
# channels, a Gosched pair, a storm of 1,000,000 goroutines started and waited for, 100,000
# goroutines parked at once on one channel), then the 100k and 30k spawn storms and the 10k
# goroutines of goroutines.textproto. Sizes are the scenario files' (100k round trips, 10k laps,
# 200k Gosched calls): small enough that the default run takes a few minutes on a 2-core VM; the
# figures worth comparing are ratios and rates, which these sizes already show.
#
# Usage: speed.sh [PROCS...]   (default 1 4 16 64 256 1024; GMPSIM chooses the binary;
# SPEED_REPEAT=N runs each point N times and keeps the least wall and CPU time; SPEED_CORES=equal
# gives each run as many cores as Ps, instead of the profile's machine; SPEED_MEM_PROCS=N measures
# the memory lines at N Ps instead of 4096, and 0 leaves them out; SPEED_TIMEOUT=S bounds a run)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${GMPSIM:-$root/build/bin/gmpsim}
procs=("$@"); [ ${#procs[@]} -eq 0 ] && procs=(1 4 16 64 256 1024)
mem_procs=${SPEED_MEM_PROCS:-4096}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sed 's/100000/30000/g' "$root/sim/bench/scenarios/spawnstorm.textproto" > "$tmp/spawnstorm30k.textproto"
sed 's/100000/1000000/g' "$root/sim/bench/scenarios/spawnstorm.textproto" > "$tmp/spawnstorm1m.textproto"
shapes=("$root/sim/scenarios/pingpong.textproto" "$root/sim/bench/scenarios/chanring.textproto"
        "$root/sim/bench/scenarios/gosched.textproto" "$tmp/spawnstorm1m.textproto"
        "$root/sim/bench/scenarios/parked.textproto" "$root/sim/bench/scenarios/spawnstorm.textproto"
        "$tmp/spawnstorm30k.textproto" "$root/sim/scenarios/goroutines.textproto")

# run FILE PROCS CORES: runs gmpsim SPEED_REPEAT times, leaving the time lines in $tmp/times and
# the last run's "ended" line in $tmp/ended (empty if the run failed). CORES 0: the profile's.
run() {
  local cores=()
  [ "$3" != 0 ] && cores=(--cores "$3")
  : > "$tmp/times"
  for ((k = 0; k < ${SPEED_REPEAT:-1}; k++)); do
    /usr/bin/time -f '%e %M %U %S' -o "$tmp/time" timeout "${SPEED_TIMEOUT:-300}" \
      "$bin" run "$1" --procs "$2" "${cores[@]}" > "$tmp/out" 2>/dev/null
    tail -1 "$tmp/time" >> "$tmp/times"
  done
  grep '^ended' "$tmp/out" > "$tmp/ended"
}

# row NAME PROCS: the table's line for the runs that run() just made.
row() {
  if [ ! -s "$tmp/ended" ]; then printf '%-14s %5s %12s\n' "$1" "$2" failed; return; fi
  python3 - "$1" "$2" "$tmp/times" "$(cat "$tmp/ended")" <<'PY'
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
}

header() {
  printf '%-14s %5s %11s %7s %6s %7s %6s %11s %8s %8s\n' shape procs virtual_ms wall_s ratio cpu_s ratio events Mev/cpu-s rss_MiB
}

header
for s in "${shapes[@]}"; do
  for p in "${procs[@]}"; do
    cores=0; [ "${SPEED_CORES:-}" = equal ] && cores=$p
    run "$s" "$p" "$cores"
    row "$(basename "$s" .textproto)" "$p"
  done
done

[ "$mem_procs" = 0 ] && exit 0
# Memory. What a P costs: a program of one computation at 1, 64, 256, 1024 and mem_procs Ps, each
# on as many cores; KiB/P is the peak RSS's growth over 1 P per added P. Then every shape at
# mem_procs Ps on mem_procs cores, in the table's columns. (A shape's peak RSS at 1 P is no
# baseline for it: a storm at 1 P makes all its goroutines before any runs, at more Ps they run
# and exit as they are made.)
echo
printf '%s\n' "memory: one computation at N Ps on N cores" "procs  rss_MiB    KiB/P"
printf 'func { name: "main" op { compute { iterations: 10 } } }\n' > "$tmp/one.textproto"
rss1=""
for p in 1 64 256 1024 "$mem_procs"; do
  [ "$p" -gt "$mem_procs" ] && continue
  run "$tmp/one.textproto" "$p" "$p"
  if [ ! -s "$tmp/ended" ]; then printf '%5s   failed\n' "$p"; continue; fi
  rss=$(awk '{print $2}' "$tmp/times" | sort -n | tail -1)
  [ -z "$rss1" ] && rss1=$rss
  awk -v p="$p" -v r="$rss" -v r1="$rss1" 'BEGIN { printf "%5d %8.1f %8.2f\n", p, r / 1024, (p > 1 ? (r - r1) / (p - 1) : 0) }'
  [ "$p" = "$mem_procs" ] && break
done
echo
echo "every shape at $mem_procs Ps on $mem_procs cores"
header
for s in "${shapes[@]}"; do
  run "$s" "$mem_procs" "$mem_procs"
  row "$(basename "$s" .textproto)" "$mem_procs"
done
