#include "sim/cli/memory_limit.h"

#include <sys/resource.h>
#include <sys/sysinfo.h>

namespace gmp::cli {

void limit_memory_to_machine() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return;
#else
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur != RLIM_INFINITY) return;
  struct sysinfo si {};
  if (sysinfo(&si) != 0) return;
  const uint64_t machine = (static_cast<uint64_t>(si.totalram) + si.totalswap) * si.mem_unit;
  if (machine == 0) return;
  rl.rlim_cur = machine;
  setrlimit(RLIMIT_AS, &rl);  // best effort: without it, the OOM killer is the limit
#endif
}

uint64_t memory_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
  return rl.rlim_cur;
}

}  // namespace gmp::cli
