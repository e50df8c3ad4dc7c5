// A channel pipeline: a producer, three stages and a consumer, 20,000 items.
package main

import (
	"os"
	"runtime/trace"
)

func stage(in <-chan uint64, out chan<- uint64) {
	for v := range in {
		for i := 0; i < 2000; i++ {
			v = v*6364136223846793005 + 1
		}
		out <- v
	}
	close(out)
}

var sink uint64

func main() {
	f, _ := os.Create(os.Args[1])
	trace.Start(f)
	src := make(chan uint64, 16)
	a := make(chan uint64, 16)
	b := make(chan uint64, 16)
	c := make(chan uint64, 16)
	go func() {
		for i := 0; i < 20000; i++ {
			src <- uint64(i)
		}
		close(src)
	}()
	go stage(src, a)
	go stage(a, b)
	go stage(b, c)
	for v := range c {
		sink += v
	}
	trace.Stop()
	f.Close()
}
