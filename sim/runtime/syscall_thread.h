// syscallingThread (proc.go): a P's M and goroutine frozen in a system call by the _Gscan bit,
// so that sysmon (retake) or an M leaving its own syscall (exitsyscallTryGetP) can take the P.
#pragma once

#include "sim/runtime/runtime2.h"

namespace gmp::rt {

struct syscallingThread {
  g* gp = nullptr;
  m* mp = nullptr;
  p* pp = nullptr;
  uint32_t status = 0;

  void gcstopP();  // releaseP(_Pgcstop), counted as stopped for the stop-the-world under way
  void takeP();    // releaseP(_Pidle)
  void releaseP(uint32_t state);
  void resume();   // casfrom_Gscanstatus back to status
};

// setBlockOnExitSyscall (proc.go): freezes pp's syscalling goroutine; false if pp's goroutine is
// not in a syscall.
bool setBlockOnExitSyscall(p* pp, syscallingThread& out);

}  // namespace gmp::rt
