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
// Element values are not simulated: an element is counted, not copied. qcount, sendx and recvx
// are kept as Go keeps them; ep and sudog.elem are opaque tokens that are passed along and tested
// against nil as in Go, never dereferenced.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

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
bool selectnbsend(hchan* c, void* elem);
std::pair<bool, bool> selectnbrecv(void* elem, hchan* c);
int64_t chanlen(hchan* c);
int64_t chancap(hchan* c);

}  // namespace gmp::rt
