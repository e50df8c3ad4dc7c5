// mallocgc's part that the GC sees (malloc.go), per batch of objects.
#include "sim/platform/platform.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

void Runtime::mallocgc(uint64_t size, uint64_t count, bool) {
  gcstats.allocBytes += size * count;
  gcstats.allocObjects += count;
}
void Runtime::releaseHeap(uint64_t) {}

}  // namespace gmp::rt
