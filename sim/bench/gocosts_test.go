// Real-Go measurements that cost-profile values cite: run with
//
//	go test -bench 'ChanSendRecv|MutexLockUnlock' -count 5 sim/bench/gocosts_test.go
package pingpong

import (
	"sync"
	"testing"
)

// One buffered send plus one receive by the same goroutine: twice chan_op, with no waiter.
func BenchmarkChanSendRecv(b *testing.B) {
	c := make(chan struct{}, 1)
	for i := 0; i < b.N; i++ {
		c <- struct{}{}
		<-c
	}
}

// An uncontended sync.Mutex Lock plus Unlock: twice mutex_fast_path.
func BenchmarkMutexLockUnlock(b *testing.B) {
	var mu sync.Mutex
	for i := 0; i < b.N; i++ {
		mu.Lock()
		mu.Unlock()
	}
}
