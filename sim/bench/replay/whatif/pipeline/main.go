// pipeline: three stages. A source makes 6,000 items (2 units of work each) and sends their sizes;
// the middle stage is 4 goroutines on one channel, each item common.Size units (5 to 202, mean
// about 55) halved; the sink does 2 units per item and hands main the total. About 160 ms
// of CPU at GOMAXPROCS 1.
package main

import (
	"sync"

	"replaybench/whatif/common"
)

const (
	items  = 6000
	middle = 4
)

func main() {
	run := common.Start()
	src := make(chan int, 16)
	mid := make(chan uint64, 16)
	done := make(chan uint64)
	go func() {
		for i := 0; i < items; i++ {
			common.Keep(common.Work(uint64(i), 2))
			src <- common.Size(i, 7927, 29) / 2
		}
		close(src)
	}()
	var wg sync.WaitGroup
	for w := 0; w < middle; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for size := range src {
				mid <- common.Work(uint64(size), size)
			}
		}()
	}
	go func() {
		wg.Wait()
		close(mid)
	}()
	go func() {
		var total uint64
		for v := range mid {
			total += common.Work(v, 2)
		}
		done <- total
	}()
	common.Keep(<-done)
	run.Stop()
}
