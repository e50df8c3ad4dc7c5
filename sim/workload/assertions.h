// Checking a scenario's assertions (scenario.proto's AssertDecl, docs/scenarios.md "Assertions")
// against one run. The host that runs the program feeds every scheduler event it gets from the
// port to on_event, and calls at_exit once when the run has ended; violations() then lists what
// the run did that the assertions forbid, in the order it was found.
//
// The checker reads only the events, the goroutines they name and, at exit, the interpreter's
// channels: nothing of the engine, so any driver (the virtual-time engine, the model checker's
// explorer) can feed it. It takes no part in the run: no platform operation, no clock of its own
// (the host passes the time of each event), so a run with assertions schedules exactly as one
// without. Its state is keyed by goroutine id and its reports are made in event order, or in
// goroutine-id order at exit, so they are as deterministic as the run.
//
// Cost: a scenario without assertions about goroutines gives watching() == false, and a host
// skips on_event altogether; otherwise one hash lookup per goroutine event, for the goroutines
// that some assertion is about.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/runtime/events.h"
#include "sim/scenario/program.h"

namespace gmp::rt {
struct g;
struct p;
}  // namespace gmp::rt

namespace gmp::workload {

class Interpreter;

struct AssertionViolation {
  std::string assertion;  // as written, after its position: "path:line:column: start_latency {...}"
  std::string detail;     // what happened: "goroutine 7 (worker) started 1.2ms after ..."
  int64_t at = 0;         // virtual ns at which it was found
  int32_t index = -1;     // the assertion: Scenario::assertions[index]
};

class AssertionChecker {
 public:
  // The first kShown violations of each assertion are reported in full; the rest are counted, in
  // one more violation after them.
  static constexpr uint64_t kShown = 10;

  // interp: the run's interpreter, whose channels at_exit inspects.
  AssertionChecker(const scenario::Scenario& sc, const Interpreter& interp);

  // Whether on_event has anything to do; false when no assertion is about goroutines.
  bool watching() const { return watching_; }
  // A scheduler event (rt::Host::event), at virtual time now.
  void on_event(rt::Ev e, rt::g* gp, rt::p* pp, int64_t arg, int64_t now);
  // The run ended at `now`. exited: it ended by the program's exit (main returned), so the
  // assertions about the program's state at exit apply; otherwise (a fatal error, a limit) they
  // are left unchecked. A goroutine still waiting to start then is checked either way: it has
  // waited at least that long.
  void at_exit(int64_t now, bool exited);

  const std::vector<AssertionViolation>& violations() const { return violations_; }
  // How many assertions at_exit left unchecked (0 before it is called).
  int32_t unchecked() const { return unchecked_; }

 private:
  // A goroutine of the program that some assertion is about, from its creation to its end.
  struct Watched {
    rt::g* gp = nullptr;
    int32_t func = -1;
    int32_t spawn = -1;
    int64_t readied = -1;   // when it was last created or readied, until it starts; -1: not since
    bool created = false;   // readied by its creation
    int64_t runnable = -1;  // when it last became runnable, until it starts; -1: not runnable
    int64_t parked = -1;    // when it last blocked, until it is readied
  };

  // StartLatency and FinishedAtExit assertions that apply to w (by its function and its spawn).
  template <class F>
  void each_about(const Watched& w, F f) const;
  std::string who(const Watched& w) const;
  std::string where(int32_t index) const;
  void violate(int32_t index, int64_t at, std::string detail);
  void check_start(const Watched& w, int64_t now, bool at_end);
  void check_runnable(const Watched& w, int64_t now, bool at_end);
  void check_chan(int32_t index, int64_t now);
  void check_finished(const Watched& w, int64_t now);

  const scenario::Scenario& sc_;
  const Interpreter& interp_;
  bool watching_ = false;
  std::vector<std::vector<int32_t>> by_func_;   // per function: the assertions about its goroutines
  std::vector<std::vector<int32_t>> by_spawn_;  // per named go statement
  std::vector<int32_t> runnable_;               // the MaxRunnableLatency assertions
  std::unordered_map<int64_t, Watched> live_;   // by goroutine id
  std::vector<AssertionViolation> violations_;
  std::vector<uint64_t> count_;    // per assertion: its violations
  std::vector<int64_t> last_at_;   // per assertion: when the last one was found
  int32_t unchecked_ = 0;
};

}  // namespace gmp::workload
