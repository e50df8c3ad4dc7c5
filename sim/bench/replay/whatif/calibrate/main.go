// calibrate prints the time of one unit of common.Work on this machine: "unit_ns=X", the median of
// 9 runs of 2000 units, in process CPU time (so that a busy machine's waits for a core stay out).
package main

import (
	"fmt"
	"sort"

	"replaybench/whatif/common"
)

func main() {
	var ns []float64
	for r := 0; r < 9; r++ {
		t := common.CPUTime()
		common.Keep(common.Work(uint64(r), 2000))
		ns = append(ns, float64((common.CPUTime()-t).Nanoseconds())/2000)
	}
	sort.Float64s(ns)
	fmt.Printf("unit_ns=%.1f\n", ns[len(ns)/2])
}
