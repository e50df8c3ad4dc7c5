#include "sim/simulation/simulation.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "sim/simulation/costs_from_profile.h"
#include "sim/simulation/metrics.h"
#include "sim/simulation/trace_event.h"
#include "sim/platform/platform.h"
#include "sim/platform/throw.h"
#include "sim/runtime/events.h"
#include "sim/runtime/runtime.h"
#include "sim/workload/assertions.h"
#include "sim/workload/interpreter.h"
#include "traces/trace_writer.h"

namespace gmp::engine {

using rt::Ev;

std::vector<Core> machine_cores(const cost::Profile& prof, int32_t cores) {
  std::vector<Core> out;
  const int32_t want = cores > 0 ? cores : static_cast<int32_t>(prof.machine.cores());
  // Clusters are numbered across the machine: each group's consecutive runs of cluster_size cores
  // (the whole group if 0); cores past the profile's continue the last group's runs (or its one
  // cluster).
  int32_t first = 0, next = 0;  // the current group's first cluster id; the next group's
  uint32_t size = 1, i = 0;     // the current group's cluster size; a core's index in the group
  double last = 1.0;
  for (const auto& grp : prof.machine.core_groups) {
    first = next;
    size = grp.cluster_size != 0 ? grp.cluster_size : UINT32_MAX;
    for (i = 0; i < grp.count && static_cast<int32_t>(out.size()) < want; i++) {
      out.push_back(Core{grp.speed, first + static_cast<int32_t>(i / size)});
    }
    next = first + static_cast<int32_t>(grp.cluster_size != 0 ? (grp.count + size - 1) / size : 1);
    last = grp.speed;
  }
  for (; static_cast<int32_t>(out.size()) < want; i++) {
    out.push_back(Core{last, first + static_cast<int32_t>(i / size)});
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

class Sim final : public rt::Host {
 public:
  Sim(const scenario::Scenario& sc, const cost::Profile& prof, const SimConfig& cfg)
      : cfg_(cfg), sc_(sc), engine_(make_engine_config(prof, cfg)), runtime_(cfg.procs), metrics_(cfg.procs),
        interp_(sc, runtime_, [this] { return engine_.now(); }, prof.machine.speed_ns_per_iteration.value, cfg.seed,
                kNanotimeEpoch),
        asserts_(sc, interp_) {
    runtime_.host = this;
    runtime_.useStackPool();  // the engine drives the whole program on this OS thread
    runtime_.asyncpreemptoff = cfg.asyncpreemptoff;
    runtime_.schedtracePeriod = cfg.schedtrace_ns;
    runtime_.ncpu = static_cast<int32_t>(engine_.config().cores.size());
    if (!cfg.trace_path.empty()) {
      trace::Header h;
      h.set_producer(cfg.chooser != nullptr ? "gmpsim check" : "gmpsim run");
      h.set_num_ps(cfg.procs);
      auto meta = [&h](const std::string& k, const std::string& v) {
        auto* m = h.add_metadata();
        m->set_key(k);
        m->set_value(v);
      };
      meta("scenario", sc.source);
      meta("profile", prof.origin);
      meta("seed", std::to_string(cfg.seed));
      meta("GOMAXPROCS", std::to_string(cfg.procs));
      meta("cores", std::to_string(runtime_.ncpu));
      for (const auto& [k, v] : cfg.trace_metadata) meta(k, v);
      trace_ = std::make_unique<trace::TraceWriter>(cfg.trace_path, h);
    }
  }

  SimResult run(const scenario::Scenario& sc) {
    rt::Runtime::setCurrent(&runtime_);
    plat::set_signal_handler(rt::sigPreempt, &sighandler);
    if (cfg_.chooser != nullptr) cfg_.chooser->started(runtime_);
    runtime_.boot(cfg_.seed);
    const Engine::Result er = engine_.run();
    rt::Runtime::setCurrent(nullptr);
    metrics_.finish(er.end_time);
    asserts_.at_exit(er.end_time, er.stop == Engine::Stop::AllExited || er.stop == Engine::Stop::Exit);

    SimResult res;
    res.stop = er.stop;
    res.exit_code = er.exit_code;
    res.message = er.message;
    res.end_time = er.end_time;
    res.procs = cfg_.procs;
    res.cores = runtime_.ncpu;
    res.seed = cfg_.seed;
    if (er.stop == Engine::Stop::Fatal) res.message += goroutine_dump();
    const workload::Measurement& m = interp_.measurement();
    if (sc.benchmark) res.bench_name = sc.benchmark->name;
    if (m.finished && m.ops > 0) {
      res.measured = true;
      res.ops = m.ops;
      res.ns_per_op = static_cast<double>(m.end - m.begin) / static_cast<double>(m.ops);
    }
    if (const workload::Network* net = interp_.network()) {
      std::vector<int64_t> lat = net->latencies();
      res.requests = net->requests();
      res.answered = static_cast<int64_t>(lat.size());
      if (!lat.empty()) {
        res.req_p50 = nearest_rank(lat, 0.50);
        res.req_p99 = nearest_rank(lat, 0.99);
        res.req_p999 = nearest_rank(lat, 0.999);
        res.req_max = *std::max_element(lat.begin(), lat.end());
        if (net->last_write() > 0) {
          res.req_per_s = static_cast<double>(lat.size()) * 1e9 / static_cast<double>(net->last_write());
        }
      }
    }
    res.lat_samples = metrics_.latency_samples();
    res.lat_p50 = metrics_.latency_quantile(0.50);
    res.lat_p90 = metrics_.latency_quantile(0.90);
    res.lat_p99 = metrics_.latency_quantile(0.99);
    res.lat_max = metrics_.latency_quantile(1.0);
    res.utilisation = metrics_.utilisation();
    res.steals = metrics_.count(Ev::Steal);
    res.wakeps = metrics_.count(Ev::Wakep);
    res.wakep_spinning = metrics_.count(Ev::WakepSpinning);
    res.wakep_no_p = metrics_.count(Ev::WakepNoP);
    res.runnext_backoffs = metrics_.count(Ev::RunnextBackoff);
    res.runnext_cas_fails = metrics_.count(Ev::RunnextCasFail);
    res.handoffs = metrics_.count(Ev::HandoffP);
    res.preempt_signals = metrics_.count(Ev::PreemptSignal);
    res.preempt_requests = metrics_.count(Ev::PreemptRequest);
    res.ms_created = metrics_.count(Ev::MCreate) + 1;  // and m0
    res.goroutines = metrics_.user_goroutines();
    res.global_puts = metrics_.count(Ev::PutGlobal);
    res.os_preemptions = engine_.stats().os_preemptions;
    res.line_transfers = engine_.stats().line_transfers;
    res.placed_on_prev = engine_.stats().placed_on_prev;
    res.woken_in_place = engine_.stats().woken_in_place;
    res.placed_on_other = engine_.stats().placed_on_other;
    res.balance_pulls = engine_.stats().balance_pulls;
    res.affine = engine_.config().costs.affine;
    res.events = engine_.stats().events;
    res.schedtrace = runtime_.schedtraceLines;
    for (int k = 0; k < static_cast<int>(Ev::Count_); k++) {
      res.event_counts.emplace_back(rt::evName(static_cast<Ev>(k)), metrics_.count(static_cast<Ev>(k)));
    }
    res.assertions = static_cast<int32_t>(sc.assertions.size());
    res.violations = asserts_.violations();
    res.assertions_unchecked = asserts_.unchecked();
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

  // Host.
  void newosproc(rt::m* mp, plat::Fiber::Entry fn, void* arg) override {
    const std::string name = "M" + std::to_string(mp->id) + (mp->mstartfn == &rt::Runtime::sysmon ? " (sysmon)" : "");
    const uint64_t tid = engine_.newosproc(name, fn, arg, mp->g0, mp->mstartfn == &rt::Runtime::sysmon);
    mp->g0->stack = engine_.thread_context(tid);
    mp->procid = tid;
    if (plat::current_driver() != nullptr) engine_.spend(engine_.config().costs.thread_create);
  }
  void exitThread() override { engine_.exit_thread(); }
  void exit(int code) override { engine_.exit(code); }
  void runGoroutine(rt::g* gp) override { interp_.run(gp); }
  void event(Ev e, rt::g* gp, rt::p* pp, int64_t arg) override {
    const int64_t now = engine_.now();  // measuring costs the simulated program nothing
    metrics_.on_event(e, gp, pp, arg, now);
    if (asserts_.watching()) asserts_.on_event(e, gp, pp, arg, now);
    if (trace_ && e < Ev::WakepSpinning) {  // the rest are counts
      trace::Event te = to_trace(e, gp, pp, arg, now);
      if (e == Ev::GoCreate && gp != nullptr) te.set_label(start_function(gp->startpc));
      if (cfg_.chooser != nullptr) te.set_step(cfg_.chooser->step());
      trace_->write(te);
    }
  }

 private:
  // The function a goroutine starts in, as Go's traces name it on creation: the scenario's
  // function, or the runtime's.
  std::string start_function(uintptr_t pc) const {
    switch (pc) {
      case rt::funcForcegchelper: return "runtime.forcegchelper";
      case rt::funcBgsweep: return "runtime.bgsweep";
      case rt::funcBgscavenge: return "runtime.bgscavenge";
      case rt::funcUpdateMaxProcsGoroutine: return "runtime.updateMaxProcsGoroutine";
      default: break;
    }
    // The interpreter's startpc: 0 for main, else 1 + the function's index (see assertions.cpp).
    const size_t f = pc == 0 ? static_cast<size_t>(sc_.entry) : pc - 1;
    return f < sc_.funcs.size() ? sc_.funcs[f].name : std::string();
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

  // Like Go's traceback after a fatal error: each goroutine that is not dead, with its status.
  std::string goroutine_dump() const {
    std::string out;
    for (rt::g* gp : runtime_.allgs) {
      const uint32_t s = gp->atomicstatus.peek() & ~rt::_Gscan;
      if (s == rt::_Gdead || s == rt::_Gidle || rt::isSystemGoroutine(gp)) continue;
      std::string what = s == rt::_Gwaiting ? rt::waitReasonString(gp->waitreason)
                         : s == rt::_Grunnable ? "runnable"
                         : s == rt::_Grunning ? "running"
                         : s == rt::_Gsyscall ? "syscall"
                                              : "status " + std::to_string(s);
      out += "\n\ngoroutine " + std::to_string(gp->goid) + " [" + what + "]:";
    }
    return out;
  }

  SimConfig cfg_;
  const scenario::Scenario& sc_;  // outlives the Sim (simulate() holds it)
  Engine engine_;
  rt::Runtime runtime_;
  Metrics metrics_;
  workload::Interpreter interp_;
  workload::AssertionChecker asserts_;
  std::unique_ptr<trace::TraceWriter> trace_;
};

}  // namespace

SimResult simulate(const scenario::Scenario& sc, const cost::Profile& prof, const SimConfig& cfg) {
  Sim s(sc, prof, cfg);
  return s.run(sc);
}

}  // namespace gmp::engine
