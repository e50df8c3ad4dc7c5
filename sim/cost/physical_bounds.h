// The physical range of each fitted profile value: what `gmpsim calibrate` may move a parameter
// to. The loader's ranges (profile.h, kMaxCost and the others) only keep the engine's clocks safe;
// these say what the hardware or kernel operation behind a cost can plausibly take, so that a fit
// with few points cannot buy a better error with a value no machine has (a 1 ns system call, a
// 10 ms cache-line transfer).
//
// Protocol: physical_bound(name) returns the row of a profile value by its field name (every cost
// of profile.proto's Costs, and "speed_ns_per_iteration"), or nullopt when the table has none (the
// fit then keeps to the loader's range). One row per parameter in physical_bounds.cpp: to add a
// parameter, add its row there. A lower bound of 0 marks a value where 0 means "off" (an idle core's
// exit latency, the wake-up IPI); the shipped profiles all lie inside the table (tests/cost).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace gmp::cost {

struct PhysicalBound {
  std::string_view name;    // the profile field, e.g. "futex_wake"
  double lo = 0, hi = 0;    // ns (speed_ns_per_iteration: ns per iteration)
  std::string_view reason;  // why this range, in a few words
};

std::optional<PhysicalBound> physical_bound(std::string_view name);
const std::vector<PhysicalBound>& physical_bounds();  // the whole table, in file order

}  // namespace gmp::cost
