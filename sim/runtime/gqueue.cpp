// gQueue and gList methods (proc.go).
#include "sim/runtime/gqueue.h"

#include "sim/runtime/runtime2.h"

namespace gmp::rt {

// gQueue.push (proc.go): adds gp to the head of q.
void gQueue::push(g* gp) {
  gp->schedlink = head();
  set_head(gp);
  if (tail == nullptr) tail = gp;
  size++;
}

// gQueue.pushBack (proc.go): adds gp to the tail of q.
void gQueue::pushBack(g* gp) {
  gp->schedlink = nullptr;
  if (tail != nullptr) {
    tail->schedlink = gp;
  } else {
    set_head(gp);
  }
  tail = gp;
  size++;
}

// gQueue.pushBackAll (proc.go): adds all Gs in q2 to the tail of q.
void gQueue::pushBackAll(gQueue q2) {
  if (q2.tail == nullptr) return;
  q2.tail->schedlink = nullptr;
  if (tail != nullptr) {
    tail->schedlink = q2.head();
  } else {
    set_head(q2.head());
  }
  tail = q2.tail;
  size += q2.size;
}

// gQueue.pop (proc.go): removes and returns the head of q, or nil.
g* gQueue::pop() {
  g* gp = head();
  if (gp != nullptr) {
    set_head(gp->schedlink);
    if (head() == nullptr) tail = nullptr;
    size--;
  }
  return gp;
}

// gQueue.popList (proc.go): takes all Gs in q as a gList.
gList gQueue::popList() {
  gList stack{LockGuarded<guintptr>(head()), size};
  *this = gQueue{};
  return stack;
}

// gList.push (proc.go)
void gList::push(g* gp) {
  gp->schedlink = head();
  set_head(gp);
  size++;
}

// gList.pushAll (proc.go): prepends all Gs in q to l.
void gList::pushAll(gQueue q) {
  if (!q.empty()) {
    q.tail->schedlink = head();
    set_head(q.head());
    size += q.size;
  }
}

// gList.pop (proc.go)
g* gList::pop() {
  g* gp = head();
  if (gp != nullptr) {
    set_head(gp->schedlink);
    size--;
  }
  return gp;
}

}  // namespace gmp::rt
