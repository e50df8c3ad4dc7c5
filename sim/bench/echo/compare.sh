#!/bin/bash
# The real echo server of this directory beside its simulation (docs/network.md): runs the
# matching scenarios, sim/scenarios/echo-loopback-5500.textproto (the low rate) and
# echo-loopback-13800.textproto (the high rate), at GOMAXPROCS 1, 2 and 4 with `gmpsim run`, and
# prints one table: per GOMAXPROCS and rate, the real runs' target rate, achieved throughput and
# latency percentiles (every run in the measurements file, separated by "/") beside the
# simulated ones. The real figures are read from the measurements file (run.sh's tables under
# "## run N" headers); the lower target of a run at a GOMAXPROCS is its low rate. Builds nothing
# and runs no Go. Six simulations of 3.5 s of virtual time each: about 1 s on this 2-vCPU VM
# (each is stopped after 300 s of wall time).
#
#   sim/bench/echo/compare.sh [GMPSIM] [MEASUREMENTS]
#   e.g. sim/bench/echo/compare.sh ./build/bin/gmpsim sim/bench/echo/measurements-go1.23.txt
#
# Environment: CORES (2: the VM's vCPUs; a list such as "2 1" prints a table per value), PROFILE
# (epyc-vm-fitted), SEED (1). Latencies in microseconds. The simulator reports every request of
# its 3.5 s (it cannot leave out a warm-up); the real figures leave out the 0.5 s warm-up.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
gmpsim=${1:-./build/bin/gmpsim}
meas=${2:-$here/measurements-go1.23.txt}
cores_list=${CORES:-2}
profile=${PROFILE:-epyc-vm-fitted}
seed=${SEED:-1}
declare -A scenario=([low]=$root/sim/scenarios/echo-loopback-5500.textproto
                     [high]=$root/sim/scenarios/echo-loopback-13800.textproto)
if [ ! -x "$gmpsim" ]; then
  echo "compare.sh: $gmpsim: no gmpsim binary there (build it: ninja -C build gmpsim)" >&2
  exit 1
fi
[ -r "$meas" ] || { echo "compare.sh: $meas: cannot read the measurements" >&2; exit 1; }

# The real rows, one line each: gomaxprocs class run target achieved p50 p99 p99.9.
real=$(awk '
  /^## run / { run = $3; next }
  /^#/ { next }
  NF == 8 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ {
    if (run == "") run = 1
    k = run " " $1
    n[k]++
    row[k, n[k]] = $0
    if (!(k in order)) { order[k] = ++keys; key[keys] = k }
  }
  END {
    for (i = 1; i <= keys; i++) {
      k = key[i]
      if (n[k] != 2) { printf "run %s: %d rows at GOMAXPROCS %s, not 2\n", k, n[k], k > "/dev/stderr"; exit 1 }
      split(row[k, 1], a); split(row[k, 2], b)
      lo = a[2] + 0 <= b[2] + 0 ? 1 : 2
      for (j = 1; j <= 2; j++) {
        split(row[k, j], f)
        split(k, rk, " ")
        printf "%s %s %s %s %s %s %s %s\n", f[1], (j == lo ? "low" : "high"), rk[1], f[2], f[3], f[4], f[5], f[6]
      }
    }
  }' "$meas")
[ -n "$real" ] || { echo "compare.sh: $meas: no measurement rows found" >&2; exit 1; }

# The real figures of one point, the runs joined by "/": field F (4 target, 5 achieved, 6 p50,
# 7 p99, 8 p99.9) of GOMAXPROCS P at rate class C.
real_of() {
  awk -v p="$1" -v c="$2" -v f="$3" '
    $1 == p && $2 == c { s = s (s == "" ? "" : "/") $f }
    END { print (s == "" ? "-" : s) }' <<<"$real"
}

# Runs one simulation and prints "requests/s p50 p99 p99.9" (latencies in us).
simulate() {
  local out rc
  rc=0
  out=$(timeout 300 "$gmpsim" run "$1" --procs "$2" --cores "$3" --profile "$profile" --seed "$seed") || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "compare.sh: gmpsim run $1 --procs $2 --cores $3 failed (status $rc)" >&2
    printf '%s\n' "$out" >&2
    return 1
  fi
  awk '
    # A Go duration as gmpsim prints it (62ns, 44.852us, 1.2ms, 3.5s) in microseconds.
    function us(d,   v) {
      v = d; sub(/[a-zµ]+$/, "", v)
      if (d ~ /ns$/) return v / 1000
      if (d ~ /(us|µs)$/) return v
      if (d ~ /ms$/) return v * 1000
      if (d ~ /s$/) return v * 1e6
      return "?"
    }
    /^requests: / {
      for (i = 1; i <= NF; i++) {
        if ($i == "p50") p50 = us($(i + 1))
        if ($i == "p99") p99 = us($(i + 1))
        if ($i == "p99.9") p999 = us($(i + 1))
        if ($i == "requests/s") rate = $(i - 1)
      }
      found = 1
    }
    END {
      if (!found) exit 1
      printf "%s %.1f %.1f %.1f\n", rate, p50, p99, p999
    }' <<<"$out" || { echo "compare.sh: no request figures in the output of gmpsim run $1" >&2; return 1; }
}

echo "# real: $(basename "$meas"), runs separated by /;" \
  "simulated: $(basename "$gmpsim") run, profile $profile, seed $seed"
echo "# latencies in us; real: the 3 s after a 0.5 s warm-up; simulated: all 3.5 s"
row() { printf '%4s %-4s %-11s %-13s %9s | %-11s %5s | %-13s %5s | %-14s %5s\n' "$@"; }
for cores in $cores_list; do
  echo "# simulated cores: $cores"
  row gmp rate real_target real_achieved sim_req/s real_p50 sim real_p99 sim real_p99.9 sim
  for p in 1 2 4; do
    for c in low high; do
      read -r srate s50 s99 s999 < <(simulate "${scenario[$c]}" "$p" "$cores") || exit 1
      row "$p" "$c" \
        "$(real_of "$p" "$c" 4)" "$(real_of "$p" "$c" 5)" "$srate" \
        "$(real_of "$p" "$c" 6)" "$s50" "$(real_of "$p" "$c" 7)" "$s99" "$(real_of "$p" "$c" 8)" "$s999"
    done
  done
done
