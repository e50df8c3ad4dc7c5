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

}  // namespace gmp::engine
