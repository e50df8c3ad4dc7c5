// randomOrder / randomEnum: RunStealOrderTest (proc_runtime_test.go).
#include <catch2/catch.hpp>

#include <vector>

#include "sim/runtime/steal_order.h"

using namespace gmp::rt;

TEST_CASE("RunStealOrderTest", "[steal_order][go]") {
  randomOrder ord;
  for (uint32_t procs = 1; procs <= 64; procs++) {
    ord.reset(procs);
    if (procs >= 3) REQUIRE(ord.coprimes.size() >= 2);
    for (uint32_t co = 0; co < ord.coprimes.size(); co++) {
      randomEnum e = ord.start(co);
      std::vector<bool> checked(procs, false);
      for (uint32_t p = 0; p < procs; p++) {
        const uint32_t x = e.position();
        INFO("procs " << procs << " inc " << e.inc);
        REQUIRE_FALSE(checked[x]);  // every start visits every P exactly once
        checked[x] = true;
        e.next();
      }
      REQUIRE(e.done());
    }
  }
  // Different arguments to start give distinct (pos, inc) pairs before repeating.
  for (uint32_t procs = 2; procs <= 64; procs++) {
    ord.reset(procs);
    std::vector<bool> checked(procs * procs, false);
    for (uint32_t i = 0; i < procs * ord.coprimes.size(); i++) {
      randomEnum e = ord.start(i);
      const uint32_t j = e.pos * procs + e.inc;
      INFO("procs " << procs << " pos " << e.pos << " inc " << e.inc);
      REQUIRE_FALSE(checked[j]);
      checked[j] = true;
    }
  }
}

TEST_CASE("coprimes are exactly the numbers in [1 n] coprime with n", "[steal_order]") {
  randomOrder ord;
  ord.reset(12);
  CHECK(ord.coprimes == std::vector<uint32_t>{1, 5, 7, 11});
  ord.reset(1);
  CHECK(ord.coprimes == std::vector<uint32_t>{1});
  CHECK(gcd(12, 18) == 6);
  CHECK(gcd(7, 0) == 7);
}
