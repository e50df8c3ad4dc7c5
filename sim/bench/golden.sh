#!/usr/bin/env bash
# Byte-identity check for speed work: runs every shipped scenario at procs 1, 2, 4 and the speed
# shapes of sim/bench/scenarios with --events and --trace, and writes each run's stdout and trace
# under DIR. `golden.sh record DIR` records; `golden.sh check DIR` runs again into a temporary
# folder and compares byte for byte with DIR. GMPSIM chooses the binary (default build/bin/gmpsim).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${GMPSIM:-$root/build/bin/gmpsim}
mode=${1:?usage: golden.sh record|check DIR}
ref=${2:?usage: golden.sh record|check DIR}
if [ "$mode" = record ]; then out=$ref; else out=$(mktemp -d); fi
mkdir -p "$out"
# A fixed path: a trace records its scenario's path.
tmp=$root/build/golden-inputs
mkdir -p "$tmp"
# The spawn storm at 1 P with 30,000 goroutines: 100,000 stacks do not fit in the mapping limit yet.
sed 's/100000/30000/g' "$root/sim/bench/scenarios/spawnstorm.textproto" > "$tmp/spawnstorm30k.textproto"
jobs=()
for s in "$root"/sim/scenarios/*.textproto "$root"/sim/bench/scenarios/chanring.textproto \
         "$root"/sim/bench/scenarios/gosched.textproto; do
  for p in 1 2 4; do jobs+=("$s $p"); done
done
jobs+=("$root/sim/bench/scenarios/spawnstorm.textproto 2" "$root/sim/bench/scenarios/spawnstorm.textproto 4"
       "$tmp/spawnstorm30k.textproto 1")
run_one() {
  local s=$1 p=$2 name
  name=$(basename "$s" .textproto)-p$p
  "$bin" run "$s" --procs "$p" --events --trace "$out/$name.trace" > "$out/$name.out" 2>/dev/null || true
}
export -f run_one; export bin out
printf '%s\n' "${jobs[@]}" | xargs -P "${GOLDEN_JOBS:-2}" -n 2 bash -c 'run_one "$0" "$1"'
if [ "$mode" = check ]; then
  if diff -r -q "$ref" "$out"; then echo "golden: all $(ls "$ref" | wc -l) files byte-identical"; rm -rf "$out"
  else echo "golden: DIFFERENT (new outputs in $out)"; exit 1; fi
fi
