// The real-Go counterpart of sim/scenarios/pingpong.textproto, run by gmp_bench: an unbuffered
// ping-pong round trip between two goroutines over two channels.
package pingpong

import "testing"

// Called around the timed loop when set; only sim/bench/realcounts/count_test.go sets them, to read
// an instrumented runtime's counters.
var beforeLoop, afterLoop func(b *testing.B)

func BenchmarkPingPong(b *testing.B) {
	ping := make(chan struct{})
	pong := make(chan struct{})
	go func() {
		for range ping {
			pong <- struct{}{}
		}
	}()
	if beforeLoop != nil {
		beforeLoop(b)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ping <- struct{}{}
		<-pong
	}
	if afterLoop != nil {
		b.StopTimer()
		afterLoop(b)
	}
	close(ping)
}
