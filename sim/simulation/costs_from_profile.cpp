#include "sim/simulation/costs_from_profile.h"

#include <cmath>

namespace gmp::engine {

namespace {
int64_t ns(const cost::Profile& prof, cost::Param p) { return static_cast<int64_t>(std::llround(prof[p])); }
}  // namespace

Costs costs_from_profile(const cost::Profile& prof) {
  using cost::Param;
  using plat::Cost;
  using plat::Op;
  Costs c;
  auto op = [&c](Op o) -> int64_t& { return c.op[static_cast<size_t>(o)]; };
  op(Op::Load) = ns(prof, Param::AtomicLoad);
  op(Op::LoadAcquire) = ns(prof, Param::AtomicLoad);
  op(Op::Store) = ns(prof, Param::AtomicStore);
  op(Op::StoreRelease) = ns(prof, Param::AtomicStoreRelease);
  op(Op::Cas) = ns(prof, Param::AtomicCas);
  op(Op::CasRelease) = ns(prof, Param::AtomicCas);
  op(Op::Add) = ns(prof, Param::AtomicXadd);
  op(Op::Swap) = ns(prof, Param::AtomicXchg);
  op(Op::Or) = ns(prof, Param::AtomicAndOr);
  op(Op::And) = ns(prof, Param::AtomicAndOr);
  op(Op::PlainLoad) = ns(prof, Param::PlainAccess);
  op(Op::PlainStore) = ns(prof, Param::PlainAccess);
  c.cacheline_transfer = ns(prof, Param::CachelineTransfer);
  c.cacheline_transfer_cluster = ns(prof, Param::CachelineTransferCluster);
  // Distance matters only if the profile describes clusters (some group has a cluster_size);
  // otherwise the machine is flat and every transfer costs cacheline_transfer, as before clusters.
  c.cacheline_by_distance = false;
  for (const cost::CoreGroup& g : prof.machine.core_groups) {
    if (g.cluster_size != 0) c.cacheline_by_distance = true;
  }
  auto path = [&c](Cost k) -> int64_t& { return c.path[static_cast<size_t>(k)]; };
  path(Cost::SchedulePass) = ns(prof, Param::SchedulePass);
  path(Cost::Gogo) = ns(prof, Param::Gogo);
  path(Cost::Mcall) = ns(prof, Param::Mcall);
  path(Cost::NewProc) = ns(prof, Param::Newproc);
  path(Cost::ProcYield) = ns(prof, Param::Procyield);
  path(Cost::SignalHandler) = ns(prof, Param::AsyncPreemptHandler);
  path(Cost::GoExit) = ns(prof, Param::Goexit);
  path(Cost::ChanOp) = ns(prof, Param::ChanOp);
  path(Cost::SelectOp) = ns(prof, Param::SelectOp);
  path(Cost::MutexFastPath) = ns(prof, Param::MutexFastPath);
  path(Cost::TimerAdd) = ns(prof, Param::TimerAdd);
  path(Cost::SyscallEnterExit) = ns(prof, Param::SyscallEnterExit);
  path(Cost::NetpollCheck) = ns(prof, Param::NetpollCheck);
  c.lock_uncontended = ns(prof, Param::LockUncontended);
  c.lock_contended_handoff = ns(prof, Param::LockContendedHandoff);
  c.futex_wake = ns(prof, Param::FutexWake);
  c.futex_wake_latency = ns(prof, Param::FutexWakeLatency);
  c.futex_sleep = ns(prof, Param::FutexSleep);
  c.osyield = ns(prof, Param::Osyield);
  c.usleep_min_latency = ns(prof, Param::UsleepMinLatency);
  c.wakeup_jitter = ns(prof, Param::WakeupJitter);
  c.nanotime = ns(prof, Param::Nanotime);
  c.thread_create = ns(prof, Param::ThreadCreate);
  c.context_switch = ns(prof, Param::OsContextSwitch);
  c.os_quantum = static_cast<int64_t>(std::llround(prof.machine.os_time_slice.value));
  c.signal_send = ns(prof, Param::SignalSend);
  c.signal_delivery_latency = ns(prof, Param::SignalDeliveryLatency);
  c.affine = prof.machine.os_placement == "affine";
  if (const cost::LinuxScheduler& l = prof.machine.linux_scheduler; l.has) {
    auto whole = [](const cost::Sourced& s) { return static_cast<int64_t>(std::llround(s.value)); };
    c.kernel.tick = whole(l.tick_period);
    c.kernel.base_slice = whole(l.base_slice);
    c.kernel.slice_scaling_max_cpus = static_cast<int32_t>(whole(l.slice_scaling_max_cpus));
    c.kernel.migration_cost = whole(l.migration_cost);
    c.kernel.imbalance_pct = static_cast<int32_t>(whole(l.imbalance_pct));
    c.kernel.busy_factor = static_cast<int32_t>(whole(l.busy_factor));
    c.kernel.balance_interval_per_cpu = whole(l.balance_interval_per_cpu);
    c.kernel.cache_nice_tries = static_cast<int32_t>(whole(l.cache_nice_tries));
    c.kernel.pelt_halflife = whole(l.pelt_halflife);
    c.kernel.newidle_balance_cost = whole(l.newidle_balance_cost);
    c.kernel.delay_dequeue = l.delay_dequeue.value != 0;
  }
  {
    const cost::CfsBandwidth& b = prof.machine.cfs_bandwidth;
    auto whole = [](const cost::Sourced& s) { return static_cast<int64_t>(std::llround(s.value)); };
    c.kernel.cfs_bandwidth_slice = whole(b.bandwidth_slice);
    c.kernel.min_cfs_rq_runtime = whole(b.min_runtime);
    c.kernel.cfs_bandwidth_slack_period = whole(b.slack_period);
    c.kernel.min_bandwidth_expiration = whole(b.min_expiration);
  }
  c.os_idle_exit_latency = ns(prof, Param::OsIdleExitLatency);
  c.os_wake_ipi = ns(prof, Param::OsWakeIpi);
  c.memory_slowdown = prof.machine.memory_slowdown ? prof.machine.memory_slowdown->value : 0.0;
  return c;
}

rt::gcCostModel gc_costs_from_profile(const cost::Profile& prof) {
  rt::gcCostModel c;
  if (prof.gc.has) {
    c.allocNsPerObject = prof.gc.alloc_ns_per_object.value;
    c.allocNsPerByte = prof.gc.alloc_ns_per_byte.value;
    c.sweepNsPerPage = prof.gc.sweep_ns_per_page.value;
    c.markNsPerByte = prof.gc.mark_ns_per_byte.value;
    c.stackScanNsPerByte = prof.gc.stack_scan_ns_per_byte.value;
    c.globalsBytes = static_cast<uint64_t>(prof.gc.globals_bytes.value);
    c.markUnitBytes = static_cast<uint64_t>(prof.gc.mark_unit_bytes.value);
    c.writeBarrierSlowdown = prof.gc.write_barrier_slowdown.value;
    c.sweepTerminationNs = prof.gc.sweep_termination_ns.value;
    c.markTerminationNs = prof.gc.mark_termination_ns.value;
    c.markNsPerObject = prof.gc.mark_ns_per_object.value;
  }
  if (prof.machine.memory_bytes) c.memoryBytes = static_cast<uint64_t>(prof.machine.memory_bytes->value);
  return c;
}

}  // namespace gmp::engine
