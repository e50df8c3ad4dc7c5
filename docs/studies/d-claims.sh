#!/usr/bin/env bash
# Study D (docs/studies/d-claims.md): every simulated and measured number on that page.
#
#   docs/studies/d-claims.sh [GOROOT...]      # default GOROOTs: /usr/lib/go-1.23 /usr/lib/go-1.19
#
# Needs build/bin/gmpsim. Optional, each part skipped with a note when missing: gdb (counts of
# the port's findRunnable, stealWork and runqsteal calls), a Go toolchain (the real benchmarks),
# perf with uprobes and root (counts of the same calls in real Go, and a profile). Work files go
# to build/d-claims/. About a minute on an idle 2-core machine. Real-Go timings vary with load.
set -euo pipefail
cd "$(dirname "$0")/../.."
GMPSIM=./build/bin/gmpsim
OUT=build/d-claims
mkdir -p "$OUT"
GOROOTS=("$@")
[ ${#GOROOTS[@]} -gt 0 ] || GOROOTS=(/usr/lib/go-1.23 /usr/lib/go-1.19)
have() { command -v "$1" >/dev/null 2>&1; }

echo "### claim 1: a request-serving program, 1, 2 and 4 Ps (simulated)"
for p in 1 2 4; do
  "$GMPSIM" run docs/studies/d-requests.textproto --procs "$p" --events |
    grep -E '^(GOMAXPROCS|Benchmark|P utilisation|counts|events)'
done
if have gdb; then
  cat >"$OUT/count.gdb" <<'EOF'
set pagination off
set confirm off
break gmp::rt::Runtime::findRunnable
break gmp::rt::Runtime::stealWork
break gmp::rt::Runtime::runqsteal
ignore 1 100000000
ignore 2 100000000
ignore 3 100000000
run
info breakpoints
EOF
  for p in 1 2 4; do
    echo "-- calls in the port at $p P (a breakpoint with no 'already hit' line was hit 0 times)"
    gdb -q -batch -x "$OUT/count.gdb" --args "$GMPSIM" run docs/studies/d-requests.textproto --procs "$p" 2>&1 |
      grep -E 'already hit|^[0-9]+ +breakpoint' |
      sed 's/ at .*//; s/^[0-9]* *breakpoint *keep y *0x[0-9a-f]* in //'
  done
else
  echo "(gdb not found: no call counts from the port)"
fi

echo
echo "### claim 1: the same program in real Go, under uprobes"
for root in "${GOROOTS[@]}"; do
  [ -x "$root/bin/go" ] || { echo "($root: no Go toolchain)"; continue; }
  v=$(basename "$root" | tr -cd '0-9')
  bin="$PWD/$OUT/serve$v.test"
  (cd docs/studies/d-go && GOTOOLCHAIN=local GOFLAGS=-mod=mod "$root/bin/go" test -c -o "$bin" .)
  if ! have perf || [ "$(id -u)" != 0 ]; then echo "(perf or root missing: no real call counts)"; break; fi
  grp="probe_serve$v"
  perf probe -q -d "$grp:*" >/dev/null 2>&1 || true
  perf probe -q -x "$bin" --add "fr$v=runtime.findRunnable" --add "sw$v=runtime.stealWork" \
    --add "rs$v=runtime.runqsteal" >/dev/null 2>&1 || { echo "(uprobes unavailable)"; break; }
  for p in 1 2 4; do
    echo "-- $root, GOMAXPROCS=$p (fr: findRunnable, sw: stealWork, rs: runqsteal)"
    GOMAXPROCS=$p perf stat -x, -e "$grp:fr$v,$grp:sw$v,$grp:rs$v" -- "$bin" -test.run TestServe -test.v 2>&1 |
      grep -E 'requests/s|probe_' | sed 's/^ *//'
  done
  if [ "$v" = 123 ] || [ "${#GOROOTS[@]}" = 1 ]; then
    for p in 1 4; do
      echo "-- $root, GOMAXPROCS=$p: share of CPU samples (perf record, 5 runs)"
      GOMAXPROCS=$p perf record -q -F 9999 -o "$OUT/serve$p.data" -- "$bin" -test.run TestServe -test.count 5 \
        >/dev/null 2>&1
      perf report -i "$OUT/serve$p.data" --no-children --sort symbol --stdio -g none 2>/dev/null |
        grep -E 'runqsteal|runqgrab|stealWork|findRunnable|dclaims.handle|clock_gettime' || true
    done
  fi
  perf probe -q -d "$grp:*" >/dev/null 2>&1 || true
done

echo
echo "### claim 2: BenchmarkCreateGoroutines (simulated)"
for p in 1 2 4; do
  "$GMPSIM" run docs/studies/d-runq.textproto --procs "$p" --events | grep -E '^(Benchmark|counts|events)'
done
echo "-- epyc-vm, 2 cores (this development VM's profile)"
for p in 1 2; do
  "$GMPSIM" run docs/studies/d-runq.textproto --procs "$p" --cores 2 --profile epyc-vm | grep -E '^Benchmark'
done

echo
echo "### claim 2: BenchmarkCreateGoroutines in real Go"
for root in "${GOROOTS[@]}"; do
  [ -x "$root/bin/go" ] || continue
  echo "-- $root"
  (cd docs/studies/d-go && GOTOOLCHAIN=local GOFLAGS=-mod=mod "$root/bin/go" test -run XXX \
    -bench CreateGoroutines -cpu 1,2 -benchtime 2000000x -count 3 . | grep -E '^Benchmark')
done
root=${GOROOTS[0]}
if [ -x "$root/bin/go" ] && have perf && [ "$(id -u)" = 0 ]; then
  echo "-- $root, -cpu 1: share of CPU samples (perf record, 5,000,000 goroutines)"
  (cd docs/studies/d-go && GOTOOLCHAIN=local GOFLAGS=-mod=mod "$root/bin/go" test -c -o "$PWD/../../../$OUT/cg.test" .)
  perf record -q -F 4999 -o "$OUT/cg.data" -- "$OUT/cg.test" -test.run XXX -test.bench CreateGoroutines \
    -test.cpu 1 -test.benchtime 5000000x 2>&1 | grep -E '^Benchmark'
  perf report -i "$OUT/cg.data" --no-children --sort symbol --stdio -g none 2>/dev/null |
    grep -E 'runqput|runqget|lock2|unlock2|wakep|casgstatus' || true
fi

echo
echo "### claim 3: one channel shared by GOMAXPROCS goroutines on 48 cores (simulated)"
"$GMPSIM" sweep sim/scenarios/chanshared.textproto --procs 1,2,4,8,16,32,48 --cores 48 \
  --svg docs/studies/images/d-chanshared.svg --jobs 1 | grep -E '^Benchmark|^chart'
"$GMPSIM" run sim/scenarios/chanshared.textproto --procs 48 --cores 48 | grep -E '^counts'
for x in 0 25 100; do
  # The default profile with cacheline_transfer at x ns and lock_contended_handoff at x + 10 ns
  # (the default's 60 is its 50-ns transfer plus a locked RMW); x = 0 keeps the handoff at 60.
  h=$((x == 0 ? 60 : x + 10))
  awk -v x="$x" -v h="$h" '
    /^  cacheline_transfer \{/ { f = "x" } /^  lock_contended_handoff \{/ { f = "h" }
    f != "" && /value:/ { sub(/value: [0-9.]+/, "value: " (f == "x" ? x : h)); f = "" } { print }' \
    sim/cost/profiles/default.textproto >"$OUT/line$x.textproto"
  echo "-- default profile, cacheline_transfer $x ns, lock_contended_handoff $h ns"
  "$GMPSIM" sweep sim/scenarios/chanshared.textproto --procs 1,2,8,48 --cores 48 \
    --profile "$OUT/line$x.textproto" --jobs 1 | grep -E '^Benchmark'
done
echo "-- epyc-vm, 2 cores"
"$GMPSIM" sweep sim/scenarios/chanshared.textproto --procs 1,2,4 --cores 2 --profile epyc-vm --jobs 1 |
  grep -E '^Benchmark'

echo
echo "### claim 3: BenchmarkChanShared in real Go (sim/bench/chanshared_test.go)"
for root in "${GOROOTS[@]}"; do
  [ -x "$root/bin/go" ] || continue
  echo "-- $root"
  (cd sim/bench && GOTOOLCHAIN=local "$root/bin/go" test -run XXX -bench ChanShared -cpu 1,2,4 -benchtime 2000000x \
    -count 3 chanshared_test.go | grep -E '^Benchmark')
done
