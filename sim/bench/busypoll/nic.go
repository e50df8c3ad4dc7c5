// The emulated NIC of the busy-poll benchmark (busypoll_test.go). There is no RDMA hardware here,
// so the NIC is emulated in C the way sim/scenarios/busypoll.textproto's device is defined: it
// sends one message at a time, each taking SERVICE_NS of link time from when it is posted or the
// link frees up, and a completion is visible once its message is sent. The NIC needs no thread: a
// completion's time is computed when it is posted and compared with the clock when polled, so the
// link keeps sending while the Go thread is stopped, until the queue runs dry, as hardware does.
// (cgo is not allowed in _test.go files, hence this file.)
package busypoll

/*
#include <stdint.h>
#include <time.h>

enum {
	SERVICE_NS = 1337, // 65,536 B at 49,000 MB/s, the C tool's rate (scenario's device)
	POST_NS = 256,     // ibv_post_send per work request (published)
	POLL_NS = 50,      // one ibv_poll_cq (the scenario's assumption)
	RING = 1024,       // more than the 128 in flight
};

static uint64_t nic_free_at, nic_done[RING];
static unsigned nic_head, nic_tail;

static uint64_t nic_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_for(uint64_t ns) {
	const uint64_t until = nic_now() + ns;
	while (nic_now() < until) {
	}
}

static void nic_reset(void) { nic_free_at = 0; nic_head = nic_tail = 0; }

// ibv_post_send: the driver's work, then the doorbell.
static void post(void) {
	spin_for(POST_NS);
	const uint64_t now = nic_now();
	nic_free_at = (now > nic_free_at ? now : nic_free_at) + SERVICE_NS;
	nic_done[nic_tail++ % RING] = nic_free_at;
}

// ibv_poll_cq: 1 if it reaped a completion.
static int poll_cq(void) {
	spin_for(POLL_NS);
	if (nic_head == nic_tail || nic_done[nic_head % RING] > nic_now()) return 0;
	nic_head++;
	return 1;
}
*/
import "C"

func nicReset() { C.nic_reset() }

// post is ibv_post_send: one cgo call.
func post() { C.post() }

// pollCQ is ibv_poll_cq: one cgo call; true if it reaped a completion.
func pollCQ() bool { return C.poll_cq() != 0 }
