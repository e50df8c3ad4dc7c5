// A process: one Go program on the simulated machine. It is what belongs to the program alone:
// its id, its runtime (the port's package state), its scenario and the interpreter that runs it,
// its network endpoints (the NetKernel its netpoll asks for ready descriptors), and what its
// scheduler events add up to (metrics, the scenario's assertions, its events in the trace). It is
// its runtime's Host. What processes share is the machine's (simulation.cpp): the engine (the
// clock, the cores, the OS's threads and their placement), the trace file, the seed.
//
// Its threads are its own: newosproc gives each engine thread it starts the process's id, and the
// machine's ProcessSwitch makes its runtime current whenever one of them runs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost/profile.h"
#include "sim/engine/engine.h"
#include "sim/runtime/runtime.h"
#include "sim/scenario/program.h"
#include "sim/simulation/metrics.h"
#include "sim/simulation/simulation.h"
#include "sim/workload/assertions.h"
#include "sim/workload/interpreter.h"

namespace gmp::trace {
class TraceWriter;
class Process;
}  // namespace gmp::trace

namespace gmp::engine {

struct ProcessConfig {
  uint32_t id = 0;                // its events' Event.process; the engine's process of its threads
  std::string name;               // Header.processes' name, and its threads' (but process 0's)
  int32_t procs = 1;              // GOMAXPROCS
  uint64_t seed = 1;              // its runtime's (cheaprand) and its network's (arrivals)
  bool asyncpreemptoff = false;   // GODEBUG=asyncpreemptoff=1
  int64_t schedtrace_ns = 0;      // GODEBUG=schedtrace period; 0: off
  rt::GCSettings gc;              // GOGC and GOMEMLIMIT, set before the runtime boots
  // GOMAXPROCS from Go's default instead of procs, and GODEBUG (Runtime::maxprocsSettings).
  bool procs_auto = false;
  int32_t containermaxprocs = 1, updatemaxprocs = 1;
  bool daemon = false;            // the run does not wait for it (EngineProcess::daemon)
};

class Process final : public rt::Host {
 public:
  // sc must outlive the process. The engine and the trace writer (nullptr: none) are the machine's.
  Process(const ProcessConfig& cfg, const scenario::Scenario& sc, const cost::Profile& prof, Engine& engine,
          trace::TraceWriter* trace);

  uint32_t id() const { return cfg_.id; }
  const std::string& name() const { return cfg_.name; }
  int32_t procs() const { return cfg_.procs; }
  rt::Runtime& runtime() { return runtime_; }
  // Its network endpoints: the scenario's connections and listeners; nullptr when it has none.
  const workload::Network* network() const { return interp_.network(); }
  workload::Network* network() { return interp_.network(); }
  // Its entry in a trace's Header.processes.
  trace::Process trace_entry() const;
  // The id of the M whose thread is engine thread tid; -1 if tid is not one of its threads.
  int64_t m_of(uint64_t tid) const;

  // Starts the program (rt0_go on m0's new thread), its runtime current meanwhile.
  void boot();
  // The machine's run ended as er says: metrics and assertions see the end, and res gets the
  // process's figures (the machine's are the caller's to fill).
  void finish(const Engine::Result& er, SimResult& res);

  // Host.
  void newosproc(rt::m* mp, plat::Fiber::Entry fn, void* arg) override;
  [[noreturn]] void exitThread() override;
  [[noreturn]] void exit(int code) override;
  void runGoroutine(rt::g* gp) override;
  void event(rt::Ev e, rt::g* gp, rt::p* pp, int64_t arg) override;
  rt::CPULimit cgroupCPULimit() override;
  int32_t getproccount() override;

 private:
  void set_maxprocs_settings();
  void finish_maxprocs(SimResult& res);
  int32_t procs_start_ = 0;  // GOMAXPROCS as schedinit set it when that differed from cfg_.procs
  std::string start_function(uintptr_t pc) const;
  std::string goroutine_dump() const;

  // finish's parts about the machine's view of the process: its exit, cgroup and cpu.stat.
  void finish_machine_view(const Engine::Result& er, SimResult& res) const;

  ProcessConfig cfg_;
  const scenario::Scenario& sc_;
  Engine& engine_;
  trace::TraceWriter* trace_;
  rt::Runtime runtime_;
  Metrics metrics_;
  workload::Interpreter interp_;
  workload::AssertionChecker asserts_;
  std::vector<std::pair<uint64_t, int64_t>> threads_;  // (engine thread, M id), in start order
  bool exited_ = false;  // it called exit (several processes: the run may go on without it)
  int exit_code_ = 0;
  int64_t exit_time_ = 0;
};

}  // namespace gmp::engine
