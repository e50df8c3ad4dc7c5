// The cost profile as the engine uses it: every cost parameter of the virtual-time engine and
// the simulated machine, loaded from a text file (schema: sim/cost/profile.proto).
//
// Protocol:
//   - load_profile(path) or parse_profile(text, origin) validate the whole file and either return
//     a Profile or throw ProfileError listing every problem, one per line, each as
//     "origin:line:column: message" (1-based; a tab advances the column to the next multiple of
//     8, as protoc counts). Problems: syntax errors, unknown fields, a parameter or machine field
//     missing (named, at the location of the enclosing message), a negative or non-finite value,
//     a value out of its range (kMaxCost and the others below), a wrong unit, an empty source, no
//     cores or more than kMaxCores, a core group's cluster_size above its count, a speed curve
//     whose busy counts do not increase or leave 1..cluster size, or whose factor leaves 0.1..1.
//   - A Profile is plain data: costs are indexed by Param in an array (ns), so the engine's
//     lookup is one load. Names map to Params with param_by_name().
//   - default_profile() is the text of sim/cost/profiles/default.textproto embedded at build
//     time, parsed once; builtin_profile(name) finds any profile shipped in that folder.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gmp::cost {

// One per field of the Costs message, in field order.
enum class Param : uint8_t {
  AtomicLoad,
  AtomicStore,
  AtomicStoreRelease,
  AtomicCas,
  AtomicXadd,
  AtomicXchg,
  AtomicAndOr,
  CachelineTransfer,
  PlainAccess,
  LockUncontended,
  LockContendedHandoff,
  FutexWake,
  FutexWakeLatency,
  FutexSleep,
  Osyield,
  UsleepMinLatency,
  Nanotime,
  ThreadCreate,
  Gogo,
  Mcall,
  SchedulePass,
  Newproc,
  Goexit,
  ChanOp,
  SelectOp,
  MutexFastPath,
  SignalSend,
  SignalDeliveryLatency,
  AsyncPreemptHandler,
  SyscallEnterExit,
  TimerAdd,
  NetpollCheck,
  Procyield,
  OsContextSwitch,
  WakeupJitter,
  OsIdleExitLatency,
  OsWakeIpi,
  CachelineTransferCluster,
  Count_,
};
inline constexpr size_t kNumParams = static_cast<size_t>(Param::Count_);

// The field name in the profile file, e.g. "atomic_load".
std::string_view param_name(Param p);
std::optional<Param> param_by_name(std::string_view name);

// The ranges a profile's values must lie in (also in profile.proto and docs/scenarios.md). They keep the engine's int64
// nanosecond clocks far from overflow whatever a scenario does, and they are wide: the shipped
// profiles sit orders of magnitude inside every one of them.
inline constexpr double kMaxCost = 1e9;              // any cost: at most 1 s
inline constexpr double kMinTimeSlice = 1e3;         // os_time_slice: 1 us ...
inline constexpr double kMaxTimeSlice = 1e10;        // ... to 10 s
inline constexpr double kMinNsPerIteration = 1e-3;   // speed_ns_per_iteration: 0.001 ...
inline constexpr double kMaxNsPerIteration = 1e3;    // ... to 1000 ns
inline constexpr double kMinSpeed = 1e-3;            // a core group's speed: 0.001 ...
inline constexpr double kMaxSpeed = 1e3;             // ... to 1000 times the reference core
inline constexpr double kMinBusyFactor = 0.1;        // a speed curve's factor: 0.1 ...
inline constexpr double kMaxBusyFactor = 1.0;        // ... to 1 (a busier cluster is never faster)
inline constexpr double kMaxMemorySlowdown = 1.0;    // memory_slowdown: 0 to 1 per other busy core
// Cores in all: the --cores flag's bound, and GOMAXPROCS's (scenario::kMaxProcs). The engine keeps
// a record per core, so a bigger machine only costs memory and time (2^31 cores overflowed the
// int32 core count; 10^8 took gigabytes).
inline constexpr uint32_t kMaxCores = 4096;

class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Sourced {
  double value = 0;
  std::string unit;
  std::string source;
};

// One point of a core group's speed curve: `factor` times the group's speed while `busy` cores of
// the cluster have a thread.
struct BusySpeed {
  uint32_t busy = 1;
  double factor = 1.0;
  std::string source;
};

struct CoreGroup {
  uint32_t count = 0;
  double speed = 1.0;
  std::string kind;
  std::string source;
  uint32_t cluster_size = 0;  // cores per cluster sharing a cache; 0: the whole group is one
  std::vector<BusySpeed> busy_speed;  // strictly increasing busy; empty: 1.0 at every count
  // The factor while `busy` cores of the cluster are busy: the last entry at or below it, else 1.
  double busy_factor(uint32_t busy) const;
};

// machine.linux_scheduler (profile.proto): Linux's fair-scheduler constants, each with its source.
// Present (has = true) when the placement is "affine".
struct LinuxScheduler {
  bool has = false;
  Sourced tick_period, base_slice, slice_scaling_max_cpus, migration_cost, imbalance_pct, busy_factor,
      balance_interval_per_cpu, cache_nice_tries, pelt_halflife, newidle_balance_cost, delay_dequeue;
};

// machine.cfs_bandwidth (profile.proto): CFS bandwidth control's constants, each with its source;
// the loader fills an absent one with the kernel's default (from_profile: whether the profile
// gave it, so that profile_text writes back only what it read).
struct CfsBandwidth {
  Sourced bandwidth_slice, min_runtime, slack_period, min_expiration;
  bool from_profile = false;
};

struct Machine {
  std::string name;
  std::vector<CoreGroup> core_groups;
  Sourced os_time_slice;           // ns
  Sourced speed_ns_per_iteration;  // ns/iteration on a reference core
  std::string os_placement;        // "spread" or "affine" (profile.proto)
  LinuxScheduler linux_scheduler;  // "affine" only
  std::optional<Sourced> memory_slowdown;  // "1/core"; absent: 0
  std::optional<Sourced> memory_bytes;     // "bytes"; absent: unbounded
  CfsBandwidth cfs_bandwidth;              // always filled (defaults: the kernel's)
  uint32_t cores() const;          // sum of the groups' counts
};

// The gc message (profile.proto): the collector's costs. has = false when the profile has none
// (every value 0).
struct GCCosts {
  bool has = false;
  Sourced alloc_ns_per_object, alloc_ns_per_byte, sweep_ns_per_page, mark_ns_per_byte, stack_scan_ns_per_byte,
      globals_bytes, mark_unit_bytes, write_barrier_slowdown;
  Sourced sweep_termination_ns, mark_termination_ns, mark_ns_per_object;  // optional: absent reads as 0
};

// One field of the gc message, as the loader checks it: its name, where it lives in GCCosts, its
// unit and range, whether it may be absent (then 0) and whether it must be above 0. The loader and
// the fit (sim/calibration/fit.h) both read this table.
struct GCCostField {
  std::string_view name;
  Sourced GCCosts::*member;
  std::string_view unit;
  double lo, hi;
  std::string_view range_text;  // "between 0 and 10000 ns"
  bool positive;
  bool optional;
};
const std::vector<GCCostField>& gc_cost_fields();  // in profile.proto's order
std::optional<size_t> gc_cost_field_by_name(std::string_view name);

struct Profile {
  std::string origin;  // the path, or "builtin:<name>"
  std::string description;
  Machine machine;
  std::array<double, kNumParams> ns{};      // cost of each Param in ns
  std::array<Sourced, kNumParams> params;   // the same values with unit and source
  GCCosts gc;

  double operator[](Param p) const { return ns[static_cast<size_t>(p)]; }
  const Sourced& sourced(Param p) const { return params[static_cast<size_t>(p)]; }
};

Profile load_profile(const std::string& path);
// The profile as profile text that parse_profile reads back to the same values: the proto-file
// header, `comment` as "# " lines, then the message. Values print in full precision.
std::string profile_text(const Profile& p, const std::string& comment);
Profile parse_profile(const std::string& text, const std::string& origin);

const Profile& default_profile();
std::optional<Profile> builtin_profile(std::string_view name);  // "default", "m1pro", ...
std::vector<std::string> builtin_profile_names();
// A builtin profile's text as shipped ("" for an unknown name): what identifies it across builds.
std::string_view builtin_profile_text(std::string_view name);

}  // namespace gmp::cost
