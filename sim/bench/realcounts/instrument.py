#!/usr/bin/env python3
"""Adds event counters to a copy of Go's runtime (GOROOT/src/runtime), so that the real scheduler
reports the counts gmpsim reports: usage: instrument.py GOROOT. Each edit is anchored on a line of
proc.go, matched whatever its indentation, and fails loudly if that line is missing or appears
more than once (a Go version whose code differs). Checked against Go 1.23 and Go 1.27;
tests/bench/instrument_check.py keeps it applying to the Go that CI installs."""
import re
import sys

root = sys.argv[1] + "/src/runtime/"
names = ["startm", "wakep_spinning", "wakep_no_p", "usleep3", "runnext_steal", "runnext_cas_fail", "stopm",
         "preemptone", "gopreempt_m"]
N = {n: i for i, n in enumerate(names)}
src = open(root + "proc.go").read()


def count(n, indent):
    return "%satomic.Xadd64(&gmpCounters[%d], 1) // gmpsim: %s\n" % (indent, N[n], n)


def edit(lines, name, where, extra_indent=""):
    """Inserts name's counter before or after the lines (consecutive, indentation ignored)."""
    global src
    pattern = r"^([ \t]*)" + r"\n[ \t]*".join(re.escape(l) for l in lines) + r"\n"
    found = list(re.finditer(pattern, src, re.M))
    if len(found) != 1:
        sys.exit("instrument.py: proc.go: expected exactly one %r, found %d" % (lines, len(found)))
    m = found[0]
    line = count(name, m.group(1) + extra_indent)
    src = src[:m.start()] + line + src[m.start():] if where == "before" else src[:m.end()] + line + src[m.end():]


edit(["if sched.nmspinning.Load() != 0 || !sched.nmspinning.CompareAndSwap(0, 1) {"], "wakep_spinning", "after", "\t")
edit(["if sched.nmspinning.Add(-1) < 0 {", 'throw("wakep: negative nmspinning")'], "wakep_no_p", "before")
edit(["startm(pp, true, false)", "", "releasem(mp)"], "startm", "before")
edit(["usleep(3)"], "usleep3", "before")
edit(["if !pp.runnext.cas(next, 0) {"], "runnext_cas_fail", "after", "\t")
edit(["batch[batchHead%uint32(len(batch))] = next"], "runnext_steal", "before")
edit(["if gp.m.spinning {", 'throw("stopm spinning")', "}"], "stopm", "after")
edit(["func preemptone(pp *p) bool {"], "preemptone", "after", "\t")
edit(["func gopreempt_m(gp *g) {"], "gopreempt_m", "after", "\t")
open(root + "proc.go", "w").write(src)

open(root + "gmpcounters.go", "w").write('''package runtime

import "internal/runtime/atomic"

var gmpCounters [%d]uint64

// GmpCounters is added by gmpsim's sim/bench/realcounts: scheduler event counts, in the order %s.
func GmpCounters() []uint64 {
	r := make([]uint64, len(gmpCounters))
	for i := range r {
		r[i] = atomic.Load64(&gmpCounters[i])
	}
	return r
}

func GmpCounterNames() []string { return []string{%s} }
''' % (len(names), ", ".join(names), ", ".join('"%s"' % n for n in names)))
