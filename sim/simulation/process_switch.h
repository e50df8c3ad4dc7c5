// Which runtime is current while an engine thread runs. Every engine thread belongs to one process
// (Engine::newosproc's `process`), and the port finds its package state through
// rt::Runtime::current(): its free functions (chan, sema, time, sudog), mstart on a new thread,
// the preemption signal's handler. ProcessSwitch keeps the two in step, as FoundationDB's simulator
// sets its current process for each task it runs: installed as the engine's process hook, it makes
// Runtime::current() the runtime of the process whose thread the engine is about to run. The
// engine calls the hook only when that process differs from the last thread's, so one process on
// a machine pays one call per run.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/engine/engine.h"

namespace gmp::rt {
class Runtime;
}

namespace gmp::engine {

class ProcessSwitch {
 public:
  // Installs itself as engine's process hook, until destroyed.
  explicit ProcessSwitch(Engine& engine);
  ~ProcessSwitch();
  ProcessSwitch(const ProcessSwitch&) = delete;
  ProcessSwitch& operator=(const ProcessSwitch&) = delete;

  // Process `process` runs on r. Ids are given densely from 0, in order.
  void add(uint32_t process, rt::Runtime& r);

 private:
  static void enter(void* self, uint32_t process);

  Engine& engine_;
  std::vector<rt::Runtime*> runtimes_;  // by process id
};

}  // namespace gmp::engine
