#include "sim/simulation/simulation.h"

#include <memory>
#include <string>
#include <vector>

#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"
#include "sim/simulation/costs_from_profile.h"
#include "sim/simulation/process.h"
#include "sim/simulation/process_switch.h"
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

// The machine: the engine (the clock, the cores, the OS's threads and their placement), the one
// trace file, and the processes that run on it, exactly one so far (its results are the run's).
// It installs the signal handler and the ProcessSwitch, boots the processes, runs the engine, and
// gathers the machine's figures; each process gathers its own.
class Sim final {
 public:
  Sim(const scenario::Scenario& sc, const cost::Profile& prof, const SimConfig& cfg)
      : cfg_(cfg), engine_(make_engine_config(prof, cfg)), switch_(engine_) {
    ProcessConfig pc;
    pc.id = 0;
    pc.name = sc.source;
    pc.procs = cfg.procs;
    pc.seed = cfg.seed;
    pc.asyncpreemptoff = cfg.asyncpreemptoff;
    pc.schedtrace_ns = cfg.schedtrace_ns;
    pc.gc = cfg.gc;
    pc.procs_auto = cfg.procs_auto;
    pc.containermaxprocs = cfg.containermaxprocs;
    pc.updatemaxprocs = cfg.updatemaxprocs;
    if (!cfg.trace_path.empty()) trace_ = std::make_unique<trace::TraceWriter>(cfg.trace_path, header(sc, prof, {pc}));
    processes_.push_back(std::make_unique<Process>(pc, sc, prof, engine_, trace_.get()));
    switch_.add(0, processes_[0]->runtime());
  }

  SimResult run() {
    Process& first = *processes_.front();
    plat::set_signal_handler(rt::sigPreempt, &sighandler);
    // The checker's properties and fingerprints are about one runtime: the first process's.
    if (cfg_.chooser != nullptr) cfg_.chooser->started(first.runtime());
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
    first.finish(er, res);
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
  trace::Header header(const scenario::Scenario& sc, const cost::Profile& prof,
                       const std::vector<ProcessConfig>& procs) const {
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
    if (procs.size() > 1) {
      for (const ProcessConfig& pc : procs) {
        trace::Process* p = h.add_processes();
        p->set_id(pc.id);
        p->set_name(pc.name);
        p->set_num_ps(pc.procs);
      }
    }
    return h;
  }

  static EngineConfig make_engine_config(const cost::Profile& prof, const SimConfig& cfg) {
    EngineConfig ec;
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
    }
    return "?";
  }

  SimConfig cfg_;
  Engine engine_;
  ProcessSwitch switch_;
  std::unique_ptr<trace::TraceWriter> trace_;
  std::vector<std::unique_ptr<Process>> processes_;
};

}  // namespace

SimResult simulate(const scenario::Scenario& sc, const cost::Profile& prof, const SimConfig& cfg) {
  Sim s(sc, prof, cfg);
  return s.run();
}

}  // namespace gmp::engine
