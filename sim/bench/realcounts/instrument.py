#!/usr/bin/env python3
"""Adds event counters to a copy of Go's runtime (GOROOT/src/runtime), so that the real scheduler
reports the counts gmpsim reports: usage: instrument.py GOROOT. Each edit is anchored on a line of
the runtime's source and fails loudly if that line is missing (another Go version)."""
import sys

root = sys.argv[1] + "/src/runtime/"
names = ["startm", "wakep_spinning", "wakep_no_p", "usleep3", "runnext_steal", "runnext_cas_fail", "stopm",
         "preemptone", "gopreempt_m"]
N = {n: i for i, n in enumerate(names)}


def count(n, indent):
    return "%satomic.Xadd64(&gmpCounters[%d], 1) // gmpsim: %s\n" % (indent, N[n], n)


def edit(path, anchor, before=None, after=None):
    s = open(root + path).read()
    if s.count(anchor) != 1:
        sys.exit("instrument.py: %s: expected exactly one %r" % (path, anchor))
    new = (before or "") + anchor + (after or "")
    open(root + path, "w").write(s.replace(anchor, new))


edit("proc.go", "\tif sched.nmspinning.Load() != 0 || !sched.nmspinning.CompareAndSwap(0, 1) {\n",
     after=count("wakep_spinning", "\t\t"))
edit("proc.go", "\t\tif sched.nmspinning.Add(-1) < 0 {\n\t\t\tthrow(\"wakep: negative nmspinning\")",
     before=count("wakep_no_p", "\t\t"))
edit("proc.go", "\tstartm(pp, true, false)\n\n\treleasem(mp)\n", before=count("startm", "\t"))
edit("proc.go", "\t\t\t\t\t\t\tusleep(3)\n", before=count("usleep3", "\t\t\t\t\t\t\t"))
edit("proc.go", "\t\t\t\t\tif !pp.runnext.cas(next, 0) {\n", after=count("runnext_cas_fail", "\t\t\t\t\t\t"))
edit("proc.go", "\t\t\t\t\tbatch[batchHead%uint32(len(batch))] = next\n", before=count("runnext_steal", "\t\t\t\t\t"))
edit("proc.go", "\tif gp.m.spinning {\n\t\tthrow(\"stopm spinning\")\n\t}\n", after=count("stopm", "\t"))
edit("proc.go", "func preemptone(pp *p) bool {\n", after=count("preemptone", "\t"))
edit("proc.go", "func gopreempt_m(gp *g) {\n", after=count("gopreempt_m", "\t"))

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
