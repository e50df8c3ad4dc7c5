// Fibers on pooled stacks: frames copied out and back in when fibers share a slot stay intact and
// at the same addresses, a fiber can hand over directly to another of its own slot, and a hundred
// thousand suspended fibers take a handful of mappings.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/platform/fiber.h"

using gmp::plat::Fiber;
using gmp::plat::StackPool;

namespace {

// A fiber that fills a buffer on its own stack, then on each resume checks that the buffer is still
// there, at the same address, and changes it.
struct Worker {
  Fiber* self = nullptr;
  Fiber* main = nullptr;
  uint32_t id = 0;
  int rounds = 0;
  int resumed_intact = 0;
  std::vector<const void*> addresses;

  static void entry(void* arg) {
    auto* w = static_cast<Worker*>(arg);
    uint32_t buf[64];
    for (uint32_t i = 0; i < 64; i++) buf[i] = w->id * 1000 + i;
    for (int r = 0; r < w->rounds; r++) {
      w->addresses.push_back(buf);
      Fiber::switch_to(*w->self, *w->main);
      bool intact = true;
      for (uint32_t i = 0; i < 64; i++) intact = intact && buf[i] == w->id * 1000 + i + static_cast<uint32_t>(r);
      if (intact) w->resumed_intact++;
      for (uint32_t& v : buf) v++;
    }
  }
};

size_t mappings() {
  std::ifstream maps("/proc/self/maps");
  size_t n = 0;
  for (std::string line; std::getline(maps, line);) n++;
  return n;
}

}  // namespace

TEST_CASE("fibers sharing one pooled stack keep their frames, at the same addresses", "[fiber]") {
  StackPool pool(1);
  Fiber main;
  constexpr int kFibers = 20, kRounds = 5;
  std::vector<Worker> ws(kFibers);
  std::vector<std::unique_ptr<Fiber>> fs;
  for (int i = 0; i < kFibers; i++) {
    ws[i].id = static_cast<uint32_t>(i + 1);
    ws[i].rounds = kRounds;
    ws[i].main = &main;
    fs.push_back(std::make_unique<Fiber>(&Worker::entry, &ws[i], &main, pool, 0));
    ws[i].self = fs.back().get();
  }
  // Round-robin: every switch into a worker evicts the one before it.
  for (int r = 0; r <= kRounds; r++)
    for (int i = 0; i < kFibers; i++) Fiber::switch_to(main, *fs[i]);
  for (int i = 0; i < kFibers; i++) {
    CHECK(fs[i]->finished());
    CHECK(ws[i].resumed_intact == kRounds);
    // The same slot, the same depth: every worker's buffer is at one address, every time.
    CHECK(ws[i].addresses == std::vector<const void*>(kRounds, ws[0].addresses[0]));
  }
  CHECK(pool.swaps() >= static_cast<uint64_t>(kFibers * kRounds));
}

namespace {
// Two fibers of one slot that hand over to each other directly (as the engine switches from one
// thread's goroutine to another's), counting on their own stacks.
struct PingPong {
  Fiber* me = nullptr;
  Fiber* other = nullptr;
  int count = 0;
  int result = 0;
  static void entry(void* arg) {
    auto* p = static_cast<PingPong*>(arg);
    int local = 0;
    for (int i = 0; i < p->count; i++) {
      local += i;
      Fiber::switch_to(*p->me, *p->other);
    }
    p->result = local;
  }
};
}  // namespace

TEST_CASE("a pooled fiber hands over directly to another fiber of its own slot", "[fiber]") {
  StackPool pool(2);
  Fiber main;
  PingPong a, b;
  a.count = 10;
  b.count = 10;
  // Keys 0 and 2 share slot 0 of two.
  Fiber fa(&PingPong::entry, &a, &main, pool, 0);
  Fiber fb(&PingPong::entry, &b, &main, pool, 2);
  a.me = &fa, a.other = &fb;
  b.me = &fb, b.other = &fa;
  Fiber::switch_to(main, fa);  // a finishes when b hands back after a's 10th hand-over
  CHECK(fa.finished());
  CHECK(!fb.finished());
  CHECK(a.result == 45);
  Fiber::switch_to(main, fb);
  CHECK(fb.finished());
  CHECK(b.result == 45);
  CHECK(pool.swaps() >= 20);
}

TEST_CASE("a reset pooled fiber starts afresh, and an exception ends it with its error", "[fiber]") {
  StackPool pool(1);
  Fiber main;
  int runs = 0;
  auto entry = [](void* arg) {
    int& n = *static_cast<int*>(arg);
    if (++n == 2) throw std::runtime_error("second run");
  };
  Fiber f(entry, &runs, &main, pool, 7);
  Fiber::switch_to(main, f);
  CHECK(f.finished());
  CHECK(!f.error());
  f.reset(entry, &runs);
  CHECK(!f.finished());
  Fiber::switch_to(main, f);
  CHECK(runs == 2);
  REQUIRE(f.error());
  CHECK_THROWS_WITH(std::rethrow_exception(f.error()), "second run");
}

// Own stacks cost two mappings each (stack and guard page), and the kernel allows 65,530 by default:
// this many suspended fibers would not fit. Pooled, they cost the pool's slots.
TEST_CASE("a hundred thousand suspended pooled fibers take a handful of mappings", "[fiber]") {
  constexpr int kFibers = 100000;
  const size_t before = mappings();
  StackPool pool(4);
  Fiber main;
  std::vector<Worker> ws(kFibers);
  std::vector<std::unique_ptr<Fiber>> fs;
  fs.reserve(kFibers);
  for (int i = 0; i < kFibers; i++) {
    ws[i].id = static_cast<uint32_t>(i);
    ws[i].rounds = 1;
    ws[i].main = &main;
    fs.push_back(std::make_unique<Fiber>(&Worker::entry, &ws[i], &main, pool, static_cast<uint64_t>(i)));
    ws[i].self = fs.back().get();
    Fiber::switch_to(main, *fs.back());  // runs until its first switch back: suspended, frames kept
  }
  CHECK(mappings() < before + 64);
  // Each one's frames come back intact.
  int intact = 0;
  for (int i = 0; i < kFibers; i++) {
    Fiber::switch_to(main, *fs[i]);
    intact += ws[i].resumed_intact;
  }
  CHECK(intact == kFibers);
}

// Sanitizer builds reserve terabytes of shadow memory and cannot run under an address-space limit.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
namespace {

// A fiber that, resumed once, tries to hand over straight to another fiber of its slot.
struct Handover {
  Fiber* self = nullptr;
  Fiber* main = nullptr;
  Fiber* other = nullptr;
  bool refused = false;  // the hand-over threw std::bad_alloc and left us running
  bool intact = false;   // our frames were still ours afterwards
  static void entry(void* arg) {
    auto* h = static_cast<Handover*>(arg);
    volatile uint32_t buf[64];
    for (uint32_t i = 0; i < 64; i++) buf[i] = 7 * i;
    Fiber::switch_to(*h->self, *h->main);
    try {
      Fiber::switch_to(*h->self, *h->other);
    } catch (const std::bad_alloc&) {
      h->refused = true;
    }
    bool ok = true;
    for (uint32_t i = 0; i < 64; i++) ok = ok && buf[i] == 7 * i;
    h->intact = ok;
    Fiber::switch_to(*h->self, *h->main);
  }
};

// Takes every byte malloc can still get under the address-space limit, in ever smaller blocks;
// frees them when it goes. The blocks are chained through their first word: a container of them
// would need memory of its own to grow, and throw when it found none.
struct Hog {
  void* head = nullptr;
  Hog() {
    for (size_t size = 4096; size >= sizeof(void*); size /= 2) {
      for (void* p; (p = std::malloc(size)) != nullptr;) {
        *static_cast<void**>(p) = head;
        head = p;
      }
    }
  }
  ~Hog() {
    while (head != nullptr) {
      void* next = *static_cast<void**>(head);
      std::free(head);
      head = next;
    }
  }
  Hog(const Hog&) = delete;
  Hog& operator=(const Hog&) = delete;
};

size_t address_space() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  statm >> pages;
  return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// The body of the test below, in a child process under an address-space limit; returns a bit for
// each check that failed.
int no_memory_for_frames() {
  StackPool pool(1);
  Fiber main;
  Handover h;
  int plain_runs = 0;
  auto plain = [](void* arg) { ++*static_cast<int*>(arg); };
  Fiber a(&Handover::entry, &h, &main, pool, 0);
  Fiber b(plain, &plain_runs, &main, pool, 1);  // slot 0 too: the pool has one
  h.self = &a, h.main = &main, h.other = &b;
  Fiber::switch_to(main, a);  // a's frames are in the slot; saving them needs a buffer
  rlimit rl{};
  getrlimit(RLIMIT_AS, &rl);
  rl.rlim_cur = address_space() + (1 << 20);
  setrlimit(RLIMIT_AS, &rl);
  int failed = 0;
  {
    Hog hog;
    // From a fiber of its own stack: install() itself throws, and nothing changes.
    bool thrown = false;
    try {
      Fiber::switch_to(main, b);
    } catch (const std::bad_alloc&) {
      thrown = true;
    }
    if (!thrown || plain_runs != 0) failed |= 1;
    // From the slot's owner: the swapper cannot save it and resumes it with the exception.
    Fiber::switch_to(main, a);
    if (!h.refused || !h.intact || plain_runs != 0) failed |= 2;
    if (pool.swaps() != 0) failed |= 4;
  }
  // With memory again, both switches work.
  Fiber::switch_to(main, b);
  Fiber::switch_to(main, a);
  if (plain_runs != 1 || !b.finished() || !a.finished() || pool.swaps() != 1) failed |= 8;  // a saved once
  return failed;
}

}  // namespace

TEST_CASE("with no memory to save a slot's frames, a switch throws bad_alloc and changes nothing", "[fiber]") {
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) _exit(no_memory_for_frames());
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // a bit for each check that failed in the child
}
#endif
