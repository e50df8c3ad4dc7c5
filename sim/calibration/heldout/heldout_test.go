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
func BenchmarkFanOutIn(b *testing.B) {
	jobs := make(chan struct{})
	results := make(chan struct{})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(8)
	for w := 0; w < 8; w++ {
		go func() {
			for range jobs {
				cpuWork(200)
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
