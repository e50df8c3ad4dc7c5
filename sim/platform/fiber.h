// User-space execution contexts for the recording platform: each simulated M (and, in the engine,
// each goroutine that can park inside runtime code) runs on a Fiber, and a driver switches between
// them on one OS thread. Built on Boost.Context's fcontext (make_fcontext/jump_fcontext), with
// AddressSanitizer fiber annotations so ASan builds understand the stack switches.
//
// Stacks are mmap'ed with MAP_NORESERVE and a guard page below, so memory is committed only as a
// fiber actually touches it: 100,000 fibers with 64 KiB stacks reserve address space, not RAM.
#pragma once

#include <cstddef>
#include <exception>

// AddressSanitizer builds: GCC defines __SANITIZE_ADDRESS__; clang 14 does not, and says so through
// __has_feature. Under ASan, fiber switches are announced to it and stacks are larger.
#if defined(__SANITIZE_ADDRESS__)
#define GMP_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GMP_FIBER_ASAN 1
#endif
#endif
#ifndef GMP_FIBER_ASAN
#define GMP_FIBER_ASAN 0
#endif

namespace gmp::plat {

class Fiber {
 public:
  using Entry = void (*)(void* arg);

  // The fiber of the calling OS thread's own stack. Needed to switch into fibers and back.
  Fiber();
  // A new fiber that will run entry(arg) when first switched to. When entry returns (or throws),
  // control passes to `exit_to`, and finished() becomes true; an exception is kept in error().
  Fiber(Entry entry, void* arg, Fiber* exit_to, size_t stack_size = kDefaultStack);
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Suspends `from` (which must be running) and resumes `to`.
  static void switch_to(Fiber& from, Fiber& to);

  // Makes a fiber that is not running (never started, finished, or abandoned while suspended)
  // start afresh on its own stack. Whatever was suspended on the stack is dropped unwound, so such
  // stacks must hold no objects that own resources.
  void reset(Entry entry, void* arg);

  bool finished() const { return finished_; }
  std::exception_ptr error() const { return error_; }

#if GMP_FIBER_ASAN
  static constexpr size_t kDefaultStack = 256 * 1024;
#else
  static constexpr size_t kDefaultStack = 64 * 1024;
#endif

 private:
  friend struct FiberAccess;

  void* ctx_ = nullptr;  // fcontext_t of the suspended fiber
  void* map_ = nullptr;  // mmap'ed region: guard page + stack
  size_t map_size_ = 0;
  Entry entry_ = nullptr;
  void* arg_ = nullptr;
  Fiber* exit_to_ = nullptr;
  bool finished_ = false;
  std::exception_ptr error_;
  // AddressSanitizer bookkeeping: this fiber's stack bounds and fake-stack handle.
  const void* stack_bottom_ = nullptr;
  size_t stack_size_ = 0;
  void* fake_stack_ = nullptr;
};

}  // namespace gmp::plat
