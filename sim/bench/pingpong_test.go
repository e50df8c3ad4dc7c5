// The real-Go counterpart of sim/scenarios/pingpong.textproto, run by gmp_bench: an unbuffered
// ping-pong round trip between two goroutines over two channels.
package pingpong

import "testing"

func BenchmarkPingPong(b *testing.B) {
	ping := make(chan struct{})
	pong := make(chan struct{})
	go func() {
		for range ping {
			pong <- struct{}{}
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ping <- struct{}{}
		<-pong
	}
	close(ping)
}
