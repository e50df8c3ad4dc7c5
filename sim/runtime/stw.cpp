// Stop-the-world (proc.go): stopTheWorld, startTheWorld and their GC variants. Not yet ported:
// these stand in until the port lands and fail loudly if reached.
#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

Runtime::worldStop Runtime::stopTheWorld(stwReason) { plat::throw_("stopTheWorld: not ported yet"); }
void Runtime::startTheWorld(worldStop) { plat::throw_("startTheWorld: not ported yet"); }
Runtime::worldStop Runtime::stopTheWorldGC(stwReason) { plat::throw_("stopTheWorldGC: not ported yet"); }
void Runtime::startTheWorldGC(worldStop) { plat::throw_("startTheWorldGC: not ported yet"); }
Runtime::worldStop Runtime::stopTheWorldWithSema(stwReason) { plat::throw_("stopTheWorldWithSema: not ported yet"); }
int64_t Runtime::startTheWorldWithSema(int64_t, worldStop) { plat::throw_("startTheWorldWithSema: not ported yet"); }
void Runtime::ReadMemStats() { plat::throw_("ReadMemStats: not ported yet"); }

}  // namespace gmp::rt
