// The real-Go counterpart of sim/scenarios/busypoll.textproto: one goroutine posts work requests
// to a NIC (nic.go, emulated) and busy-polls its completion queue, every post and poll a cgo
// call, with 128 requests in flight (shared/reference/published-figures.md, section B).
package busypoll

import "testing"

func BenchmarkRDMASend(b *testing.B) {
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
}
