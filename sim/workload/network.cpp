#include "sim/workload/network.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gmp::workload {

namespace {
constexpr int64_t kNever = int64_t{1} << 61;
}  // namespace

// A listener's connections connect a gap apart (the interval, or Poisson gaps from a stream of
// the listener's own), the first at its start or one gap after the run's start.
Network::Network(const std::vector<scenario::Conn>& conns, uint64_t seed, int64_t epoch,
                 std::vector<scenario::Listener> listeners)
    : decls_(conns), listener_decls_(std::move(listeners)), epoch_(epoch) {
  int32_t first = 0;
  for (const scenario::Conn& d : decls_) {
    base_.push_back(first);
    first += static_cast<int32_t>(std::max<int64_t>(d.length, 1));
  }
  for (size_t l = 0; l < listener_decls_.size(); l++) {
    const scenario::Listener& d = listener_decls_[l];
    Listener& ln = listeners_.emplace_back();
    ln.first = base_[static_cast<size_t>(d.conn)];
    SplitMix64 rng(seed ^ (0xd1b54a32d192ed03ULL * (l + 1)));
    int64_t at = 0;
    for (int64_t k = 0; k < std::max<int64_t>(decls_[static_cast<size_t>(d.conn)].length, 1); k++) {
      if (k > 0 || d.start < 0) {
        double gap = static_cast<double>(d.interval);
        if (d.poisson) {
          const double u = (static_cast<double>(rng.next() >> 11) + 1.0) / 9007199254740992.0;  // (0, 1]
          gap = -gap * std::log(u);
        }
        // Saturated far past any run's end (the engine's time ends at 2^61 ns): 10^5 connections
        // 10^15 ns apart would overflow, and later sums (arrivals after the connect, the
        // epoch) must stay in range.
        at = std::min(at + std::max<int64_t>(1, std::llround(std::min(gap, 1e15))), kNever);
      } else {
        at = d.start;
      }
      ln.connect.push_back(at);
    }
  }
  for (const scenario::Conn& d : decls_) {
    for (int64_t k = 0; k < std::max<int64_t>(d.length, 1); k++) {
      const size_t i = conns_.size();
      Conn& c = conns_.emplace_back();
      c.decl = &d;
      c.count = d.requests(k);
      c.listener = d.listener;
      c.index = k;
      if (d.dial_process >= 0) {  // a client end: what it reads comes from its server, once joined
        c.dialled = true;
        c.client = true;
        c.count = 0;
      }
      if (d.listener >= 0) c.origin = listeners_[static_cast<size_t>(d.listener)].connect[static_cast<size_t>(k)];
      if (!d.first.empty()) c.file_at = d.first[static_cast<size_t>(k)];
      // The first generated arrival comes one gap after this, or at it when a start is given.
      c.last_at = c.origin + std::max<int64_t>(d.start, 0) + k * d.stagger;
      c.rng = SplitMix64(seed ^ (0x9e3779b97f4a7c15ULL * (i + 1)));
    }
  }
  for (size_t i = 0; i < conns_.size() + listeners_.size(); i++) schedule(static_cast<int32_t>(i));
}

// Arrival times come one after another, each for a burst of requests (the last burst may be
// short). From a file, each is the file's next time for the connection, counted from its origin.
// Otherwise the first comes at the origin when the declaration gives a start, else one gap after
// it, and each next one a gap after the one before. A gap is the interval, or with poisson an
// exponential gap of that mean, -mean * ln(U) for U uniform in (0, 1].
int64_t Network::arrival(Conn& c, int64_t k) {
  if (c.dialled) return c.arrivals[static_cast<size_t>(k - c.read)];  // every delivery is known
  const scenario::Conn& d = *c.decl;
  while (c.read + static_cast<int64_t>(c.arrivals.size()) <= k) {
    if (!d.first.empty()) {
      c.last_at = c.origin + d.times[static_cast<size_t>(c.file_at++)];
    } else if (c.times > 0 || d.start < 0) {
      double gap = static_cast<double>(d.interval);
      if (d.poisson) {
        const double u = (static_cast<double>(c.rng.next() >> 11) + 1.0) / 9007199254740992.0;  // (0, 1]
        gap = -gap * std::log(u);
      }
      c.last_at += std::max<int64_t>(1, std::llround(std::min(gap, 1e15)));
    }
    c.times++;
    const int64_t known = c.read + static_cast<int64_t>(c.arrivals.size());
    for (int64_t b = 0; b < d.burst && known + b < c.count; b++) c.arrivals.push_back(c.last_at);
  }
  return c.arrivals[static_cast<size_t>(k - c.read)];
}

// The time of c's next event that netpoll has not seen, INT64_MAX if none: its next arrival not
// yet reported (arrivals already read need no edge), the end of file of a connection that sends
// nothing, or the leaving of an answer that frees room for a write that found none. A closed
// connection has left the poller: it has no events.
int64_t Network::next_of(Conn& c) {
  if (c.closed) return INT64_MAX;
  // Not accepted yet: the socket waits in the listener's backlog, in no epoll set. Accept adds it,
  // and epoll reports at once what has arrived by then.
  if (c.listener >= 0 && c.index >= listeners_[static_cast<size_t>(c.listener)].accepted) return INT64_MAX;
  const int64_t k = std::max(c.reported, c.read);
  int64_t t = k < c.count ? arrival(c, k) : INT64_MAX;
  if (c.count == 0 && !c.eof_seen && !c.dialled) t = c.origin;
  if (c.peer_closed && !c.hup_reported) t = std::min(t, c.peer_closed_at);
  if (c.want_write && !c.leaving.empty()) t = std::min(t, c.leaving.front());
  return t;
}

int64_t Network::next_of(int32_t fd) {
  if (fd < conns()) return next_of(conns_[static_cast<size_t>(fd)]);
  const Listener& ln = listeners_[static_cast<size_t>(fd - conns())];
  const int64_t k = std::max(ln.reported, ln.accepted);
  return k < static_cast<int64_t>(ln.connect.size()) ? ln.connect[static_cast<size_t>(k)] : INT64_MAX;
}

void Network::schedule(int32_t fd) {
  const int64_t t = next_of(fd);
  if (t != INT64_MAX) due_.emplace(t, fd);
}

// Entries whose connection has moved on since they were queued are dropped as they come up.
int64_t Network::nextEvent() {
  while (!due_.empty()) {
    const auto [t, i] = due_.top();
    if (next_of(i) == t) return epoch_ + t;
    due_.pop();
  }
  return INT64_MAX;
}

// One event per connection with new arrivals, as epoll reports one per ready descriptor, in the
// connections' order.
void Network::takeEvents(int64_t now, std::vector<rt::NetEvent>* out) {
  now -= epoch_;
  ready_.clear();
  while (!due_.empty() && due_.top().first <= now) {
    const auto [t, i] = due_.top();
    due_.pop();
    if (next_of(i) == t) ready_.push_back(i);
  }
  std::sort(ready_.begin(), ready_.end());
  ready_.erase(std::unique(ready_.begin(), ready_.end()), ready_.end());
  for (const int32_t i : ready_) {
    if (i >= conns()) {  // a listener: new connections
      Listener& ln = listeners_[static_cast<size_t>(i - conns())];
      for (int64_t k = std::max(ln.reported, ln.accepted);
           k < static_cast<int64_t>(ln.connect.size()) && ln.connect[static_cast<size_t>(k)] <= now; k++) {
        ln.reported = k + 1;
      }
      out->push_back({&ln.pd, rt::EPOLLIN});
      schedule(i);
      continue;
    }
    Conn& c = conns_[static_cast<size_t>(i)];
    uint32_t events = 0;
    if (c.count == 0 && !c.eof_seen && !c.dialled && c.origin <= now) {
      c.eof_seen = true;
      events |= rt::EPOLLIN | rt::EPOLLRDHUP;
    }
    for (int64_t k = std::max(c.reported, c.read); k < c.count && arrival(c, k) <= now; k++) {
      c.reported = k + 1;
      events |= rt::EPOLLIN;
      // The client's last request, then its close (a dialled peer's close is its own event).
      if (c.reported == c.count && !c.dialled) events |= rt::EPOLLRDHUP;
    }
    if (c.peer_closed && !c.hup_reported && c.peer_closed_at <= now) {
      c.hup_reported = true;
      events |= rt::EPOLLIN | rt::EPOLLRDHUP;
    }
    if (c.want_write && !c.leaving.empty() && c.leaving.front() <= now) {
      c.want_write = false;
      events |= rt::EPOLLOUT;
    }
    out->push_back({&c.pd, events});
    schedule(i);
  }
}

Network::Got Network::read(int32_t conn, int64_t now) {
  Conn& c = conns_[static_cast<size_t>(conn)];
  if (c.closed) return Got::Closed;
  if (c.dialled) {
    if (c.read < c.count && c.arrivals.front() <= now) {
      if (c.client) {  // an answer: its request's round trip ends here
        client_latencies_.push_back(now - c.sent.front());
        c.sent.pop_front();
        last_answer_ = std::max(last_answer_, now);
      } else {
        c.unanswered.push_back(c.arrivals.front());
      }
      c.arrivals.pop_front();
      c.read++;
      schedule(conn);
      return Got::Request;
    }
    // Every delivery has come before the peer's close: with none left, end of file.
    if (c.read >= c.count && c.peer_closed && c.peer_closed_at <= now) return Got::Eof;
    return Got::Again;
  }
  if (c.read >= c.count) {
    // The client closed its end with its last request (or as it connected, with none).
    if (c.count == 0 && c.origin > now) return Got::Again;
    c.eof_seen = true;
    return Got::Eof;
  }
  if (arrival(c, c.read) > now) return Got::Again;
  c.unanswered.push_back(c.arrivals.front());
  c.arrivals.pop_front();
  c.read++;
  schedule(conn);
  return Got::Request;
}

int64_t Network::accept(int32_t l, int64_t now) {
  Listener& ln = listeners_[static_cast<size_t>(l)];
  if (ln.accepted >= static_cast<int64_t>(ln.connect.size()) || ln.connect[static_cast<size_t>(ln.accepted)] > now) {
    return -1;
  }
  const int64_t k = ln.accepted++;
  schedule(conns() + l);
  schedule(ln.first + static_cast<int32_t>(k));
  return k;
}

void Network::close(int32_t conn, int64_t now) {
  Conn& c = conns_[static_cast<size_t>(conn)];
  if (c.closed) return;
  c.closed = true;
  c.want_write = false;
  // The FIN follows what this end sent: after its last answer or request has left.
  if (c.peer != nullptr) c.peer->peer_close(c.peer_conn, c.leaving.empty() ? now : std::max(now, c.leaving.back()));
}

Network::Wrote Network::write(int32_t conn, int64_t now) {
  Conn& c = conns_[static_cast<size_t>(conn)];
  if (c.closed) return Wrote::Closed;
  int64_t gone = now;  // when the answer has left
  if (c.decl->write_service > 0) {
    while (!c.leaving.empty() && c.leaving.front() <= now) c.leaving.pop_front();
    if (static_cast<int64_t>(c.leaving.size()) >= c.decl->send_buffer) {
      c.want_write = true;
      schedule(conn);
      return Wrote::Full;
    }
    // It leaves after the answers ahead of it, one at a time.
    const int64_t begin = c.leaving.empty() ? now : std::max(now, c.leaving.back());
    gone = begin > INT64_MAX - c.decl->write_service ? INT64_MAX : begin + c.decl->write_service;
    c.leaving.push_back(gone);
  }
  if (c.client) {
    c.sent.push_back(now);
    client_requests_++;
    if (c.peer != nullptr) c.peer->deliver(c.peer_conn, gone);
    return Wrote::Request;
  }
  if (c.unanswered.empty()) return Wrote::Nothing;
  latencies_.push_back(gone - c.unanswered.front());
  c.unanswered.pop_front();
  last_write_ = std::max(last_write_, gone);
  if (c.peer != nullptr) c.peer->deliver(c.peer_conn, gone);
  return Wrote::Answer;
}

// A delivery never comes before an earlier one on the same connection (TCP's order), nor before
// the end was made; a closed end drops it.
void Network::deliver(int32_t conn, int64_t at) {
  Conn& c = conns_[static_cast<size_t>(conn)];
  if (c.closed) return;
  const int64_t before = next_of(c);
  c.delivered_at = std::max(c.delivered_at, at);
  c.arrivals.push_back(c.delivered_at);
  c.count++;
  queue_and_wake(conn, before);
}

void Network::peer_close(int32_t conn, int64_t at) {
  Conn& c = conns_[static_cast<size_t>(conn)];
  if (c.closed || c.peer_closed) return;
  const int64_t before = next_of(c);
  c.peer_closed = true;
  c.peer_closed_at = std::max(c.delivered_at, at);
  queue_and_wake(conn, before);
}

// The new event, if it comes before what the descriptor waited for, is a new edge: queued, and
// the poller woken. Otherwise what is queued already covers it (a descriptor not yet accepted
// has no events: Accept queues it).
void Network::queue_and_wake(int32_t conn, int64_t before) {
  const int64_t after = next_of(conns_[static_cast<size_t>(conn)]);
  if (after >= before) return;
  due_.emplace(after, conn);
  wakes_++;
  if (wake_) wake_();
}

void Network::dial_listener(int32_t l) {
  Listener& ln = listeners_[static_cast<size_t>(l)];
  std::fill(ln.connect.begin(), ln.connect.end(), 0);
  for (size_t k = 0; k < ln.connect.size(); k++) {
    Conn& c = conns_[static_cast<size_t>(ln.first) + k];
    c.dialled = true;
    c.count = 0;
    c.origin = 0;
    c.arrivals.clear();
  }
  schedule(conns() + l);
}

void Network::join(Network& a, int32_t client, Network& b, int32_t server) {
  Conn& c = a.conns_[static_cast<size_t>(client)];
  Conn& s = b.conns_[static_cast<size_t>(server)];
  if (!c.client || !s.dialled || s.client || c.peer != nullptr || s.peer != nullptr) {
    throw std::invalid_argument("Network::join: connection " + std::to_string(client) +
                                " is no free client end or " + std::to_string(server) + " no free dialled server end");
  }
  c.peer = &b;
  c.peer_conn = server;
  s.peer = &a;
  s.peer_conn = client;
}

void connect_dials(const std::vector<Network*>& nets, const std::vector<scenario::ProcessSpec>& procs) {
  for (size_t i = 0; i < procs.size() && i < nets.size(); i++) {
    if (nets[i] == nullptr || procs[i].program == nullptr) continue;
    const scenario::Scenario& from = *procs[i].program;
    for (size_t d = 0; d < from.conns.size(); d++) {
      const scenario::Conn& decl = from.conns[d];
      if (decl.dial_process < 0) continue;
      const auto p = static_cast<size_t>(decl.dial_process);
      const std::string what = "process " + procs[i].name + "'s connection " + decl.name + " dials ";
      if (p >= procs.size() || p >= nets.size() || nets[p] == nullptr || procs[p].program == nullptr) {
        throw std::invalid_argument(what + "process " + std::to_string(p) + ", which has no network");
      }
      const scenario::Scenario& to = *procs[p].program;
      if (decl.dial_listener < 0 || static_cast<size_t>(decl.dial_listener) >= to.listeners.size()) {
        throw std::invalid_argument(what + "a missing listener of " + procs[p].name);
      }
      const scenario::Listener& ln = to.listeners[static_cast<size_t>(decl.dial_listener)];
      const scenario::Conn& server = to.conns[static_cast<size_t>(ln.conn)];
      const int64_t n = std::max<int64_t>(decl.length, 1);
      if (std::max<int64_t>(server.length, 1) != n) {
        throw std::invalid_argument(what + procs[p].name + "." + ln.name + ", whose array has another size");
      }
      nets[p]->dial_listener(decl.dial_listener);
      for (int64_t k = 0; k < n; k++) {
        Network::join(*nets[i], nets[i]->conn(static_cast<int32_t>(d), k), *nets[p],
                      nets[p]->conn(ln.conn, k));
      }
    }
  }
}

int64_t Network::requests() const {
  int64_t n = 0;
  for (const Conn& c : conns_) n += c.client ? 0 : c.count;
  return n;
}

}  // namespace gmp::workload
