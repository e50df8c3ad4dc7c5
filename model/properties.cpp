#include "model/properties.h"

#include "sim/runtime/time.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace gmp::model {

namespace {

struct Place {
  const rt::g* gp;
  std::string where;
};

// Every G in a run queue and which queue, in a fixed order: each P's ring then runnext, by P id,
// then the global queue. Read with peek(): observing is no part of the schedule.
std::vector<Place> queued(const rt::Runtime& r) {
  std::vector<Place> out;
  for (const rt::p* pp : r.allp) {
    const std::string pn = "P" + std::to_string(pp->id);
    const uint32_t h = pp->runqhead.peek(), t = pp->runqtail.peek();
    for (uint32_t i = h; i != t && i - h <= rt::kRunqSize; i++) {
      out.push_back({pp->runq[i % rt::kRunqSize].peek(), pn + "'s run queue"});
    }
    if (const rt::g* n = pp->runnext.peek()) out.push_back({n, pn + "'s runnext"});
  }
  int32_t n = 0;
  for (const rt::g* gp = r.sched.runq.head(); gp != nullptr && n <= r.sched.runq.size; gp = gp->schedlink, n++) {
    out.push_back({gp, "the global run queue"});
  }
  return out;
}

std::string gname(const rt::g* gp) { return "G" + std::to_string(gp->goid); }

const char* status_name(uint32_t s) {
  switch (s & ~rt::_Gscan) {
    case rt::_Gidle:
      return "_Gidle";
    case rt::_Grunnable:
      return "_Grunnable";
    case rt::_Grunning:
      return "_Grunning";
    case rt::_Gsyscall:
      return "_Gsyscall";
    case rt::_Gwaiting:
      return "_Gwaiting";
    case rt::_Gdead:
      return "_Gdead";
    case rt::_Gpreempted:
      return "_Gpreempted";
    default:
      return "?";
  }
}

}  // namespace

std::string runnable_places(const rt::Runtime& r) {
  std::string out;
  for (const Place& pl : queued(r)) out += (out.empty() ? "" : ", ") + gname(pl.gp) + " in " + pl.where;
  return out;
}

std::string check_g_conservation(const rt::Runtime& r) {
  std::unordered_map<const rt::g*, std::vector<std::string>> in;  // looked up only, never iterated
  for (const Place& pl : queued(r)) in[pl.gp].push_back(pl.where);
  std::unordered_map<const rt::g*, std::vector<int64_t>> running_on;
  for (const rt::m* mp = r.allm.peek(); mp != nullptr; mp = mp->alllink) {
    if (const rt::g* cg = mp->curg.peek()) running_on[cg].push_back(mp->id);
  }
  for (const rt::g* gp : r.allgs) {
    const uint32_t s = gp->atomicstatus.peek() & ~rt::_Gscan;
    const auto q = in.find(gp);
    const size_t nq = q == in.end() ? 0 : q->second.size();
    if (s == rt::_Grunnable && nq != 1) {
      std::string where;
      if (nq == 0) return gname(gp) + " is _Grunnable but in no run queue: it is lost";
      for (const auto& w : q->second) where += (where.empty() ? "" : " and ") + w;
      return gname(gp) + " is in " + std::to_string(nq) + " run queues at once: " + where;
    }
    if (s != rt::_Grunnable && nq != 0) {
      return gname(gp) + " is " + status_name(s) + " but in " + q->second.front();
    }
    const auto m = running_on.find(gp);
    const size_t nm = m == running_on.end() ? 0 : m->second.size();
    if (s == rt::_Grunning && nm != 1) {
      return gname(gp) + " is _Grunning but the curg of " + std::to_string(nm) + " Ms";
    }
    // A goroutine that stops the world (or runs forEachP) waits as _Gwaiting on its own M.
    const bool suspending = s == rt::_Gwaiting && rt::isWaitingForSuspendG(gp->waitreason);
    if (nm > 0 && s != rt::_Grunning && s != rt::_Gsyscall && !(suspending && nm == 1)) {
      return gname(gp) + " is " + status_name(s) + " but still the curg of M" + std::to_string(m->second.front());
    }
  }
  return "";
}

namespace {
// Ms with m.spinning set, and Ps with status _Pidle, counted from the Ms and Ps themselves.
int32_t spinning_ms(const rt::Runtime& r) {
  int32_t n = 0;
  for (const rt::m* mp = r.allm.peek(); mp != nullptr; mp = mp->alllink) n += mp->spinning ? 1 : 0;
  return n;
}
}  // namespace

std::string check_accounting(const rt::Runtime& r) {
  // What may be in transit at a check: startm takes a P off the idle list (and its caller counts
  // the new M in nmspinning) and keeps both in locals while newm makes the M; allocm's allocation
  // can take time there, with the M's locks up (acquirem). At most one such P and one such count
  // per M with locks. A _Pidle P in some M's m.nextp is handed over and off the list, as in Go.
  std::set<const rt::p*> handed;
  int32_t in_startm = 0;
  for (const rt::m* mp = r.allm.peek(); mp != nullptr; mp = mp->alllink) {
    if (mp->nextp != nullptr) handed.insert(mp->nextp);
    if (mp->locks > 0) in_startm++;
  }
  const int32_t spinning = spinning_ms(r);
  const int32_t nmspinning = r.sched.nmspinning.peek();
  if (nmspinning < spinning || nmspinning - spinning > in_startm + static_cast<int32_t>(handed.size())) {
    return "sched.nmspinning is " + std::to_string(nmspinning) + " but " + std::to_string(spinning) +
           " Ms are spinning";
  }
  int32_t idle = 0, listed = 0;
  for (const rt::p* pp : r.allp) idle += pp->status.peek() == rt::_Pidle && handed.count(pp) == 0 ? 1 : 0;
  for (const rt::p* pp = r.sched.pidle.load(); pp != nullptr && listed <= static_cast<int32_t>(r.allp.size());
       pp = pp->link)
    listed++;
  if (r.sched.npidle.peek() != listed || idle < listed || idle - listed > in_startm) {
    return "sched.npidle is " + std::to_string(r.sched.npidle.peek()) + ", the idle list holds " +
           std::to_string(listed) + " Ps, and " + std::to_string(idle) + " Ps are _Pidle";
  }
  return "";
}

std::string check_work_conservation(const rt::Runtime& r) {
  const std::vector<Place> q = queued(r);
  if (q.empty()) return "";
  const int32_t idle = r.sched.npidle.peek();
  if (idle <= 0 || spinning_ms(r) != 0) return "";
  std::string idle_ps;
  for (const rt::p* pp : r.allp) {
    if (pp->status.peek() == rt::_Pidle) idle_ps += (idle_ps.empty() ? "P" : ", P") + std::to_string(pp->id);
  }
  return runnable_places(r) + " while " + idle_ps + (idle > 1 ? " are" : " is") + " idle and no M is spinning";
}

std::string check_timer_conservation(const rt::Runtime& r) {
  if (r.sched.npidle.peek() <= 0 || spinning_ms(r) != 0) return "";
  int64_t first = 0;
  int32_t on = -1;
  for (const rt::p* pp : r.allp) {
    if (pp->timers_ == nullptr) continue;
    for (int64_t w : {pp->timers_->minWhenHeap.peek(), pp->timers_->minWhenModified.peek()}) {
      if (w != 0 && (first == 0 || w < first)) {
        first = w;
        on = pp->id;
      }
    }
  }
  if (first == 0) return "";
  const bool polling = r.sched.lastpoll.peek() == 0;
  const int64_t until = r.sched.pollUntil.peek();
  if (polling && until != 0 && until <= first) return "";
  return "a timer on P" + std::to_string(on) + " is due at " + std::to_string(first) +
         " ns while a P is idle and no M " +
         (polling ? "polls until then (the poller sleeps until " +
                        (until == 0 ? std::string("woken") : std::to_string(until) + " ns") + ")"
                  : "is in the poller or spinning") +
         ": it will run late";
}

std::string check_stw_completes(const rt::Runtime& r, const engine::PointInfo& info) {
  if (r.sched.gcwaiting.peek() == 0 || r.sched.stopwait <= 0 || info.user_running != 0) return "";
  std::string waiting;
  for (const rt::p* pp : r.allp) {
    if (pp->status.peek() == rt::_Pgcstop) continue;
    const rt::m* mp = pp->m.peek();
    waiting += (waiting.empty() ? "P" : ", P") + std::to_string(pp->id) +
               (mp == nullptr ? " (no M)" : " (M" + std::to_string(mp->id) + ")");
  }
  return "a stop-the-world waits for " + std::to_string(r.sched.stopwait) + " P" +
         (r.sched.stopwait > 1 ? "s" : "") + " (" + waiting + ") while every other M is parked: it never completes";
}

std::string check_lost_wakeup(const rt::Runtime& r, const engine::PointInfo& info) {
  if (info.user_running != 0 || info.timed_parked != 0) return "";
  const std::vector<Place> q = queued(r);
  if (q.empty()) return "";
  return runnable_places(r) + ", and every M is parked: nothing will run it";
}

}  // namespace gmp::model

namespace gmp::model {

namespace {

// The M of a P whose queue waits behind a running goroutine: pp runs (_Prunning) and its M's curg
// is _Grunning. nullptr otherwise (the M is in the scheduler, or its goroutine in a system call).
const rt::m* busy_owner(const rt::p* pp) {
  if (pp->status.peek() != rt::_Prunning) return nullptr;
  const rt::m* mp = pp->m.peek();
  if (mp == nullptr) return nullptr;
  const rt::g* cg = mp->curg.peek();
  if (cg == nullptr || (cg->atomicstatus.peek() & ~rt::_Gscan) != rt::_Grunning) return nullptr;
  return mp;
}

bool in_ring(const rt::p* pp, const rt::g* gp) {
  const uint32_t h = pp->runqhead.peek(), t = pp->runqtail.peek();
  for (uint32_t i = h; i != t && i - h < rt::kRunqSize; i++) {
    if (pp->runq[i % rt::kRunqSize].peek() == gp) return true;
  }
  return false;
}

bool in_global(const rt::Runtime& r, const rt::g* gp) {
  int32_t n = 0;
  for (const rt::g* q = r.sched.runq.head(); q != nullptr && n <= r.sched.runq.size; q = q->schedlink, n++) {
    if (q == gp) return true;
  }
  return false;
}

std::string idle_ps(const rt::Runtime& r) {
  std::string out;
  int32_t n = 0;
  for (const rt::p* pp : r.allp) {
    if (pp->status.peek() == rt::_Pidle) out += (n++ == 0 ? "P" : ", P") + std::to_string(pp->id);
  }
  return out + (n > 1 ? " were" : " was");
}

}  // namespace

void StrandingMonitor::grow(size_t m) {
  if (m < spun_.size()) return;
  spun_.resize(m + 1, 0);
  began_.resize(m + 1, 0);
  failed_.resize(m + 1, 0);
}

void StrandingMonitor::reset() {
  target_ = nullptr;
  owner_ = nullptr;
  uncovered_ = false;
}

std::string StrandingMonitor::at(const rt::Runtime& r, uint64_t step, int64_t now) {
  // The cheap tests first: most points have no idle P.
  if (r.sched.npidle.peek() <= 0 || r.sched.gcwaiting.peek() != 0) {
    if (target_ != nullptr) reset();
    return "";
  }
  if (target_ != nullptr) {
    bool still = (target_->atomicstatus.peek() & ~rt::_Gscan) == rt::_Grunnable;
    if (still && where_p_ < 0) {
      still = in_global(r, target_);
    } else if (still) {
      const rt::p* pp = static_cast<size_t>(where_p_) < r.allp.size() ? r.allp[static_cast<size_t>(where_p_)] : nullptr;
      still = pp != nullptr && busy_owner(pp) == owner_;
      if (still) {
        runnext_ = pp->runnext.peek() == target_;  // a newer G may have kicked it into the ring
        still = runnext_ || in_ring(pp, target_);
      }
    }
    if (!still) reset();
  }
  if (target_ == nullptr) {
    for (const rt::p* pp : r.allp) {
      const rt::m* mp = busy_owner(pp);
      if (mp == nullptr) continue;
      const uint32_t h = pp->runqhead.peek(), t = pp->runqtail.peek();
      const rt::g* gp = h != t ? pp->runq[h % rt::kRunqSize].peek() : pp->runnext.peek();
      if (gp == nullptr) continue;
      target_ = gp;
      owner_ = mp;
      where_p_ = pp->id;
      runnext_ = h == t;
      break;
    }
    if (target_ == nullptr && r.sched.runq.head() != nullptr) {
      target_ = r.sched.runq.head();
      owner_ = nullptr;
      where_p_ = -1;
      runnext_ = false;
    }
    if (target_ == nullptr) return "";
    since_step_ = step;
    len_ = 0;
    ns_ = 0;
    last_now_ = now;
    spinners_failed_ = false;
    spun_.assign(spun_.size(), 0);
    began_.assign(began_.size(), 0);
    failed_.assign(failed_.size(), 0);
    for (const rt::m* mp = r.allm.peek(); mp != nullptr; mp = mp->alllink) {
      const auto i = static_cast<size_t>(mp->id);
      grow(i);
      spun_[i] = mp->spinning ? 1 : 0;  // a spin under way already began before the stranding
    }
  }
  // Which Ms cover it, following each M's spins.
  bool covered = false;
  int32_t spinning = 0;
  for (const rt::m* mp = r.allm.peek(); mp != nullptr; mp = mp->alllink) {
    const auto i = static_cast<size_t>(mp->id);
    grow(i);
    const bool sp = mp->spinning;
    if (sp && spun_[i] == 0) began_[i] = 1;
    if (!sp && spun_[i] != 0) {
      if (began_[i] != 0 && mp->p == nullptr) {
        failed_[i] = 1;
        spinners_failed_ = true;
      }
      began_[i] = 0;
    }
    spun_[i] = sp ? 1 : 0;
    if (mp->nextp != nullptr || (sp && failed_[i] == 0)) covered = true;
    spinning += sp ? 1 : 0;
  }
  // A wake-up under way: wakep has counted a spinning M in sched.nmspinning (its CAS from 0) and
  // not yet made it, or given the count back. Every other wakep meanwhile returns at once, trusting
  // that M; a thread stalled in that window is the OS's doing, not a lost wake-up.
  if (r.sched.nmspinning.peek() > spinning) covered = true;
  if (uncovered_) ns_ += now - last_now_;
  last_now_ = now;
  uncovered_ = !covered;
  const bool over = strict_ ? ns_ > bound_ns_ : len_ > bound_steps_;
  if (!over) return "";
  std::string where = where_p_ < 0 ? std::string("the global run queue")
                                   : "P" + std::to_string(where_p_) + (runnext_ ? "'s runnext" : "'s run queue");
  std::string behind;
  if (owner_ != nullptr) {
    const rt::g* cg = owner_->curg.peek();
    behind = " behind G" + std::to_string(cg != nullptr ? cg->goid : 0) + " (running on M" + std::to_string(owner_->id) + ")";
  }
  char len[128];
  if (strict_) {
    std::snprintf(len, sizeof len, "%.3f us of virtual time (bound %.3f us)", static_cast<double>(ns_) / 1e3,
                  static_cast<double>(bound_ns_) / 1e3);
  } else {
    std::snprintf(len, sizeof len, "%llu steps of %s (bound %llu)", static_cast<unsigned long long>(len_),
                  owner_ != nullptr ? ("M" + std::to_string(owner_->id)).c_str() : "the Ms holding Ps",
                  static_cast<unsigned long long>(bound_steps_));
  }
  std::string msg = "G" + std::to_string(target_->goid) + " waited in " + where + behind + " from step " +
                    std::to_string(since_step_) + " to step " + std::to_string(step) + ", stranded for " + len +
                    ", while " + idle_ps(r) + " idle and no M spun or was being woken";
  if (spinners_failed_) msg += " (an M spun meanwhile and gave its P back without taking it)";
  reset();
  return msg;
}

std::string StarvationMonitor::at(const rt::Runtime& r, int64_t now) {
  if (since_.size() < r.allgs.size()) {
    since_.resize(r.allgs.size(), -1);
    turns_.resize(r.allgs.size(), 1);
  }
  // The program's Gs that want a P now (runnable or running): a G among n of them on p Ps may wait
  // its turn behind ceil((n - 1) / p) time slices, as Go's round robin has it.
  int64_t active = 0;
  for (const rt::g* gp : r.allgs) {
    const uint32_t st = gp->atomicstatus.peek() & ~rt::_Gscan;
    if (!rt::isSystemGoroutine(gp) && (st == rt::_Grunnable || st == rt::_Grunning)) active++;
  }
  const int64_t procs = std::max<int64_t>(1, static_cast<int64_t>(r.allp.size()));
  const int64_t turns = std::max<int64_t>(1, (active - 1 + procs - 1) / procs);
  for (size_t i = 0; i < r.allgs.size(); i++) {
    const rt::g* gp = r.allgs[i];
    if ((gp->atomicstatus.peek() & ~rt::_Gscan) != rt::_Grunnable || rt::isSystemGoroutine(gp)) {
      since_[i] = -1;
      turns_[i] = 1;
    } else {
      if (since_[i] < 0) since_[i] = now;
      turns_[i] = std::max(turns_[i], turns);  // the most Gs it had to wait behind meanwhile
    }
  }
  if (now == checked_now_) return "";
  checked_now_ = now;
  for (size_t i = 0; i < since_.size(); i++) {
    if (since_[i] < 0) continue;
    // (saturating: an hour's bound times a million Gs' turns passes int64)
    const int64_t limit = bound_ns_ > INT64_MAX / turns_[i] ? INT64_MAX : bound_ns_ * turns_[i];
    if (now - since_[i] <= limit) continue;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  " has been runnable for %.3f us of virtual time without running (bound %.3f us: %lld turn%s of "
                  "%.3f us behind the Gs that wanted a P with it)",
                  static_cast<double>(now - since_[i]) / 1e3, static_cast<double>(limit) / 1e3,
                  static_cast<long long>(turns_[i]), turns_[i] == 1 ? "" : "s", static_cast<double>(bound_ns_) / 1e3);
    const rt::g* gp = r.allgs[i];
    std::string where;
    for (const Place& pl : queued(r)) {
      if (pl.gp == gp) where = ", in " + pl.where;
    }
    return gname(gp) + buf + where;
  }
  return "";
}

}  // namespace gmp::model
