// The garbage collector's cycle (mgc.go). Not yet ported: allocation is only counted.
#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

const char* stwReasonString(stwReason r) {
  static const char* const names[] = {
      "unknown", "GC mark termination", "GC sweep termination", "write heap dump", "goroutine profile",
      "goroutine profile cleanup", "all goroutines stack trace", "read mem stats", "AllThreadsSyscall",
      "GOMAXPROCS", "start trace", "stop trace", "CountPagesInUse (test)", "ReadMetricsSlow (test)",
      "ReadMemStatsSlow (test)", "PageCachePagesLeaked (test)", "ResetDebugLog (test)",
  };
  const auto i = static_cast<size_t>(r);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "unknown";
}

void Runtime::GC() { plat::throw_("GC: not ported yet"); }

}  // namespace gmp::rt
