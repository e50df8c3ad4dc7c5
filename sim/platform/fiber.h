// User-space execution contexts for the recording platform: each simulated M (and, in the engine,
// each goroutine that can park inside runtime code) runs on a Fiber, and a driver switches between
// them on one OS thread. Built on Boost.Context's fcontext (make_fcontext/jump_fcontext), with
// AddressSanitizer fiber annotations so ASan builds understand the stack switches.
//
// A fiber's stack is either its own or borrowed from a StackPool.
//
// Own stacks are mmap'ed with MAP_NORESERVE and a guard page below, so memory is committed only as
// the fiber touches it. Each is a mapping of its own, which the kernel counts (vm.max_map_count,
// 65,530 by default): fine for an M's g0, not for a million goroutines.
//
// Pooled stacks: a StackPool owns a few stacks (slots), and each pooled fiber is bound to one slot
// for life. A fiber only runs in its slot, at the same addresses every time, so pointers into its
// frames (saved registers, frame pointers, locals whose address was taken) stay valid. When a
// fiber is about to run and its slot holds another fiber's suspended frames, those frames (the
// bytes from the suspended stack pointer to the slot's top: a few hundred for a parked goroutine)
// are copied out to the heap, and the incoming fiber's own are copied back in. A fiber that has
// not started yet has no frames and costs nothing. Only one fiber of a pool runs at a time, so a
// pool belongs to one OS thread; and nothing may point into a suspended pooled fiber's frames from
// outside them, since they may be somewhere else while it is suspended (the port keeps every value
// that another thread reads in heap objects: sudogs, Ms, channels, the interpreter's tasks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

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

class StackPool;

class Fiber {
 public:
  using Entry = void (*)(void* arg);

  // The fiber of the calling OS thread's own stack. Needed to switch into fibers and back.
  Fiber();
  // A new fiber that will run entry(arg) when first switched to. When entry returns (or throws),
  // control passes to `exit_to`, and finished() becomes true; an exception is kept in error().
  // `exit_to` has a stack of its own (switching to a pooled one can fail, and a finished fiber
  // has nowhere to report that): std::invalid_argument otherwise.
  Fiber(Entry entry, void* arg, Fiber* exit_to, size_t stack_size = kDefaultStack);
  // The same on a stack borrowed from `pool`: slot `key % pool.slots()`. The pool must outlive it.
  Fiber(Entry entry, void* arg, Fiber* exit_to, StackPool& pool, uint64_t key);
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
  friend class StackPool;

  void* ctx_ = nullptr;  // fcontext_t of the suspended fiber
  void* map_ = nullptr;  // own stacks: the mmap'ed region, guard page + stack
  size_t map_size_ = 0;
  Entry entry_ = nullptr;
  void* arg_ = nullptr;
  Fiber* exit_to_ = nullptr;
  bool finished_ = false;
  // Pooled stacks: no frames yet (ctx_ is made when the fiber first enters its slot).
  bool fresh_ = false;
  std::exception_ptr error_;
  // Pooled stacks: the pool, the slot, and the frames kept while the slot is someone else's.
  StackPool* pool_ = nullptr;
  uint32_t slot_ = 0;
  size_t saved_size_ = 0;
  size_t saved_cap_ = 0;
  char* saved_ = nullptr;  // the pool's (StackPool::take_buffer), or nullptr
  // AddressSanitizer bookkeeping: this fiber's stack bounds and fake-stack handle.
  const void* stack_bottom_ = nullptr;
  size_t stack_size_ = 0;
  void* fake_stack_ = nullptr;
};

// Stacks shared by many fibers on one OS thread (see above). Slots are mapped lazily, the first
// time a fiber bound to them runs.
class StackPool {
 public:
  explicit StackPool(uint32_t slots = kDefaultSlots, size_t stack_size = Fiber::kDefaultStack);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  uint32_t slots() const { return static_cast<uint32_t>(slots_.size()); }
  // How many times a slot changed hands with frames to copy.
  uint64_t swaps() const { return swaps_; }

  // Enough that the goroutines running at once on a few Ps, and the pairs that hand work to each
  // other, seldom share a slot; few enough that the pool is a handful of mappings.
  static constexpr uint32_t kDefaultSlots = 64;

 private:
  friend struct FiberAccess;
  friend class Fiber;
  struct Slot {
    void* map = nullptr;  // guard page + stack, or nullptr until first used
    char* bottom = nullptr;
    char* top = nullptr;
    Fiber* owner = nullptr;  // whose frames are in the slot now
  };
  // Makes `to`'s frames the ones in its slot (or starts them there), saving the previous owner's.
  // The previous owner must not be running.
  void install(Fiber& to);
  void drop(Fiber& f);  // f goes away: it no longer owns its slot, nor its saved frames' buffer
  // Buffers for saved frames, in size classes of kBufferGrain bytes: a parked goroutine's frames
  // need a few hundred bytes, taken once per park from a free list instead of malloc.
  char* take_buffer(size_t n, size_t& cap);  // may throw std::bad_alloc
  void give_buffer(Fiber& f);                 // f's buffer (if any) back to its free list
  static constexpr size_t kBufferGrain = 16;
  static constexpr size_t kBufferChunk = 64 * 1024;

  size_t stack_size_;
  std::vector<Slot> slots_;
  // Runs install() when the fiber switching out owns the slot it would overwrite.
  std::unique_ptr<Fiber> swapper_;
  Fiber* swap_to_ = nullptr;
  bool swap_failed_ = false;  // the swapper ran out of memory and resumed the fiber it came from
  uint64_t swaps_ = 0;
  struct BufferClass {
    std::vector<char*> free;  // reserved for all `made`, so that give_buffer never allocates
    size_t made = 0;
  };
  std::vector<BufferClass> buffers_;  // by size class: buffers_[cap / kBufferGrain]
  std::vector<std::unique_ptr<char[]>> chunks_;   // what the buffers are cut from
  char* chunk_next_ = nullptr;
  size_t chunk_left_ = 0;
};

}  // namespace gmp::plat
