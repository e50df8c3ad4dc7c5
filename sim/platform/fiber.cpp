#include "sim/platform/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <boost/context/detail/fcontext.hpp>
#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

#if GMP_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

// gmp_fiber_switch: jump_fcontext, with the return stack buffer kept in step. jump_fcontext is
// entered by a call but leaves by an indirect jump (to where the resumed context called it), so
// every switch left one return address on the CPU's return-address predictor that no return
// consumed: each return up the resumed fiber's frames was then predicted from the frame below and
// mispredicted, about 12 ns a frame here (a switch from 2 Ps on returns through ~5 of them). This
// entry pushes the return address itself and jumps, so the switch pushes nothing; the resumed side
// comes back at 1: and its `ret` consumes the suspended side's call of this function, which is
// the same call site (Fiber::switch_to) for nearly every switch, so that it and the returns after
// it are predicted. Same arguments, results and saved state as jump_fcontext.
#if defined(__x86_64__) && defined(__linux__)
#define GMP_FIBER_SWITCH 1
extern "C" boost::context::detail::transfer_t gmp_fiber_switch(boost::context::detail::fcontext_t to, void* vp);
asm(R"(
  .pushsection .text
  .p2align 4
  .type gmp_fiber_switch, @function
gmp_fiber_switch:
  leaq 1f(%rip), %rax
  pushq %rax
  jmp jump_fcontext@PLT
1:
  ret
  .size gmp_fiber_switch, .-gmp_fiber_switch
  .popsection
)");
#else
#define GMP_FIBER_SWITCH 0
#endif

namespace gmp::plat {

namespace bctx = boost::context::detail;

namespace {
inline bctx::transfer_t switch_fcontext(bctx::fcontext_t to, void* vp) {
#if GMP_FIBER_SWITCH
  return gmp_fiber_switch(to, vp);
#else
  return bctx::jump_fcontext(to, vp);
#endif
}
}  // namespace

namespace {
// The fiber being switched to; read by a newly started fiber to find itself.
thread_local Fiber* tls_starting = nullptr;

// A stack whose frames were abandoned (never unwound) keeps their redzone poison in ASan's shadow
// memory, and munmap does not clear it: a stack reused or remapped at the same address would see
// stale poison. Unpoison a stack whenever it starts afresh or goes away. Pooled slots are unpoisoned
// whenever they change hands, so that copying frames in and out reads no redzones (the copied
// frames lose their redzones, which only makes ASan see less of them).
void unpoison_stack([[maybe_unused]] const void* bottom, [[maybe_unused]] size_t size) {
#if GMP_FIBER_ASAN
  __asan_unpoison_memory_region(bottom, size);
#endif
}

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// Stacks given back by ended fibers and pools, kept for reuse by the next of the same size on this
// OS thread. A checker makes a few fibers per execution and runs thousands of executions a second;
// mapping each stack afresh (mmap, the guard page's mprotect, munmap, and a page fault on each
// first touch) took it more time in the kernel than the executions took. A reused stack holds the
// bytes its last fiber left, which no fiber reads before writing. At most kCachedStacks are kept,
// so the memory held is bounded by what that many fibers touched.
constexpr size_t kCachedStacks = 16;
struct StackCache {
  struct Stack {
    void* map;
    size_t map_size;
  };
  std::vector<Stack> stacks;
  ~StackCache();
};
thread_local StackCache tls_stacks;
// Set when this thread's cache is destroyed; fibers that end after it (static objects, at exit)
// unmap their stacks directly. A plain bool is never destroyed.
thread_local bool tls_stacks_gone = false;

StackCache::~StackCache() {
  for (const Stack& st : stacks) munmap(st.map, st.map_size);
  tls_stacks_gone = true;
}

// Unmaps a stack, or keeps it for the next fiber of this thread.
void release_stack(void* map, size_t map_size) {
  if (!tls_stacks_gone && tls_stacks.stacks.size() < kCachedStacks) {
    tls_stacks.stacks.push_back({map, map_size});
    return;
  }
  munmap(map, map_size);
}

// Maps a stack of `size` bytes (rounded up to pages) with a guard page below it, or takes a cached
// one of that size. Returns the mapping (nullptr when the kernel refuses: out of memory or of
// mappings); *map_size is its size.
void* map_stack(size_t& size, size_t& map_size) {
  const size_t page = page_size();
  size = (size + page - 1) / page * page;
  map_size = size + page;
  if (!tls_stacks_gone) {
    std::vector<StackCache::Stack>& c = tls_stacks.stacks;
    for (size_t i = c.size(); i-- > 0;) {
      if (c[i].map_size != map_size) continue;
      void* map = c[i].map;
      c.erase(c.begin() + static_cast<std::ptrdiff_t>(i));
      return map;
    }
  }
  void* map = mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
  if (map == MAP_FAILED) return nullptr;
  // The guard page: a stack overflow faults instead of corrupting. It splits the mapping in two,
  // which fails like a mapping when the kernel's count of mappings is used up.
  if (mprotect(map, page, PROT_NONE) != 0) {
    munmap(map, map_size);
    return nullptr;
  }
  return map;
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
  // Back in `self` after a switch: t.data is the fiber that switched to us, t.fctx its suspended
  // context.
  static void resumed(Fiber& self, bctx::transfer_t t) {
    Fiber* prev = static_cast<Fiber*>(t.data);
    finish_switch(self, *prev);
    if (!prev->finished_) prev->ctx_ = t.fctx;
  }

  // Suspends `from` (running) and resumes `to`, first putting `to`'s frames into its slot if it is
  // pooled and they are not there. When `from` itself stands on that slot it cannot copy its own
  // frames out, so the pool's swapper, on a stack of its own, does the swap in between.
  static void jump(Fiber& from, Fiber& to, bool from_finishing) {
    Fiber* target = &to;
    if (to.pool_ != nullptr && (to.fresh_ || to.pool_->slots_[to.slot_].owner != &to)) {
      StackPool& pool = *to.pool_;
      if (pool.slots_[to.slot_].owner == &from) {
        pool.swap_to_ = &to;
        target = pool.swapper_.get();
      } else {
        pool.install(to);  // may throw std::bad_alloc, here on `from`'s stack
      }
    }
    tls_starting = target;
    start_switch(from, *target, from_finishing);
    bctx::transfer_t t = switch_fcontext(target->ctx_, &from);
    resumed(from, t);
    if (target != &to && from.pool_->swap_failed_) {
      // The swapper could not save our frames (no memory); they are untouched and we were resumed.
      from.pool_->swap_failed_ = false;
      throw std::bad_alloc();
    }
  }

  // The swapper's stack: each time a pooled fiber hands over to another of its own slot, install the
  // other one here, then run it.
  static void swap_main(bctx::transfer_t t) {
    for (;;) {
      Fiber& from = *static_cast<Fiber*>(t.data);
      StackPool& pool = *from.pool_;
      Fiber& self = *pool.swapper_;
      resumed(self, t);
      Fiber* to = pool.swap_to_;
      pool.swap_to_ = nullptr;
      try {
        pool.install(*to);
      } catch (const std::bad_alloc&) {
        pool.swap_failed_ = true;  // go back to `from`, whose frames are still in place
        to = &from;
      }
      tls_starting = to;
      start_switch(self, *to, false);
      t = switch_fcontext(to->ctx_, &self);
    }
  }

  // Where a finished fiber goes: a stack of its own, since a pooled one may fail to be installed.
  static Fiber* exit_target(Fiber* f) {
    if (f != nullptr && f->pool_ != nullptr) throw std::invalid_argument("Fiber: exit_to must have a stack of its own");
    return f;
  }

  static void run(bctx::transfer_t t) {
    Fiber* self = tls_starting;
    resumed(*self, t);
    try {
      self->entry_(self->arg_);
    } catch (...) {
      self->error_ = std::current_exception();
    }
    self->finished_ = true;
    // Its frames will never be saved again: the buffer can serve another fiber.
    if (self->pool_ != nullptr) self->pool_->give_buffer(*self);
    jump(*self, *self->exit_to_, /*from_finishing=*/true);
    __builtin_unreachable();
  }
};

Fiber::Fiber() = default;

Fiber::Fiber(Entry entry, void* arg, Fiber* exit_to, size_t stack_size)
    : entry_(entry), arg_(arg), exit_to_(FiberAccess::exit_target(exit_to)) {
  map_ = map_stack(stack_size, map_size_);
  if (map_ == nullptr) throw std::bad_alloc();
  stack_bottom_ = static_cast<char*>(map_) + (map_size_ - stack_size);
  stack_size_ = stack_size;
  unpoison_stack(stack_bottom_, stack_size_);
  ctx_ = bctx::make_fcontext(static_cast<char*>(map_) + map_size_, stack_size, &FiberAccess::run);
}

Fiber::Fiber(Entry entry, void* arg, Fiber* exit_to, StackPool& pool, uint64_t key)
    : entry_(entry), arg_(arg), exit_to_(FiberAccess::exit_target(exit_to)),
      fresh_(true), pool_(&pool),
      slot_(static_cast<uint32_t>(key % pool.slots())) {}

void Fiber::reset(Entry entry, void* arg) {
  entry_ = entry;
  arg_ = arg;
  finished_ = false;
  error_ = nullptr;
  fake_stack_ = nullptr;
  if (pool_ != nullptr) {
    // Its old frames are dropped; a fiber that starts afresh has none to keep.
    fresh_ = true;
    pool_->give_buffer(*this);
    return;
  }
  unpoison_stack(stack_bottom_, stack_size_);
  ctx_ = bctx::make_fcontext(static_cast<char*>(map_) + map_size_, stack_size_, &FiberAccess::run);
}

Fiber::~Fiber() {
  if (pool_ != nullptr) pool_->drop(*this);
  if (map_ == nullptr) return;
  unpoison_stack(stack_bottom_, stack_size_);
  release_stack(map_, map_size_);
}

void Fiber::switch_to(Fiber& from, Fiber& to) { FiberAccess::jump(from, to, false); }

StackPool::StackPool(uint32_t slots, size_t stack_size) : stack_size_(stack_size), slots_(slots == 0 ? 1 : slots) {
  swapper_ = std::make_unique<Fiber>(nullptr, nullptr, nullptr);
  swapper_->ctx_ = bctx::make_fcontext(static_cast<char*>(swapper_->map_) + swapper_->map_size_,
                                       swapper_->stack_size_, &FiberAccess::swap_main);
}

StackPool::~StackPool() {
  for (Slot& s : slots_) {
    if (s.map == nullptr) continue;
    unpoison_stack(s.bottom, static_cast<size_t>(s.top - s.bottom));
    release_stack(s.map, static_cast<size_t>(s.top - static_cast<char*>(s.map)));
  }
}

void StackPool::drop(Fiber& f) {
  Slot& s = slots_[f.slot_];
  if (s.owner == &f) s.owner = nullptr;
  give_buffer(f);
}

char* StackPool::take_buffer(size_t n, size_t& cap) {
  const size_t k = (n + kBufferGrain - 1) / kBufferGrain;
  cap = k * kBufferGrain;
  if (k < buffers_.size() && !buffers_[k].free.empty()) {
    char* b = buffers_[k].free.back();
    buffers_[k].free.pop_back();
    return b;
  }
  if (k >= buffers_.size()) buffers_.resize(k + 1);
  BufferClass& bc = buffers_[k];
  if (bc.free.capacity() < bc.made + 1) bc.free.reserve(std::max<size_t>(2 * bc.free.capacity(), 16));
  if (cap > chunk_left_) {
    const size_t size = std::max(cap, kBufferChunk);
    chunks_.push_back(std::unique_ptr<char[]>(new char[size]));
    chunk_next_ = chunks_.back().get();
    chunk_left_ = size;
  }
  bc.made++;
  char* b = chunk_next_;
  chunk_next_ += cap;
  chunk_left_ -= cap;
  return b;
}

void StackPool::give_buffer(Fiber& f) {
  if (f.saved_ == nullptr) return;
  // Cannot allocate: take_buffer reserved a place for every buffer of this class it made.
  buffers_[f.saved_cap_ / kBufferGrain].free.push_back(f.saved_);
  f.saved_ = nullptr;
  f.saved_size_ = f.saved_cap_ = 0;
}

// Everything that can fail (mapping the slot, the buffer for the frames going out) happens before
// anything changes, so a std::bad_alloc leaves the slot and both fibers as they were.
void StackPool::install(Fiber& to) {
  Slot& s = slots_[to.slot_];
  if (s.map == nullptr) {
    size_t size = stack_size_, map_size = 0;
    void* map = map_stack(size, map_size);
    if (map == nullptr) throw std::bad_alloc();
    s.map = map;
    s.top = static_cast<char*>(map) + map_size;
    s.bottom = s.top - size;
  }
  Fiber* out = s.owner;
  const bool save = out != nullptr && out != &to && !out->fresh_ && !out->finished_;
  const size_t n = save ? static_cast<size_t>(s.top - static_cast<char*>(out->ctx_)) : 0;
  if (save && n > out->saved_cap_) {
    size_t cap = 0;
    char* b = take_buffer(n, cap);
    give_buffer(*out);
    out->saved_ = b;
    out->saved_cap_ = cap;
  }
  const size_t size = static_cast<size_t>(s.top - s.bottom);
  unpoison_stack(s.bottom, size);
  if (save) {
    std::memcpy(out->saved_, out->ctx_, n);
    out->saved_size_ = n;
  }
  s.owner = &to;
  to.stack_bottom_ = s.bottom;
  to.stack_size_ = size;
  if (to.fresh_) {
    to.fresh_ = false;
    to.ctx_ = bctx::make_fcontext(s.top, size, &FiberAccess::run);
  } else if (out != &to) {
    std::memcpy(to.ctx_, to.saved_, to.saved_size_);
  }
  if (save) swaps_++;
}

}  // namespace gmp::plat
