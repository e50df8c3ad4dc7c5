// Temporary stand-ins for the cycle's functions the pacer and allocation call, so this branch
// links on its own; the cycle's port (mgc.cpp, mgcmark.cpp) replaces them: delete this file then.
#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

void Runtime::gcStart(gcTrigger) { plat::throw_("gcStart: not ported yet"); }
void Runtime::gcAssistAlloc(g*) { plat::throw_("gcAssistAlloc: not ported yet"); }
bool Runtime::gcShouldScheduleWorker(p*) { return false; }

}  // namespace gmp::rt
