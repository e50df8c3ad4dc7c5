// The simulated network that a server scenario's connections come in on (scenario.proto's
// ConnDecl), as the kernel keeps it: each connection's requests arrive at times fixed in advance
// (an interval, or exponential gaps drawn from the seed, or an arrival file's times; a burst of
// requests at each), wait in its receive buffer until read,
// and are answered by writes. It is the runtime's NetKernel: an arrival is an edge-triggered
// readiness event for the connection's pollDesc, reported once to netpoll. With a write_service,
// answers leave one at a time, that long each, from a send buffer of send_buffer answers; a write
// that finds it full waits for a write-readiness event. It keeps each request's latency (arrival
// to the answer's write, or to its leaving with a write_service) for the run's figures.
//
// A connection array is one declaration with several connections: they are numbered in a row
// with the single connections, in declaration order (element i of a declaration whose first is
// base is connection base + i), and each has its own random stream, seeded by that number.
//
// Dialled connections (ConnDecl.dial) join two processes' networks on one machine: a client
// end here and a server end in the peer's network (connect_dials, below). A write on a client
// end is a request, delivered to the server end within the write itself (loopback: the writer's
// system call puts it in the peer's receive queue and wakes the peer's poller through the peer
// network's wake callback); the server reads it and answers it with a write, which delivers an
// answer to the client end the same way, and the client's read of it closes a round trip (the
// client's latency: the request's write to the answer's read). A close reaches the peer as end
// of file once it has read what was delivered. docs/network.md, "Connections between processes".
//
// It is hardware-side state, as a device is: reading it is no platform operation. The times it
// is given come from the driver's clock, which every process's network shares (ns from the run's
// start), so a delivery's time means the same on both sides.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "sim/platform/splitmix64.h"
#include "sim/runtime/runtime.h"
#include "sim/scenario/program.h"

namespace gmp::workload {

class Network final : public rt::NetKernel {
 public:
  // Times here count from the run's start; netpoll's clock (nanotime) reads `epoch` then. conns
  // must outlive the network.
  Network(const std::vector<scenario::Conn>& conns, uint64_t seed, int64_t epoch,
          std::vector<scenario::Listener> listeners = {});

  // The driver's clock, counting from the run's start (the interpreter's); until it is set the
  // network's clock stands at the start.
  void set_clock(std::function<int64_t()> clock) { clock_ = std::move(clock); }
  // How a peer wakes this network's poller (the machine sets the runtime's netpollBreak): called,
  // on the delivering thread, once for each delivery by a peer that makes one of this network's
  // descriptors due earlier than it was (a new readiness edge), never for one that changes
  // nothing netpoll waits for.
  void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }
  int64_t wakes() const { return wakes_; }  // the wake callback's calls so far

  // Joins client end `client` of network a (a connection of a declaration with a dial) to server
  // end `server` of network b (a connection of the dialled listener's array; b may be a). The
  // listener must have been made dialled first (dial_listener).
  static void join(Network& a, int32_t client, Network& b, int32_t server);
  // Listener l's connections come from dials: they all connect as the run starts (Accept returns
  // them at time 0, in order) and their requests are the peers' writes, not generated arrivals.
  void dial_listener(int32_t l);

  // NetKernel, on nanotime's clock.
  int64_t now() override { return epoch_ + (clock_ ? clock_() : 0); }
  int64_t nextEvent() override;
  void takeEvents(int64_t now, std::vector<rt::NetEvent>* out) override;

  // The connection number of element k of declaration decl (k = 0 for a single connection).
  int32_t conn(int32_t decl, int64_t k) const { return base_[static_cast<size_t>(decl)] + static_cast<int32_t>(k); }
  rt::pollDesc* pd(int32_t conn) { return &conns_[static_cast<size_t>(conn)].pd; }
  rt::pollDesc* listener_pd(int32_t l) { return &listeners_[static_cast<size_t>(l)].pd; }
  int32_t conns() const { return static_cast<int32_t>(conns_.size()); }
  // A read: the oldest request of conn that has arrived by now; or none yet (EAGAIN); or, once
  // every request has been read and the client has closed its end (at its last request's arrival,
  // or as it connects when it sends none), end of file; or an error, once the server closed it.
  // On a dialled client end, Request is an answer (a round trip's latency sample), and end of
  // file comes once the server has closed its end and every answer delivered has been read.
  enum class Got : uint8_t { Request, Again, Eof, Closed };
  Got read(int32_t conn, int64_t now);
  // An accept on listener l: the index in its array of the oldest connection that has connected
  // by now and not been accepted, or -1 if there is none.
  int64_t accept(int32_t l, int64_t now);
  // How many of listener l's connections Accept has returned.
  int64_t accepted(int32_t l) const { return listeners_[static_cast<size_t>(l)].accepted; }
  // This process closes its end at now: reads and writes fail from now on, and it has no more
  // events. A dialled end's peer reads end of file once it has read what was delivered.
  void close(int32_t conn, int64_t now);
  // A write of an answer: it answers the oldest request read and not answered (a latency sample,
  // ending when the answer has left), or none; or, when the send buffer is full, it is not taken
  // (EAGAIN) and the connection reports EPOLLOUT once an answer has left. On a dialled server end
  // the answer is delivered to the client end as it leaves. On a dialled client end a write is a
  // request (Request), delivered to the server end as it leaves; a write after the peer closed is
  // taken and dropped (Linux's first write after a FIN succeeds).
  enum class Wrote : uint8_t { Answer, Nothing, Full, Closed, Request };
  Wrote write(int32_t conn, int64_t now);

  // The server side: each request's arrival to its answer's leaving, in answer order.
  const std::vector<int64_t>& latencies() const { return latencies_; }
  int64_t requests() const;   // requests that arrive in all (on dialled server ends: delivered)
  int64_t last_write() const { return last_write_; }
  // The client side (dialled client ends): the requests written, and for each answer read, in
  // read order, its request's write to its read (the round trip a load generator measures).
  int64_t client_requests() const { return client_requests_; }
  const std::vector<int64_t>& client_latencies() const { return client_latencies_; }
  int64_t last_answer() const { return last_answer_; }  // the latest answer read (0: none)
  bool dialled(int32_t conn) const { return conns_[static_cast<size_t>(conn)].dialled; }

 private:
  struct Conn {
    const scenario::Conn* decl = nullptr;
    int64_t count = 0;            // its requests
    rt::pollDesc pd;
    SplitMix64 rng{0};
    int64_t origin = 0;           // when it opens: arrival files count from here
    int64_t times = 0;            // arrival times made so far (each one a burst)
    int64_t file_at = 0;          // from an arrival file: its next time is decl->times[file_at]
    int64_t last_at = 0;          // the latest known arrival time (before the first: its origin)
    std::deque<int64_t> arrivals; // known arrival times not yet read, oldest first (read + size known)
    int64_t reported = 0;         // arrivals whose readiness edge netpoll has seen (absolute count)
    int64_t read = 0;             // arrivals read (absolute count)
    std::deque<int64_t> unanswered;  // arrival times of requests read and not yet answered
    std::deque<int64_t> leaving;     // with a write_service: when each answer in the send buffer is gone
    bool want_write = false;         // a write found the buffer full: EPOLLOUT when an answer leaves
    bool eof_seen = false;           // a connection without requests: its end of file was reported or read
    bool closed = false;             // by the server
    int32_t listener = -1;           // the listener that hands it out, if any
    int64_t index = 0;               // its index in its declaration's array
    // A dialled end: count, arrivals, read and reported then hold what the peer delivered
    // (requests on a server end, answers on a client end), in delivery order, each at its time.
    bool dialled = false;
    bool client = false;             // a client end (its declaration has a dial)
    Network* peer = nullptr;         // the other end's network and number, once joined
    int32_t peer_conn = -1;
    int64_t delivered_at = 0;        // the latest delivery: later ones never come before it
    bool peer_closed = false;        // the peer closed its end, at peer_closed_at
    int64_t peer_closed_at = 0;
    bool hup_reported = false;       // netpoll saw the peer's close (EPOLLRDHUP)
    std::deque<int64_t> sent;        // a client end: its requests' write times, not yet answered
  };
  // A listener: its connections' connect times, made when the run starts.
  struct Listener {
    rt::pollDesc pd;
    int32_t first = 0;              // the number of its array's first connection
    std::vector<int64_t> connect;   // connect[k]: when connection k of the array connects
    int64_t reported = 0;           // connects netpoll has seen
    int64_t accepted = 0;
  };
  int64_t arrival(Conn& c, int64_t k);  // the arrival time of c's k-th request (k < count)
  int64_t next_of(Conn& c);             // when c's next unreported event is due; INT64_MAX: none
  int64_t next_of(int32_t fd);          // the same for a connection or a listener
  void schedule(int32_t fd);            // queues fd's next event in due_, if it has one
  // A peer's delivery to conn at `at` (an item, or its close): queued, and the wake callback
  // called if conn's next event comes earlier than it did.
  void deliver(int32_t conn, int64_t at);
  void peer_close(int32_t conn, int64_t at);
  void queue_and_wake(int32_t conn, int64_t before);

  const std::vector<scenario::Conn>& decls_;  // the scenario's, which outlives the network
  std::vector<int32_t> base_;  // per declaration: the number of its first connection
  std::deque<Conn> conns_;  // a deque: pollDescs never move
  // Listener l is descriptor conns_.size() + l in due_.
  std::vector<scenario::Listener> listener_decls_;
  std::deque<Listener> listeners_;
  // Connections by the time of their next event, earliest first (then by number). An entry whose
  // connection has moved on since is stale; it is dropped when it comes up.
  std::priority_queue<std::pair<int64_t, int32_t>, std::vector<std::pair<int64_t, int32_t>>, std::greater<>> due_;
  std::vector<int32_t> ready_;  // scratch for takeEvents
  std::vector<int64_t> latencies_;
  int64_t last_write_ = 0;
  int64_t client_requests_ = 0;
  std::vector<int64_t> client_latencies_;
  int64_t last_answer_ = 0;
  int64_t epoch_ = 0;
  std::function<int64_t()> clock_;
  std::function<void()> wake_;
  int64_t wakes_ = 0;
};

// Joins the dialled connections of a machine's processes, once they are made and before the run
// starts: nets[i] is process i's network (nullptr when it has no connections), procs[i] its spec
// (Scenario::processes). For each declaration of process i with a dial (Conn::dial_process p,
// dial_listener l), element k of its array is joined to element k of the array of process p's
// listener l, whose listener then hands them out at time 0. Declarations are taken in process
// order, then declaration order. Throws std::invalid_argument if a dial names a process without
// a network, a missing listener, or an array of another size (the loader rejects those first).
void connect_dials(const std::vector<Network*>& nets, const std::vector<scenario::ProcessSpec>& procs);

}  // namespace gmp::workload
