#include "sim/engine/engine.h"

#include <utility>

#include "sim/engine/choice_driver.h"
#include "sim/engine/timed_driver.h"

namespace gmp::engine {

namespace {
std::unique_ptr<DriverBase> make_driver(EngineConfig cfg) {
  if (cfg.chooser != nullptr) return std::make_unique<ChoiceDriver>(std::move(cfg));
  return std::make_unique<TimedDriver>(std::move(cfg));
}
}  // namespace

Engine::Engine(EngineConfig cfg) : driver_(make_driver(std::move(cfg))) {}

Engine::~Engine() = default;

std::pair<int64_t, int64_t> Engine::cpu_max(uint32_t process) const {
  const EngineConfig& c = config();
  if (process >= c.processes.size() || c.processes[process].group < 0) return {-1, 100'000'000};
  const CpuGroup& grp = c.groups[static_cast<size_t>(c.processes[process].group)];
  int64_t quota = grp.quota;
  const int64_t t = now();
  for (const CpuGroup::Change& ch : grp.changes) {
    if (ch.at > t) break;
    quota = ch.quota;
  }
  return {quota, grp.period};
}

int32_t Engine::affinity_count(uint32_t process) const {
  const EngineConfig& c = config();
  if (process < c.processes.size() && c.processes[process].group >= 0) {
    const CpuGroup& grp = c.groups[static_cast<size_t>(c.processes[process].group)];
    if (!grp.cpuset.empty()) return static_cast<int32_t>(grp.cpuset.size());
  }
  return static_cast<int32_t>(c.cores.size());
}

}  // namespace gmp::engine
