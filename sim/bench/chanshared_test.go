// The real-Go counterpart of sim/scenarios/chanshared.textproto: GOMAXPROCS goroutines each send
// to and receive from one buffered channel. Run with
//
//	go test -bench ChanShared -cpu 1,2,4 -benchtime 2000000x -count 3 sim/bench/chanshared_test.go
package pingpong

import "testing"

func BenchmarkChanShared(b *testing.B) {
	c := make(chan struct{}, 1024)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c <- struct{}{}
			<-c
		}
	})
}
