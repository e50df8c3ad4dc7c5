//go:build gmpcounters

// The ping-pong of sim/bench/pingpong_test.go on an instrumented runtime (see run.sh): prints the
// scheduler's event counts per 100,000 round trips next to ns/op.
package realcounts

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func BenchmarkPingPong(b *testing.B) {
	ping := make(chan struct{})
	pong := make(chan struct{})
	go func() {
		for range ping {
			pong <- struct{}{}
		}
	}()
	before := runtime.GmpCounters()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ping <- struct{}{}
		<-pong
	}
	b.StopTimer()
	after := runtime.GmpCounters()
	close(ping)
	if b.N < 100000 {
		return
	}
	var out []string
	for i, name := range runtime.GmpCounterNames() {
		out = append(out, fmt.Sprintf("%s=%.1f", name, float64(after[i]-before[i])*1e5/float64(b.N)))
	}
	fmt.Printf("counts per 100k round trips, GOMAXPROCS=%d: %s\n", runtime.GOMAXPROCS(0), strings.Join(out, " "))
}
