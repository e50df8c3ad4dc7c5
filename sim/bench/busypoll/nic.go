// The emulated NIC of the busy-poll benchmark (busypoll_test.go). There is no RDMA hardware here,
// so the NIC is emulated in C the way sim/scenarios/busypoll.textproto's device is defined: it
// sends one message at a time, each taking SERVICE_NS of link time from when it is posted or the
// link frees up, and a completion is visible once its message is sent. The NIC needs no thread: a
// completion's time is computed when it is posted and compared with the clock when polled, so the
// link keeps sending while the Go thread is stopped, until the queue runs dry, as hardware does.
// The driver's work in each call is a calibrated busy loop (nic_reset measures it), so that a
// call takes POST_NS or POLL_NS of C time, clock read included, as the scenario's do.
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
static double iters_per_ns; // of spin_iters, measured by nic_reset
static uint64_t clock_cost; // ns of one nic_now
uint64_t nic_sink;

static uint64_t nic_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// The driver's own work: a dependent chain, so that its time does not hang on the clock's cost.
static void spin_iters(uint64_t n) {
	uint64_t x = nic_sink;
	for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005u + 1442695040888963407u;
	nic_sink = x;
}

// ns of driver work, less the clock read that the emulation adds after it.
static void spin_for(uint64_t ns) {
	if (ns > clock_cost) spin_iters((uint64_t)((double)(ns - clock_cost) * iters_per_ns));
}

static void nic_reset(void) {
	nic_free_at = 0;
	nic_head = nic_tail = 0;
	enum { N = 20000000, C = 1000000 };
	uint64_t a = nic_now();
	spin_iters(N);
	uint64_t b = nic_now();
	for (int i = 0; i < C; i++) (void)nic_now();
	uint64_t c = nic_now();
	iters_per_ns = (double)N / (double)(b - a);
	clock_cost = (c - b) / C;
}

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
