// gQueue and gList (proc.go): intrusive FIFO queues and LIFO stacks of goroutines, chained by
// g.schedlink. Having a single link, a goroutine can be in only one of them at once.
//
// Go reads sched.runq's and sched.gFree's heads without their locks ("!sched.runq.empty()" in
// findRunnable, gfget's check of the global free lists). Those reads go through emptyRacy(),
// offered to the driver; head is a LockGuarded, so they are defined C++. Every other access
// happens under the lock or on a queue local to one thread, and is not a scheduling point of its
// own: the lock is.
#pragma once

#include <cstdint>

#include "sim/platform/atomic.h"

namespace gmp::rt {

struct g;
using guintptr = g*;

struct gList;

struct gQueue {
  LockGuarded<guintptr> head_;
  guintptr tail = nullptr;
  int32_t size = 0;

  gQueue() = default;
  gQueue(guintptr h, guintptr t, int32_t n) : head_(h), tail(t), size(n) {}

  guintptr head() const { return head_.load(); }
  void set_head(guintptr h) { head_.store(h); }

  bool empty() const { return head() == nullptr; }
  // empty() read without the lock that guards the queue; an interleaving point.
  bool emptyRacy() const { return head_.loadRacy() == nullptr; }
  void push(g* gp);
  void pushBack(g* gp);
  void pushBackAll(gQueue q2);
  g* pop();
  gList popList();
};

struct gList {
  LockGuarded<guintptr> head_;
  int32_t size = 0;

  guintptr head() const { return head_.load(); }
  void set_head(guintptr h) { head_.store(h); }

  bool empty() const { return head() == nullptr; }
  // empty() read without the lock that guards the list; an interleaving point.
  bool emptyRacy() const { return head_.loadRacy() == nullptr; }
  void push(g* gp);
  void pushAll(gQueue q);
  g* pop();
};

}  // namespace gmp::rt
