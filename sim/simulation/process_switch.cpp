#include "sim/simulation/process_switch.h"

#include <stdexcept>
#include <string>

#include "sim/runtime/runtime.h"

namespace gmp::engine {

ProcessSwitch::ProcessSwitch(Engine& engine) : engine_(engine) { engine_.set_process_hook(&ProcessSwitch::enter, this); }

ProcessSwitch::~ProcessSwitch() { engine_.set_process_hook(nullptr, nullptr); }

void ProcessSwitch::add(uint32_t process, rt::Runtime& r) {
  if (process != runtimes_.size()) throw std::invalid_argument("ProcessSwitch: process ids are given in order from 0");
  runtimes_.push_back(&r);
}

void ProcessSwitch::enter(void* self, uint32_t process) {
  const auto& rts = static_cast<ProcessSwitch*>(self)->runtimes_;
  if (process >= rts.size()) throw std::logic_error("ProcessSwitch: an engine thread of process " + std::to_string(process) + ", which was never added");
  rt::Runtime::setCurrent(rts[process]);
}

}  // namespace gmp::engine
