// fanout: 1,500 requests one after another; each is served by 4 goroutines, joined by a
// WaitGroup of its own, that write their parts into the request's map under the request's mutex;
// main then reads the map (2 units). A part is common.Size(4r+k)/3 + 5 units (6 to 72). About
// 120 ms of CPU at GOMAXPROCS 1. sim/scenarios/whatif-fanout.textproto is this program written by
// hand.
package main

import (
	"sync"

	"replaybench/whatif/common"
)

const (
	requests = 1500
	parts    = 4
)

func main() {
	run := common.Start()
	for r := 0; r < requests; r++ {
		var wg sync.WaitGroup
		var mu sync.Mutex
		m := make(map[int]uint64, parts)
		for k := 0; k < parts; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				size := common.Size(r*parts+k, 7933, 41)/3 + 5
				v := common.Work(uint64(size), size)
				mu.Lock()
				m[k] = v
				mu.Unlock()
			}(k)
		}
		wg.Wait()
		var sum uint64
		for _, v := range m {
			sum += v
		}
		common.Keep(common.Work(sum, 2))
	}
	run.Stop()
}
