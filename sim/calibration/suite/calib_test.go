// The fit suite of `gmpsim calibrate`: one benchmark per cost the simulator's model needs, each
// written so that cost dominates its ns/op. Every BenchmarkX here has a paired scenario,
// BenchmarkX.textproto in this folder, with the same goroutines, channels and per-op work; the
// calibration runs
//
//	go test -run XXX -bench . -cpu 1,2,4
//
// here and `gmpsim run BenchmarkX.textproto --procs P` for each P, and fits the cost profile so
// that the simulated ns/op match the real ones. See ../README.md for what each benchmark isolates.
//
// The code builds with Go 1.19 and later: no range over int, no b.Loop, no min/max builtins.
package calib

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// cpuWork is the compute kernel of every benchmark that needs CPU work: a linear congruential
// generator whose loop-carried chain is one 64-bit multiply and one add per iteration, with no
// memory traffic. The scenarios give the same work as `compute { iterations: n }`, which the cost
// profile's speed_ns_per_iteration turns into time. It is not inlined, so each call is a function
// call with a stack check: a cooperative preemption point.
//
//go:noinline
func cpuWork(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// sink keeps cpuWork's results alive.
var sink uint64

// BenchmarkGoroutineCreate: per op, start one goroutine that only calls wg.Done, and wait for it.
// newproc + goexit, plus the park and ready of the WaitGroup hand-off.
func BenchmarkGoroutineCreate(b *testing.B) {
	var wg sync.WaitGroup
	for i := 0; i < b.N; i++ {
		wg.Add(1)
		go func() {
			wg.Done()
		}()
		wg.Wait()
	}
}

// BenchmarkGosched: runtime.Gosched with nothing else to run: one pass through the scheduler
// (the yielding goroutine goes to the global run queue and is found again).
func BenchmarkGosched(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runtime.Gosched()
	}
}

// BenchmarkChanPingPong: an unbuffered ping-pong between two goroutines over two channels; one
// op is one round trip (two hand-offs, each a chan_op, a park and a ready).
func BenchmarkChanPingPong(b *testing.B) {
	ping := make(chan struct{})
	pong := make(chan struct{})
	go func() {
		for range ping {
			pong <- struct{}{}
		}
	}()
	for i := 0; i < b.N; i++ {
		ping <- struct{}{}
		<-pong
	}
	close(ping)
}

// BenchmarkChanSendRecv: a buffered send and a receive by the same goroutine, never blocking:
// two chan_op.
func BenchmarkChanSendRecv(b *testing.B) {
	c := make(chan struct{}, 1)
	for i := 0; i < b.N; i++ {
		c <- struct{}{}
		<-c
	}
}

// BenchmarkMutexUncontended: sync.Mutex Lock and Unlock by one goroutine: two mutex_fast_path.
func BenchmarkMutexUncontended(b *testing.B) {
	var mu sync.Mutex
	for i := 0; i < b.N; i++ {
		mu.Lock()
		mu.Unlock()
	}
}

// BenchmarkWakeIdleP: main wakes a parked goroutine and keeps its own P busy polling for the
// answer, so the woken goroutine must start on another, idle P: wakep, the futex wake-up of an
// idle M, the steal of the goroutine from main's P, and back. One op is one round trip. Needs 2
// Ps: at 1 P the worker could run only when sysmon preempts the polling main (10 ms).
func BenchmarkWakeIdleP(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs GOMAXPROCS >= 2: at 1 P the poll loop holds the only P until sysmon preempts it")
	}
	ping := make(chan struct{}, 1)
	pong := make(chan struct{}, 1)
	go func() {
		for range ping {
			pong <- struct{}{}
		}
	}()
	var x uint64
	for i := 0; i < b.N; i++ {
		ping <- struct{}{}
	poll:
		for {
			x += cpuWork(400)
			select {
			case <-pong:
				break poll
			default:
			}
		}
	}
	close(ping)
	sink = x
}

// BenchmarkSyscallGetpid: a getpid system call through syscall.Syscall, which brackets it with
// entersyscall and exitsyscall (RawSyscall would not): syscall_enter_exit plus the kernel's time.
func BenchmarkSyscallGetpid(b *testing.B) {
	for i := 0; i < b.N; i++ {
		syscall.Syscall(syscall.SYS_GETPID, 0, 0, 0)
	}
}

// BenchmarkCPU: b.RunParallel over cpuWork(20000): pure compute, speed_ns_per_iteration; at -cpu
// 2 and more also how many cores the machine really gives.
func BenchmarkCPU(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		var x uint64
		for pb.Next() {
			x += cpuWork(20000)
		}
		atomic.AddUint64(&sink, x)
	})
}

// BenchmarkAtomicCounter: GOMAXPROCS goroutines (b.RunParallel) hammer one shared counter with
// atomic.AddInt64: atomic_xadd, and a cache-line transfer whenever another core wrote it last.
func BenchmarkAtomicCounter(b *testing.B) {
	var n int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			atomic.AddInt64(&n, 1)
		}
	})
}

// BenchmarkSleepBusyP: time.Sleep(20us) in a loop while a second goroutine keeps a P busy in
// short chunks of work (cpuWork(1000), ~1.3 us), each followed by runtime.Gosched. At 1 P the
// sleeper's timer is run by the scheduler when the busy goroutine yields, so one op is 20 us plus
// the timer's costs and at most one chunk. At 2 Ps and more the sleeper's P is idle and its M
// waits in epoll_wait, whose timeout is whole milliseconds: each Sleep(20us) takes about 1 ms
// unless another M runs the timer first.
func BenchmarkSleepBusyP(b *testing.B) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		var x uint64
		for {
			x += cpuWork(1000)
			runtime.Gosched()
			select {
			case <-done:
				sink = x
				close(exited)
				return
			default:
			}
		}
	}()
	for i := 0; i < b.N; i++ {
		time.Sleep(20 * time.Microsecond)
	}
	close(done)
	<-exited
}

// The allocating benchmarks (issue 24): the costs of the garbage collector's model. Each calls
// runtime.GC() after its set-up, before b.ResetTimer, so that under GODEBUG=gctrace=1 the cycles
// after the last "(forced)" line a run prints are its timed loop's; their scenarios do the same
// with `gc {}`.

// obj64 is 64 bytes with pointers (the collector scans it); obj1k is 1 KiB with pointers.
type obj64 struct {
	next *obj64
	pad  [7]uint64
}

type obj1k struct {
	next *obj1k
	pad  [127]uint64
}

// newObj64 and newObj1k allocate on the heap: the compiler may not inline them, so the returned
// pointer escapes.
//
//go:noinline
func newObj64() *obj64 { return &obj64{} }

//go:noinline
func newObj1k(next *obj1k) *obj1k { return &obj1k{next: next} }

// allocSink keeps the last object reachable so each allocation is used.
var allocSink *obj64

// BenchmarkAllocSmall: one 64-byte allocation per op, nothing else live. mallocgc's fast path
// (alloc_ns_per_object, alloc_ns_per_byte) and sweeping (sweep_ns_per_page); a cycle every 4 MiB
// (65,536 ops at GOGC=100) with almost nothing to mark.
func BenchmarkAllocSmall(b *testing.B) {
	runtime.GC()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		allocSink = newObj64()
	}
}

// liveSink holds BenchmarkAllocLive's live heap between runs of its set-up.
var liveSink *obj1k

// BenchmarkAllocLive: a live heap of 16,384 linked 1-KiB objects with pointers (each takes the
// 1,152-byte size class with its malloc header: 18 MiB) stays reachable; each op allocates one
// more and drops it. A cycle comes about every 18 MiB of allocation at GOGC=100 (16,384 ops)
// and marks the live heap: the marking cost
// (mark_ns_per_byte, mark_unit_bytes) dominates the GC CPU that gctrace reports.
func BenchmarkAllocLive(b *testing.B) {
	var head *obj1k
	for i := 0; i < 16384; i++ {
		head = newObj1k(head)
	}
	liveSink = head
	runtime.GC()
	b.ResetTimer()
	var tmp *obj1k
	for i := 0; i < b.N; i++ {
		tmp = newObj1k(nil)
	}
	b.StopTimer()
	liveSink = nil
	runtime.KeepAlive(tmp)
}

// obj16 is a 16-byte list node: a pointer and a word.
type obj16 struct {
	next *obj16
	v    uintptr
}

//go:noinline
func newObj16(next *obj16) *obj16 { return &obj16{next: next} }

// smallLiveSink holds BenchmarkAllocLiveSmall's live list; smallSink its last dropped node.
var smallLiveSink, smallSink *obj16

// BenchmarkAllocLiveSmall: a live list of 524,288 16-byte nodes (8 MiB) stays reachable; each op
// allocates one more node and drops it. A cycle comes about every 8 MiB allocated at GOGC=100
// (524,288 ops) and marks half a million small objects, where BenchmarkAllocLive marks 16,384
// large ones: the two together separate marking's cost per object from its cost per byte
// (mark_ns_per_object, mark_ns_per_byte).
func BenchmarkAllocLiveSmall(b *testing.B) {
	var head *obj16
	for i := 0; i < 524288; i++ {
		head = newObj16(head)
	}
	smallLiveSink = head
	runtime.GC()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		smallSink = newObj16(nil)
	}
	b.StopTimer()
	smallLiveSink = nil
}
