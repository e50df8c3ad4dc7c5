// The global run queue (proc.go): sched.runq, a gQueue guarded by sched.lock.
#include <algorithm>

#include "sim/runtime/runtime.h"

namespace gmp::rt {

// Every put reports a PutGlobal event (not in Go) while sched.lock still keeps the Gs from running:
// the first G put, the current M's P (nil without one), how many.
void Runtime::putGlobalEvent(g* first, int32_t n) {
  if (host == nullptr) return;
  g* cur = plat::getg();
  ev(Ev::PutGlobal, first, cur != nullptr && cur->m != nullptr ? cur->m->p : nullptr, n);
}

// globrunqput (proc.go): puts gp at the tail of the global queue.
void Runtime::globrunqput(g* gp) {
  assertLockHeld(sched.lock);
  sched.runq.pushBack(gp);
  putGlobalEvent(gp, 1);
}

// globrunqputhead (proc.go): puts gp at the head of the global queue.
void Runtime::globrunqputhead(g* gp) {
  assertLockHeld(sched.lock);
  sched.runq.push(gp);
  putGlobalEvent(gp, 1);
}

// globrunqputbatch (proc.go): appends a batch to the global queue and clears *batch.
void Runtime::globrunqputbatch(gQueue* batch) {
  assertLockHeld(sched.lock);
  putGlobalEvent(batch->head(), batch->size);
  sched.runq.pushBackAll(*batch);
  *batch = gQueue{};
}

// globrunqget (proc.go): takes one G from the global queue, or nil.
g* Runtime::globrunqget() {
  assertLockHeld(sched.lock);
  if (sched.runq.size == 0) return nullptr;
  return sched.runq.pop();
}

// globrunqgetbatch (proc.go): takes up to n Gs, and never more than this P's fair share
// (size/gomaxprocs + 1): the first is returned to run, the rest come back as a queue.
std::pair<g*, gQueue> Runtime::globrunqgetbatch(int32_t n) {
  assertLockHeld(sched.lock);
  gQueue q;
  if (sched.runq.size == 0) return {nullptr, q};

  n = std::min({n, sched.runq.size, sched.runq.size / gomaxprocs + 1});

  g* gp = sched.runq.pop();
  n--;
  for (; n > 0; n--) q.pushBack(sched.runq.pop());
  return {gp, q};
}

}  // namespace gmp::rt
