// The real-Go counterparts of sim/scenarios/busypoll.textproto and busypollhog.textproto: one
// goroutine posts work requests to a NIC (nic.go, emulated) and busy-polls its completion queue,
// every post and poll a cgo call, with 128 requests in flight (shared/reference/
// published-figures.md, section B); in the second, a CPU-bound goroutine runs beside it.
package busypoll

import "testing"

// sendLoop fills the send queue, then reaps one completion and posts one request b.N times.
func sendLoop(b *testing.B) {
	nicReset()
	for i := 0; i < 128; i++ {
		post()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for !pollCQ() {
		}
		post()
	}
	b.StopTimer()
}

func BenchmarkRDMASend(b *testing.B) { sendLoop(b) }

var sink uint64

func BenchmarkRDMASendHog(b *testing.B) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		x := uint64(1)
		for {
			for i := 0; i < 1000; i++ {
				x = x*6364136223846793005 + 1442695040888963407
			}
			select {
			case <-stop:
				sink = x
				close(done)
				return
			default:
			}
		}
	}()
	sendLoop(b)
	close(stop)
	<-done
}
