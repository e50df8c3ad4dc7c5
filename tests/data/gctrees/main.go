// Writes a Go execution trace of an allocating program for tests/traces/go_import_test.cpp (the
// GC events of an import) and tests/replay_test.cpp (a replay that collects): four goroutines
// build binary trees and drop them, at GOMAXPROCS 2, so the collector runs many cycles, stops
// the world and drafts the builders into mark assists. The traces next to it were made with
//   GOMAXPROCS=2 /usr/lib/go-1.23/bin/go run . gctrees-1.23.trace
//   GOMAXPROCS=2 /usr/lib/go-1.19/bin/go run . gctrees-1.19.trace
// (GOFLAGS=-mod=mod GOTOOLCHAIN=local; README.md here).
package main

import (
	"os"
	"runtime/trace"
	"sync"
)

type node struct{ l, r *node }

// build makes a complete binary tree of depth d, level by level (no recursion, so that the
// trace's stacks stay few and the file small).
func build(d int) *node {
	root := &node{}
	level := []*node{root}
	for ; d > 0; d-- {
		next := make([]*node, 0, 2*len(level))
		for _, n := range level {
			n.l, n.r = &node{}, &node{}
			next = append(next, n.l, n.r)
		}
		level = next
	}
	return root
}

// count walks the tree with an explicit stack.
func (n *node) count() int {
	c := 0
	stack := []*node{n}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c++
		if t.l != nil {
			stack = append(stack, t.l, t.r)
		}
	}
	return c
}

func main() {
	if len(os.Args) != 2 {
		os.Stderr.WriteString("usage: gctrees OUT\n")
		os.Exit(2)
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := trace.Start(f); err != nil {
		panic(err)
	}
	long := build(12) // a tree that stays live: the marked heap
	var wg sync.WaitGroup
	total := make([]int, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				total[w] += build(15).count()
			}
		}(w)
	}
	wg.Wait()
	trace.Stop()
	f.Close()
	if long.count() == 0 {
		panic("lost")
	}
}
