// The select statement (select.go).
//
// Protocol. selectgo locks every channel of the select in lock order (ascending channel id, each
// channel once), so that two selects never deadlock on each other. Pass 1 looks, in a random poll
// order, for a case that can proceed now. Without one and with a default case (!block) it returns
// -1. Otherwise pass 2 queues one sudog per case, linked in lock order on g.waiting, and parks; the
// park unlocks the channels (selparkcommit). A waker that wins g.selectDone (see waitq.dequeue)
// completes one case and sets gp.param to its sudog. Pass 3 relocks, dequeues the other sudogs and
// returns the winning case.
//
// Determinism. Go sorts the lock order by channel address; here by hchan::sortkey(), the
// channel's id, so the order does not depend on where channels were allocated.
#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include "sim/runtime/chan.h"

namespace gmp::rt {

// scase (select.go): a case's channel (nil: the case is ignored) and where its element is (chan.h).
struct scase {
  hchan* c = nullptr;
  void* elem = nullptr;
};

void sellock(std::span<scase> scases, std::span<uint16_t> lockorder);
void selunlock(std::span<scase> scases, std::span<uint16_t> lockorder);
bool selparkcommit(g* gp, void* unused);
// selectgo (select.go). cas0 holds nsends send cases followed by nrecvs receive cases; order0 has
// room for 2*(nsends+nrecvs) entries: the poll order, then the lock order (both written here).
// Returns the index of the chosen case (-1: none ready and !block, i.e. the default case) and,
// for a receive, whether a value was received (false: the channel was closed).
std::pair<int, bool> selectgo(scase* cas0, uint16_t* order0, int nsends, int nrecvs, bool block);

}  // namespace gmp::rt
