#include "sim/workload/network.h"

#include <climits>
#include <cmath>

namespace gmp::workload {

Network::Network(const std::vector<scenario::Conn>& conns, uint64_t seed, int64_t epoch) : epoch_(epoch) {
  for (size_t i = 0; i < conns.size(); i++) {
    Conn& c = conns_.emplace_back();
    c.decl = conns[i];
    c.rng = SplitMix64(seed ^ (0x9e3779b97f4a7c15ULL * (i + 1)));
  }
}

// Arrival k (0-based) comes one gap after arrival k-1 (the first, one gap after the start): the
// interval, or with poisson an exponential gap of that mean, -mean * ln(U) for U uniform in (0, 1].
int64_t Network::arrival(Conn& c, int64_t k) {
  while (c.read + static_cast<int64_t>(c.arrivals.size()) <= k) {
    double gap = static_cast<double>(c.decl.interval);
    if (c.decl.poisson) {
      const double u = (static_cast<double>(c.rng.next() >> 11) + 1.0) / 9007199254740992.0;  // (0, 1]
      gap = -gap * std::log(u);
    }
    c.last_at += std::max<int64_t>(1, std::llround(std::min(gap, 1e15)));
    c.arrivals.push_back(c.last_at);
  }
  return c.arrivals[static_cast<size_t>(k - c.read)];
}

int64_t Network::nextEvent() {
  int64_t next = INT64_MAX;
  for (Conn& c : conns_) {
    if (c.reported < c.decl.count) next = std::min(next, arrival(c, std::max(c.reported, c.read)));
  }
  return next == INT64_MAX ? next : epoch_ + next;
}

// One event per connection with new arrivals, as epoll reports one per ready descriptor.
void Network::takeEvents(int64_t now, std::vector<rt::pollDesc*>* out) {
  now -= epoch_;
  for (Conn& c : conns_) {
    bool edge = false;
    while (c.reported < c.decl.count && arrival(c, std::max(c.reported, c.read)) <= now) {
      c.reported = std::max(c.reported, c.read) + 1;
      edge = true;
    }
    if (edge) out->push_back(&c.pd);
  }
}

bool Network::read(int32_t conn, int64_t now) {
  Conn& c = conns_[static_cast<size_t>(conn)];
  if (c.read >= c.decl.count || arrival(c, c.read) > now) return false;
  c.unanswered.push_back(c.arrivals.front());
  c.arrivals.pop_front();
  c.read++;
  return true;
}

bool Network::write(int32_t conn, int64_t now) {
  Conn& c = conns_[static_cast<size_t>(conn)];
  if (c.unanswered.empty()) return false;
  latencies_.push_back(now - c.unanswered.front());
  c.unanswered.pop_front();
  last_write_ = std::max(last_write_, now);
  return true;
}

int64_t Network::requests() const {
  int64_t n = 0;
  for (const Conn& c : conns_) n += c.decl.count;
  return n;
}

}  // namespace gmp::workload
