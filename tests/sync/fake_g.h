// A goroutine and an M for code that reads getg() (cheaprand, semaRoot.queue, timers.check)
// without a scheduler: installs them for the scope of the object.
#pragma once

#include "sim/platform/platform.h"
#include "sim/runtime/runtime2.h"

namespace gmp::synctest {

struct FakeG {
  rt::g gp;
  rt::m mp;
  rt::g* saved;
  explicit FakeG(rt::p* pp = nullptr, uint32_t seed = 1) : saved(plat::getg()) {
    mp.p = pp;
    mp.cheaprand = seed;
    mp.curg.set(&gp);
    gp.m = &mp;
    plat::setg(&gp);
  }
  ~FakeG() { plat::setg(saved); }
  FakeG(const FakeG&) = delete;
  FakeG& operator=(const FakeG&) = delete;
};

}  // namespace gmp::synctest
