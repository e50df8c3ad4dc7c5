// Syscall-heavy: 4 goroutines each make 2,000 small file writes and reads.
package main

import (
	"os"
	"runtime/trace"
	"sync"
)

func main() {
	f, _ := os.Create(os.Args[1])
	trace.Start(f)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tmp, _ := os.CreateTemp("", "gmpsim-syscall")
			defer os.Remove(tmp.Name())
			buf := make([]byte, 4096)
			for i := 0; i < 2000; i++ {
				tmp.WriteAt(buf, int64(i%16)*4096)
				tmp.ReadAt(buf, int64((i+7)%16)*4096)
			}
			tmp.Close()
		}(w)
	}
	wg.Wait()
	trace.Stop()
	f.Close()
}
