// A Profile written back as profile text (profile.h): what gmpsim calibrate writes.
#include <google/protobuf/text_format.h>

#include "sim/cost/profile.h"
#include "sim/cost/profile.pb.h"

namespace gmp::cost {

namespace gpb = google::protobuf;

namespace {

void put(pb::Sourced* out, const Sourced& s) {
  out->set_value(s.value);
  out->set_unit(s.unit);
  out->set_source(s.source);
}

}  // namespace

std::string profile_text(const Profile& p, const std::string& comment) {
  pb::Profile msg;
  msg.set_description(p.description);
  pb::Machine* m = msg.mutable_machine();
  m->set_name(p.machine.name);
  for (const CoreGroup& g : p.machine.core_groups) {
    pb::CoreGroup* out = m->add_core_groups();
    out->set_count(g.count);
    out->set_speed(g.speed);
    out->set_kind(g.kind);
    out->set_source(g.source);
    if (g.cluster_size != 0) out->set_cluster_size(g.cluster_size);
    for (const BusySpeed& b : g.busy_speed) {
      pb::BusySpeed* point = out->add_busy_speed();
      point->set_busy(b.busy);
      point->set_factor(b.factor);
      point->set_source(b.source);
    }
  }
  put(m->mutable_os_time_slice(), p.machine.os_time_slice);
  put(m->mutable_speed_ns_per_iteration(), p.machine.speed_ns_per_iteration);
  if (p.machine.os_placement != "spread") m->set_os_placement(p.machine.os_placement);
  if (const LinuxScheduler& l = p.machine.linux_scheduler; l.has) {
    pb::LinuxScheduler* o = m->mutable_linux_scheduler();
    put(o->mutable_tick_period(), l.tick_period);
    put(o->mutable_base_slice(), l.base_slice);
    put(o->mutable_slice_scaling_max_cpus(), l.slice_scaling_max_cpus);
    put(o->mutable_migration_cost(), l.migration_cost);
    put(o->mutable_imbalance_pct(), l.imbalance_pct);
    put(o->mutable_busy_factor(), l.busy_factor);
    put(o->mutable_balance_interval_per_cpu(), l.balance_interval_per_cpu);
    put(o->mutable_cache_nice_tries(), l.cache_nice_tries);
    put(o->mutable_pelt_halflife(), l.pelt_halflife);
    put(o->mutable_newidle_balance_cost(), l.newidle_balance_cost);
    put(o->mutable_delay_dequeue(), l.delay_dequeue);
  }
  if (p.machine.memory_slowdown) put(m->mutable_memory_slowdown(), *p.machine.memory_slowdown);
  if (p.machine.memory_bytes) put(m->mutable_memory_bytes(), *p.machine.memory_bytes);
  if (const CfsBandwidth& b = p.machine.cfs_bandwidth; b.from_profile) {
    pb::CfsBandwidth* o = m->mutable_cfs_bandwidth();
    put(o->mutable_bandwidth_slice(), b.bandwidth_slice);
    put(o->mutable_min_runtime(), b.min_runtime);
    put(o->mutable_slack_period(), b.slack_period);
    put(o->mutable_min_expiration(), b.min_expiration);
  }
  if (const GCCosts& g = p.gc; g.has) {
    pb::GC* o = msg.mutable_gc();
    for (const GCCostField& f : gc_cost_fields()) {
      const Sourced& v = g.*f.member;
      if (f.optional && v.source.empty()) continue;  // absent in the profile read
      const gpb::FieldDescriptor* fd = o->GetDescriptor()->FindFieldByName(std::string(f.name));
      put(static_cast<pb::Sourced*>(o->GetReflection()->MutableMessage(o, fd)), v);
    }
  }
  pb::Costs* costs = msg.mutable_costs();
  const gpb::Reflection* r = costs->GetReflection();
  for (size_t i = 0; i < kNumParams; ++i) {
    const gpb::FieldDescriptor* f =
        costs->GetDescriptor()->FindFieldByName(std::string(param_name(static_cast<Param>(i))));
    put(static_cast<pb::Sourced*>(r->MutableMessage(costs, f)), p.params[i]);
  }
  std::string text;
  gpb::TextFormat::Printer printer;
  printer.PrintToString(msg, &text);
  std::string head = "# proto-file: sim/cost/profile.proto\n# proto-message: gmp.cost.pb.Profile\n";
  if (!comment.empty()) {
    head += "#\n";
    size_t at = 0;
    while (at <= comment.size()) {
      const size_t nl = comment.find('\n', at);
      const std::string line = comment.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
      head += line.empty() ? "#\n" : "# " + line + "\n";
      if (nl == std::string::npos) break;
      at = nl + 1;
    }
  }
  return head + "\n" + text;
}

}  // namespace gmp::cost
