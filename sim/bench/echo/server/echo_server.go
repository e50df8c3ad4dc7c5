// The real-Go echo server of sim/bench/echo (see README.md there): one goroutine per connection,
// each reading a fixed-size request, doing a fixed amount of CPU work (cpuWork) and writing the
// request back as the reply. Each request is one read(2) of its own (no bufio) and each reply one
// write(2), so a request costs the server two syscalls, the work and whatever netpoll wake-ups the
// scheduler needs.
//
//	echo_server -addr 127.0.0.1:0 -work N -size 64   serve; the first stdout line is the address
//	echo_server -calibrate 15us                       print the N that takes about 15 us here
//
// It serves until it gets SIGINT or SIGTERM. GOMAXPROCS comes from the environment as usual.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"syscall"
	"time"
)

var sink uint64

// cpuWork runs n steps of a 64-bit linear congruential generator, a chain of dependent
// multiply-adds the compiler cannot fold away.
//
//go:noinline
func cpuWork(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// calibrate returns the n for which cpuWork(n) takes target: the fastest of several timed runs,
// so that another process on the machine inflates it as little as possible.
func calibrate(target time.Duration) int {
	const n = 2000000
	var times []time.Duration
	for i := 0; i < 15; i++ {
		start := time.Now()
		sink += cpuWork(n)
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return int(float64(n) * float64(target) / float64(times[0]))
}

func serve(c net.Conn, size, work int) {
	defer c.Close()
	buf := make([]byte, size)
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				fmt.Fprintln(os.Stderr, "echo_server: read:", err)
			}
			return
		}
		// Fold the result into the reply's last byte so the work is observable.
		buf[size-1] ^= byte(cpuWork(work))
		if _, err := c.Write(buf); err != nil {
			fmt.Fprintln(os.Stderr, "echo_server: write:", err)
			return
		}
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0: a free one)")
	work := flag.Int("work", 10000, "cpuWork iterations per request")
	size := flag.Int("size", 64, "request and reply size in bytes")
	cal := flag.Duration("calibrate", 0, "print the -work that takes this long, then exit")
	flag.Parse()
	if *cal > 0 {
		fmt.Println(calibrate(*cal))
		return
	}
	if *size < 16 || *work < 0 {
		fmt.Fprintln(os.Stderr, "echo_server: -size must be at least 16 and -work not negative")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "echo_server:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	fmt.Fprintf(os.Stderr, "echo_server: %s, GOMAXPROCS=%d, work=%d, size=%d\n",
		runtime.Version(), runtime.GOMAXPROCS(0), *work, *size)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			fmt.Fprintln(os.Stderr, "echo_server: accept:", err)
			os.Exit(1)
		}
		go serve(c, *size, *work)
	}
}
