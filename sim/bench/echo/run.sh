#!/bin/bash
# Measures the real Go echo server of this directory (server/echo_server.go) under the open-loop
# load generator (loadgen/loadgen.go) over loopback: first the server's capacity at GOMAXPROCS=1
# (closed loop, CONNS requests outstanding, the median of three 1 s runs), then, for server
# GOMAXPROCS 1, 2 and 4, a low and a high rate (LOW_PCT and HIGH_PCT of that capacity), each point
# a fresh server measured for SECONDS after a 0.5 s warm-up. Prints one table line per point; see
# README.md. Exits non-zero if a build, a server or a load generator run fails or a reply is lost.
#
#   sim/bench/echo/run.sh [GOROOT] [SECONDS]
#   e.g. nice -n 10 sim/bench/echo/run.sh /usr/lib/go-1.23 3
#
# Environment: CONNS (16), SIZE (64 bytes), WORK_US (15: the CPU work per request, calibrated
# here), LOADGEN_PROCS (the load generator's GOMAXPROCS, 1), LOW_PCT (20), HIGH_PCT (50), RATES
# ("low high" in requests/s: skips the capacity measurement).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
goroot=${1:-/usr/lib/go-1.23}
secs=${2:-3}
conns=${CONNS:-16}
size=${SIZE:-64}
work_us=${WORK_US:-15}
lg_procs=${LOADGEN_PROCS:-1}
low_pct=${LOW_PCT:-20}
high_pct=${HIGH_PCT:-50}
[ -x "$goroot/bin/go" ] || { echo "run.sh: $goroot/bin/go: no Go toolchain there" >&2; exit 1; }
[[ $secs =~ ^[0-9]+$ && $secs -ge 1 ]] || { echo "run.sh: SECONDS must be a whole number >= 1" >&2; exit 1; }

work=$(mktemp -d)
server_pid=
load_pid=
# Ends process $1 if it is still running: SIGTERM, and SIGKILL if it has not gone within 2 s.
end() {
  local i
  kill "$1" 2>/dev/null || return 0
  for i in $(seq 40); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.05
  done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  local pid
  for pid in $load_pid $server_pid; do
    end "$pid"
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

(cd "$here" && GOCACHE="$work/cache" GOFLAGS= GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 \
  "$goroot/bin/go" build -o "$work/" ./server ./loadgen)

# Starts a server with GOMAXPROCS=$1 and sets server_pid and addr.
start_server() {
  rm -f "$work/addr" # so that no earlier server's address is read while the new one starts
  GOMAXPROCS=$1 "$work/server" -work "$iters" -size "$size" >"$work/addr" 2>"$work/server.err" &
  server_pid=$!
  local i
  addr=
  for i in $(seq 100); do
    addr=$(head -n 1 "$work/addr" 2>/dev/null || true)
    [[ $addr == 127.0.0.1:* ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; echo "run.sh: the server died" >&2; exit 1; }
    sleep 0.05
  done
  [[ $addr == 127.0.0.1:* ]] || { echo "run.sh: the server gave no address within 5 s" >&2; exit 1; }
}
stop_server() {
  kill "$server_pid"
  local rc=0
  wait "$server_pid" || rc=$?
  server_pid=
  [ "$rc" = 0 ] || { cat "$work/server.err" >&2; echo "run.sh: the server exited with $rc" >&2; exit 1; }
}
# One load generator run at rate $1 (0: closed loop) for $2 seconds against $addr; sets line to its
# key=value line. (In the background, so that a signal ends the script, and the trap it, at once.)
load() {
  GOMAXPROCS=$lg_procs timeout $(($2 + 10)) "$work/loadgen" -addr "$addr" -conns "$conns" -size "$size" \
    -rate "$1" -duration "${2}s" -warmup 500ms >"$work/line" &
  load_pid=$!
  local rc=0
  wait "$load_pid" || rc=$?
  load_pid=
  [ "$rc" = 0 ] || { echo "run.sh: the load generator failed at rate $1 (exit $rc)" >&2; exit 1; }
  line=$(cat "$work/line")
}
# The value of key $1 in the key=value line $2.
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

iters=$("$work/server" -calibrate "${work_us}us")
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "# $("$goroot/bin/go" version); $(nproc) CPUs, $cpu"
echo "# $conns connections, ${size}-byte requests and replies, cpuWork($iters) per request (${work_us} us calibrated)"
echo "# load generator GOMAXPROCS=$lg_procs; ${secs} s per point after a 0.5 s warm-up"
echo "# load average at start: $(cut -d ' ' -f 1-3 /proc/loadavg)"
if [ -n "${RATES:-}" ]; then
  read -r low high <<<"$RATES"
  echo "# rates given: $low and $high requests/s"
else
  start_server 1
  caps=()
  for i in 1 2 3; do
    load 0 1
    caps+=("$(field achieved "$line")")
  done
  stop_server
  cap=$(printf '%s\n' "${caps[@]}" | sort -n | sed -n 2p)
  low=$(( (cap * low_pct / 100 + 50) / 100 * 100 ))
  high=$(( (cap * high_pct / 100 + 50) / 100 * 100 ))
  echo "# capacity at server GOMAXPROCS=1 (closed loop, $conns outstanding): $cap replies/s," \
    "the median of ${caps[*]}"
  echo "# rates: ${low_pct}% = $low and ${high_pct}% = $high requests/s"
fi
printf '%10s %8s %9s %9s %9s %9s %9s %9s\n' gomaxprocs target achieved p50_us p99_us p99.9_us lag_p50 lag_p99
for procs in 1 2 4; do
  for rate in "$low" "$high"; do
    start_server "$procs"
    load "$rate" "$secs"
    stop_server
    printf '%10s %8s %9s %9s %9s %9s %9s %9s\n' "$procs" "$rate" "$(field achieved "$line")" \
      "$(field p50 "$line")" "$(field p99 "$line")" "$(field p999 "$line")" \
      "$(field lag_p50 "$line")" "$(field lag_p99 "$line")"
  done
done
echo "# load average at end: $(cut -d ' ' -f 1-3 /proc/loadavg)"
