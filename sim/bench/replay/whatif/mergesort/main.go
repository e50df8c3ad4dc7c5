// mergesort: a parallel merge sort of 2M ints (from a seeded LCG, made before the clock starts):
// each half in a goroutine of its own down to 64K elements, which sort.Ints sorts; the halves are
// merged through a buffer. About 180 ms of CPU at GOMAXPROCS 1.
package main

import (
	"fmt"
	"os"
	"sort"

	"replaybench/whatif/common"
)

const (
	n      = 2 << 20
	cutoff = 64 << 10
)

func msort(a, buf []int, done chan<- struct{}) {
	if len(a) <= cutoff {
		sort.Ints(a)
	} else {
		h := len(a) / 2
		left := make(chan struct{})
		go msort(a[:h], buf[:h], left)
		msort(a[h:], buf[h:], nil)
		<-left
		i, j, k := 0, h, 0
		for i < h && j < len(a) {
			if a[i] <= a[j] {
				buf[k] = a[i]
				i++
			} else {
				buf[k] = a[j]
				j++
			}
			k++
		}
		k += copy(buf[k:], a[i:h])
		copy(buf[k:], a[j:])
		copy(a, buf)
	}
	if done != nil {
		close(done)
	}
}

func main() {
	a := make([]int, n)
	buf := make([]int, n)
	x := uint64(12345)
	for i := range a {
		x = x*6364136223846793005 + 1442695040888963407
		a[i] = int(x >> 33)
	}
	run := common.Start()
	msort(a, buf, nil)
	run.Stop()
	for i := 1; i < n; i++ {
		if a[i-1] > a[i] {
			fmt.Fprintln(os.Stderr, "mergesort: not sorted at", i)
			os.Exit(1)
		}
	}
	common.Keep(uint64(a[n/2]))
}
