// Level of detail: see lod.h.
#include "viewer/lod.h"

namespace gmp::view {

namespace {

// Running time before t.
int64_t busy_until(const Lane& lane, int64_t t) {
  const auto& segs = lane.segs;
  // First segment ending after t: everything before it is wholly before t.
  const size_t i = lane.first_ending_after(t);
  int64_t b = lane.busy_before[i / 16];
  for (size_t k = i / 16 * 16; k < i; ++k) {
    if (segs[k].state() == State::Running) b += segs[k].end() - segs[k].start;
  }
  if (i < segs.size() && segs[i].start < t && segs[i].state() == State::Running) b += t - segs[i].start;
  return b;
}

}  // namespace

int64_t BusyCursor::until(int64_t t) {
  const auto& segs = lane_.segs;
  i_ = lane_.first_ending_after(t);
  int64_t b = lane_.busy_before[i_ / 16];
  for (size_t k = i_ / 16 * 16; k < i_; ++k) {
    if (segs[k].state() == State::Running) b += segs[k].end() - segs[k].start;
  }
  if (i_ < segs.size() && segs[i_].start < t && segs[i_].state() == State::Running) b += t - segs[i_].start;
  return b;
}

int64_t busy_ns(const Lane& lane, int64_t t0, int64_t t1) {
  if (lane.segs.empty() || t1 <= t0) return 0;
  return busy_until(lane, t1) - busy_until(lane, t0);
}

}  // namespace gmp::view
