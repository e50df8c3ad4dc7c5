#!/bin/bash
# Runs the real busy-poll benchmarks (busypoll_test.go, with the NIC emulated behind cgo in nic.go)
# under the conditions of shared/reference/published-figures.md section B, and the simulations of
# sim/scenarios/busypoll.textproto and busypollhog.textproto under the same ones, and prints ns/op
# side by side. 1,337 ns/op is the emulated link's rate; the write-up's slow figure is about 2,415.
#
#   sim/bench/busypoll/run.sh [GOROOT] [SENDS] [RUNS]
#   e.g. sim/bench/busypoll/run.sh /usr/lib/go-1.23 1000000 3
#
# Conditions: GOMAXPROCS=1; GOMAXPROCS=1 with GODEBUG=asyncpreemptoff=1; GOMAXPROCS=4; GOMAXPROCS=1
# pinned to CPU 0 (taskset; the simulation gets --cores 1); then, with a CPU-bound goroutine beside
# the poller, GOMAXPROCS=1 and 2. Each real figure is the median of RUNS. The simulations use the
# epyc-vm profile, the machine this project is measured on; give another with GMP_PROFILE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
goroot=${1:-/usr/lib/go-1.23}
sends=${2:-1000000}
runs=${3:-3}
[ -x "$goroot/bin/go" ] || { echo "run.sh: $goroot/bin/go: no Go toolchain there" >&2; exit 1; }
gmpsim=$top/build/bin/gmpsim
[ -x "$gmpsim" ] || { echo "run.sh: $gmpsim: build gmpsim first (bash .ci/build)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "run.sh: taskset (util-linux) is needed for the pinned run" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/busypoll_test.go" "$here/nic.go" "$work/"
printf 'module busypoll\n\ngo 1.19\n' > "$work/go.mod"
(cd "$work" && GOCACHE="$work/cache" GOFLAGS= CGO_ENABLED=1 "$goroot/bin/go" test -c -o bp.test .)
echo "$("$goroot/bin/go" version), $(nproc) CPUs; $sends sends, median of $runs runs"

profile=${GMP_PROFILE:-epyc-vm}

# The median ns/op of RUNS runs of a real benchmark, under the environment and prefix given.
real() {
  local env=$1 prefix=$2 cpu=$3 bench=${4:-RDMASend}
  env $env $prefix "$work/bp.test" -test.run '^$' -test.bench "^Benchmark$bench\$" -test.cpu "$cpu" \
    -test.benchtime "${sends}x" -test.count "$runs" |
    awk '/ns\/op/ {print $3}' | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}
# The simulated ns/op of a shipped scenario for the same condition.
sim() {
  local scenario=$1
  shift
  "$gmpsim" run "$top/sim/scenarios/$scenario.textproto" --profile "$profile" "$@" | awk '/ns\/op/ {print $(NF-1)}'
}

printf '%-44s %12s %12s\n' condition "real ns/op" "sim ns/op ($profile)"
printf '%-44s %12s %12s\n' "GOMAXPROCS=1" "$(real GODEBUG= '' 1)" "$(sim busypoll --procs 1)"
printf '%-44s %12s %12s\n' "GOMAXPROCS=1, asyncpreemptoff=1" "$(real GODEBUG=asyncpreemptoff=1 '' 1)" \
  "$(sim busypoll --procs 1 --asyncpreemptoff)"
printf '%-44s %12s %12s\n' "GOMAXPROCS=4" "$(real GODEBUG= '' 4)" "$(sim busypoll --procs 4)"
printf '%-44s %12s %12s\n' "GOMAXPROCS=1, pinned to one CPU" "$(real GODEBUG= 'taskset -c 0' 1)" \
  "$(sim busypoll --procs 1 --cores 1)"
printf '%-44s %12s %12s\n' "with a CPU-bound goroutine, GOMAXPROCS=1" "$(real GODEBUG= '' 1 RDMASendHog)" \
  "$(sim busypollhog --procs 1)"
printf '%-44s %12s %12s\n' "with a CPU-bound goroutine, GOMAXPROCS=2" "$(real GODEBUG= '' 2 RDMASendHog)" \
  "$(sim busypollhog --procs 2)"
