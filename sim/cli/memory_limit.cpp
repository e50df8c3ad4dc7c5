#include "sim/cli/memory_limit.h"

#include <sys/resource.h>
#include <sys/sysinfo.h>

#include <algorithm>
#include <fstream>
#include <thread>

namespace gmp::cli {

void limit_memory_to_machine() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return;
#else
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur != RLIM_INFINITY) return;
  struct sysinfo si {};
  if (sysinfo(&si) != 0) return;
  uint64_t machine = (static_cast<uint64_t>(si.totalram) + si.totalswap) * si.mem_unit;
  // In a container, its cgroup's limit (cgroup v2), if lower: sysinfo tells the host's memory.
  std::ifstream cg("/sys/fs/cgroup/memory.max");
  uint64_t cg_max = 0;
  if (cg >> cg_max && cg_max > 0) machine = std::min(machine, cg_max);
  if (machine == 0) return;
  // The limit counts address space, of which some is reserved but never used: each thread's stack
  // and malloc arena (a sweep runs a thread per CPU; glibc reserves up to 64 MiB an arena), and
  // stacks mapped with MAP_NORESERVE. This headroom keeps those from passing for memory.
  const uint64_t headroom = (uint64_t{1} << 30) + uint64_t{std::thread::hardware_concurrency()} * (uint64_t{128} << 20);
  rl.rlim_cur = machine + headroom;
  setrlimit(RLIMIT_AS, &rl);  // best effort: without it, the OOM killer is the limit
#endif
}

uint64_t memory_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
  return rl.rlim_cur;
}

}  // namespace gmp::cli
