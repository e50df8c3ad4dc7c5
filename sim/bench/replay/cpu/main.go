// CPU-bound: 8 goroutines each hash a loop, joined by a WaitGroup.
package main

import (
	"os"
	"runtime/trace"
	"sync"
)

func work(n int) uint64 {
	var x uint64 = 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

var sink uint64

func main() {
	f, _ := os.Create(os.Args[1])
	trace.Start(f)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := work(20_000_000)
			mu.Lock()
			sink += r
			mu.Unlock()
		}()
	}
	wg.Wait()
	trace.Stop()
	f.Close()
}
