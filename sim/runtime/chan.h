// Channels (chan.go).
//
// Protocol. c.lock guards every field of the channel and the fields of the sudogs queued on it.
// At least one of sendq and recvq is empty (except for a select that both sends and receives on
// one unbuffered channel); on a buffered channel qcount > 0 implies an empty recvq and
// qcount < dataqsiz an empty sendq. A sender that finds a waiting receiver hands the value over
// and readies it (send); a receiver that finds a waiting sender takes the value, and on a buffered
// channel the sender's value goes to the freed slot (recv); otherwise the value goes through the
// buffer, or the goroutine queues a sudog and parks, its park unlocking c.lock (chanparkcommit).
// The waker sets gp.param to the sudog it completed and sg.success to whether a value was
// delivered (false: the channel was closed). A sudog queued by a select is taken only by the waker
// that wins the CAS of g.selectDone from 0 to 1.
//
// The non-blocking fast paths read closed, qcount and the queue heads without the lock: those
// fields are Atomic (see atomic.h); the plain accesses Go makes under the lock are get()/set().
//
// Element values. Every channel carries int64 elements, as a Go channel whose element is 8 bytes
// wide: ep, sudog.elem and scase.elem point at one int64 (nil, as in Go, for a receive whose value
// is dropped; here also for a send of 0, the zero value). The copies are made where chan.go makes
// them, under c.lock, as plain memory: a buffered send writes slot sendx, a buffered receive reads
// and then zeroes slot recvx, a hand-off writes straight into the parked peer's elem, and a
// receive from a closed, drained channel zeroes ep. An ep must stay valid while its goroutine is
// parked, so it points at heap memory (the interpreter's Task), never at a goroutine's stack,
// which the stack pool moves away while the goroutine sleeps (docs/architecture.md).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "sim/platform/atomic.h"
#include "sim/platform/platform.h"
#include "sim/runtime/sudog.h"

namespace gmp::rt {

// waitq (chan.go)
struct waitq {
  Atomic<sudog*> first;  // read without the lock by full() and empty()
  sudog* last = nullptr;

  void enqueue(sudog* sgp);
  sudog* dequeue();
  void dequeueSudoG(sudog* sgp);  // select.go
};

// hchan (chan.go)
struct hchan {
  Atomic<uint64_t> qcount;  // values now buffered
  uint64_t dataqsiz = 0;    // the buffer's capacity (0: unbuffered); fixed at makechan
  Atomic<uint32_t> closed;
  uint64_t sendx = 0;  // the slot the next buffered send fills
  uint64_t recvx = 0;  // the slot the next buffered receive empties
  waitq recvq;         // goroutines blocked receiving
  waitq sendq;         // goroutines blocked sending
  // lock guards every field of the channel and the fields of the sudogs queued on it. Nothing
  // is readied while it is held (a goready under it could deadlock with stack shrinking in Go).
  plat::Mutex lock;
  // Not in Go: the channel's stable identity, select's lock order (Go sorts by address).
  uint64_t id = 0;
  // buf: the ring of dataqsiz elements. Not in Go: it is grown on demand, up to the highest slot
  // a value other than 0 was written to, so a channel that only ever carries 0 (every channel of
  // a program without values) allocates nothing; a slot past its end holds 0.
  std::vector<int64_t> buf;

  hchan(uint64_t size, uint64_t id_) : dataqsiz(size), id(id_) {}

  // hchan.sortkey (select.go)
  uint64_t sortkey() const { return id; }
};

// makechan (chan.go): a channel of capacity size, owned by r (Runtime::current() in the first
// form), with a fresh id from newSyncId(r).
hchan* makechan(int64_t size);
hchan* makechan(Runtime& r, int64_t size);
bool full(hchan* c);
bool empty(hchan* c);
void chansend1(hchan* c, void* elem);
bool chansend(hchan* c, void* ep, bool block);
void send(hchan* c, sudog* sg, void* ep, const std::function<void()>& unlockf, int skip);
void closechan(hchan* c);
void chanrecv1(hchan* c, void* elem);
// Returns (selected, received).
std::pair<bool, bool> chanrecv(hchan* c, void* ep, bool block);
void recv(hchan* c, sudog* sg, void* ep, const std::function<void()>& unlockf, int skip);
bool chanparkcommit(g* gp, void* chanLock);
// chanbuf (chan.go): slot i's value, reading 0 past what buf holds.
int64_t chanbufload(const hchan* c, uint64_t i);
// typedmemmove into chanbuf(c, i) from src (nil: the value 0), growing buf when the value needs it.
void chanbufstore(hchan* c, uint64_t i, const void* src);
// typedmemclr of chanbuf(c, i).
void chanbufclr(hchan* c, uint64_t i);
bool selectnbsend(hchan* c, void* elem);
std::pair<bool, bool> selectnbrecv(void* elem, hchan* c);
int64_t chanlen(hchan* c);
int64_t chancap(hchan* c);

}  // namespace gmp::rt
