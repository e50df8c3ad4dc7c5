// Package common holds what the what-if programs share: the unit of work, the job sizes, and the
// run's bracket (trace, wall clock, CPU time) with the line run.py parses.
package common

import (
	"fmt"
	"os"
	"runtime"
	"runtime/trace"
	"syscall"
	"time"
)

// UnitSteps LCG steps make one unit of work: about 1 us on the 2-core EPYC VM the issue used
// (a dependent 64-bit multiply and add, 1.2-1.4 ns a step there when quiet). `calibrate` measures
// it on the machine at hand; the hand-written scenarios carry the figure it gave.
const UnitSteps = 750

var sink uint64

// Work does units of arithmetic on v and returns the result.
func Work(v uint64, units int) uint64 {
	for k := 0; k < units*UnitSteps; k++ {
		v = v*6364136223846793005 + 1442695040888963407
	}
	return v
}

// Keep makes a result observable, so the compiler keeps the work that produced it.
func Keep(v uint64) { sink += v }

// Size is job i's size in units: h = (i*mul + add) % 200 visits every residue once per 200 jobs
// (mul is odd and not a multiple of 5), and 5 + h^3/40000 skews it: 5 to 202 units, mean about 55,
// most jobs small and a few large. The hand-written scenarios compute the same expression.
func Size(i, mul, add int) int {
	h := (i*mul + add) % 200
	return 5 + h*h*h/40000
}

// Run brackets the measured part of a program.
type Run struct {
	f     *os.File
	cpu0  time.Duration
	start time.Time
	wall  time.Duration
}

// CPUTime is the process's user+system CPU time so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "getrusage:", err)
		os.Exit(1)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Start reads the trace path from os.Args[1] ("-": no trace), starts the trace and the clocks.
func Start() *Run {
	if len(os.Args) != 2 {
		fmt.Fprintf(os.Stderr, "usage: %s TRACE|-\n", os.Args[0])
		os.Exit(2)
	}
	r := &Run{cpu0: CPUTime()}
	if os.Args[1] != "-" {
		f, err := os.Create(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "trace.Start:", err)
			os.Exit(1)
		}
		r.f = f
	}
	r.start = time.Now()
	return r
}

// Stop ends the work's clock, then the trace, and prints
//
//	whatif: wall_ns=W cpu_ns=C gomaxprocs=P
//
// W: the work, from Start to Stop; C: the process's user+system CPU time from before
// trace.Start to after trace.Stop (the trace's window).
func (r *Run) Stop() {
	r.wall = time.Since(r.start)
	if r.f != nil {
		trace.Stop()
		if err := r.f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	cpu := CPUTime() - r.cpu0
	fmt.Printf("whatif: wall_ns=%d cpu_ns=%d gomaxprocs=%d\n", r.wall.Nanoseconds(), cpu.Nanoseconds(),
		runtime.GOMAXPROCS(0))
}
