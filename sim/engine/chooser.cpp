#include "sim/engine/chooser.h"

namespace gmp::engine {

const char* step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::Start:
      return "start";
    case StepKind::Access:
      return "access";
    case StepKind::Lock:
      return "lock";
    case StepKind::Unlock:
      return "unlock";
    case StepKind::NoteSleep:
      return "notesleep";
    case StepKind::Timeout:
      return "timeout";
    case StepKind::Clock:
      return "nanotime";
    case StepKind::Signal:
      return "tgkill";
    case StepKind::Yield:
      return "osyield";
  }
  return "?";
}

}  // namespace gmp::engine
