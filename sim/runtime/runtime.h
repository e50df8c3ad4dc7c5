// The ported runtime: Go's package-level scheduler state and the functions over it.
//
// Go keeps the scheduler in package variables (sched, allp, gomaxprocs, stealOrder, ...). Here
// they are members of Runtime, one instance per simulated program, so that several simulations
// can live in one process (each on its own OS thread). The ported functions are members too,
// which lets them call each other and name the globals exactly as Go does; each definition is in
// the file for its concern and cites the Go function it ports.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/runtime/gqueue.h"
#include "sim/runtime/rand.h"
#include "sim/runtime/runtime2.h"
#include "sim/runtime/steal_order.h"

namespace gmp::rt {

// pMask (proc.go): an atomic bitstring with one bit per P.
class pMask {
 public:
  void resize(int32_t nprocs);
  bool read(uint32_t id) const;
  void set(int32_t id);
  void clear(int32_t id);
  bool any() const;

 private:
  std::unique_ptr<Atomic<uint32_t>[]> words_;
  int32_t n_ = 0;
};

// Go constants that the queue code consults.
inline constexpr bool haveSysmon = true;           // GOARCH != wasm
inline constexpr bool randomizeScheduler = false;  // = raceenabled; the race detector is off

class Runtime {
 public:
  // Package-level state (proc.go, runtime2.go).
  schedt sched;
  std::vector<p*> allp;
  int32_t gomaxprocs = 0;
  randomOrder stealOrder;
  pMask idlepMask;   // bit set for each P on the idle list
  pMask timerpMask;  // bit set for each P that may have timers

  // Creates nprocs Ps, all idle, owned by this Runtime.
  explicit Runtime(int32_t nprocs);
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime();

  // Local run queue (runq.cpp).
  void runqput(p* pp, g* gp, bool next);
  bool runqputslow(p* pp, g* gp, uint32_t h, uint32_t t);
  void runqputbatch(p* pp, gQueue* q);
  std::pair<g*, bool> runqget(p* pp);
  gQueue runqdrain(p* pp);
  uint32_t runqgrab(p* pp, std::array<Atomic<g*>, kRunqSize>& batch, uint32_t batchHead,
                    bool stealRunNextG);
  g* runqsteal(p* pp, p* p2, bool stealRunNextG);
  bool runqempty(p* pp);

  // Global run queue (globrunq.cpp). sched.lock must be held.
  void globrunqput(g* gp);
  void globrunqputhead(g* gp);
  void globrunqputbatch(gQueue* batch);
  g* globrunqget();
  std::pair<g*, gQueue> globrunqgetbatch(int32_t n);

  // Idle P and M lists (idle.cpp). sched.lock must be held.
  int64_t pidleput(p* pp, int64_t now);
  std::pair<p*, int64_t> pidleget(int64_t now);
  std::pair<p*, int64_t> pidlegetSpinning(int64_t now);
  void mput(m* mp);
  m* mget();
  m* mgetSpecific(m* mp);
  int32_t mcount() const;
  void checkdead();

 private:
  std::vector<std::unique_ptr<p>> pstore_;
};

void assertLockHeld(const plat::Mutex& l);

}  // namespace gmp::rt
