// gQueue and gList methods (proc.go).
#include "sim/runtime/gqueue.h"

#include "sim/runtime/runtime2.h"

namespace gmp::rt {

// gQueue.push (proc.go): gp becomes q's first element.
void gQueue::push(g* gp) {
  gp->schedlink = head();
  set_head(gp);
  if (tail == nullptr) tail = gp;
  size++;
}

// gQueue.pushBack (proc.go): gp becomes q's last element.
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

// gQueue.pushBackAll (proc.go): appends the whole of q2 after q's last goroutine, in O(1); q2 is
// taken by value and left to the caller to discard.
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

// gList.pushAll (proc.go): q's goroutines, in q's order, go on top of the stack l.
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
