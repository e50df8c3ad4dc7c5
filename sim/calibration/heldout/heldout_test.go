// The held-out set of `gmpsim calibrate`: program shapes the fit suite (../suite) does not have,
// never used for fitting, only to see how well a fitted profile predicts programs it was not fitted
// to. Every BenchmarkX here has a paired scenario, BenchmarkX.textproto in this folder; see
// ../README.md.
//
// Where the work of b.N is split over k goroutines, each does b.N/k explicitly (b.N rounded down
// to a multiple of k would lose at most k-1 ops; the split gives the first goroutines one more).
//
// The code builds with Go 1.19 and later: no range over int, no b.Loop, no min/max builtins.
package heldout

import (
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cpuWork is the same compute kernel as the fit suite's: an LCG loop, `compute { iterations: n }`
// in the scenarios. Its result is dropped: the compiler does not remove a call to a function it
// may not inline.
//
//go:noinline
func cpuWork(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// share is goroutine k's part of n ops split over parts goroutines.
func share(n, parts, k int) int {
	s := n / parts
	if k < n%parts {
		s++
	}
	return s
}

// BenchmarkPipeline: main produces b.N items into a pipeline of 3 stages and a consumer, joined by
// unbuffered channels; each stage does cpuWork(100) per item.
func BenchmarkPipeline(b *testing.B) {
	c0 := make(chan struct{})
	c1 := make(chan struct{})
	c2 := make(chan struct{})
	c3 := make(chan struct{})
	done := make(chan struct{})
	stage := func(in <-chan struct{}, out chan<- struct{}) {
		for range in {
			cpuWork(100)
			out <- struct{}{}
		}
		close(out)
	}
	go stage(c0, c1)
	go stage(c1, c2)
	go stage(c2, c3)
	go func() {
		for range c3 {
		}
		close(done)
	}()
	for i := 0; i < b.N; i++ {
		c0 <- struct{}{}
	}
	close(c0)
	<-done
}

// BenchmarkTokenRing8: a token passed around a ring of 8 goroutines (main and 7 others) over 8
// unbuffered channels: main sends on c[0], goroutine i receives on c[i-1] and sends on c[i], main
// receives on c[7]. One op is one lap, 8 hand-offs.
func BenchmarkTokenRing8(b *testing.B) {
	var c [8]chan struct{}
	for i := range c {
		c[i] = make(chan struct{})
	}
	for i := 1; i < 8; i++ {
		go func(in <-chan struct{}, out chan<- struct{}) {
			for range in {
				out <- struct{}{}
			}
			close(out)
		}(c[i-1], c[i])
	}
	for i := 0; i < b.N; i++ {
		c[0] <- struct{}{}
		<-c[7]
	}
	close(c[0])
}

// BenchmarkSpawnStorm: b.N goroutines, each doing cpuWork(100) and wg.Done, started one after
// another by a spawning goroutine while main waits on the WaitGroup.
func BenchmarkSpawnStorm(b *testing.B) {
	var wg sync.WaitGroup
	wg.Add(b.N)
	n := b.N
	go func() {
		for i := 0; i < n; i++ {
			go func() {
				cpuWork(100)
				wg.Done()
			}()
		}
	}()
	wg.Wait()
}

// BenchmarkMutexContention: 4 goroutines increment one counter under one sync.Mutex, b.N/4
// increments each.
func BenchmarkMutexContention(b *testing.B) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	counter := 0
	wg.Add(4)
	for k := 0; k < 4; k++ {
		go func(n int) {
			for i := 0; i < n; i++ {
				mu.Lock()
				counter++
				mu.Unlock()
			}
			wg.Done()
		}(share(b.N, 4, k))
	}
	wg.Wait()
	if counter != b.N {
		b.Fatalf("counter %d, want %d", counter, b.N)
	}
}

// BenchmarkSyscallNanosleep4: 4 goroutines make blocking system calls, b.N/4 each: nanosleep of
// 1 us through syscall.Syscall (entersyscall/exitsyscall), which the kernel rounds up by its timer
// slack, so the thread sleeps long enough for sysmon to retake its P.
func BenchmarkSyscallNanosleep4(b *testing.B) {
	var wg sync.WaitGroup
	wg.Add(4)
	for k := 0; k < 4; k++ {
		go func(n int) {
			ts := syscall.Timespec{Nsec: 1000}
			for i := 0; i < n; i++ {
				syscall.Nanosleep(&ts, nil)
			}
			wg.Done()
		}(share(b.N, 4, k))
	}
	wg.Wait()
}

// BenchmarkGoschedPair: two goroutines that only call runtime.Gosched, b.N/2 times each: at 1 P
// they alternate.
func BenchmarkGoschedPair(b *testing.B) {
	var wg sync.WaitGroup
	wg.Add(2)
	for k := 0; k < 2; k++ {
		go func(n int) {
			for i := 0; i < n; i++ {
				runtime.Gosched()
			}
			wg.Done()
		}(share(b.N, 2, k))
	}
	wg.Wait()
}

// BenchmarkFanOutIn: main sends b.N jobs over one unbuffered channel to 8 workers, each doing
// cpuWork(200) per job and sending a result over a second unbuffered channel to a collector.
func BenchmarkFanOutIn(b *testing.B) { fanOut(b, 0, 200) }

// fanOut is the body of the fan-out benchmarks: main sends b.N jobs over a channel of the given
// capacity to 8 workers, each doing cpuWork(work) per job and sending a result over an unbuffered
// channel to one collector; main waits for the workers, then the collector.
func fanOut(b *testing.B, capacity, work int) {
	jobs := make(chan struct{}, capacity)
	results := make(chan struct{})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(8)
	for w := 0; w < 8; w++ {
		go func() {
			for range jobs {
				cpuWork(work)
				results <- struct{}{}
			}
			wg.Done()
		}()
	}
	go func() {
		for range results {
		}
		close(done)
	}()
	for i := 0; i < b.N; i++ {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	close(results)
	<-done
}

// BenchmarkSleepyPool: a pool of 4 workers whose jobs block on a timer: main sends b.N jobs over an
// unbuffered channel, each worker does cpuWork(4000) and time.Sleep(10us) per job, main waits for
// the workers. The numbers: 4000 iterations are about 4.4 us at the EPYC VM's 1.1 ns per iteration,
// so while one worker sleeps its 10 us the other three have 3 x 4.4 = 13 us of compute for the P: at
// 1 P the sleeps overlap the others' compute (op ~5 us), and the P runs the expired timers from
// schedule rather than idling into the netpoller's whole-millisecond wait. From 2 Ps the 4 workers
// have at most 4 x 4.4 = 17.6 us of compute per 14.4 us cycle, less than 2 Ps can run, so Ps go
// idle with timers pending and the hand-off of expired timers between Ps shows.
func BenchmarkSleepyPool(b *testing.B) {
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(4)
	for w := 0; w < 4; w++ {
		go func() {
			for range jobs {
				cpuWork(4000)
				time.Sleep(10 * time.Microsecond)
			}
			wg.Done()
		}()
	}
	for i := 0; i < b.N; i++ {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
}

// BenchmarkSelectTwoTimer: a server goroutine serves two request channels and a ticker in one
// select loop; two clients send b.N/2 requests each over their own unbuffered channel, the server
// does cpuWork(1000) per request (about 1.1 us, so an op is a few us) and counts ticks of a 1 ms
// ticker (a housekeeping tick, as servers have: 1 ms is long against an op, so a tick lands about
// once per several hundred requests and the timer case costs its select work on every pass rather
// than its firings). Main waits for the server to have served b.N requests.
func BenchmarkSelectTwoTimer(b *testing.B) {
	req1 := make(chan struct{})
	req2 := make(chan struct{})
	done := make(chan struct{})
	client := func(c chan<- struct{}, n int) {
		for i := 0; i < n; i++ {
			c <- struct{}{}
		}
	}
	go client(req1, share(b.N, 2, 0))
	go client(req2, share(b.N, 2, 1))
	n := b.N
	go func() {
		ticker := time.NewTicker(time.Millisecond)
		defer ticker.Stop()
		ticks := 0
		for served := 0; served < n; {
			select {
			case <-req1:
				cpuWork(1000)
				served++
			case <-req2:
				cpuWork(1000)
				served++
			case <-ticker.C:
				ticks++
			}
		}
		_ = ticks
		close(done)
	}()
	<-done
}

// BenchmarkUnevenPipeline: main produces b.N items into a pipeline of 3 stages and a consumer,
// joined by buffered channels of capacity 16; the stages do cpuWork(1000), cpuWork(4000) and
// cpuWork(1000) per item (about 1.1, 4.4 and 1.1 us: an op of ~7 us at 1 P, and from 2 Ps the
// middle stage bounds the throughput at ~4.4 us per item while the short stages wait on it; the
// buffers of 16 let the short stages run ahead in batches instead of handing off every item).
func BenchmarkUnevenPipeline(b *testing.B) {
	c0 := make(chan struct{}, 16)
	c1 := make(chan struct{}, 16)
	c2 := make(chan struct{}, 16)
	c3 := make(chan struct{}, 16)
	done := make(chan struct{})
	stage := func(in <-chan struct{}, out chan<- struct{}, work int) {
		for range in {
			cpuWork(work)
			out <- struct{}{}
		}
		close(out)
	}
	go stage(c0, c1, 1000)
	go stage(c1, c2, 4000)
	go stage(c2, c3, 1000)
	go func() {
		for range c3 {
		}
		close(done)
	}()
	for i := 0; i < b.N; i++ {
		c0 <- struct{}{}
	}
	close(c0)
	<-done
}

// BenchmarkMutexMap: b.RunParallel over a map of 1024 int keys guarded by one sync.Mutex: each
// iteration does cpuWork(2000) outside the lock (preparing the update, about 2.2 us, so an op is a
// few us at 1 P), then under the lock reads and writes one entry and does cpuWork(200) on it (about
// 0.2 us held: a tenth of the outside work, so the lock is contended now and then from 2 Ps, not
// always). The key comes from a per-goroutine counter, spread over the 1024 entries.
func BenchmarkMutexMap(b *testing.B) {
	var mu sync.Mutex
	m := make(map[int]uint64, 1024)
	for k := 0; k < 1024; k++ {
		m[k] = 0
	}
	b.RunParallel(func(pb *testing.PB) {
		k := 0
		for pb.Next() {
			cpuWork(2000)
			mu.Lock()
			v := m[k&1023]
			m[k&1023] = v + cpuWork(200)
			mu.Unlock()
			k += 7
		}
	})
}

// BenchmarkTimeAfterLoop: the timeout idiom, a receive guarded by time.After in a loop. A producer
// goroutine does cpuWork(1000) per item and sends it over a buffered channel of capacity 16; main
// receives b.N items, each in `select { case <-work: case <-time.After(time.Second): }`, and does
// cpuWork(1000) per item (about 1.1 us each side). The timeout never fires (1 s is far beyond an
// op), as in the code users write to guard a receive that normally succeeds: what it measures is
// time.After's new timer and channel per iteration and the select over two channels, one of them a
// timer channel (Go 1.23: the timer enters a P's heap only while main is blocked in the select).
func BenchmarkTimeAfterLoop(b *testing.B) {
	work := make(chan struct{}, 16)
	n := b.N
	go func() {
		for i := 0; i < n; i++ {
			cpuWork(1000)
			work <- struct{}{}
		}
	}()
	for i := 0; i < b.N; i++ {
		select {
		case <-work:
			cpuWork(1000)
		case <-time.After(time.Second):
			b.Fatal("timed out waiting for an item")
		}
	}
}

// BenchmarkRequestWaitGroup: a goroutine per sub-request, joined by a WaitGroup: per op, main
// starts 4 goroutines that each do cpuWork(1000) (about 1.1 us: go statements and the WaitGroup
// are a visible share of the op's ~5 us at 1 P) and waits for them with wg.Wait.
func BenchmarkRequestWaitGroup(b *testing.B) {
	var wg sync.WaitGroup
	for i := 0; i < b.N; i++ {
		wg.Add(4)
		for k := 0; k < 4; k++ {
			go func() {
				cpuWork(1000)
				wg.Done()
			}()
		}
		wg.Wait()
	}
}

// BenchmarkFanOutBuffered: main feeds b.N items into a buffered channel of capacity 100 read by 8
// workers; each worker does cpuWork(2000) per item (about 2.2 us) and sends a result over an
// unbuffered channel to one collector goroutine; main waits for the workers, then the collector.
// At 2 Ps on 2 cores the work parallelises (the ratio 2P/1P measured 0.56 on the EPYC VM, issue
// 23), so this pair shows whether the model's OS placement lets both cores run.
func BenchmarkFanOutBuffered(b *testing.B) { fanOut(b, 100, 2000) }

// The allocating shapes (issue 24): programs whose ns/op the garbage collector shapes. Each one
// calls runtime.GC() after its set-up and before b.ResetTimer, so that under GODEBUG=gctrace=1
// the last "(forced)" cycle a run prints marks the start of its timed loop: the cycles after it
// are the loop's (go test also forces one before every b.N round). The scenarios do the same with
// `gc {}` before their measured loop.

// node is a binary tree node: two pointers, 16 bytes, size class 16.
type node struct{ left, right *node }

// bottomUp builds a complete tree of the given depth: 2^(depth+1) - 1 nodes.
func bottomUp(depth int) *node {
	if depth <= 0 {
		return &node{}
	}
	return &node{bottomUp(depth - 1), bottomUp(depth - 1)}
}

// check walks the tree and counts its nodes, so the tree is used.
func (n *node) check() int {
	if n.left == nil {
		return 1
	}
	return 1 + n.left.check() + n.right.check()
}

var treeSink int

// BenchmarkTreeBuild: binary-trees. A long-lived tree of depth 18 (524,287 nodes of 16 bytes, 8
// MiB) stays reachable for the whole run; each op builds a tree of depth 12 (8,191 nodes, 128
// KiB), walks it and drops it. The live heap sets the heap goal (16 MiB at GOGC=100), so a cycle
// comes about every 64 ops and each marks the 8 MiB tree.
func BenchmarkTreeBuild(b *testing.B) {
	long := bottomUp(18)
	runtime.GC()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		treeSink += bottomUp(12).check()
	}
	b.StopTimer()
	treeSink += long.check()
}

// smallObj is what BenchmarkSmallAllocParallel allocates: 64 bytes with a pointer in it, so the
// collector scans it.
type smallObj struct {
	next *smallObj
	pad  [7]uint64
}

// newSmall allocates one smallObj on the heap: a function the compiler may not inline returns a
// pointer to it, so escape analysis cannot keep it on the stack.
//
//go:noinline
func newSmall(prev *smallObj) *smallObj {
	return &smallObj{next: prev}
}

// BenchmarkSmallAllocParallel: b.RunParallel, each op allocates one 64-byte object and does
// cpuWork(50); each goroutine keeps its last 16 objects reachable in a ring of its own (so
// the live heap is tiny and the heap goal is GOGC's minimum, 4 MiB x GOGC/100).
func BenchmarkSmallAllocParallel(b *testing.B) {
	runtime.GC()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var ring [16]*smallObj
		i := 0
		for pb.Next() {
			ring[i&15] = newSmall(nil)
			cpuWork(50)
			i++
		}
		runtime.KeepAlive(&ring)
	})
}
