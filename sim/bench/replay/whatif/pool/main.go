// pool: a worker pool of 8 over 5,000 uneven jobs (common.Size: 5 to 202 units, mean about 55).
// A producer sends the sizes on jobs and closes it; the workers send results; a closer waits for
// the workers and closes results; main sums them. About 230 ms of CPU at GOMAXPROCS 1.
// sim/scenarios/whatif-pool.textproto is this program written by hand.
package main

import (
	"fmt"
	"os"
	"sync"

	"replaybench/whatif/common"
)

const (
	workers = 8
	njobs   = 5000
)

func main() {
	run := common.Start()
	jobs := make(chan int, 16)
	results := make(chan uint64, 16)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for size := range jobs {
				results <- common.Work(uint64(size), size)
			}
		}()
	}
	go func() {
		for i := 0; i < njobs; i++ {
			jobs <- common.Size(i, 7919, 13)
		}
		close(jobs)
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	n := 0
	for r := range results {
		common.Keep(r)
		n++
	}
	run.Stop()
	if n != njobs {
		fmt.Fprintf(os.Stderr, "pool: %d results, want %d\n", n, njobs)
		os.Exit(1)
	}
}
