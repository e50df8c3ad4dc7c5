// Study D, claim 2 (docs/studies/d-claims.md): Go's own BenchmarkCreateGoroutines, copied from
// src/runtime/proc_test.go (go1.27rc2, line 671), the benchmark that commit 4722b1cbd3 (Go 1.3,
// the lock-free local run queue) reported. Each goroutine starts the next and exits: one newproc,
// one runqput, one goexit and one runqget per operation. Run with
//
//	go test -run XXX -bench CreateGoroutines -cpu 1,2 -benchtime 2000000x -count 3 .
package dclaims

import "testing"

func BenchmarkCreateGoroutines(b *testing.B) {
	c := make(chan bool)
	var f func(n int)
	f = func(n int) {
		if n == 0 {
			c <- true
			return
		}
		go f(n - 1)
	}
	go f(b.N)
	<-c
}
