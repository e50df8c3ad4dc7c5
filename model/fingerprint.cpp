#include "model/fingerprint.h"

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

int64_t goid(const rt::g* gp) { return gp != nullptr ? gp->goid : -1; }

}  // namespace

uint64_t fingerprint(const rt::Runtime& r, std::span<const engine::Step> enabled) {
  Hasher x;
  for (const rt::p* pp : r.allp) {
    x.add(pp->status.peek());
    const rt::m* mp = pp->m.peek();
    x.add(static_cast<uint64_t>(mp != nullptr ? mp->id : -1));
    const uint32_t h = pp->runqhead.peek(), t = pp->runqtail.peek();
    x.add(t - h);
    for (uint32_t i = h; i != t && i - h <= rt::kRunqSize; i++)
      x.add(static_cast<uint64_t>(goid(pp->runq[i % rt::kRunqSize].peek())));
    x.add(static_cast<uint64_t>(goid(pp->runnext.peek())));
  }
  int32_t n = 0;
  for (const rt::g* gp = r.sched.runq.head(); gp != nullptr && n <= r.sched.runq.size; gp = gp->schedlink, n++) {
    x.add(static_cast<uint64_t>(gp->goid));
  }
  x.add(static_cast<uint64_t>(r.sched.npidle.peek()));
  x.add(static_cast<uint64_t>(r.sched.nmspinning.peek()));
  x.add(static_cast<uint64_t>(r.sched.nmidle));
  x.add(r.sched.needspinning.peek());
  for (const rt::m* mp = r.allm.peek(); mp != nullptr; mp = mp->alllink) {
    x.add(static_cast<uint64_t>(mp->id));
    x.add(static_cast<uint64_t>(mp->p != nullptr ? mp->p->id : -1));
    x.add(static_cast<uint64_t>(goid(mp->curg.peek())));
    x.add(mp->spinning ? 1 : 0);
  }
  for (const rt::g* gp : r.allgs) {
    x.add(static_cast<uint64_t>(gp->goid));
    x.add(gp->atomicstatus.peek());
    if (!rt::isSystemGoroutine(gp) && gp->task != nullptr) {
      const auto* t = static_cast<const workload::Task*>(gp->task);
      x.add(static_cast<uint64_t>(t->func));
      x.add(static_cast<uint64_t>(t->pc));
      for (int64_t c : t->counters) x.add(static_cast<uint64_t>(c));
      // Its variables: parameters, loop vars and the values it received (a program's state now
      // depends on the values its channels carry, so two states that differ only there differ).
      for (int64_t v : t->vars) x.add(static_cast<uint64_t>(v));
    }
  }
  for (const engine::Step& s : enabled) {
    x.add(s.tid);
    x.add(static_cast<uint64_t>(s.kind));
    x.add(static_cast<uint64_t>(s.op));
    x.add(s.site.line());
  }
  return x.h;
}

}  // namespace gmp::model
