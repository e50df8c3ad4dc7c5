//go:build gmpcounters

// Hooks sim/bench/pingpong_test.go's benchmark to an instrumented runtime (see run.sh): prints the
// scheduler's event counts per 100,000 round trips next to ns/op.
package pingpong

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func init() {
	var before []uint64
	beforeLoop = func(*testing.B) { before = runtime.GmpCounters() }
	afterLoop = func(b *testing.B) {
		after := runtime.GmpCounters()
		if b.N < 100000 {
			return
		}
		var out []string
		for i, name := range runtime.GmpCounterNames() {
			out = append(out, fmt.Sprintf("%s=%.1f", name, float64(after[i]-before[i])*1e5/float64(b.N)))
		}
		fmt.Printf("counts per 100k round trips, GOMAXPROCS=%d: %s\n", runtime.GOMAXPROCS(0), strings.Join(out, " "))
	}
}
