// Study D, claim 1 (docs/studies/d-claims.md): the real counterpart of
// docs/studies/d-requests.textproto. 16 connections, each a goroutine that waits 1 ms for its next
// request (time.Sleep) and starts a handler goroutine; a handler spins for 20 us, writes 4 KiB to
// /dev/null (a system call) and exits. 16 x 150 = 2,400 requests. Build with `go test -c` and run
// under perf at several GOMAXPROCS values to count runtime.stealWork and runtime.runqsteal:
//
//	GOMAXPROCS=1 ./d-go.test -test.run TestServe -test.v
package dclaims

import (
	"os"
	"sync"
	"testing"
	"time"
)

func handle(f *os.File, buf []byte, done *sync.WaitGroup) {
	defer done.Done()
	start := time.Now()
	for time.Since(start) < 20*time.Microsecond {
	}
	f.Write(buf)
}

func TestServe(t *testing.T) {
	f, err := os.OpenFile("/dev/null", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	var conns, handlers sync.WaitGroup
	start := time.Now()
	for c := 0; c < 16; c++ {
		conns.Add(1)
		go func() {
			defer conns.Done()
			for i := 0; i < 150; i++ {
				time.Sleep(time.Millisecond)
				handlers.Add(1)
				go handle(f, buf, &handlers)
			}
		}()
	}
	conns.Wait()
	handlers.Wait()
	d := time.Since(start)
	t.Logf("2400 requests in %v: %.0f requests/s", d, 2400/d.Seconds())
}
