// The network poller's types (netpoll.go, netpoll_epoll.go): a descriptor's poll state, the bits
// of an epoll event, and the kernel side that netpoll asks for ready descriptors. The runtime's
// netpoll functions are Runtime members (runtime.h, netpoll.cpp); the network that implements
// NetKernel lives in sim/workload/network.h.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/platform/atomic.h"

namespace gmp::rt {

// A descriptor's poll state (netpoll.go's pollDesc, the part the scheduler reads): rg and wg are
// each pdNil, pdReady (an I/O notification not yet consumed), pdWait (a goroutine is about to
// park) or the parked goroutine itself, as a g pointer.
inline constexpr uintptr_t pdNil = 0, pdReady = 1, pdWait = 2;
// closing is netpoll.go's pollInfo closing bit, set once by pollUnblock (the descriptor's Close).
struct pollDesc {
  Atomic<uintptr_t> rg;
  Atomic<uintptr_t> wg;
  Atomic<uint32_t> closing;
};

// The bits of an event as epoll_wait reports them (linux/eventpoll.h), which netpoll turns into the
// modes it readies.
inline constexpr uint32_t EPOLLIN = 0x1, EPOLLOUT = 0x4, EPOLLERR = 0x8, EPOLLHUP = 0x10, EPOLLRDHUP = 0x2000;

// One ready descriptor: epoll_event's events and data.
struct NetEvent {
  pollDesc* pd = nullptr;
  uint32_t events = 0;
  bool operator==(const NetEvent&) const = default;
};

// The network as the poller sees it (the kernel's side of epoll): descriptors become readable or
// writable at times the host knows in advance (arrivals, answers sent), reported once each
// (edge-triggered, as Go registers them). Reading it is no platform operation: it stands for the
// kernel's own state.
class NetKernel {
 public:
  virtual ~NetKernel() = default;
  // The kernel's clock, on nanotime's scale. Reading it is no platform operation: epoll_wait
  // reads no clock the runtime sees.
  virtual int64_t now() = 0;
  // When the next event not yet reported is due (nanotime's clock); INT64_MAX if none.
  virtual int64_t nextEvent() = 0;
  // The descriptors whose events are due at or before now and not yet reported, one entry per
  // descriptor with all its new events, in the network's order.
  virtual void takeEvents(int64_t now, std::vector<NetEvent>* out) = 0;
};

}  // namespace gmp::rt
