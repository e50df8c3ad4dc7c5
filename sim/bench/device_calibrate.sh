#!/usr/bin/env bash
# Calibrate on few cores, predict many: the plan for a machine with more cores than the
# development VM (docs/calibration.md, "Predicting 8 to 16 cores").
#
#   sim/bench/device_calibrate.sh build DIR [GO]        # here: go test -c the two Go suites into DIR
#   sim/bench/device_calibrate.sh run DIR OUT [CPUS] [COUNT] [BENCHTIME]
#                                                      # on the big machine: run them, results in OUT
#   sim/bench/device_calibrate.sh fit OUT GMPSIM PROFILE CORES [FITMAX [CALIBRATE FLAGS...]]
#                                                      # here: fit on -cpu <= FITMAX, predict the rest
#
# build compiles the fit suite and the held-out set with `go test -c` (no Go is needed where they
# run); nothing is written into the source tree. run executes both binaries once per (repetition,
# GOMAXPROCS), in A B A B order, so that a drift of the machine hits every GOMAXPROCS alike, and
# appends go test's output to OUT/suite.txt and OUT/heldout.txt, with the machine's description
# (nproc, lscpu's model, load average before and after) as comment lines. fit splits each file at
# FITMAX (default 4): points at -cpu <= FITMAX are the fit, the others are predicted; PROFILE is
# copied with its one core group set to CORES cores (the big machine's), and `gmpsim calibrate`
# runs on the saved measurements.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "device_calibrate.sh: $*" >&2; exit 1; }

stage=${1:-}
case "$stage" in
build)
  dir=${2:?usage: build DIR [GO]}
  go=${3:-/usr/lib/go-1.23/bin/go}
  [ -x "$go" ] || die "no Go at $go"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  for set in suite heldout; do
    src=$(mktemp -d)
    trap 'rm -rf "$src"' EXIT
    cp "$here"/sim/calibration/$set/*.go "$here"/sim/calibration/$set/go.mod "$src"/
    (cd "$src" && GOFLAGS=-mod=mod GOCACHE="$src/.cache" "$go" test -c -o "$dir/$set.test" .) ||
      die "go test -c failed for $set"
    rm -rf "$src"
    trap - EXIT
  done
  echo "built $dir/suite.test $dir/heldout.test"
  ;;
run)
  dir=${2:?usage: run DIR OUT [CPUS] [COUNT] [BENCHTIME]}
  out=${3:?usage: run DIR OUT [CPUS] [COUNT] [BENCHTIME]}
  cpus=${4:-1,2,4,8,12,16}
  count=${5:-5}
  benchtime=${6:-200ms}
  mkdir -p "$out"
  for set in suite heldout; do
    [ -x "$dir/$set.test" ] || die "no $dir/$set.test (run the build stage first)"
    {
      echo "# $set.test -test.bench . -test.cpu C -test.count 1 -test.benchtime $benchtime, C in $cpus, $count rounds A B A B"
      echo "# nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | tr -s ' \t' ' ')"
      echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    } > "$out/$set.txt"
  done
  IFS=, read -r -a list <<< "$cpus"
  total=$((count * ${#list[@]} * 2)); n=0
  for ((r = 1; r <= count; r++)); do
    for c in "${list[@]}"; do
      for set in suite heldout; do
        n=$((n + 1))
        printf '[%d/%d] round %d, -cpu %s, %s\n' "$n" "$total" "$r" "$c" "$set" >&2
        if ! "$dir/$set.test" -test.run '^$' -test.bench . -test.cpu "$c" -test.count 1 \
             -test.benchtime "$benchtime" > "$out/run.txt" 2>&1; then
          echo "device_calibrate.sh: $set.test failed at -cpu $c (round $r); its output:" >&2
          tail -5 "$out/run.txt" >&2
        fi
        grep '^Benchmark' "$out/run.txt" >> "$out/$set.txt" || true
      done
    done
  done
  rm -f "$out/run.txt"
  for set in suite heldout; do echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/$set.txt"; done
  ;;
fit)
  out=${2:?usage: fit OUT GMPSIM PROFILE CORES [FITMAX]}
  gmpsim=${3:?usage: fit OUT GMPSIM PROFILE CORES [FITMAX]}
  profile=${4:?usage: fit OUT GMPSIM PROFILE CORES [FITMAX]}
  cores=${5:?usage: fit OUT GMPSIM PROFILE CORES [FITMAX]}
  fitmax=${6:-4}
  [ -f "$out/suite.txt" ] && [ -f "$out/heldout.txt" ] || die "no $out/suite.txt or heldout.txt (run the run stage)"
  [ -f "$profile" ] || profile=$here/sim/cost/profiles/$profile.textproto
  [ -f "$profile" ] || die "no profile $4"
  # -cpu N prints BenchmarkX-N; -cpu 1 prints no suffix.
  split() {  # split FILE LOW HIGH: lines at -cpu <= fitmax to LOW, the others to HIGH
    awk -v max="$fitmax" -v low="$2" -v high="$3" '
      /^Benchmark/ { n = 1; if (match($1, /-[0-9]+$/)) n = substr($1, RSTART + 1) + 0
                     print > (n <= max ? low : high); next }
      { print > low; print > high }' "$1"
  }
  split "$out/suite.txt" "$out/fit.txt" "$out/suite-high.txt"
  split "$out/heldout.txt" "$out/heldout-low.txt" "$out/heldout-high.txt"
  cat "$out/suite-high.txt" <(grep '^Benchmark' "$out/heldout.txt") > "$out/predict.txt"
  # The machine: the profile's first core group, with the big machine's core count.
  awk -v cores="$cores" '!done && /^ *count:/ { sub(/count: *[0-9]+/, "count: " cores); done = 1 } { print }' \
    "$profile" > "$out/machine.textproto"
  mkdir -p "$out/predict"
  cp "$here"/sim/calibration/suite/*.textproto "$here"/sim/calibration/heldout/*.textproto "$out/predict/"
  "$gmpsim" calibrate --profile "$out/machine.textproto" --suite "$here/sim/calibration/suite" \
    --heldout "$out/predict" --measured "$out/fit.txt" --measured-heldout "$out/predict.txt" \
    -o "$out/fitted.textproto" "${@:7}"
  ;;
*)
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
  ;;
esac
