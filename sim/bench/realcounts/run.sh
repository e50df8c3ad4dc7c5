#!/bin/bash
# Runs the ping-pong benchmark on an instrumented copy of a Go toolchain and prints the real
# scheduler's event counts per 100,000 round trips, to set beside gmpsim's (`gmpsim run
# sim/scenarios/pingpong.textproto --events`). The toolchain is copied to a temporary folder and
# edited there (instrument.py); the installed one is not touched.
#
#   sim/bench/realcounts/run.sh [GOROOT] [CPU LIST] [ROUND TRIPS] [RUNS]
#   e.g. sim/bench/realcounts/run.sh /usr/lib/go-1.23 1,2,4 2000000 3
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
goroot=${1:-/usr/lib/go-1.23}
cpus=${2:-1,2,4}
trips=${3:-2000000}
runs=${4:-3}
[ -x "$goroot/bin/go" ] || { echo "run.sh: $goroot/bin/go: no Go toolchain there" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "copying $goroot and instrumenting its runtime..." >&2
cp -rL "$goroot" "$work/goroot"
chmod -R u+w "$work/goroot"
python3 "$here/instrument.py" "$work/goroot"
mkdir "$work/bench"
cp "$here/../pingpong_test.go" "$here/count_test.go" "$work/bench/"
printf 'module pingpong\n\ngo 1.21\n' > "$work/bench/go.mod"
cd "$work/bench"
echo "building the benchmark (rebuilds the standard library once)..." >&2
GOROOT="$work/goroot" GOCACHE="$work/cache" GOFLAGS= "$work/goroot/bin/go" test -c -tags gmpcounters -o pingpong.test .
"$work/goroot/bin/go" version
./pingpong.test -test.bench PingPong -test.cpu "$cpus" -test.benchtime "${trips}x" -test.count "$runs" |
  grep -E 'ns/op|counts per'
