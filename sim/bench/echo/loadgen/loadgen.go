// The load generator of sim/bench/echo (see README.md there), a process of its own so that its
// scheduling does not mix with the server's.
//
// Open loop (-rate R > 0): C connections, each with a writer goroutine and a reader goroutine.
// Request k of connection c is due at (c + k*C) / R seconds after the start, so the sends of all
// connections together come every 1/R, and a writer never waits for a reply. A writer waits for its
// due times on a periodic timerfd(2) of its own, read through Go's netpoller like a socket: a Go
// timer would round sub-millisecond waits up to a whole millisecond when the process is idle
// (netpoll's epoll_wait takes milliseconds) and so send in bursts, and a sleep in a syscall would
// keep the P from the readers. When a writer wakes more than a period late it sends the requests it
// owes back to back. A request carries its due time and its send time (read just before write(2));
// the server echoes it, and the reader takes the latency as the time it has read the whole reply
// less that send time. How late each send was against its due time is reported too ("lag", the
// wake-up latency of this process): a large lag means the arrivals were not the schedule's.
//
// Closed loop (-rate 0): each connection sends its next request as soon as it has the previous
// reply, which keeps C requests outstanding: the server's capacity, when the generator keeps up.
//
// Requests due (closed loop: sent) in the first -warmup are left out of the latencies, and the
// achieved rate counts the replies read in the -duration after the warm-up. It prints one line of
// key=value pairs; latencies are in microseconds. It exits 1 if a reply is missing at the end.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

var (
	start time.Time
	base  int64 // CLOCK_MONOTONIC at start, in ns
)

// now is the time since start, from Go's monotonic clock, which on Linux is CLOCK_MONOTONIC.
func now() int64 { return int64(time.Since(start)) }

func monotonic() int64 {
	var ts syscall.Timespec
	_, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1 /* CLOCK_MONOTONIC */, uintptr(unsafe.Pointer(&ts)), 0)
	if e != 0 {
		panic(e)
	}
	return ts.Nano()
}

// A periodic timerfd(2), non-blocking so that os.File reads it through Go's netpoller.
type itimerspec struct{ interval, value syscall.Timespec }

// newTicker returns a timerfd that expires first at first and then every period (ns after start).
func newTicker(first, period int64) (*os.File, error) {
	const tfdNonblock, tfdCloexec, tfdTimerAbstime = syscall.O_NONBLOCK, syscall.O_CLOEXEC, 1
	fd, _, e := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, 1 /* CLOCK_MONOTONIC */, tfdNonblock|tfdCloexec, 0)
	if e != 0 {
		return nil, fmt.Errorf("timerfd_create: %w", e)
	}
	spec := itimerspec{syscall.NsecToTimespec(period), syscall.NsecToTimespec(base + first)}
	if _, _, e := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, fd, tfdTimerAbstime, uintptr(unsafe.Pointer(&spec)),
		0, 0, 0); e != 0 {
		syscall.Close(int(fd))
		return nil, fmt.Errorf("timerfd_settime: %w", e)
	}
	return os.NewFile(fd, "timerfd"), nil
}

type result struct {
	lat, lag []int64 // ns, of the measured requests
	replies  int     // read within the measurement window
	sent     int
	recv     int
	err      error
}

type conf struct {
	conns             int
	size              int
	rate              float64
	warmup, deadline  int64 // ns after start: end of the warm-up, end of the sends
	windowEnd, drainT int64
}

// openLoop runs one connection's writer and reader.
func openLoop(c net.Conn, id int, cf *conf, res *result) {
	period := int64(float64(cf.conns) * 1e9 / cf.rate)
	first := int64(float64(id) * 1e9 / cf.rate)
	tick, err := newTicker(first, period)
	if err != nil {
		res.err = err
		return
	}
	var sent int
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer tick.Close()
		buf := make([]byte, cf.size)
		var exp [8]byte
		for k := 0; ; {
			if _, err := io.ReadFull(tick, exp[:]); err != nil {
				res.err = err
				return
			}
			// Expirations since the last read: more than one when this send is late by a period or more.
			for n := binary.LittleEndian.Uint64(exp[:]); n > 0; n-- {
				due := first + int64(k)*period
				k++
				if due >= cf.deadline {
					return
				}
				t := now()
				binary.LittleEndian.PutUint64(buf[0:], uint64(due))
				binary.LittleEndian.PutUint64(buf[8:], uint64(t))
				if _, err := c.Write(buf); err != nil {
					res.err = err
					return
				}
				sent++
				if due >= cf.warmup {
					res.lag = append(res.lag, t-due)
				}
			}
		}
	}()
	buf := make([]byte, cf.size)
	c.SetReadDeadline(start.Add(time.Duration(cf.drainT)))
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			break // the drain deadline, or the server went away: the shortfall shows in lost=
		}
		t := now()
		due := int64(binary.LittleEndian.Uint64(buf[0:]))
		sentAt := int64(binary.LittleEndian.Uint64(buf[8:]))
		res.recv++
		if due >= cf.warmup {
			res.lat = append(res.lat, t-sentAt)
		}
		if t >= cf.warmup && t < cf.windowEnd {
			res.replies++
		}
		select {
		case <-done:
			if res.recv == sent {
				res.sent = sent
				return
			}
		default:
		}
	}
	<-done
	res.sent = sent
}

// closedLoop keeps one request outstanding on the connection until the deadline.
func closedLoop(c net.Conn, cf *conf, res *result) {
	buf := make([]byte, cf.size)
	c.SetDeadline(start.Add(time.Duration(cf.drainT)))
	for {
		t := now()
		if t >= cf.deadline {
			return
		}
		binary.LittleEndian.PutUint64(buf[8:], uint64(t))
		if _, err := c.Write(buf); err != nil {
			res.err = err
			return
		}
		res.sent++
		if _, err := io.ReadFull(c, buf); err != nil {
			res.err = err
			return
		}
		r := now()
		res.recv++
		if t >= cf.warmup {
			res.lat = append(res.lat, r-t)
		}
		if r >= cf.warmup && r < cf.windowEnd {
			res.replies++
		}
	}
}

func pct(v []int64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	i := int(p * float64(len(v)))
	if i >= len(v) {
		i = len(v) - 1
	}
	return float64(v[i]) / 1e3
}

func main() {
	addr := flag.String("addr", "", "the server's address")
	conns := flag.Int("conns", 16, "connections")
	size := flag.Int("size", 64, "request and reply size in bytes (the server's -size)")
	rate := flag.Float64("rate", 0, "total requests per second, open loop; 0: closed loop")
	dur := flag.Duration("duration", 3*time.Second, "measurement window, after the warm-up")
	warm := flag.Duration("warmup", 500*time.Millisecond, "warm-up, left out of the figures")
	drain := flag.Duration("drain", time.Second, "how long to wait for outstanding replies at the end")
	flag.Parse()
	if *addr == "" || *conns < 1 || *size < 16 || *rate < 0 {
		fmt.Fprintln(os.Stderr, "loadgen: need -addr, -conns >= 1, -size >= 16, -rate >= 0")
		os.Exit(2)
	}
	cs := make([]net.Conn, *conns)
	for i := range cs {
		c, err := net.Dial("tcp", *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		cs[i] = c
	}
	cf := &conf{conns: *conns, size: *size, rate: *rate, warmup: int64(*warm)}
	cf.deadline = cf.warmup + int64(*dur)
	cf.windowEnd = cf.deadline
	cf.drainT = cf.deadline + int64(*drain)
	res := make([]result, *conns)
	var wg sync.WaitGroup
	base = monotonic()
	start = time.Now()
	for i, c := range cs {
		wg.Add(1)
		go func(i int, c net.Conn) {
			defer wg.Done()
			if *rate > 0 {
				openLoop(c, i, cf, &res[i])
			} else {
				closedLoop(c, cf, &res[i])
			}
		}(i, c)
	}
	wg.Wait()
	for _, c := range cs {
		c.Close()
	}
	var lat, lag []int64
	var replies, sent, recv int
	for _, r := range res {
		if r.err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", r.err)
			os.Exit(1)
		}
		lat = append(lat, r.lat...)
		lag = append(lag, r.lag...)
		replies += r.replies
		sent += r.sent
		recv += r.recv
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	sort.Slice(lag, func(i, j int) bool { return lag[i] < lag[j] })
	fmt.Printf("target=%.0f achieved=%.0f p50=%.1f p99=%.1f p999=%.1f lag_p50=%.1f lag_p99=%.1f "+
		"sent=%d lost=%d n=%d loadgen_procs=%d\n",
		*rate, float64(replies)/dur.Seconds(), pct(lat, 0.5), pct(lat, 0.99), pct(lat, 0.999),
		pct(lag, 0.5), pct(lag, 0.99), sent, sent-recv, len(lat), runtime.GOMAXPROCS(0))
	if sent != recv {
		os.Exit(1)
	}
}
