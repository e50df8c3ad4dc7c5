#include "model/fingerprint.h"

#include <algorithm>
#include <vector>

#include "sim/workload/interpreter.h"

namespace gmp::model {

namespace {

struct Hasher {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  void add(uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
  }
};

// How a goroutine is named in a fingerprint (see fingerprint.h). Without symmetry: its goid. With
// it, a user goroutine (one with a scenario function, running or dead) by a hash of what it is,
// the runtime's own by its goid.
struct Namer {
  bool symmetric;
  uint64_t operator()(const rt::g* gp) const {
    if (gp == nullptr) return static_cast<uint64_t>(-1);
    if (!symmetric || rt::isSystemGoroutine(gp)) return static_cast<uint64_t>(gp->goid);
    return contents(gp);
  }
  // Status and, with a task, where the program is and its values.
  static uint64_t contents(const rt::g* gp) {
    Hasher x;
    x.add(gp->atomicstatus.peek());
    if (gp->task == nullptr) return x.h;
    const auto* t = static_cast<const workload::Task*>(gp->task);
    x.add(static_cast<uint64_t>(t->func));
    x.add(static_cast<uint64_t>(t->spawn));
    x.add(static_cast<uint64_t>(t->parallel));
    x.add(t->bench ? 1 : 0);
    x.add(static_cast<uint64_t>(t->pc));
    x.add(t->counters.size());
    for (int64_t c : t->counters) x.add(static_cast<uint64_t>(c));
    // Its variables: parameters, loop vars and the values it received (a program's state now
    // depends on the values its channels carry, so two states that differ only there differ).
    x.add(t->vars.size());
    for (int64_t v : t->vars) x.add(static_cast<uint64_t>(v));
    return x.h;
  }
};

}  // namespace

uint64_t fingerprint(const rt::Runtime& r, std::span<const engine::Step> enabled, bool symmetric) {
  const Namer name{symmetric};
  Hasher x;
  for (const rt::p* pp : r.allp) {
    x.add(pp->status.peek());
    const rt::m* mp = pp->m.peek();
    x.add(static_cast<uint64_t>(mp != nullptr ? mp->id : -1));
    const uint32_t h = pp->runqhead.peek(), t = pp->runqtail.peek();
    x.add(t - h);
    for (uint32_t i = h; i != t && i - h <= rt::kRunqSize; i++) x.add(name(pp->runq[i % rt::kRunqSize].peek()));
    x.add(name(pp->runnext.peek()));
  }
  int32_t n = 0;
  for (const rt::g* gp = r.sched.runq.head(); gp != nullptr && n <= r.sched.runq.size; gp = gp->schedlink, n++) {
    x.add(name(gp));
  }
  x.add(static_cast<uint64_t>(r.sched.npidle.peek()));
  x.add(static_cast<uint64_t>(r.sched.nmspinning.peek()));
  x.add(static_cast<uint64_t>(r.sched.nmidle));
  x.add(r.sched.needspinning.peek());
  for (const rt::m* mp = r.allm.peek(); mp != nullptr; mp = mp->alllink) {
    x.add(static_cast<uint64_t>(mp->id));
    x.add(static_cast<uint64_t>(mp->p != nullptr ? mp->p->id : -1));
    x.add(name(mp->curg.peek()));
    x.add(mp->spinning ? 1 : 0);
  }
  // The goroutines: the runtime's own in allgs order by goid, the users' as a sorted multiset of
  // their contents (with symmetry; without, each with its goid in allgs order).
  thread_local std::vector<uint64_t> users;
  users.clear();
  for (const rt::g* gp : r.allgs) {
    if (!rt::isSystemGoroutine(gp)) {
      if (symmetric) {
        users.push_back(Namer::contents(gp));
        continue;
      }
      x.add(static_cast<uint64_t>(gp->goid));
      x.add(Namer::contents(gp));
      continue;
    }
    x.add(static_cast<uint64_t>(gp->goid));
    x.add(gp->atomicstatus.peek());
  }
  std::sort(users.begin(), users.end());
  x.add(users.size());
  for (uint64_t u : users) x.add(u);
  for (const engine::Step& s : enabled) {
    x.add(s.tid);
    x.add(static_cast<uint64_t>(s.kind));
    x.add(static_cast<uint64_t>(s.op));
    x.add(s.site.line());
  }
  return x.h;
}

}  // namespace gmp::model
