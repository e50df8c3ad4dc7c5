#!/usr/bin/env bash
# A real Go test end to end: traces sim/bench/replay/gotest (a worker pool) with `go test -trace`
# under each Go toolchain given, imports the trace (gmpsim trace import), checks it (trace
# validate), exports it for Perfetto and for chrome://tracing (trace export) and replays it at
# GOMAXPROCS 1 to 8 (gmpsim replay). Everything it writes stays in OUT for opening afterwards:
#   OUT/go1NN.out          the Go execution trace (go119, go123, ...)
#   OUT/go1NN.gmp          the same in gmpsim's schema
#   OUT/go1NN.pftrace      for ui.perfetto.dev
#   OUT/go1NN.json         for chrome://tracing (or Perfetto's JSON import)
#   OUT/go1NN.textproto    the derived scenario; OUT/go1NN-sweep.svg its sweep's chart;
#   OUT/go1NN.replay.txt   the sweep's tables
# Usage: sim/bench/replay/gotest.sh [OUT (default build/gotest)] [GOROOT...] (default: Debian's
#        /usr/lib/go-1.19 and /usr/lib/go-1.23; a missing toolchain is skipped with a message)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${1:-$root/build/gotest}"
shift || true
goroots=("$@")
[ ${#goroots[@]} -gt 0 ] || goroots=(/usr/lib/go-1.19 /usr/lib/go-1.23)
gmpsim="${GMPSIM:-$root/build/bin/gmpsim}"  # GMPSIM: another build's binary (the tests set it)
[ -x "$gmpsim" ] || { echo "gotest.sh: build gmpsim first ($gmpsim)" >&2; exit 1; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GOCACHE="$work/cache" GOPATH="$work/gopath" GOFLAGS=-mod=mod GOTOOLCHAIN=local
for goroot in "${goroots[@]}"; do
  if [ ! -x "$goroot/bin/go" ]; then
    echo "gotest.sh: skipping $goroot: no Go toolchain there" >&2
    continue
  fi
  # go1.23.4 -> go123 (a name without dots: the sweep names its chart after the scenario's stem)
  v="$("$goroot/bin/go" env GOVERSION | sed -E 's/^go([0-9]+)\.([0-9]+).*/go\1\2/')"
  echo "== $v: go test -trace at GOMAXPROCS 2"
  (cd "$here" && GOMAXPROCS=2 "$goroot/bin/go" test -count=1 -run TestWorkers -trace "$out/$v.out" ./gotest)
  "$gmpsim" trace import "$out/$v.out" -o "$out/$v.gmp"
  "$gmpsim" trace validate "$out/$v.gmp"
  "$gmpsim" trace export "$out/$v.gmp" --format perfetto -o "$out/$v.pftrace"
  "$gmpsim" trace export "$out/$v.gmp" --format chrome -o "$out/$v.json"
  (cd "$out" && "$gmpsim" replay "$v.gmp" --procs 1,2,3,4,5,6,7,8 -o "$v.textproto" > "$v.replay.txt")
  grep '^replay:' "$out/$v.replay.txt"
  grep -A10 '^virtual time' "$out/$v.replay.txt"
done
echo "files in $out"
