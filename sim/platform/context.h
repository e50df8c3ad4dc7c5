// Execution contexts: the stacks that g's run on. Go switches stacks with gogo (g0 -> a goroutine)
// and mcall (a goroutine -> g0); the port does the same through plat::switchto, and a driver sees
// each switch. A Context is a Fiber plus the g that runs on it (what getg() returns there).
#pragma once

#include <cstddef>

#include "sim/platform/fiber.h"

namespace gmp::rt {
struct g;
}

namespace gmp::plat {

class Context {
 public:
  // A new stack that will run entry(arg) with getg() == gp when first switched to. entry must
  // never return: a stack's code ends by switching away for good. A Go throw escaping entry ends
  // the program through plat::crash_message, any other exception through the driver's fail().
  Context(Fiber::Entry entry, void* arg, rt::g* gp, size_t stack_size = Fiber::kDefaultStack)
      : g(gp), fiber(&Context::main, this, nullptr, stack_size), entry_(entry), arg_(arg) {}
  // The same on a stack borrowed from `pool` (see fiber.h), slot `key % pool.slots()`.
  Context(Fiber::Entry entry, void* arg, rt::g* gp, StackPool& pool, uint64_t key)
      : g(gp), fiber(&Context::main, this, nullptr, pool, key), entry_(entry), arg_(arg) {}
  // The stack the calling code is already running on (an OS thread's own stack).
  explicit Context(rt::g* gp) : g(gp) {}

  // Makes a context that is not running start afresh with entry(arg) (a reused goroutine stack).
  void reset(Fiber::Entry entry, void* arg) {
    entry_ = entry;
    arg_ = arg;
    fiber.reset(&Context::main, this);
  }

  rt::g* g;
  Fiber fiber;
  // True while the code running here may be stopped by an asynchronous preemption: user code
  // outside non-preemptible regions. Set by the workload interpreter, read by signal handlers.
  bool async_safe = false;

 private:
  static void main(void* self);
  Fiber::Entry entry_ = nullptr;
  void* arg_ = nullptr;
};

// The context running on this OS thread (or simulated thread, under a driver).
Context* current_context();
// Makes ctx the current context of this OS thread without switching (a thread's first context).
void set_current_context(Context* ctx);
// Suspends the current context and resumes `to` on this thread; getg() becomes to.g.
void switchto(Context& to);

}  // namespace gmp::plat
