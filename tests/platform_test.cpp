// The platform layer: every Atomic operation has Go's result, and is offered to the installed
// driver first with its kind, size, address and values.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/platform/atomic.h"
#include "sim/platform/driver.h"
#include "sim/platform/platform.h"
#include "sim/platform/throw.h"

using namespace gmp;
using plat::Op;

namespace {

// A driver that records what it is offered and otherwise lets everything through.
class Recorder final : public plat::Driver {
 public:
  std::vector<plat::Access> seen;
  void access(const plat::Access& a) override { seen.push_back(a); }
  void lock(plat::Mutex& l) override { l.key.store(1); }
  void unlock(plat::Mutex& l) override { l.key.store(0); }
  void notesleep(plat::Note&) override {}
  bool notetsleep(plat::Note&, int64_t) override { return true; }
  void notewakeup(plat::Note&) override {}
  void usleep(uint32_t) override {}
  void osyield() override {}
  int64_t nanotime() override { return 42; }
  uint64_t gettid() override { return 7; }
  void tgkill(uint64_t, int) override {}
  void charge(plat::Cost) override {}
  int64_t compute(int64_t, double) override { return 0; }
  void block_for(int64_t) override {}
  void switchto(plat::Context&) override {}
  void crash(const char*) override {}
};

}  // namespace

TEST_CASE("Atomic operations have Go's results and reach the driver first", "[platform]") {
  Recorder rec;
  plat::DriverScope scope(&rec);
  Atomic<uint32_t> a{5};
  Atomic<uint64_t> b{1};

  CHECK(a.Load() == 5);
  CHECK(a.LoadAcquire() == 5);
  a.Store(6);
  a.StoreRelease(7);
  CHECK(a.CompareAndSwap(7, 8));
  CHECK_FALSE(a.CompareAndSwap(7, 9));
  CHECK(a.CompareAndSwapRelease(8, 10));
  CHECK(a.Add(5) == 15);    // Xadd returns the new value
  CHECK(a.Swap(3) == 15);   // Xchg returns the old value
  a.Or(0x10);
  a.And(0x12);
  CHECK(a.get() == 0x12);
  a.set(1);
  CHECK(b.Add(uint64_t{1} << 40) == (uint64_t{1} << 40) + 1);

  const std::vector<Op> want{Op::Load, Op::LoadAcquire, Op::Store, Op::StoreRelease, Op::Cas, Op::Cas,
                             Op::CasRelease, Op::Add, Op::Swap, Op::Or, Op::And, Op::PlainLoad,
                             Op::PlainStore, Op::Add};
  REQUIRE(rec.seen.size() == want.size());
  for (size_t i = 0; i < want.size(); i++) {
    INFO("access " << i << " " << plat::op_name(rec.seen[i].op));
    CHECK(rec.seen[i].op == want[i]);
    CHECK(rec.seen[i].size == (i + 1 == want.size() ? 8 : 4));
    CHECK(rec.seen[i].holders != nullptr);
  }
  // Values: the stored value, the CAS's new and expected values, the delta, the mask.
  CHECK(rec.seen[2].value == 6);
  CHECK(rec.seen[4].value == 8);
  CHECK(rec.seen[4].expected == 7);
  CHECK(rec.seen[7].value == 5);
  CHECK(rec.seen[9].value == 0x10);
  CHECK(rec.seen[0].addr == rec.seen[1].addr);
  CHECK(rec.seen.back().addr != rec.seen[0].addr);
}

// Accesses under a field's lock are ordered by the lock and are no scheduling points; only the
// read Go makes without the lock is offered to the driver.
TEST_CASE("a LockGuarded field offers only its unlocked read to the driver", "[platform]") {
  Recorder rec;
  plat::DriverScope scope(&rec);
  int x = 0, y = 0;
  LockGuarded<int*> f{&x};
  f.store(&y);
  CHECK(f.load() == &y);
  LockGuarded<int*> copy = f;
  CHECK(copy.load() == &y);
  CHECK(rec.seen.empty());
  CHECK(f.loadRacy() == &y);
  REQUIRE(rec.seen.size() == 1);
  CHECK(rec.seen[0].op == Op::PlainLoad);
  CHECK(rec.seen[0].size == sizeof(int*));
}

TEST_CASE("without a driver the platform calls reach the real machine", "[platform]") {
  Atomic<uint32_t> a{1};
  CHECK(a.Add(1) == 2);
  plat::Mutex mu;
  plat::lock(mu);
  CHECK(plat::lock_held(mu));
  plat::unlock(mu);
  CHECK_FALSE(plat::lock_held(mu));
  plat::Note n;
  plat::notewakeup(n);
  plat::notesleep(n);  // already woken: returns at once
  CHECK_THROWS_AS(plat::notewakeup(n), plat::GoFatal);  // Go: "notewakeup - double wakeup"
  const int64_t t0 = plat::nanotime();
  CHECK(plat::nanotime() >= t0);
}

TEST_CASE("clock and thread id come from the driver when one is installed", "[platform]") {
  Recorder rec;
  plat::DriverScope scope(&rec);
  CHECK(plat::nanotime() == 42);
  CHECK(plat::gettid() == 7);
}
