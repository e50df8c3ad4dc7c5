// A checker schedule as text. An execution is fixed by which thread takes each step; most steps
// follow the default rule, so the text lists only the steps that depart from it:
// "STEP:THREAD" pairs, in increasing step order, separated by commas, then "/" and the number of
// steps the execution took ("57:2,130:0/412"). The total lets a replay tell a schedule that no
// longer fits the scenario (a stale one) from a shortened one. A schedule of a scenario with
// several processes names the process whose steps it chose first: "server@57:2/412" (all@ for
// every process's), since the same picks mean another run under another --process.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/chooser.h"

namespace gmp::model {

// A schedule that cannot be parsed (what() names the byte of the first bad character) or replayed
// (what() names the step where the run and the schedule part).
class ScheduleError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Schedule {
  std::vector<std::pair<uint64_t, uint32_t>> picks;  // (step, thread) where the default rule was not followed
  uint64_t steps = 0;                                // 0: unknown (the run goes on by the default rule)
  std::string process;                               // "NAME@" before the picks; empty: none

  std::string str() const;
  // Parses the text form; throws ScheduleError naming the byte offset of the first bad character.
  static Schedule parse(const std::string& text);
};

// The default rule, as the timing engine would run a program on enough cores: threads run until
// they block, and time passes only when every thread waits. The thread that took the last step
// goes on if it can; else the lowest-numbered thread that is not in a timed wait; else, with every
// thread waiting, the timed wait that ends first (lowest thread among equals). After a yield
// (osyield, a spin-wait's procyield) the next thread in order counts as the one that goes on (the
// Recorder passes it as `current`), so a spin-wait does not starve the thread it waits for.
// default_pick picks
// among the threads in `allowed` (a mask; all by default) and returns SIZE_MAX if none is.
size_t default_pick(std::span<const engine::Step> enabled, uint32_t current, uint64_t allowed = ~uint64_t{0});

}  // namespace gmp::model
