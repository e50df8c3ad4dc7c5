// Channel wait queues (chan.go's waitq, select.go's dequeueSudoG) and the channel operations that
// complete without parking, so need no scheduler.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/platform/throw.h"
#include "sim/runtime/chan.h"
#include "tests/sync/fake_g.h"

using namespace gmp;
using namespace gmp::rt;
using gmp::synctest::FakeG;

namespace {

std::vector<sudog*> contents(const waitq& q) {
  std::vector<sudog*> out;
  const sudog* prev = nullptr;
  for (sudog* s = q.first.peek(); s != nullptr; s = s->next) {
    REQUIRE(s->prev == prev);
    out.push_back(s);
    prev = s;
  }
  REQUIRE(q.last == prev);
  return out;
}

}  // namespace

TEST_CASE("waitq: enqueue and dequeue are FIFO", "[chan]") {
  g gs[5];
  sudog s[5];
  waitq q;
  REQUIRE(q.dequeue() == nullptr);
  for (int i = 0; i < 5; i++) {
    s[i].g = &gs[i];
    q.enqueue(&s[i]);
  }
  REQUIRE(contents(q) == std::vector<sudog*>{&s[0], &s[1], &s[2], &s[3], &s[4]});
  for (int i = 0; i < 5; i++) {
    sudog* got = q.dequeue();
    REQUIRE(got == &s[i]);
    REQUIRE(got->next == nullptr);
  }
  REQUIRE(q.dequeue() == nullptr);
  REQUIRE(q.first.peek() == nullptr);
  REQUIRE(q.last == nullptr);
}

TEST_CASE("waitq: dequeue skips a select whose goroutine was already won", "[chan]") {
  g sel, other;
  sudog a, b, c;
  a.g = &sel;
  a.isSelect = true;
  b.g = &other;
  c.g = &sel;
  c.isSelect = true;
  waitq q;
  q.enqueue(&a);
  q.enqueue(&b);
  q.enqueue(&c);
  sel.selectDone.set(1);  // another case of sel's select won the race
  REQUIRE(q.dequeue() == &b);
  REQUIRE(q.dequeue() == nullptr);  // c is dropped too

  sel.selectDone.set(0);
  q.enqueue(&a);
  REQUIRE(q.dequeue() == &a);
  REQUIRE(sel.selectDone.peek() == 1);  // the waker won it
}

TEST_CASE("waitq: dequeueSudoG unlinks from the middle, the end, the start, or not at all", "[chan]") {
  g gs[4];
  sudog s[4];
  waitq q;
  for (int i = 0; i < 4; i++) {
    s[i].g = &gs[i];
    q.enqueue(&s[i]);
  }
  q.dequeueSudoG(&s[1]);
  REQUIRE(contents(q) == std::vector<sudog*>{&s[0], &s[2], &s[3]});
  q.dequeueSudoG(&s[3]);
  REQUIRE(contents(q) == std::vector<sudog*>{&s[0], &s[2]});
  q.dequeueSudoG(&s[0]);
  REQUIRE(contents(q) == std::vector<sudog*>{&s[2]});
  q.dequeueSudoG(&s[1]);  // already removed: no effect
  REQUIRE(contents(q) == std::vector<sudog*>{&s[2]});
  q.dequeueSudoG(&s[2]);
  REQUIRE(contents(q).empty());
  for (sudog& x : s) {
    REQUIRE(x.next == nullptr);
    REQUIRE(x.prev == nullptr);
  }
}

TEST_CASE("chan: a buffered channel counts elements through its ring", "[chan]") {
  FakeG fg;
  hchan c(3, 1);
  REQUIRE(empty(&c));
  REQUIRE(!full(&c));
  REQUIRE(chancap(&c) == 3);
  for (int i = 0; i < 3; i++) REQUIRE(chansend(&c, nullptr, false));
  REQUIRE(full(&c));
  REQUIRE(chanlen(&c) == 3);
  REQUIRE(!chansend(&c, nullptr, false));  // would block
  REQUIRE(c.sendx == 0);
  REQUIRE(chanrecv(&c, nullptr, false) == std::pair<bool, bool>{true, true});
  REQUIRE(c.recvx == 1);
  REQUIRE(selectnbsend(&c, nullptr));
  REQUIRE(c.sendx == 1);
  for (int i = 0; i < 3; i++) REQUIRE(selectnbrecv(nullptr, &c) == std::pair<bool, bool>{true, true});
  REQUIRE(c.recvx == 1);
  REQUIRE(empty(&c));
  REQUIRE(chanrecv(&c, nullptr, false) == std::pair<bool, bool>{false, false});  // would block

  // Close: buffered values are still received, then (true, false).
  REQUIRE(chansend(&c, nullptr, false));
  closechan(&c);
  REQUIRE(chanrecv(&c, nullptr, false) == std::pair<bool, bool>{true, true});
  REQUIRE(chanrecv(&c, nullptr, false) == std::pair<bool, bool>{true, false});
  REQUIRE(chanrecv(&c, nullptr, true) == std::pair<bool, bool>{true, false});
  REQUIRE_THROWS_AS(chansend(&c, nullptr, false), plat::GoFatal);
  REQUIRE_THROWS_AS(closechan(&c), plat::GoFatal);
}

TEST_CASE("chan: an unbuffered channel is full without receivers, empty without senders", "[chan]") {
  FakeG fg;
  hchan c(0, 1);
  REQUIRE(full(&c));
  REQUIRE(empty(&c));
  REQUIRE(!chansend(&c, nullptr, false));
  REQUIRE(chanrecv(&c, nullptr, false) == std::pair<bool, bool>{false, false});
  REQUIRE(chansend(nullptr, nullptr, false) == false);
  REQUIRE(chanrecv(nullptr, nullptr, false) == std::pair<bool, bool>{false, false});
  REQUIRE_THROWS_AS(closechan(nullptr), plat::GoFatal);
}

// Values (chan.h): a buffered channel hands its int64 elements out in the order they went in, a
// nil ep sends 0 and drops a received value, and a closed, drained channel zeroes the receiver's.
TEST_CASE("chan: buffered values come out in order and a closed channel gives zero", "[chan]") {
  FakeG fg;
  hchan c(3, 1);
  int64_t in = 0, out = -1;
  // Twice round the ring of three, so that sendx and recvx wrap.
  for (int64_t round = 0; round < 2; round++) {
    for (int64_t v = 1; v <= 3; v++) {
      in = 10 * round + v;
      REQUIRE(chansend(&c, &in, false));
    }
    for (int64_t v = 1; v <= 3; v++) {
      REQUIRE(chanrecv(&c, &out, false) == std::pair<bool, bool>{true, true});
      CHECK(out == 10 * round + v);
    }
  }
  // A received slot is zeroed; a nil send is the value 0; a nil receive drops the value.
  CHECK(c.buf == std::vector<int64_t>{0, 0, 0});
  REQUIRE(chansend(&c, nullptr, false));
  in = 5;
  REQUIRE(selectnbsend(&c, &in));
  out = -1;
  REQUIRE(chanrecv(&c, &out, false) == std::pair<bool, bool>{true, true});
  CHECK(out == 0);
  REQUIRE(selectnbrecv(nullptr, &c) == std::pair<bool, bool>{true, true});
  // Closed: what is buffered comes first, then the zero value with ok false.
  in = 9;
  REQUIRE(chansend(&c, &in, false));
  closechan(&c);
  REQUIRE(chanrecv(&c, &out, false) == std::pair<bool, bool>{true, true});
  CHECK(out == 9);
  REQUIRE(chanrecv(&c, &out, false) == std::pair<bool, bool>{true, false});
  CHECK(out == 0);
  out = -1;
  REQUIRE(chanrecv(&c, &out, true) == std::pair<bool, bool>{true, false});
  CHECK(out == 0);
}

// A channel that only ever carries 0 allocates no buffer; a large one grows only as far as its
// values reach.
TEST_CASE("chan: the buffer is allocated only as far as non-zero values reach", "[chan]") {
  FakeG fg;
  hchan c(1'000'000'000'000, 1);
  int64_t zero = 0;
  for (int i = 0; i < 5; i++) REQUIRE(chansend(&c, i % 2 == 0 ? nullptr : &zero, false));
  CHECK(c.buf.empty());
  int64_t v = 7;
  REQUIRE(chansend(&c, &v, false));  // slot 5
  CHECK(c.buf.size() == 6);
  for (int i = 0; i < 5; i++) {
    int64_t out = -1;
    REQUIRE(chanrecv(&c, &out, false) == std::pair<bool, bool>{true, true});
    CHECK(out == 0);
  }
  int64_t out = 0;
  REQUIRE(chanrecv(&c, &out, false) == std::pair<bool, bool>{true, true});
  CHECK(out == 7);
}
