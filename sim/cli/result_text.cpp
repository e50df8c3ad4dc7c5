#include "sim/cli/result_text.h"

namespace gmp::cli {

namespace {

// Every field of a result, in order, under its member's name: V is PartWriter (R a const
// SimResult) or PartReader. A field added to SimResult belongs here too, else a merged sweep
// loses it (tests/sweep_part_test.cpp sets every field and reads it back).
template <class V, class R>
void visit(V& v, R& r, int depth) {
  v.enumeration("stop", r.stop, static_cast<uint64_t>(engine::Engine::Stop::Livelock));
  v.num("exit_code", r.exit_code);
  v.text("message", r.message);
  v.num("end_time", r.end_time);
  v.text("bench_name", r.bench_name);
  v.num("ops", r.ops);
  v.num("ns_per_op", r.ns_per_op);
  v.num("measured", r.measured);
  v.num("lat_p50", r.lat_p50);
  v.num("lat_p90", r.lat_p90);
  v.num("lat_p99", r.lat_p99);
  v.num("lat_max", r.lat_max);
  v.num("lat_samples", r.lat_samples);
  v.list("utilisation", r.utilisation, [](auto& w, auto& u) { w.num("p", u); });
  v.num("steals", r.steals);
  v.num("wakeps", r.wakeps);
  v.num("handoffs", r.handoffs);
  v.num("preempt_signals", r.preempt_signals);
  v.num("preempt_requests", r.preempt_requests);
  v.num("ms_created", r.ms_created);
  v.num("goroutines", r.goroutines);
  v.num("global_puts", r.global_puts);
  v.num("os_preemptions", r.os_preemptions);
  v.num("line_transfers", r.line_transfers);
  v.num("wakep_spinning", r.wakep_spinning);
  v.num("wakep_no_p", r.wakep_no_p);
  v.num("runnext_backoffs", r.runnext_backoffs);
  v.num("runnext_cas_fails", r.runnext_cas_fails);
  v.num("requests", r.requests);
  v.num("answered", r.answered);
  v.num("req_p50", r.req_p50);
  v.num("req_p99", r.req_p99);
  v.num("req_p999", r.req_p999);
  v.num("req_max", r.req_max);
  v.num("req_per_s", r.req_per_s);
  v.num("client_requests", r.client_requests);
  v.num("client_answered", r.client_answered);
  v.num("client_p50", r.client_p50);
  v.num("client_p99", r.client_p99);
  v.num("client_p999", r.client_p999);
  v.num("client_max", r.client_max);
  v.num("client_per_s", r.client_per_s);
  v.num("placed_on_prev", r.placed_on_prev);
  v.num("woken_delayed", r.woken_delayed);
  v.num("queued_busy", r.queued_busy);
  v.num("wake_preemptions", r.wake_preemptions);
  v.num("placed_on_other", r.placed_on_other);
  v.num("balance_pulls", r.balance_pulls);
  v.num("newidle_pulls", r.newidle_pulls);
  v.num("wakeups", r.wakeups);
  v.num("wakeups_ran", r.wakeups_ran);
  v.num("wake_on_prev", r.wake_on_prev);
  v.num("migrations", r.migrations);
  v.num("idle_wait_ns", r.idle_wait_ns);
  v.num("affine", r.affine);
  v.num("events", r.events);
  v.list("schedtrace", r.schedtrace, [](auto& w, auto& line) { w.text("line", line); });
  v.list("event_counts", r.event_counts, [](auto& w, auto& e) {
    w.text("event", e.first);
    w.num("count", e.second);
  });
  v.num("procs", r.procs);
  v.num("cores", r.cores);
  v.num("seed", r.seed);
  v.num("assertions", r.assertions);
  v.list("violations", r.violations, [](auto& w, auto& x) {
    w.text("assertion", x.assertion);
    w.text("detail", x.detail);
    w.num("at", x.at);
    w.num("index", x.index);
  });
  v.num("assertions_unchecked", r.assertions_unchecked);
  v.list("gc_cycles", r.gc.cycles, [](auto& w, auto& c) {
    w.num("n", c.n);
    w.num("start", c.start);
    w.num("forced", c.forced);
    w.num("sweepTermWall", c.sweepTermWall);
    w.num("markWall", c.markWall);
    w.num("markTermWall", c.markTermWall);
    w.num("sweepTermCpu", c.sweepTermCpu);
    w.num("assistCpu", c.assistCpu);
    w.num("backgroundCpu", c.backgroundCpu);
    w.num("idleCpu", c.idleCpu);
    w.num("markTermCpu", c.markTermCpu);
    w.num("heapStart", c.heapStart);
    w.num("heapEnd", c.heapEnd);
    w.num("heapLive", c.heapLive);
    w.num("heapGoal", c.heapGoal);
    w.num("stacks", c.stacks);
    w.num("globals", c.globals);
    w.num("procs", c.procs);
  });
  v.num("gc_gcCpu", r.gc.gcCpu);
  v.num("gc_idleMarkCpu", r.gc.idleMarkCpu);
  v.num("gc_assistTime", r.gc.assistTime);
  v.num("gc_sweepCpu", r.gc.sweepCpu);
  v.num("gc_stwCount", r.gc.stwCount);
  v.num("gc_stwTotal", r.gc.stwTotal);
  v.num("gc_stwMax", r.gc.stwMax);
  v.num("gc_allocBytes", r.gc.allocBytes);
  v.num("gc_allocObjects", r.gc.allocObjects);
  v.num("gc_peakHeap", r.gc.peakHeap);
  v.num("gc_lastHeapGoal", r.gc.lastHeapGoal);
  v.num("cpu_stat_nr_periods", r.cpu_stat.nr_periods);
  v.num("cpu_stat_nr_throttled", r.cpu_stat.nr_throttled);
  v.num("cpu_stat_throttled_time", r.cpu_stat.throttled_time);
  v.num("cpu_stat_usage", r.cpu_stat.usage);
  v.num("procs_end", r.procs_end);
  v.num("procs_changes", r.procs_changes);
  v.num("cpu_quota", r.cpu_quota);
  v.num("cpu_period", r.cpu_period);
  v.num("procs_auto", r.procs_auto);
  v.num("daemon", r.daemon);
  v.num("exited", r.exited);
  v.num("exit_time", r.exit_time);
  v.text("process", r.process);
  // A process's own results have no processes below them: one level, as simulate makes.
  v.list(
      "processes", r.processes, [depth](auto& w, auto& p) { visit(w, p, depth + 1); }, depth == 0 ? UINT64_MAX : 0);
}

}  // namespace

void write_result(PartWriter& w, const engine::SimResult& r) { visit(w, r, 0); }

engine::SimResult read_result(PartReader& rd) {
  engine::SimResult r;
  visit(rd, r, 0);
  return r;
}

}  // namespace gmp::cli
