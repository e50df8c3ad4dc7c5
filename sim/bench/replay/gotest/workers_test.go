// A worker pool as a Go test, for `go test -trace`: a producer hands 4,000 jobs over a channel to
// 8 workers, each job about 20 us of arithmetic; the results come back over a second channel.
// The README traces it with Go 1.19 and Go 1.23, imports, exports and replays the trace.
package gotest

import (
	"sync"
	"testing"
)

func work(v uint64) uint64 {
	for i := 0; i < 20000; i++ {
		v = v*6364136223846793005 + 1442695040888963407
	}
	return v
}

func TestWorkers(t *testing.T) {
	jobs := make(chan uint64, 64)
	results := make(chan uint64, 64)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				results <- work(j)
			}
		}()
	}
	go func() {
		for i := 0; i < 4000; i++ {
			jobs <- uint64(i)
		}
		close(jobs)
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	var sum uint64
	n := 0
	for r := range results {
		sum += r
		n++
	}
	if n != 4000 {
		t.Fatalf("got %d results, want 4000", n)
	}
	_ = sum
}
