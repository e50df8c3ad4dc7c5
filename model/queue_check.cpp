#include "model/queue_check.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <thread>

#include "sim/platform/splitmix64.h"
#include "sim/runtime/runtime.h"

namespace gmp::model {

namespace {

// The work loop of one P: puts its Gs, runs some, steals when idle, until no work is left.
class PWorker {
 public:
  PWorker(rt::Runtime& r, rt::p* pp, std::vector<rt::g*> own, const QueueCheckConfig& cfg,
          QueueCheckPStats& st, std::vector<uint32_t>& taken, const std::vector<rt::g>& gs,
          Atomic<uint32_t>& taken_total)
      : rt_(r), pp_(pp), own_(std::move(own)), cfg_(cfg), st_(st), taken_(taken), gs_(gs),
        taken_total_(taken_total) {}

  void operator()() {
    for (size_t i = 0; i < own_.size(); i++) {
      if (i % 10 == 9) {
        plat::lock(rt_.sched.lock);
        rt_.globrunqput(own_[i]);
        plat::unlock(rt_.sched.lock);
        st_.global_puts++;
        continue;
      }
      const bool next = i % 3 == 0;
      const uint32_t before = pp_->runqtail.peek() - pp_->runqhead.peek();
      rt_.runqput(pp_, own_[i], next);
      st_.puts++;
      if (next) st_.runnext_puts++;
      if (!next && before == rt::kRunqSize) st_.overflows++;
      if ((i + 1) % static_cast<size_t>(cfg_.run_every) == 0) run_one();
    }
    // A P that found nothing yields before it looks again, as an M with no work would stop: under
    // the checker's default order the others then run, and an exhaustive search does not spin.
    while (taken_total_.Load() < gs_.size()) {
      if (!run_one()) plat::osyield();
    }
  }

 private:
  void take(rt::g* gp) {
    taken_[static_cast<size_t>(gp - gs_.data())]++;
    taken_total_.Add(1);
  }

  // One pass of "find a G and run it"; false when nothing could be found anywhere.
  bool run_one() {
    pp_->schedtick.set(pp_->schedtick.get() + 1);
    if (pp_->schedtick.get() % 61 == 0 && !rt_.sched.runq.emptyRacy()) {
      plat::lock(rt_.sched.lock);
      rt::g* gp = rt_.globrunqget();
      plat::unlock(rt_.sched.lock);
      if (gp != nullptr) {
        st_.global_gets++;
        take(gp);
        return true;
      }
    }
    if (auto [gp, inherit] = rt_.runqget(pp_); gp != nullptr) {
      st_.local_gets++;
      if (inherit) st_.inherit_gets++;
      take(gp);
      return true;
    }
    if (!rt_.sched.runq.emptyRacy()) {
      plat::lock(rt_.sched.lock);
      auto [gp, q] = rt_.globrunqgetbatch(rt::kRunqSize / 2);
      plat::unlock(rt_.sched.lock);
      if (gp != nullptr) {
        rt_.runqputbatch(pp_, &q);
        if (!q.empty()) {
          plat::lock(rt_.sched.lock);
          rt_.globrunqputbatch(&q);
          plat::unlock(rt_.sched.lock);
        }
        st_.global_gets++;
        take(gp);
        return true;
      }
    }
    // stealWork's shape: four passes, runnext only on the last.
    constexpr int kStealTries = 4;
    for (int i = 0; i < kStealTries; i++) {
      const bool stealTimersOrRunNextG = i == kStealTries - 1;
      for (rt::randomEnum e = rt_.stealOrder.start(rt::cheaprand()); !e.done(); e.next()) {
        rt::p* p2 = rt_.allp[e.position()];
        if (p2 == pp_) continue;
        if (!rt_.runqempty(p2)) {
          const uint32_t t0 = pp_->runqtail.peek();
          rt::g* nx = p2->runnext.peek();
          if (rt::g* gp = rt_.runqsteal(pp_, p2, stealTimersOrRunNextG); gp != nullptr) {
            st_.steals++;
            st_.stolen += 1 + (pp_->runqtail.peek() - t0);
            if (gp == nx) st_.runnext_steals++;
            take(gp);
            return true;
          }
        }
      }
    }
    // A last look at the global queue, as findRunnable does before dropping its P.
    plat::lock(rt_.sched.lock);
    rt::g* gp = rt_.globrunqget();
    plat::unlock(rt_.sched.lock);
    if (gp != nullptr) {
      st_.global_gets++;
      take(gp);
      return true;
    }
    return false;
  }

  rt::Runtime& rt_;
  rt::p* pp_;
  std::vector<rt::g*> own_;
  const QueueCheckConfig& cfg_;
  QueueCheckPStats& st_;
  std::vector<uint32_t>& taken_;
  const std::vector<rt::g>& gs_;
  Atomic<uint32_t>& taken_total_;
};

// The world of one check: a Runtime, its Gs, one M and g0 per P, and the workers.
class World {
 public:
  World(const QueueCheckConfig& cfg, QueueCheckResult& res)
      : res_(res), r_(cfg.procs), gs_(static_cast<size_t>(cfg.gs)) {
    const size_t n = gs_.size();
    const int32_t producers = cfg.producers > 0 ? std::min(cfg.producers, cfg.procs) : (cfg.procs + 1) / 2;
    res.total_gs = n;
    res.taken.assign(n, 0);
    res.per_p.resize(static_cast<size_t>(cfg.procs));
    SplitMix64 seeds(cfg.seed);
    for (int32_t i = 0; i < cfg.procs; i++) {
      auto mp = std::make_unique<rt::m>();
      auto g0 = std::make_unique<rt::g>();
      rt::p* pp = r_.allp[static_cast<size_t>(i)];
      mp->id = i;
      mp->g0 = g0.get();
      mp->p = pp;
      mp->cheaprand = static_cast<uint32_t>(seeds.next());
      mp->cheaprand64 = seeds.next();
      g0->m = mp.get();
      pp->m.set(mp.get());
      pp->status.set(rt::_Prunning);
      std::vector<rt::g*> own;
      for (size_t j = static_cast<size_t>(i); i < producers && j < n; j += static_cast<size_t>(producers)) {
        rt::g* gp = &gs_[j];
        gp->goid = static_cast<int64_t>(j) + 1;
        gp->atomicstatus.set(rt::_Grunnable);
        own.push_back(gp);
      }
      workers_.push_back(std::make_unique<PWorker>(r_, pp, std::move(own), cfg,
                                                   res.per_p[static_cast<size_t>(i)], res.taken, gs_,
                                                   taken_total_));
      ms_.push_back(std::move(mp));
      g0s_.push_back(std::move(g0));
    }
  }

  size_t procs() const { return workers_.size(); }
  PWorker& worker(size_t i) { return *workers_[i]; }
  rt::g* g0(size_t i) { return g0s_[i].get(); }

  // Drains what is left, single-threaded, and checks that every G was taken exactly once.
  void finish() {
    if (res_.run.outcome != ThreadRun::Outcome::Completed) {
      res_.errors.push_back(std::string(outcome_name(res_.run.outcome)) + ": " + res_.run.message);
      return;
    }
    for (rt::p* pp : r_.allp) {
      for (rt::g* gp = r_.runqget(pp).first; gp != nullptr; gp = r_.runqget(pp).first) count_drained(gp);
    }
    plat::lock(r_.sched.lock);
    for (rt::g* gp = r_.globrunqget(); gp != nullptr; gp = r_.globrunqget()) count_drained(gp);
    plat::unlock(r_.sched.lock);
    for (size_t i = 0; i < gs_.size(); i++) {
      if (res_.taken[i] != 1) {
        res_.errors.push_back("G" + std::to_string(gs_[i].goid) + " taken " + std::to_string(res_.taken[i]) +
                              " times, want 1");
      }
    }
  }

 private:
  void count_drained(rt::g* gp) {
    res_.taken[static_cast<size_t>(gp - gs_.data())]++;
    res_.drained++;
  }

  QueueCheckResult& res_;
  rt::Runtime r_;
  std::vector<rt::g> gs_;
  Atomic<uint32_t> taken_total_;
  std::vector<std::unique_ptr<rt::m>> ms_;
  std::vector<std::unique_ptr<rt::g>> g0s_;
  std::vector<std::unique_ptr<PWorker>> workers_;
};

}  // namespace

QueueCheckResult run_queue_check(const QueueCheckConfig& cfg, Policy& policy) {
  QueueCheckResult res;
  World w(cfg, res);
  ThreadProgram prog;
  for (size_t i = 0; i < w.procs(); i++) {
    PWorker* pw = &w.worker(i);
    prog.add_thread("P" + std::to_string(i), [pw] { (*pw)(); }, w.g0(i));
  }
  res.run = prog.run(policy, cfg.max_steps);
  w.finish();
  return res;
}

QueueCheckResult run_queue_check_threads(const QueueCheckConfig& cfg) {
  QueueCheckResult res;
  World w(cfg, res);
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(w.procs());
  for (size_t i = 0; i < w.procs(); i++) {
    threads.emplace_back([&w, &errors, i] {
      plat::setg(w.g0(i));
      try {
        w.worker(i)();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  w.finish();
  return res;
}

}  // namespace gmp::model
