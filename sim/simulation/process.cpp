#include "sim/simulation/process.h"

#include <algorithm>
#include <vector>

#include "sim/platform/platform.h"
#include "sim/runtime/events.h"
#include "sim/simulation/costs_from_profile.h"
#include "sim/simulation/trace_event.h"
#include "traces/trace_writer.h"

namespace gmp::engine {

using rt::Ev;

Process::Process(const ProcessConfig& cfg, const scenario::Scenario& sc, const cost::Profile& prof, Engine& engine,
                 trace::TraceWriter* trace)
    : cfg_(cfg), sc_(sc), engine_(engine), trace_(trace), runtime_(cfg.procs), metrics_(cfg.procs),
      interp_(sc, runtime_, [this] { return engine_.now(); }, prof.machine.speed_ns_per_iteration.value, cfg.seed,
              kNanotimeEpoch),
      asserts_(sc, interp_) {
  runtime_.host = this;
  runtime_.useStackPool();  // the engine drives the whole machine on one OS thread
  runtime_.asyncpreemptoff = cfg.asyncpreemptoff;
  runtime_.schedtracePeriod = cfg.schedtrace_ns;
  runtime_.gcSettings = cfg.gc;
  runtime_.gccost = gc_costs_from_profile(prof);
  set_maxprocs_settings();
}

// How the runtime chooses GOMAXPROCS: the CPUs it may use (its cgroup's cpuset, or the machine's
// cores) and, with procs auto, Go's default and its updates under the GODEBUG settings.
void Process::set_maxprocs_settings() {
  runtime_.ncpu = getproccount();
  runtime_.maxprocsSettings.explicit_ = !cfg_.procs_auto;
  runtime_.maxprocsSettings.containermaxprocs = cfg_.containermaxprocs;
  runtime_.maxprocsSettings.updatemaxprocs = cfg_.updatemaxprocs;
}

// GOMAXPROCS at the start (schedinit's choice: Go's default under --procs auto) and at the end of
// the run, and how many times procresize changed it after the start.
void Process::finish_maxprocs(SimResult& res) {
  uint32_t changes = static_cast<uint32_t>(metrics_.count(Ev::ProcsChange));
  if (procs_start_ > 0) {
    res.procs = procs_start_;
    changes--;
  }
  res.procs_end = runtime_.gomaxprocs;
  res.procs_changes = changes;
}

rt::CPULimit Process::cgroupCPULimit() {
  const auto [quota, period] = engine_.cpu_max(cfg_.id);
  if (quota < 0 || period <= 0) return {};
  return {true, static_cast<double>(quota) / static_cast<double>(period)};
}

int32_t Process::getproccount() { return engine_.affinity_count(cfg_.id); }

trace::Process Process::trace_entry() const {
  trace::Process p;
  p.set_id(cfg_.id);
  p.set_name(cfg_.name);
  p.set_num_ps(cfg_.procs);
  return p;
}

int64_t Process::m_of(uint64_t tid) const {
  for (const auto& [t, m] : threads_) {
    if (t == tid) return m;
  }
  return -1;
}

void Process::boot() {
  rt::Runtime* const was = rt::Runtime::current();
  rt::Runtime::setCurrent(&runtime_);
  runtime_.boot(cfg_.seed);
  rt::Runtime::setCurrent(was);
}

void Process::finish(const Engine::Result& er, SimResult& res) {
  // A process that exited (several processes) ended then; the others when the machine did.
  metrics_.finish(exited_ && engine_.config().processes.size() > 1 ? exit_time_ : er.end_time);
  asserts_.at_exit(er.end_time, er.stop == Engine::Stop::AllExited || er.stop == Engine::Stop::Exit);

  res.procs = cfg_.procs;
  if (er.stop == Engine::Stop::Fatal) res.message += goroutine_dump();
  const workload::Measurement& m = interp_.measurement();
  if (sc_.benchmark) res.bench_name = sc_.benchmark->name;
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
  if (const workload::Network* net = interp_.network(); net != nullptr && !net->client_latencies().empty()) {
    std::vector<int64_t> lat = net->client_latencies();
    res.client_requests = net->client_requests();
    res.client_answered = static_cast<int64_t>(lat.size());
    res.client_p50 = nearest_rank(lat, 0.50);
    res.client_p99 = nearest_rank(lat, 0.99);
    res.client_p999 = nearest_rank(lat, 0.999);
    res.client_max = *std::max_element(lat.begin(), lat.end());
    if (net->last_answer() > 0) {
      res.client_per_s = static_cast<double>(lat.size()) * 1e9 / static_cast<double>(net->last_answer());
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
  res.schedtrace = runtime_.schedtraceLines;
  for (int k = 0; k < static_cast<int>(Ev::Count_); k++) {
    const uint64_t n = metrics_.count(static_cast<Ev>(k));
    if (n == 0 && rt::isGCEvent(static_cast<Ev>(k))) continue;
    res.event_counts.emplace_back(rt::evName(static_cast<Ev>(k)), n);
  }
  res.assertions = static_cast<int32_t>(sc_.assertions.size());
  res.violations = asserts_.violations();
  res.assertions_unchecked = asserts_.unchecked();
  res.gc = runtime_.gcstats;
  finish_maxprocs(res);
  finish_machine_view(er, res);
}

void Process::finish_machine_view(const Engine::Result& er, SimResult& res) const {
  res.process = cfg_.name;
  res.seed = cfg_.seed;
  res.procs_auto = cfg_.procs_auto;
  res.daemon = cfg_.daemon;
  const EngineConfig& ec = engine_.config();
  if (cfg_.id < ec.processes.size()) {
    const int32_t gi = ec.processes[cfg_.id].group;
    if (gi >= 0 && static_cast<size_t>(gi) < ec.groups.size()) {
      res.cpu_quota = ec.groups[static_cast<size_t>(gi)].quota;
      res.cpu_period = ec.groups[static_cast<size_t>(gi)].period;
      if (static_cast<size_t>(gi) < engine_.stats().groups.size()) res.cpu_stat = engine_.stats().groups[static_cast<size_t>(gi)];
    }
  }
  // Several processes: one that exited ended then, with its own status; the others ran as long as
  // the machine did (the caller copies the machine's stop for a single process).
  if (ec.processes.size() > 1) {
    res.stop = exited_ ? Engine::Stop::Exit : er.stop;
    res.exit_code = exited_ ? exit_code_ : er.exit_code;
    res.end_time = exited_ ? exit_time_ : er.end_time;
    res.exited = exited_;
    res.exit_time = exit_time_;
  }
}

void Process::newosproc(rt::m* mp, plat::Fiber::Entry fn, void* arg) {
  const bool sysmon = mp->mstartfn == &rt::Runtime::sysmon;
  // Process 0 names its threads as a machine of one process always has (deadlock reports show them).
  const std::string name =
      (cfg_.id == 0 ? std::string() : cfg_.name + " ") + "M" + std::to_string(mp->id) + (sysmon ? " (sysmon)" : "");
  const uint64_t tid = engine_.newosproc(name, fn, arg, mp->g0, sysmon, cfg_.id);
  threads_.emplace_back(tid, mp->id);
  mp->g0->stack = engine_.thread_context(tid);
  mp->procid = tid;
  if (plat::current_driver() != nullptr) engine_.spend(engine_.config().costs.thread_create);
}

void Process::exitThread() { engine_.exit_thread(); }

// Go's exit ends the process; the machine's run ends with it while it runs one process, or when
// it was the last process the run waits for (DriverBase::exit).
void Process::exit(int code) {
  exited_ = true;
  exit_code_ = code;
  exit_time_ = engine_.now();
  engine_.exit(code);
}

void Process::runGoroutine(rt::g* gp) { interp_.run(gp); }

void Process::event(Ev e, rt::g* gp, rt::p* pp, int64_t arg) {
  const int64_t now = engine_.now();  // measuring costs the simulated program nothing
  metrics_.on_event(e, gp, pp, arg, now);
  // schedinit's procresize, before runtime.main: the starting count, not a change.
  if (e == Ev::ProcsChange && !runtime_.mainStarted) procs_start_ = static_cast<int32_t>(arg);
  if (asserts_.watching()) asserts_.on_event(e, gp, pp, arg, now);
  // WakepSpinning .. RunnextCasFail are counts only; the GC's kinds after them are traced.
  if (trace_ != nullptr && (e < Ev::WakepSpinning || rt::isGCEvent(e))) {
    trace::Event te = to_trace(e, gp, pp, arg, now);
    te.set_process(cfg_.id);  // 0 is not written: a one-process trace has no process ids
    if (e == Ev::GoCreate && gp != nullptr) te.set_label(start_function(gp->startpc));
    if (Chooser* ch = engine_.config().chooser; ch != nullptr) te.set_step(ch->step());
    trace_->write(te);
  }
}

// The function a goroutine starts in, as Go's traces name it on creation: the scenario's function,
// or the runtime's.
std::string Process::start_function(uintptr_t pc) const {
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

// Like Go's traceback after a fatal error: each goroutine that is not dead, with its status.
std::string Process::goroutine_dump() const {
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

}  // namespace gmp::engine
