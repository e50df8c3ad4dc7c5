#include "sim/platform/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <boost/context/detail/fcontext.hpp>
#include <new>

#if GMP_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace gmp::plat {

namespace bctx = boost::context::detail;

namespace {
// The fiber being switched to; read by a newly started fiber to find itself.
thread_local Fiber* tls_starting = nullptr;

// A stack whose frames were abandoned (never unwound) keeps their redzone poison in ASan's shadow
// memory, and munmap does not clear it: a stack reused or remapped at the same address would see
// stale poison. Unpoison a stack whenever it starts afresh or goes away.
void unpoison_stack([[maybe_unused]] const void* bottom, [[maybe_unused]] size_t size) {
#if GMP_FIBER_ASAN
  __asan_unpoison_memory_region(bottom, size);
#endif
}
}  // namespace

struct FiberAccess {
  static void start_switch(Fiber& from, Fiber& to, bool from_finishing) {
#if GMP_FIBER_ASAN
    __sanitizer_start_switch_fiber(from_finishing ? nullptr : &from.fake_stack_, to.stack_bottom_,
                                   to.stack_size_);
#else
    (void)from, (void)to, (void)from_finishing;
#endif
  }
  // Called on `self` right after it resumes; records the bounds of the fiber we came from (this is
  // how the thread's own stack learns its bounds).
  static void finish_switch(Fiber& self, Fiber& prev) {
#if GMP_FIBER_ASAN
    __sanitizer_finish_switch_fiber(self.fake_stack_, &prev.stack_bottom_, &prev.stack_size_);
#else
    (void)self, (void)prev;
#endif
  }
  static void run(bctx::transfer_t t) {
    Fiber* self = tls_starting;
    Fiber* prev = static_cast<Fiber*>(t.data);
    prev->ctx_ = t.fctx;
    finish_switch(*self, *prev);
    try {
      self->entry_(self->arg_);
    } catch (...) {
      self->error_ = std::current_exception();
    }
    self->finished_ = true;
    Fiber* to = self->exit_to_;
    tls_starting = to;
    start_switch(*self, *to, /*from_finishing=*/true);
    bctx::jump_fcontext(to->ctx_, self);
    __builtin_unreachable();
  }
};

Fiber::Fiber() = default;

Fiber::Fiber(Entry entry, void* arg, Fiber* exit_to, size_t stack_size)
    : entry_(entry), arg_(arg), exit_to_(exit_to) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  stack_size = (stack_size + page - 1) / page * page;
  map_size_ = stack_size + page;
  map_ = mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
              -1, 0);
  if (map_ == MAP_FAILED) throw std::bad_alloc();
  mprotect(map_, page, PROT_NONE);  // guard page: a stack overflow faults instead of corrupting
  stack_bottom_ = static_cast<char*>(map_) + page;
  stack_size_ = stack_size;
  unpoison_stack(stack_bottom_, stack_size_);
  void* top = static_cast<char*>(map_) + map_size_;
  ctx_ = bctx::make_fcontext(top, stack_size, &FiberAccess::run);
}

void Fiber::reset(Entry entry, void* arg) {
  entry_ = entry;
  arg_ = arg;
  finished_ = false;
  error_ = nullptr;
  fake_stack_ = nullptr;
  unpoison_stack(stack_bottom_, stack_size_);
  ctx_ = bctx::make_fcontext(static_cast<char*>(map_) + map_size_, stack_size_, &FiberAccess::run);
}

Fiber::~Fiber() {
  if (map_ == nullptr) return;
  unpoison_stack(stack_bottom_, stack_size_);
  munmap(map_, map_size_);
}

void Fiber::switch_to(Fiber& from, Fiber& to) {
  tls_starting = &to;
  FiberAccess::start_switch(from, to, false);
  bctx::transfer_t t = bctx::jump_fcontext(to.ctx_, &from);
  // Back in `from`: t.data is the fiber that switched to us, t.fctx its suspended context.
  Fiber* prev = static_cast<Fiber*>(t.data);
  FiberAccess::finish_switch(from, *prev);
  if (!prev->finished_) prev->ctx_ = t.fctx;
}

}  // namespace gmp::plat
