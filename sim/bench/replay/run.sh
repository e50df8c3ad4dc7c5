#!/usr/bin/env bash
# Replays real Go programs: builds the three programs here (CPU-bound, a channel pipeline, system
# calls) with a Go toolchain, traces each at GOMAXPROCS 1, 2 and 4, imports the traces
# (gmpsim trace import), replays each at its own GOMAXPROCS (gmpsim replay) and prints the replay's
# virtual time against the trace's span. docs/traces.md, "replay", has the figures.
# Usage: sim/bench/replay/run.sh [GOROOT (default /usr/lib/go-1.23)] [PROCS (default 1,2,4)]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
goroot="${1:-/usr/lib/go-1.23}"
procs="${2:-1,2,4}"
cores="$(nproc)"  # the machine the traces ran on: the replay gets as many cores
gmpsim="$root/build/bin/gmpsim"
[ -x "$gmpsim" ] || { echo "run.sh: build gmpsim first ($gmpsim)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GOCACHE="$work/cache" GOPATH="$work/gopath" GOFLAGS=-mod=mod GOTOOLCHAIN=local
printf '%-10s %5s %12s %12s %8s\n' program procs "trace (ms)" "replay (ms)" error
for prog in cpu pipeline syscall; do
  (cd "$here" && "$goroot/bin/go" build -o "$work/$prog" "./$prog")
  for n in ${procs//,/ }; do
    GOMAXPROCS=$n "$work/$prog" "$work/$prog-$n.trace"
    "$gmpsim" trace import "$work/$prog-$n.trace" -o "$work/$prog-$n.gmp" > /dev/null 2> "$work/err" ||
      { cat "$work/err" >&2; exit 1; }
    out="$("$gmpsim" replay "$work/$prog-$n.gmp" --procs "$n" --cores "$cores" --jobs 1 -o "$work/$prog-$n.textproto")"
    span="$(sed -nE 's/.*the trace ran ([0-9.]+) ms.*/\1/p' <<<"$out")"
    replay="$(grep -A2 '^virtual time' <<<"$out" | tail -1 | awk '{print $2}')"
    awk -v p="$prog" -v n="$n" -v t="$span" -v r="$replay" \
      'BEGIN { printf "%-10s %5d %12.3f %12.3f %+7.1f%%\n", p, n, t, r, (r - t) / t * 100 }'
  done
done
