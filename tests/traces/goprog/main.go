// A small program that writes a Go execution trace exercising the scheduler: goroutines that
// block on channels, a mutex and a WaitGroup, sleep, yield, make system calls and spin long
// enough to be preempted, with the CPU profiler on (the trace then holds CPU samples). Used by
// tests/traces/go_import_test.cpp with each installed Go.
package main

import (
	"context"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"syscall"
	"time"
)

func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}

func main() {
	if len(os.Args) != 2 {
		os.Stderr.WriteString("usage: goprog OUT\n")
		os.Exit(2)
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	runtime.GOMAXPROCS(4)
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		panic(err)
	}
	if err := trace.Start(f); err != nil {
		panic(err)
	}
	ctx, task := trace.NewTask(context.Background(), "work")
	var wg sync.WaitGroup
	var mu sync.Mutex
	ch := make(chan int)
	total := 0
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			trace.WithRegion(ctx, "worker", func() {
				for i := 0; i < 20; i++ {
					mu.Lock()
					total += spin(1000)
					mu.Unlock()
					if i%5 == 0 {
						runtime.Gosched()
					}
					if i%7 == 0 {
						time.Sleep(100 * time.Microsecond)
					}
				}
				ch <- w
			})
		}(w)
	}
	go func() {
		for i := 0; i < 8; i++ {
			<-ch
		}
	}()
	// System calls that block long enough for their P to be taken.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 5; i++ {
			r, w, _ := os.Pipe()
			go func() {
				time.Sleep(2 * time.Millisecond)
				w.Write([]byte("x"))
				w.Close()
			}()
			buf := make([]byte, 1)
			r.Read(buf)
			r.Close()
		}
	}()
	// Raw blocking reads (not through the netpoller): system calls long enough for sysmon to
	// take their P away.
	wg.Add(1)
	go func() {
		defer wg.Done()
		var fds [2]int
		if err := syscall.Pipe(fds[:]); err != nil {
			panic(err)
		}
		for i := 0; i < 3; i++ {
			go func() {
				time.Sleep(5 * time.Millisecond)
				syscall.Write(fds[1], []byte("y"))
			}()
			buf := make([]byte, 1)
			syscall.Read(fds[0], buf)
		}
		syscall.Close(fds[0])
		syscall.Close(fds[1])
	}()
	// A goroutine that runs long enough to be preempted.
	wg.Add(1)
	go func() {
		defer wg.Done()
		total += spin(200_000_000)
	}()
	trace.Log(ctx, "phase", "waiting")
	wg.Wait()
	task.End()
	trace.Stop()
	pprof.StopCPUProfile()
	f.Close()
}
