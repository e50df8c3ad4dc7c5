// gQueue and gList (proc.go): intrusive queues and stacks of Gs linked through g.schedlink.
// A G is on at most one gQueue or gList at a time.
//
// Go reads sched.runq's head without sched.lock ("!sched.runq.empty()" in findRunnable). That read
// is offered to the driver through emptyRacy(), and head is always stored with a relaxed atomic
// so the racy read is defined C++. Every other access happens under sched.lock or on a queue
// local to one thread, and is not a scheduling point of its own: the lock is.
#pragma once

#include <atomic>
#include <cstdint>

namespace gmp::rt {

struct g;
using guintptr = g*;

struct gList;

struct gQueue {
  guintptr head_ = nullptr;
  guintptr tail = nullptr;
  int32_t size = 0;

  gQueue() = default;
  gQueue(guintptr h, guintptr t, int32_t n) : head_(h), tail(t), size(n) {}
  gQueue(const gQueue& o) : head_(o.head()), tail(o.tail), size(o.size) {}
  gQueue& operator=(const gQueue& o) {
    set_head(o.head());
    tail = o.tail;
    size = o.size;
    return *this;
  }

  guintptr head() const { return std::atomic_ref<guintptr>(const_cast<guintptr&>(head_)).load(std::memory_order_relaxed); }
  void set_head(guintptr h) { std::atomic_ref<guintptr>(head_).store(h, std::memory_order_relaxed); }

  bool empty() const { return head() == nullptr; }
  // empty() read without the lock that guards the queue; an interleaving point.
  bool emptyRacy() const;
  void push(g* gp);
  void pushBack(g* gp);
  void pushBackAll(gQueue q2);
  g* pop();
  gList popList();
};

struct gList {
  guintptr head = nullptr;
  int32_t size = 0;

  bool empty() const { return head == nullptr; }
  void push(g* gp);
  void pushAll(gQueue q);
  g* pop();
};

}  // namespace gmp::rt
