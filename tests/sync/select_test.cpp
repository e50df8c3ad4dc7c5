// selectgo's poll and lock orders (select.go), exercised with non-blocking selects that need no
// scheduler: the lock order is the cases sorted by channel id (Go: by address), each channel's
// cases adjacent, and the poll order a permutation of the cases with a channel.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/runtime/rand.h"
#include "sim/runtime/select.h"
#include "tests/sync/fake_g.h"

using namespace gmp;
using namespace gmp::rt;
using gmp::synctest::FakeG;

TEST_CASE("selectgo: the lock order ascends by channel id", "[select]") {
  // Ids deliberately unrelated to allocation order; some channels appear in several cases.
  const std::vector<uint64_t> ids{42, 7, 19, 3, 88, 23, 5, 61, 14, 30};
  std::vector<std::unique_ptr<hchan>> chans;
  for (uint64_t id : ids) chans.push_back(std::make_unique<hchan>(0, id));
  for (uint32_t seed = 1; seed <= 50; seed++) {
    FakeG fg(nullptr, seed);
    // 6 sends then 9 receives; case 4 has no channel.
    std::vector<scase> cases;
    uint32_t st = seed * 7919;
    for (int i = 0; i < 15; i++) cases.push_back(scase{chans[cheaprandStep(st) % chans.size()].get(), nullptr});
    cases[4].c = nullptr;
    const int n = static_cast<int>(cases.size());
    std::vector<uint16_t> order(2 * static_cast<size_t>(n), 0xffff);
    auto [casi, recvOK] = selectgo(cases.data(), order.data(), 6, 9, false);
    REQUIRE(casi == -1);  // nothing ready: the default case
    REQUIRE(!recvOK);

    const std::vector<uint16_t> poll(order.begin(), order.begin() + (n - 1));
    const std::vector<uint16_t> lock(order.begin() + n, order.begin() + (2 * n - 1));
    std::vector<uint16_t> all;
    for (int i = 0; i < n; i++) {
      if (i != 4) all.push_back(static_cast<uint16_t>(i));
    }
    std::vector<uint16_t> sortedPoll = poll, sortedLock = lock;
    std::sort(sortedPoll.begin(), sortedPoll.end());
    std::sort(sortedLock.begin(), sortedLock.end());
    REQUIRE(sortedPoll == all);
    REQUIRE(sortedLock == all);
    for (size_t i = 1; i < lock.size(); i++) {
      INFO("seed " << seed << " position " << i);
      REQUIRE(cases[lock[i - 1]].c->sortkey() <= cases[lock[i]].c->sortkey());
    }
    // Every channel was unlocked again.
    for (auto& c : chans) REQUIRE(c->lock.key.load() == 0);
  }
}

TEST_CASE("selectgo: a ready case is taken without parking", "[select]") {
  FakeG fg(nullptr, 5);
  hchan idle(0, 3), buffered(2, 9), closed(1, 1);
  closechan(&closed);
  REQUIRE(chansend(&buffered, nullptr, false));

  // Receives only: the buffered value or the closed channel, whichever the poll order meets first.
  scase cases[3] = {{&idle, nullptr}, {&buffered, nullptr}, {&closed, nullptr}};
  uint16_t order[6];
  auto [casi, recvOK] = selectgo(cases, order, 0, 3, false);
  REQUIRE((casi == 1 || casi == 2));
  if (casi == 1) {
    REQUIRE(recvOK);
    REQUIRE(buffered.qcount.peek() == 0);
  } else {
    REQUIRE(!recvOK);
    REQUIRE(buffered.qcount.peek() == 1);
  }

  // A send with room in the buffer.
  hchan room(1, 4);
  scase sends[2] = {{&room, nullptr}, {&idle, nullptr}};
  uint16_t order2[4];
  auto [casi2, recvOK2] = selectgo(sends, order2, 1, 1, false);
  REQUIRE(casi2 == 0);
  REQUIRE(!recvOK2);
  REQUIRE(room.qcount.peek() == 1);
}

// Values through select's buffered cases (bufsend, bufrecv) and its closed-channel case (rclose),
// which zeroes the receiving case's element.
TEST_CASE("selectgo: buffered cases copy values and a closed case zeroes its element", "[select]") {
  FakeG fg(nullptr, 5);
  hchan buffered(2, 9), closed(1, 1), idle(0, 3);
  closechan(&closed);
  int64_t sent = 41;
  scase sends[2] = {{&buffered, &sent}, {&idle, nullptr}};
  uint16_t order[4];
  REQUIRE(selectgo(sends, order, 1, 1, false).first == 0);
  sent = 42;
  REQUIRE(selectgo(sends, order, 1, 1, false).first == 0);

  int64_t got = -1;
  for (int64_t want : {41, 42}) {
    scase recvs[2] = {{&idle, nullptr}, {&buffered, &got}};
    auto [casi, recvOK] = selectgo(recvs, order, 0, 2, false);
    REQUIRE(casi == 1);
    REQUIRE(recvOK);
    CHECK(got == want);
  }
  scase fromClosed[1] = {{&closed, &got}};
  uint16_t order1[2];
  auto [casi, recvOK] = selectgo(fromClosed, order1, 0, 1, false);
  REQUIRE(casi == 0);
  REQUIRE(!recvOK);
  CHECK(got == 0);
}
