#include "sim/simulation/simulation.h"

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/platform/platform.h"
#include "sim/platform/splitmix64.h"
#include "sim/runtime/runtime.h"
#include "sim/simulation/costs_from_profile.h"
#include "sim/simulation/process.h"
#include "sim/simulation/process_switch.h"
#include "sim/workload/network.h"
#include "traces/trace_writer.h"

namespace gmp::engine {

namespace {

// A group's speed curve as the engine reads it: the factor at each busy count from 1 to the last
// entry's.
std::vector<double> dense_curve(const cost::CoreGroup& grp) {
  std::vector<double> out;
  if (grp.busy_speed.empty()) return out;
  for (uint32_t busy = 1; busy <= grp.busy_speed.back().busy; busy++) out.push_back(grp.busy_factor(busy));
  return out;
}

}  // namespace

std::vector<Core> machine_cores(const cost::Profile& prof, int32_t cores) {
  std::vector<Core> out;
  const int32_t want = cores > 0 ? cores : static_cast<int32_t>(prof.machine.cores());
  // Clusters are numbered across the machine: each group's consecutive runs of cluster_size cores
  // (the whole group if 0); cores past the profile's continue the last group's runs (or its one
  // cluster).
  int32_t first = 0, next = 0;  // the current group's first cluster id; the next group's
  uint32_t size = 1, i = 0;     // the current group's cluster size; a core's index in the group
  double last = 1.0;
  std::shared_ptr<const std::vector<double>> last_curve;
  for (const auto& grp : prof.machine.core_groups) {
    first = next;
    size = grp.cluster_size != 0 ? grp.cluster_size : UINT32_MAX;
    last_curve = std::make_shared<const std::vector<double>>(dense_curve(grp));
    for (i = 0; i < grp.count && static_cast<int32_t>(out.size()) < want; i++) {
      out.push_back(Core{grp.speed, first + static_cast<int32_t>(i / size), last_curve});
    }
    next = first + static_cast<int32_t>(grp.cluster_size != 0 ? (grp.count + size - 1) / size : 1);
    last = grp.speed;
  }
  for (; static_cast<int32_t>(out.size()) < want; i++) {
    out.push_back(Core{last, first + static_cast<int32_t>(i / size), last_curve});
  }
  return out;
}

namespace {

// The preemption signal's handler (signal_unix.go's sighandler, the sigPreempt case).
void sighandler(int sig) {
  rt::Runtime* r = rt::Runtime::current();
  rt::g* gp = plat::getg();
  if (r != nullptr && gp != nullptr && sig == rt::sigPreempt && !r->asyncpreemptoff) r->doSigPreempt(gp);
}

// A cgroup as the engine takes it.
CpuGroup to_group(const scenario::Cgroup& c) {
  CpuGroup g;
  g.quota = c.quota;
  g.period = c.period;
  g.burst = c.burst;
  g.cpuset = c.cpuset;
  for (const auto& ch : c.changes) g.changes.push_back(CpuGroup::Change{ch.at, ch.quota});
  return g;
}

// What the machine runs: each process's configuration and program, the cgroups, and the engine's
// view of the processes (empty for one process without a cgroup: the engine then runs as before).
struct Plan {
  std::vector<ProcessConfig> procs;
  std::vector<const scenario::Scenario*> programs;
  std::vector<CpuGroup> groups;
  std::vector<EngineProcess> engine_procs;
};

// The flags' settings for a process (the single process's, and the defaults of declared ones).
ProcessConfig flag_process(const SimConfig& cfg) {
  ProcessConfig pc;
  pc.procs = cfg.procs;
  pc.seed = cfg.seed;
  pc.asyncpreemptoff = cfg.asyncpreemptoff;
  pc.schedtrace_ns = cfg.schedtrace_ns;
  pc.gc = cfg.gc;
  pc.procs_auto = cfg.procs_auto;
  pc.containermaxprocs = cfg.containermaxprocs;
  pc.updatemaxprocs = cfg.updatemaxprocs;
  return pc;
}

// Who set a process's cgroup, for an error about it.
std::string cgroup_owner(const Plan& plan, size_t i, bool from_flags) {
  if (from_flags) return plan.procs.size() > 1 ? "--cpu-quota/--cpuset (process " + plan.procs[i].name + ")" : "--cpu-quota/--cpuset";
  return "process " + plan.procs[i].name + "'s cgroup";
}

// Several processes: one per declaration, in order. Each takes its GOMAXPROCS (0: the flag's,
// with --procs auto), GODEBUG settings, GOGC and GOMEMLIMIT from its declaration or else from the
// flags; process 0 keeps the run's seed, process i > 0 takes the i-th draw of a SplitMix64 seeded
// with it. The flags' cgroup (--cpu-quota, ...) is process 0's when it declares none.
Plan make_plan(const scenario::Scenario& sc, const SimConfig& cfg) {
  Plan plan;
  if (sc.processes.empty()) {
    ProcessConfig pc = flag_process(cfg);
    pc.id = 0;
    pc.name = sc.source;
    plan.procs.push_back(pc);
    plan.programs.push_back(&sc);
    if (cfg.cgroup.limited()) {
      plan.groups.push_back(to_group(cfg.cgroup));
      plan.engine_procs.push_back(EngineProcess{0, false});
    }
    return plan;
  }
  SplitMix64 seeds(cfg.seed);
  for (size_t i = 0; i < sc.processes.size(); i++) {
    const scenario::ProcessSpec& spec = sc.processes[i];
    ProcessConfig pc = flag_process(cfg);
    pc.id = static_cast<uint32_t>(i);
    pc.name = spec.name;
    if (spec.procs > 0) {
      pc.procs = spec.procs;
      pc.procs_auto = false;
    }
    if (spec.procs_auto) pc.procs_auto = true;
    if (spec.containermaxprocs >= 0) pc.containermaxprocs = spec.containermaxprocs;
    if (spec.updatemaxprocs >= 0) pc.updatemaxprocs = spec.updatemaxprocs;
    if (spec.gogc) pc.gc.gcPercent = *spec.gogc < 0 ? -1 : static_cast<int32_t>(*spec.gogc);
    if (spec.memlimit) pc.gc.memoryLimit = *spec.memlimit;
    pc.seed = i == 0 ? cfg.seed : seeds.next();
    pc.daemon = spec.daemon;
    EngineProcess ep;
    ep.daemon = spec.daemon;
    const scenario::Cgroup* cg = spec.cgroup.limited() ? &spec.cgroup : nullptr;
    if (i == 0 && cfg.cgroup.limited()) {
      if (cg != nullptr) {
        throw SimConfigError("--cpu-quota/--cpuset: process " + spec.name +
                             " declares a cgroup of its own (the flags set the first process's cgroup only when it "
                             "declares none)");
      }
      cg = &cfg.cgroup;
    }
    if (cg != nullptr) {
      ep.group = static_cast<int32_t>(plan.groups.size());
      plan.groups.push_back(to_group(*cg));
    }
    plan.procs.push_back(pc);
    if (!spec.program) throw SimConfigError("process " + spec.name + " has no program");
    plan.programs.push_back(spec.program.get());
    plan.engine_procs.push_back(ep);
  }
  return plan;
}

// Each group's cpuset names cores the machine has, and its quotas (the first and every change) are
// at most every core's time in a period.
void check_plan(const Plan& plan, int64_t cores, const SimConfig& cfg, bool several) {
  for (size_t i = 0; i < plan.engine_procs.size(); i++) {
    const int32_t gi = plan.engine_procs[i].group;
    if (gi < 0) continue;
    const CpuGroup& g = plan.groups[static_cast<size_t>(gi)];
    const bool from_flags = !several || (i == 0 && cfg.cgroup.limited());
    const std::string who = cgroup_owner(plan, i, from_flags);
    for (int32_t c : g.cpuset) {
      if (c < 0 || c >= cores) {
        throw SimConfigError(who + ": cpuset names core " + std::to_string(c) + ", but the machine has " +
                             std::to_string(cores) + " cores (0-" + std::to_string(cores - 1) + ")");
      }
    }
    auto check_quota = [&](int64_t quota) {
      if (quota >= 0 && quota > cores * g.period) {
        char cpus[32];
        std::snprintf(cpus, sizeof cpus, "%g", static_cast<double>(quota) / static_cast<double>(g.period));
        throw SimConfigError(who + ": a quota of " + cpus + " CPUs is more than the machine's " + std::to_string(cores) +
                             " cores");
      }
    };
    check_quota(g.quota);
    for (const CpuGroup::Change& ch : g.changes) check_quota(ch.quota);
  }
}

}  // namespace

void check_machine(const scenario::Scenario& sc, const cost::Profile& prof, const SimConfig& cfg) {
  const Plan plan = make_plan(sc, cfg);
  check_plan(plan, static_cast<int64_t>(machine_cores(prof, cfg.cores).size()), cfg, !sc.processes.empty());
}

namespace {

// The machine: the engine (the clock, the cores, the OS's threads and their placement), the one
// trace file, and the processes that run on it: the scenario's one program, or one per declared
// process. With one process its results are the run's; with several each fills its own entry of
// SimResult::processes. It installs the signal handler and the ProcessSwitch, boots the processes,
// runs the engine, and gathers the machine's figures; each process gathers its own.
class Sim final {
 public:
  Sim(const scenario::Scenario& sc, const cost::Profile& prof, const SimConfig& cfg, Plan plan)
      : cfg_(cfg), plan_(std::move(plan)), engine_(make_engine_config(prof, cfg)), switch_(engine_) {
    if (!cfg.trace_path.empty()) trace_ = std::make_unique<trace::TraceWriter>(cfg.trace_path, header(sc, prof));
    for (size_t i = 0; i < plan_.procs.size(); i++) {
      processes_.push_back(std::make_unique<Process>(plan_.procs[i], *plan_.programs[i], prof, engine_, trace_.get()));
      switch_.add(static_cast<uint32_t>(i), processes_[i]->runtime());
    }
    if (processes_.size() > 1) connect_networks(sc);
  }

  SimResult run() {
    Process& first = *processes_.front();
    plat::set_signal_handler(rt::sigPreempt, &sighandler);
    // The checker learns every process's runtime; which it checks is its own (--process).
    if (cfg_.chooser != nullptr) {
      for (auto& p : processes_) cfg_.chooser->process_started(p->id(), p->runtime());
    }
    for (auto& p : processes_) p->boot();
    const Engine::Result er = engine_.run();  // the process hook makes each thread's runtime current
    rt::Runtime::setCurrent(nullptr);

    SimResult res;
    res.stop = er.stop;
    res.exit_code = er.exit_code;
    res.message = er.message;
    res.end_time = er.end_time;
    res.cores = static_cast<int32_t>(engine_.config().cores.size());
    res.seed = cfg_.seed;
    res.os_preemptions = engine_.stats().os_preemptions;
    res.line_transfers = engine_.stats().line_transfers;
    const engine::EngineStats& st = engine_.stats();
    res.placed_on_prev = st.placed_on_prev;
    res.woken_delayed = st.woken_delayed;
    res.queued_busy = st.queued_busy;
    res.wake_preemptions = st.wake_preemptions;
    res.placed_on_other = st.placed_on_other;
    res.balance_pulls = st.balance_pulls;
    res.newidle_pulls = st.newidle_pulls;
    res.wakeups = st.wakeups;
    res.wakeups_ran = st.wakeups_ran;
    res.wake_on_prev = st.wake_on_prev;
    res.migrations = st.migrations;
    // A stretch of idle waiting still open at the end lasts until the end.
    res.idle_wait_ns = st.idle_wait_ns + (st.idle_wait_since >= 0 ? std::max<int64_t>(0, er.end_time - st.idle_wait_since) : 0);
    res.affine = engine_.config().costs.affine;
    res.events = engine_.stats().events;
    if (processes_.size() == 1) {
      first.finish(er, res);
    } else {
      // The machine's result keeps the machine's figures; each process's are its own. The
      // assertions of all count for the run's status.
      res.procs = first.procs();
      res.processes.resize(processes_.size());
      for (size_t i = 0; i < processes_.size(); i++) {
        SimResult& pr = res.processes[i];
        processes_[i]->finish(er, pr);
        pr.cores = res.cores;
        pr.affine = res.affine;
        res.assertions += pr.assertions;
        res.assertions_unchecked += pr.assertions_unchecked;
        res.violations.insert(res.violations.end(), pr.violations.begin(), pr.violations.end());
      }
    }
    // A run that ended in a deadlock, a fatal error or at a limit is still a complete record of
    // what ran until then, and the one its user most wants to look at (under the checker it is the
    // counterexample). Only a run cut short by an exception (out of memory, a failed write)
    // leaves no trace: the writer is then destroyed unclosed and removes its temporary file.
    if (trace_) {
      trace::Event end;
      end.set_ts(er.end_time);
      end.set_kind(trace::KIND_RUN_END);
      end.set_count(er.exit_code);
      const bool exited = er.stop == Engine::Stop::AllExited || er.stop == Engine::Stop::Exit;
      if (!exited) end.set_label(stop_name(er.stop));
      trace_->write(end);
      trace_->close();
    }
    return res;
  }

 private:
  // The trace's header: the run's description, and the processes when there are more than one (a
  // trace of one process lists none; its Ps are num_ps).
  trace::Header header(const scenario::Scenario& sc, const cost::Profile& prof) const {
    trace::Header h;
    h.set_producer(cfg_.chooser != nullptr ? "gmpsim check" : "gmpsim run");
    h.set_num_ps(cfg_.procs);
    auto meta = [&h](const std::string& k, const std::string& v) {
      auto* m = h.add_metadata();
      m->set_key(k);
      m->set_value(v);
    };
    meta("scenario", sc.source);
    meta("profile", prof.origin);
    meta("seed", std::to_string(cfg_.seed));
    meta("GOMAXPROCS", std::to_string(cfg_.procs));
    meta("cores", std::to_string(engine_.config().cores.size()));
    for (const auto& [k, v] : cfg_.trace_metadata) meta(k, v);
    if (plan_.procs.size() > 1) {
      for (size_t i = 0; i < plan_.procs.size(); i++) {
        const ProcessConfig& pc = plan_.procs[i];
        trace::Process* p = h.add_processes();
        p->set_id(pc.id);
        p->set_name(pc.name);
        p->set_num_ps(pc.procs);
        const int32_t gi = plan_.engine_procs[i].group;
        if (gi >= 0 && plan_.groups[static_cast<size_t>(gi)].quota >= 0) {
          const CpuGroup& g = plan_.groups[static_cast<size_t>(gi)];
          p->set_cpu_quota(static_cast<double>(g.quota) / static_cast<double>(g.period));
          p->set_cpu_period(g.period);
        }
      }
    }
    return h;
  }

  EngineConfig make_engine_config(const cost::Profile& prof, const SimConfig& cfg) {
    EngineConfig ec;
    ec.groups = plan_.groups;
    ec.processes = plan_.engine_procs;
    // Only recorded: the engine calls it during the run, when the processes exist.
    if (!cfg.trace_path.empty()) {
      ec.on_throttle = [this](uint64_t tid, bool throttled, int64_t at) { on_throttle(tid, throttled, at); };
    }
    ec.cores = machine_cores(prof, cfg.cores);
    ec.costs = costs_from_profile(prof);
    ec.seed = cfg.seed;
    ec.time_limit = cfg.time_limit;
    ec.event_limit = cfg.event_limit;
    ec.progress = cfg.progress;
    ec.jitter = cfg.jitter;
    if (cfg.chooser != nullptr) {  // the checker: no costs, no clock limit but in strict time (cores only set ncpu)
      ec.chooser = cfg.chooser;
      ec.daemon_rounds = cfg.daemon_rounds;
      ec.strict_time = cfg.strict_time;
      ec.costs = Costs{};
      ec.time_limit = cfg.strict_time ? cfg.time_limit : 0;
      ec.jitter = 0;
    }
    return ec;
  }

  static const char* stop_name(Engine::Stop s) {
    switch (s) {
      case Engine::Stop::AllExited:
      case Engine::Stop::Exit:
        return "exit";
      case Engine::Stop::Deadlock:
        return "deadlock";
      case Engine::Stop::TimeLimit:
        return "time limit";
      case Engine::Stop::EventLimit:
        return "event limit";
      case Engine::Stop::Fatal:
        return "fatal error";
      case Engine::Stop::Stopped:
        return "stopped by the checker";
      case Engine::Stop::Livelock:
        return "livelock";
    }
    return "?";
  }

  // Joins the processes' dialled connections (workload::connect_dials) and lets a peer's delivery
  // wake each process's poller: its network's wake callback is its runtime's netpollBreak, called
  // on the writer's thread. The writer's runtime stays current: netpollBreak touches only its own
  // runtime's cells, and its platform operations may let other threads run, which the process hook
  // switches by the thread's process (making the woken runtime current here would leave it current
  // for the writer's own process's next thread, which runs its goroutines on the wrong runtime).
  void connect_networks(const scenario::Scenario& sc) {
    std::vector<workload::Network*> nets;
    for (auto& p : processes_) nets.push_back(p->network());
    workload::connect_dials(nets, sc.processes);
    for (auto& p : processes_) {
      workload::Network* net = p->network();
      if (net == nullptr) continue;
      rt::Runtime* r = &p->runtime();
      net->set_wake([r] { r->netpollBreak(); });
    }
  }

  // A thread throttled by its cgroup, or running again: an event on its M, in its process.
  void on_throttle(uint64_t tid, bool throttled, int64_t at) {
    if (!trace_) return;
    for (const auto& p : processes_) {
      const int64_t m = p->m_of(tid);
      if (m < 0) continue;
      trace::Event e;
      e.set_ts(at);
      e.set_kind(throttled ? trace::KIND_THROTTLE_BEGIN : trace::KIND_THROTTLE_END);
      e.set_m(m);
      e.set_process(p->id());
      trace_->write(e);
      return;
    }
  }

  SimConfig cfg_;
  Plan plan_;
  Engine engine_;
  ProcessSwitch switch_;
  std::unique_ptr<trace::TraceWriter> trace_;
  std::vector<std::unique_ptr<Process>> processes_;
};

}  // namespace

SimResult simulate(const scenario::Scenario& sc, const cost::Profile& prof, const SimConfig& cfg) {
  Plan plan = make_plan(sc, cfg);
  check_plan(plan, static_cast<int64_t>(machine_cores(prof, cfg.cores).size()), cfg, !sc.processes.empty());
  Sim s(sc, prof, cfg, std::move(plan));
  return s.run();
}

}  // namespace gmp::engine
