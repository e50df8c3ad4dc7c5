// Stack switches: gogo (g0 -> goroutine) and mcall (goroutine -> g0), on the platform's contexts.
//
// Go's schedule, execute and the mcall functions (park_m, goexit0, gosched_m, ...) never return:
// they end by jumping to a goroutine with gogo, discarding g0's frames. Here g0's frames unwind
// instead: gogo switches to the goroutine and *returns* when a goroutine next hands its M back
// with mcall. Because every Go caller of gogo ends right after the call, that return unwinds
// execute, schedule and the mcall function in turn, back to g0loop, which then runs the function
// the goroutine passed to mcall. g0's stack therefore never grows across switches.
#include "sim/platform/context.h"
#include "sim/runtime/runtime.h"

namespace gmp::rt {

// gogo (asm): resumes gp on its own stack. Returns when a goroutine mcalls back to this g0.
void Runtime::gogo(g* gp) {
  plat::charge(plat::Cost::Gogo);
  plat::switchto(*gp->stack);
}

// mcall (asm): switches from the current goroutine to its M's g0 and runs fn(gp) there. Returns
// when the goroutine is resumed by gogo, possibly on another M.
void Runtime::mcall(void (Runtime::*fn)(g*)) {
  g* gp = plat::getg();
  m* mp = gp->m;
  if (gp == mp->g0) plat::throw_("runtime: mcall called on m->g0 stack");
  mp->mcallfn = fn;
  mp->mcallg = gp;
  plat::charge(plat::Cost::Mcall);
  plat::switchto(*mp->g0->stack);
}

// The rest of an M's life on g0 after mstart1's first schedule: each time a goroutine mcalls,
// run the function it asked for.
void Runtime::g0loop() {
  for (;;) {
    m* mp = plat::getg()->m;
    auto fn = mp->mcallfn;
    g* gp = mp->mcallg;
    mp->mcallfn = nullptr;
    mp->mcallg = nullptr;
    if (fn == nullptr) plat::throw_("g0loop: resumed without an mcall");
    (this->*fn)(gp);
  }
}

}  // namespace gmp::rt
