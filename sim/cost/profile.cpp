// Loads and validates a cost profile: see profile.h for the protocol, profile.proto for the
// schema.
#include "sim/cost/profile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <google/protobuf/text_format.h>

#include "sim/cost/profile.pb.h"
#include "sim/textproto/parse_errors.h"
#include "sim/textproto/read_file.h"

namespace gmp::cost {

// The profiles of sim/cost/profiles, embedded by CMake (embedded_profiles.cpp in the build tree).
namespace detail {
extern const char* const kEmbeddedNames[];
extern const char* const kEmbeddedTexts[];
extern const unsigned kNumEmbedded;
}  // namespace detail

namespace {

namespace gpb = google::protobuf;

// Messages inside one another that the text parser accepts: a profile needs three.
constexpr int kParserRecursionLimit = 16;
using Tree = gpb::TextFormat::ParseInfoTree;
using Location = gpb::TextFormat::ParseLocation;

constexpr std::array<std::string_view, kNumParams> kNames = {
    "atomic_load", "atomic_store", "atomic_store_release", "atomic_cas", "atomic_xadd",
    "atomic_xchg", "atomic_and_or", "cacheline_transfer", "plain_access", "lock_uncontended",
    "lock_contended_handoff", "futex_wake", "futex_wake_latency", "futex_sleep", "osyield",
    "usleep_min_latency", "nanotime", "thread_create", "gogo", "mcall", "schedule_pass", "newproc",
    "goexit", "chan_op", "select_op", "mutex_fast_path", "signal_send", "signal_delivery_latency",
    "async_preempt_handler", "syscall_enter_exit", "timer_add", "netpoll_check", "procyield",
    "os_context_switch", "wakeup_jitter", "os_idle_exit_latency",
    "os_wake_ipi", "cacheline_transfer_cluster",
};

// Collects problems: parse errors through textproto::ParseErrors, validation problems through
// add() at protoc's 0-based locations.
class Problems {
 public:
  Problems(std::string origin, const std::string& text) : parse(origin, text), origin_(std::move(origin)) {}

  textproto::ParseErrors parse;

  void add(Location at, const std::string& message) {
    parse.diagnostics.push_back({origin_, at.line >= 0 ? at.line + 1 : 0, at.column + 1, message});
  }
  void throw_if_any() const {
    if (!parse.diagnostics.empty()) throw ProfileError(textproto::join(parse.diagnostics));
  }

 private:
  std::string origin_;
};

// Where a field was written; `fallback` (its message's location) if it was not.
Location where(const Tree* tree, const gpb::Message& msg, const char* field, Location fallback,
               int index = -1) {
  if (tree == nullptr) return fallback;
  const Location at = tree->GetLocation(msg.GetDescriptor()->FindFieldByName(field), index);
  return at.line >= 0 ? at : fallback;
}

const Tree* nested(const Tree* tree, const gpb::Message& msg, const char* field, int index = -1) {
  return tree == nullptr ? nullptr : tree->GetTreeForNested(msg.GetDescriptor()->FindFieldByName(field), index);
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// The range a Sourced value must lie in (profile.h's kMax* and kMin*), and how to say it.
struct Range {
  double lo, hi;
  const char* text;  // e.g. "at most 1e+09 ns (1 s)"
};

// Checks the Sourced field `name` of `parent` (written at `parent_at`, parsed into `tree`) and
// copies it to `out`.
void check_sourced(Problems& problems, const gpb::Message& parent, const Tree* tree, Location parent_at,
                   const std::string& path, const char* name, const char* unit, bool positive, const Range& range,
                   Sourced& out) {
  const gpb::FieldDescriptor* field = parent.GetDescriptor()->FindFieldByName(name);
  if (!parent.GetReflection()->HasField(parent, field)) {
    problems.add(parent_at, path + ": missing parameter " + name);
    return;
  }
  const auto& s = static_cast<const pb::Sourced&>(parent.GetReflection()->GetMessage(parent, field));
  const Location at = where(tree, parent, name, parent_at);
  const Tree* sub = nested(tree, parent, name);
  const std::string full = path + "." + name;
  if (!s.has_value()) {
    problems.add(at, full + ": missing value");
  } else if (!std::isfinite(s.value())) {
    problems.add(where(sub, s, "value", at), full + ": value " + number(s.value()) + " is not finite");
  } else if (s.value() < 0 || (positive && s.value() == 0)) {
    problems.add(where(sub, s, "value", at),
                 full + ": value " + number(s.value()) + (positive ? " must be > 0" : " is negative"));
  } else if (s.value() < range.lo || s.value() > range.hi) {
    problems.add(where(sub, s, "value", at), full + ": value " + number(s.value()) + " is out of range: " + range.text);
  }
  if (s.unit() != unit) {
    problems.add(where(sub, s, "unit", at), full + ": unit \"" + s.unit() + "\", expected \"" + unit + "\"");
  }
  if (blank(s.source())) problems.add(where(sub, s, "source", at), full + ": source is empty");
  out = Sourced{s.value(), s.unit(), s.source()};
}

// machine.linux_scheduler: each constant within the range the kernel allows it (profile.proto).
void check_linux(Problems& problems, const pb::LinuxScheduler& l, const Tree* tree, Location at, LinuxScheduler& out) {
  const std::string path = "machine.linux_scheduler";
  out.has = true;
  check_sourced(problems, l, tree, at, path, "tick_period", "ns", true,
                {1e6, 1e7, "between 1e+06 ns and 1e+07 ns (HZ 1000 to 100)"}, out.tick_period);
  check_sourced(problems, l, tree, at, path, "base_slice", "ns", true,
                {1e5, 1e8, "between 1e+05 ns (0.1 ms) and 1e+08 ns (100 ms)"}, out.base_slice);
  check_sourced(problems, l, tree, at, path, "slice_scaling_max_cpus", "cpus", true,
                {1, kMaxCores, "between 1 and 4096 cpus"}, out.slice_scaling_max_cpus);
  check_sourced(problems, l, tree, at, path, "migration_cost", "ns", false,
                {0, 1e7, "at most 1e+07 ns (10 ms)"}, out.migration_cost);
  check_sourced(problems, l, tree, at, path, "imbalance_pct", "percent", true,
                {100, 200, "between 100 and 200 percent"}, out.imbalance_pct);
  check_sourced(problems, l, tree, at, path, "busy_factor", "factor", true,
                {1, 256, "between 1 and 256"}, out.busy_factor);
  check_sourced(problems, l, tree, at, path, "balance_interval_per_cpu", "ns", true,
                {1e5, 1e8, "between 1e+05 ns (0.1 ms) and 1e+08 ns (100 ms)"}, out.balance_interval_per_cpu);
  check_sourced(problems, l, tree, at, path, "cache_nice_tries", "count", false,
                {0, 16, "between 0 and 16"}, out.cache_nice_tries);
  check_sourced(problems, l, tree, at, path, "pelt_halflife", "ns", true,
                {1e6, 1e9, "between 1e+06 ns (1 ms) and 1e+09 ns (1 s)"}, out.pelt_halflife);
  check_sourced(problems, l, tree, at, path, "newidle_balance_cost", "ns", false,
                {0, 1e7, "at most 1e+07 ns (10 ms)"}, out.newidle_balance_cost);
  check_sourced(problems, l, tree, at, path, "delay_dequeue", "flag", false, {0, 1, "0 or 1"}, out.delay_dequeue);
  for (const Sourced* whole : {&out.slice_scaling_max_cpus, &out.cache_nice_tries, &out.delay_dequeue}) {
    if (whole->value != std::floor(whole->value)) {
      problems.add(at, path + ": slice_scaling_max_cpus, cache_nice_tries and delay_dequeue are whole numbers");
      break;
    }
  }
}

// machine.cfs_bandwidth: each constant in its range, or the kernel's default where absent.
void check_cfs_bandwidth(Problems& problems, const pb::Machine& m, const Tree* tree, Location at, CfsBandwidth& out) {
  const char* src = "kernel/sched/fair.c default";
  out.bandwidth_slice = {5e6, "ns", std::string(src) + ": sysctl kernel.sched_cfs_bandwidth_slice_us 5000 us "
                                                        "(sysctl_sched_cfs_bandwidth_slice)"};
  out.min_runtime = {1e6, "ns", std::string(src) + ": min_cfs_rq_runtime 1 ms"};
  out.slack_period = {5e6, "ns", std::string(src) + ": cfs_bandwidth_slack_period 5 ms"};
  out.min_expiration = {2e6, "ns", std::string(src) + ": min_bandwidth_expiration 2 ms"};
  if (!m.has_cfs_bandwidth()) return;
  out.from_profile = true;
  const pb::CfsBandwidth& c = m.cfs_bandwidth();
  const Tree* sub = nested(tree, m, "cfs_bandwidth");
  const Location c_at = where(tree, m, "cfs_bandwidth", at);
  const std::string path = "machine.cfs_bandwidth";
  if (c.has_bandwidth_slice()) {
    check_sourced(problems, c, sub, c_at, path, "bandwidth_slice", "ns", true,
                  {1e3, 1e9, "between 1000 ns (1 us) and 1e+09 ns (1 s)"}, out.bandwidth_slice);
  }
  if (c.has_min_runtime()) {
    check_sourced(problems, c, sub, c_at, path, "min_runtime", "ns", false, {0, 1e8, "at most 1e+08 ns (100 ms)"},
                  out.min_runtime);
  }
  if (c.has_slack_period()) {
    check_sourced(problems, c, sub, c_at, path, "slack_period", "ns", true,
                  {1e5, 1e8, "between 1e+05 ns (0.1 ms) and 1e+08 ns (100 ms)"}, out.slack_period);
  }
  if (c.has_min_expiration()) {
    check_sourced(problems, c, sub, c_at, path, "min_expiration", "ns", false, {0, 1e8, "at most 1e+08 ns (100 ms)"},
                  out.min_expiration);
  }
}

// A core group's speed curve: busy counts strictly increasing inside 1..the cluster's size,
// factors inside kMinBusyFactor..kMaxBusyFactor, a source for each.
void check_busy_speed(Problems& problems, const pb::CoreGroup& g, const Tree* tree, Location at,
                      const std::string& path, CoreGroup& out) {
  const uint32_t cluster = g.cluster_size() != 0 ? g.cluster_size() : g.count();
  uint32_t last = 0;
  for (int i = 0; i < g.busy_speed_size(); ++i) {
    const pb::BusySpeed& b = g.busy_speed(i);
    const Location b_at = where(tree, g, "busy_speed", at, i);
    const Tree* sub = nested(tree, g, "busy_speed", i);
    const std::string full = path + ".busy_speed[" + std::to_string(i) + "]";
    if (b.busy() < 1 || b.busy() > cluster) {
      problems.add(where(sub, b, "busy", b_at), full + ": busy " + std::to_string(b.busy()) +
                                                    " is out of range: between 1 and the cluster's " +
                                                    std::to_string(cluster) + " cores");
    } else if (b.busy() <= last) {
      problems.add(where(sub, b, "busy", b_at), full + ": busy " + std::to_string(b.busy()) +
                                                    " does not follow the previous entry's " + std::to_string(last) +
                                                    ": busy counts must increase");
    }
    last = std::max(last, b.busy());
    if (!std::isfinite(b.factor()) || b.factor() < kMinBusyFactor || b.factor() > kMaxBusyFactor) {
      problems.add(where(sub, b, "factor", b_at), full + ": factor " + number(b.factor()) +
                                                      " is out of range: between " + number(kMinBusyFactor) +
                                                      " and " + number(kMaxBusyFactor));
    }
    if (blank(b.source())) problems.add(where(sub, b, "source", b_at), full + ": source is empty");
    out.busy_speed.push_back(BusySpeed{b.busy(), b.factor(), b.source()});
  }
}

void check_machine(Problems& problems, const pb::Machine& m, const Tree* tree, Location at, Machine& out) {
  out.name = m.name();
  if (blank(m.name())) problems.add(where(tree, m, "name", at), "machine: name is empty");
  if (m.core_groups().empty()) problems.add(at, "machine: no core_groups");
  uint64_t total = 0;  // counts are uint32: their sum is taken wide
  for (int i = 0; i < m.core_groups_size(); ++i) {
    const pb::CoreGroup& g = m.core_groups(i);
    const Location g_at = where(tree, m, "core_groups", at, i);
    const Tree* sub = nested(tree, m, "core_groups", i);
    const std::string path = "machine.core_groups[" + std::to_string(i) + "]";
    if (g.count() == 0) problems.add(where(sub, g, "count", g_at), path + ": count must be > 0");
    if (g.count() > kMaxCores) {
      problems.add(where(sub, g, "count", g_at), path + ": count " + std::to_string(g.count()) +
                                                     " is too large: a machine has at most " +
                                                     std::to_string(kMaxCores) + " cores");
    }
    total += g.count();
    if (!std::isfinite(g.speed()) || g.speed() <= 0) {
      problems.add(where(sub, g, "speed", g_at), path + ": speed " + number(g.speed()) + " must be finite and > 0");
    } else if (g.speed() < kMinSpeed || g.speed() > kMaxSpeed) {
      problems.add(where(sub, g, "speed", g_at), path + ": speed " + number(g.speed()) + " is out of range: " +
                                                     "between " + number(kMinSpeed) + " and " + number(kMaxSpeed));
    }
    if (blank(g.kind())) problems.add(where(sub, g, "kind", g_at), path + ": kind is empty");
    if (blank(g.source())) problems.add(where(sub, g, "source", g_at), path + ": source is empty");
    if (g.cluster_size() > g.count()) {
      problems.add(where(sub, g, "cluster_size", g_at), path + ": cluster_size " + std::to_string(g.cluster_size()) +
                                                            " is larger than the group's count " +
                                                            std::to_string(g.count()));
    }
    CoreGroup group{g.count(), g.speed(), g.kind(), g.source(), g.cluster_size(), {}};
    check_busy_speed(problems, g, sub, g_at, path, group);
    out.core_groups.push_back(std::move(group));
  }
  if (total > kMaxCores && m.core_groups_size() > 1) {
    problems.add(where(tree, m, "core_groups", at, 0), "machine: " + std::to_string(total) +
                                                           " cores in all: a machine has at most " +
                                                           std::to_string(kMaxCores));
  }
  check_sourced(problems, m, tree, at, "machine", "os_time_slice", "ns", true,
                {kMinTimeSlice, kMaxTimeSlice, "between 1000 ns (1 us) and 1e+10 ns (10 s)"}, out.os_time_slice);
  check_sourced(problems, m, tree, at, "machine", "speed_ns_per_iteration", "ns/iteration", true,
                {kMinNsPerIteration, kMaxNsPerIteration, "between 0.001 and 1000 ns/iteration"},
                out.speed_ns_per_iteration);
  if (m.has_memory_slowdown()) {
    out.memory_slowdown.emplace();
    check_sourced(problems, m, tree, at, "machine", "memory_slowdown", "1/core", false,
                  {0, kMaxMemorySlowdown, "between 0 and 1 (a fraction per other busy core)"}, *out.memory_slowdown);
  }
  if (m.has_memory_bytes()) {
    out.memory_bytes.emplace();
    check_sourced(problems, m, tree, at, "machine", "memory_bytes", "bytes", true,
                  {1 << 20, 1125899906842624.0, "between 1048576 (1 MiB) and 1125899906842624 (2^50) bytes"},
                  *out.memory_bytes);
  }
  out.os_placement = m.os_placement().empty() ? "spread" : m.os_placement();
  if (out.os_placement != "spread" && out.os_placement != "affine") {
    problems.add(where(tree, m, "os_placement", at),
                 "machine: os_placement \"" + m.os_placement() + "\" is not one of: spread, affine");
  }
  if (out.os_placement == "affine" && !m.has_linux_scheduler()) {
    problems.add(where(tree, m, "os_placement", at),
                 "machine: os_placement \"affine\" needs machine.linux_scheduler (docs/placement.md)");
  }
  if (m.has_linux_scheduler()) check_linux(problems, m.linux_scheduler(), nested(tree, m, "linux_scheduler"),
                                           where(tree, m, "linux_scheduler", at), out.linux_scheduler);
  check_cfs_bandwidth(problems, m, tree, at, out.cfs_bandwidth);
}

// gc (profile.proto): each of the collector's costs (gc_cost_fields) present unless optional, in
// its unit and range.
void check_gc(Problems& problems, const pb::GC& g, const Tree* tree, Location at, GCCosts& out) {
  out.has = true;
  const std::string path = "gc";
  for (const GCCostField& f : gc_cost_fields()) {
    const std::string name(f.name), unit(f.unit), text(f.range_text);
    const gpb::FieldDescriptor* field = g.GetDescriptor()->FindFieldByName(name);
    if (f.optional && !g.GetReflection()->HasField(g, field)) continue;
    check_sourced(problems, g, tree, at, path, name.c_str(), unit.c_str(), f.positive, {f.lo, f.hi, text.c_str()},
                  out.*f.member);
  }
}

}  // namespace

const std::vector<GCCostField>& gc_cost_fields() {
  static const std::vector<GCCostField> fields = {
      {"alloc_ns_per_object", &GCCosts::alloc_ns_per_object, "ns", 0, 1e4, "between 0 and 10000 ns", false, false},
      {"alloc_ns_per_byte", &GCCosts::alloc_ns_per_byte, "ns/byte", 0, 100, "between 0 and 100 ns/byte", false, false},
      {"sweep_ns_per_page", &GCCosts::sweep_ns_per_page, "ns/page", 0, 1e6, "between 0 and 1e+06 ns/page", false, false},
      {"mark_ns_per_byte", &GCCosts::mark_ns_per_byte, "ns/byte", 0, 100, "between 0 and 100 ns/byte", false, false},
      {"stack_scan_ns_per_byte", &GCCosts::stack_scan_ns_per_byte, "ns/byte", 0, 100, "between 0 and 100 ns/byte",
       false, false},
      {"globals_bytes", &GCCosts::globals_bytes, "bytes", 0, 1e9, "between 0 and 1e+09 bytes", false, false},
      {"mark_unit_bytes", &GCCosts::mark_unit_bytes, "bytes", 1, 1e9, "between 1 and 1e+09 bytes", true, false},
      {"write_barrier_slowdown", &GCCosts::write_barrier_slowdown, "fraction", 0, 10, "between 0 and 10 (a fraction)",
       false, false},
      {"sweep_termination_ns", &GCCosts::sweep_termination_ns, "ns", 0, 1e7, "between 0 and 1e+07 ns (10 ms)", false,
       true},
      {"mark_termination_ns", &GCCosts::mark_termination_ns, "ns", 0, 1e7, "between 0 and 1e+07 ns (10 ms)", false,
       true},
      {"mark_ns_per_object", &GCCosts::mark_ns_per_object, "ns", 0, 1e4, "between 0 and 10000 ns", false, true},
  };
  return fields;
}

std::optional<size_t> gc_cost_field_by_name(std::string_view name) {
  const std::vector<GCCostField>& f = gc_cost_fields();
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i].name == name) return i;
  }
  return std::nullopt;
}

std::string_view param_name(Param p) { return kNames.at(static_cast<size_t>(p)); }

std::optional<Param> param_by_name(std::string_view name) {
  for (size_t i = 0; i < kNumParams; ++i) {
    if (kNames[i] == name) return static_cast<Param>(i);
  }
  return std::nullopt;
}

double CoreGroup::busy_factor(uint32_t busy) const {
  double f = 1.0;
  for (const BusySpeed& b : busy_speed) {
    if (b.busy > busy) break;
    f = b.factor;
  }
  return f;
}

uint32_t Machine::cores() const {
  uint32_t n = 0;
  for (const CoreGroup& g : core_groups) n += g.count;
  return n;
}

Profile parse_profile(const std::string& text, const std::string& origin) {
  Problems problems(origin, text);
  pb::Profile msg;
  Tree tree;
  gpb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&problems.parse);
  parser.WriteLocationsTo(&tree);
  // A profile nests three messages deep (costs { atomic_load { value ... } }); the limit keeps
  // protobuf's recursive parser off the end of the stack on text nested thousands deep.
  parser.SetRecursionLimit(kParserRecursionLimit);
  if (!parser.ParseFromString(text, &msg)) {
    problems.throw_if_any();
    throw ProfileError(origin + ": not a valid cost profile");
  }

  Profile out;
  out.origin = origin;
  out.description = msg.description();
  const Location top(0, 0);
  if (!msg.has_machine()) {
    problems.add(top, "missing machine");
  } else {
    check_machine(problems, msg.machine(), nested(&tree, msg, "machine"), where(&tree, msg, "machine", top),
                  out.machine);
  }
  if (!msg.has_costs()) {
    problems.add(top, "missing costs");
  } else {
    const Tree* costs_tree = nested(&tree, msg, "costs");
    const Location costs_at = where(&tree, msg, "costs", top);
    for (size_t i = 0; i < kNumParams; ++i) {
      const std::string name(kNames[i]);
      check_sourced(problems, msg.costs(), costs_tree, costs_at, "costs", name.c_str(), "ns", false,
                    {0, kMaxCost, "at most 1e+09 ns (1 s)"}, out.params[i]);
      out.ns[i] = out.params[i].value;
    }
    // The fitted stand-ins of the old "affine" rules: their meaning is now the kernel's.
    if (msg.costs().has_os_wake_in_place()) {
      problems.add(where(costs_tree, msg.costs(), "os_wake_in_place", costs_at),
                   "costs.os_wake_in_place was removed: \"affine\" placement now follows Linux's rules; a short "
                   "sleeper stays on its core through machine.linux_scheduler.delay_dequeue (docs/placement.md)");
    }
    if (msg.costs().has_os_balance_delay()) {
      problems.add(where(costs_tree, msg.costs(), "os_balance_delay", costs_at),
                   "costs.os_balance_delay was removed: idle cores pull queued threads at the scheduler tick, "
                   "machine.linux_scheduler.tick_period, and when they go idle (docs/placement.md)");
    }
  }
  if (msg.has_gc()) check_gc(problems, msg.gc(), nested(&tree, msg, "gc"), where(&tree, msg, "gc", top), out.gc);
  problems.throw_if_any();
  return out;
}

Profile load_profile(const std::string& path) {
  textproto::FileText file = textproto::read_file(path);
  if (!file.error.empty()) throw ProfileError(path + ": " + file.error);
  return parse_profile(file.text, path);
}

std::vector<std::string> builtin_profile_names() {
  return std::vector<std::string>(detail::kEmbeddedNames, detail::kEmbeddedNames + detail::kNumEmbedded);
}

std::string_view builtin_profile_text(std::string_view name) {
  for (unsigned i = 0; i < detail::kNumEmbedded; ++i) {
    if (name == detail::kEmbeddedNames[i]) return detail::kEmbeddedTexts[i];
  }
  return {};
}

std::optional<Profile> builtin_profile(std::string_view name) {
  for (unsigned i = 0; i < detail::kNumEmbedded; ++i) {
    if (name == detail::kEmbeddedNames[i]) {
      return parse_profile(detail::kEmbeddedTexts[i], "builtin:" + std::string(name));
    }
  }
  return std::nullopt;
}

const Profile& default_profile() {
  static const Profile profile = *builtin_profile("default");
  return profile;
}

}  // namespace gmp::cost
