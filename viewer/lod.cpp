// Level of detail: see lod.h.
#include "viewer/lod.h"

namespace gmp::view {

namespace {

// Running time before t.
int64_t busy_until(const Lane& lane, int64_t t) {
  const auto& segs = lane.segs;
  // First segment ending after t: everything before it is wholly before t.
  const size_t i = static_cast<size_t>(
      std::upper_bound(segs.begin(), segs.end(), t, [](int64_t v, const Segment& s) { return v < s.end; }) -
      segs.begin());
  int64_t b = lane.busy_before[i / 16];
  for (size_t k = i / 16 * 16; k < i; ++k) {
    if (segs[k].state() == State::Running) b += segs[k].end - segs[k].start;
  }
  if (i < segs.size() && segs[i].start < t && segs[i].state() == State::Running) b += t - segs[i].start;
  return b;
}

}  // namespace

int64_t busy_ns(const Lane& lane, int64_t t0, int64_t t1) {
  if (lane.segs.empty() || t1 <= t0) return 0;
  return busy_until(lane, t1) - busy_until(lane, t0);
}

}  // namespace gmp::view
