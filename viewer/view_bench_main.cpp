// gmp_view_bench: what gmpview costs on a large trace. Prints figures; asserts nothing.
//   1. load: the time to load a trace of 10 million events (default; --events N for another size,
//      or a TRACE file of your own) and the memory the model keeps per event, both as the model's
//      own arrays and as the process's resident memory;
//   2. frames (when built with the viewer and run under X, e.g. xvfb-run -a): ms per frame of the
//      timeline fully zoomed out and deeply zoomed in, and the heap allocations made per frame.
// The generated trace is synthetic but shaped like the simulator's: 8 Ps and their Ms, a pool of
// Gs that run, park, yield, make syscalls, are readied, stolen and preempted, with queue traffic.
// Usage: gmp_view_bench [--events N] [--frames N] [--gc] [--processes] [--write FILE] [TRACE]
//   --write FILE keeps the generated trace there (to open it in gmpview).
//   --gc adds a garbage collector to the generated trace: the running Gs allocate (HEAP_ALLOC); at
//   the heap goal a cycle begins with a sweep-termination pause, P0 runs a dedicated mark worker,
//   Ps that pick a G may run a fractional one and idle Ps an idle one, running Gs assist; the cycle
//   ends with a mark-termination pause, a new goal (HEAP_GOAL) and a stretch of sweeping. Shaped to
//   show, not fitted to any real program (docs/images/gmpview-gc.png).
//   --processes writes a trace of two processes instead (docs/images/gmpview-processes.png): the
//   generated run twice (the second from another seed), as "server" (quota 2.5 CPUs: in the last
//   40% of each tenth of the span its Ms are throttled, their events held until the refill) and
//   "loadgen" (no quota), merged by time. Synthetic: a simulated two-process run shows the same.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "viewer/model.h"
#ifdef GMP_VIEW_BENCH_FRAMES
#include "viewer/frame_bench.h"
#endif

namespace {

using namespace gmp::trace;

// Writes a synthetic scheduler trace of exactly `n` events.
void generate(const std::string& path, uint64_t n, bool gc, uint64_t seed = 1) {
  Header h;
  h.set_producer("gmp_view_bench");
  h.set_num_ps(8);
  h.set_num_ms(8);
  h.set_clock(CLOCK_VIRTUAL);
  TraceWriter w(path, h);
  std::mt19937_64 rng(seed);
  constexpr int kPs = 8;
  struct P {
    int64_t g = -1;
    int64_t until = 0;
    bool worker = false;  // g is a mark worker (--gc)
    std::deque<int64_t> runq;
  };
  std::vector<P> ps(kPs);
  std::vector<int64_t> blocked;
  int64_t next_g = 1, t = 0;
  uint64_t written = 0;
  auto emit = [&](Kind k, int64_t g, int64_t m, int64_t p) -> Event {
    Event e;
    e.set_ts(t);
    e.set_kind(k);
    if (g >= 0) e.set_g(g);
    if (m >= 0) e.set_m(m);
    if (p >= 0) e.set_p(p);
    return e;
  };
  auto write = [&](const Event& e) {
    if (written < n) {
      w.write(e);
      ++written;
    }
  };
  for (int p = 0; p < kPs; ++p) write(emit(KIND_P_ACQUIRE, -1, p, p));
  // The collector (--gc): heap and goal in bytes, the cycle, the end of its mark phase and of the
  // sweeping after it; mark workers are Gs 1000000 + p, created at their first start.
  constexpr int64_t kMiB = 1 << 20, kWorker = 1000000;
  int64_t heap = 2 * kMiB, goal = 4 * kMiB, cycle = 0, mark_end = -1, sweep_end = -1;
  uint64_t since_heap = 0;
  std::vector<bool> worker_made(kPs, false);
  auto value = [&](Kind k, int64_t v, int p) {
    Event e = emit(k, -1, p, p);
    e.set_value(v);
    write(e);
  };
  auto stw = [&](Kind k, StwReason why, int p) {
    Event e = emit(k, ps[static_cast<size_t>(p)].g, p, p);
    e.set_stw_reason(why);
    write(e);
  };
  auto start_worker = [&](int p, GcWorkerMode mode, int64_t until) {
    P& pp = ps[static_cast<size_t>(p)];
    const int64_t g = kWorker + p;
    if (!worker_made[static_cast<size_t>(p)]) {
      write(emit(KIND_GO_CREATE, g, p, p));
      worker_made[static_cast<size_t>(p)] = true;
    }
    Event e = emit(KIND_GO_START, g, p, p);
    e.set_gc_worker_mode(mode);
    write(e);
    pp.g = g;
    pp.worker = true;
    pp.until = until;
  };
  while (written < n) {
    t += 20 + static_cast<int64_t>(rng() % 200);
    const int p = static_cast<int>(rng() % kPs);
    P& pp = ps[static_cast<size_t>(p)];
    const uint64_t r = rng() % 100;
    if (gc) {
      const bool marking = mark_end >= 0;
      if (!marking && heap >= goal - goal / 16) {
        // A cycle begins: sweep termination stops the world, then P0 turns to its dedicated worker.
        stw(KIND_STW_BEGIN, STW_REASON_GC_SWEEP_TERM, p);
        t += 15000 + static_cast<int64_t>(rng() % 30000);
        value(KIND_GC_BEGIN, ++cycle, p);
        t += 1000;
        stw(KIND_STW_END, STW_REASON_GC_SWEEP_TERM, p);
        mark_end = t + 900000 + static_cast<int64_t>(rng() % 900000);
        P& p0 = ps[0];
        if (p0.g >= 0 && !p0.worker) {
          Event stop = emit(KIND_GO_STOP, p0.g, 0, 0);
          stop.set_reason(REASON_PREEMPT_COOPERATIVE);
          write(stop);
          Event put = emit(KIND_RUNQ_PUT, p0.g, 0, 0);
          put.set_queue(QUEUE_LOCAL);
          write(put);
          p0.runq.push_back(p0.g);
          p0.g = -1;
        }
        if (p0.g < 0) start_worker(0, GC_WORKER_MODE_DEDICATED, mark_end);
        continue;
      }
      if (marking && t >= mark_end) {
        // Mark termination: the end of the cycle, a new goal from what survived, then sweeping.
        stw(KIND_STW_BEGIN, STW_REASON_GC_MARK_TERM, p);
        t += 8000 + static_cast<int64_t>(rng() % 25000);
        value(KIND_GC_END, cycle, p);
        stw(KIND_STW_END, STW_REASON_GC_MARK_TERM, p);
        heap = heap * (30 + static_cast<int64_t>(rng() % 30)) / 100;
        goal = std::max<int64_t>(4 * kMiB, heap * 2);
        value(KIND_HEAP_ALLOC, heap, p);
        value(KIND_HEAP_GOAL, goal, p);
        mark_end = -1;
        sweep_end = t + 400000;
        continue;
      }
      if (pp.worker) {
        if (t >= pp.until) {  // the worker's turn is over
          Event park = emit(KIND_GO_PARK, pp.g, p, p);
          park.set_wait_reason(WAIT_REASON_OTHER);
          park.set_label("GC worker (idle)");
          write(park);
          pp.g = -1;
          pp.worker = false;
        }
        continue;
      }
      if (pp.g >= 0) {
        heap += static_cast<int64_t>(rng() % 6000);  // the running G allocates
        if (++since_heap >= 24) {
          value(KIND_HEAP_ALLOC, heap, p);
          since_heap = 0;
        }
        if (marking && r < 6) {  // it pays for its allocation with a mark assist
          write(emit(KIND_GC_MARK_ASSIST_BEGIN, pp.g, p, p));
          t += 2000 + static_cast<int64_t>(rng() % 15000);
          write(emit(KIND_GC_MARK_ASSIST_END, pp.g, p, p));
          continue;
        }
        if (!marking && t < sweep_end && r < 3) {  // or sweeps a span
          write(emit(KIND_GC_SWEEP_BEGIN, pp.g, p, p));
          t += 1000 + static_cast<int64_t>(rng() % 6000);
          Event e = emit(KIND_GC_SWEEP_END, pp.g, p, p);
          e.set_value(8192 * (1 + static_cast<int64_t>(rng() % 64)));
          write(e);
          continue;
        }
      } else if (marking && p != 0) {
        // A P about to pick work: with nothing queued it may run an idle worker; otherwise now and
        // then a fractional one.
        if (pp.runq.empty() && r < 30) {
          start_worker(p, GC_WORKER_MODE_IDLE, t + 5000 + static_cast<int64_t>(rng() % 40000));
          continue;
        }
        if (!pp.runq.empty() && p == 1 && r < 25) {
          start_worker(p, GC_WORKER_MODE_FRACTIONAL, t + 20000 + static_cast<int64_t>(rng() % 60000));
          continue;
        }
      }
    }
    if (pp.g < 0) {
      if (pp.runq.empty()) {
        // Find work: create a G, steal from a neighbour, or spin.
        const int victim = (p + 1 + static_cast<int>(rng() % (kPs - 1))) % kPs;
        auto& vq = ps[static_cast<size_t>(victim)].runq;
        if (!vq.empty() && r < 60) {
          write(emit(KIND_M_SPIN_START, -1, p, p));
          Event s = emit(KIND_STEAL, vq.front(), p, p);
          s.set_peer_p(victim);
          s.set_count(1);
          s.set_queue(QUEUE_LOCAL);
          s.set_reason(REASON_STEAL_WORK);
          write(s);
          write(emit(KIND_M_SPIN_STOP, -1, p, p));
          pp.runq.push_front(vq.front());
          vq.pop_front();
        } else {
          Event c = emit(KIND_GO_CREATE, next_g, p, p);
          c.set_peer_g(1);
          write(c);
          Event put = emit(KIND_RUNQ_PUT, next_g, p, p);
          put.set_queue(QUEUE_RUNNEXT);
          write(put);
          pp.runq.push_back(next_g++);
        }
        continue;
      }
      pp.g = pp.runq.front();
      pp.runq.pop_front();
      write(emit(KIND_GO_START, pp.g, p, p));
      pp.until = t + 200 + static_cast<int64_t>(rng() % 20000);
      continue;
    }
    if (t < pp.until && r < 70) {
      // While a G runs: ready a blocked G (waking an M), or queue traffic.
      if (!blocked.empty() && r < 40) {
        const size_t i = rng() % blocked.size();
        const int64_t g = blocked[i];
        blocked[i] = blocked.back();
        blocked.pop_back();
        Event u = emit(KIND_GO_UNPARK, g, p, p);
        u.set_peer_g(pp.g);
        u.set_reason(REASON_READY);
        write(u);
        const int target = static_cast<int>(rng() % kPs);
        Event put = emit(KIND_RUNQ_PUT, g, p, target);
        put.set_queue(QUEUE_LOCAL);
        write(put);
        ps[static_cast<size_t>(target)].runq.push_back(g);
        if (r < 10) {
          Event wk = emit(KIND_M_WAKEUP, -1, p, -1);
          wk.set_peer_m((p + 1) % kPs);
          wk.set_reason(REASON_WAKEP);
          write(wk);
        }
      } else if (r < 45 && rng() % 64 == 0) {
        Event req = emit(KIND_PREEMPT_REQUEST, pp.g, kPs, p);
        req.set_peer_m(p);
        req.set_reason(REASON_SYSMON);
        write(req);
        Event sig = emit(KIND_SIGNAL_SEND, pp.g, kPs, p);
        sig.set_peer_m(p);
        sig.set_signal(23);
        write(sig);
      }
      continue;
    }
    // The running G stops: parks, yields, makes a syscall or exits.
    if (r < 40) {
      Event park = emit(KIND_GO_PARK, pp.g, p, p);
      park.set_wait_reason(WAIT_REASON_CHAN_RECEIVE);
      park.set_reason(REASON_PARK);
      write(park);
      blocked.push_back(pp.g);
      pp.g = -1;
    } else if (r < 65) {
      Event stop = emit(KIND_GO_STOP, pp.g, p, p);
      stop.set_reason(REASON_GOSCHED);
      write(stop);
      Event put = emit(KIND_RUNQ_PUT, pp.g, p, p);
      put.set_queue(QUEUE_LOCAL);
      write(put);
      pp.runq.push_back(pp.g);
      pp.g = -1;
    } else if (r < 90) {
      write(emit(KIND_GO_SYSCALL_ENTER, pp.g, p, p));
      t += 100 + static_cast<int64_t>(rng() % 3000);
      Event x = emit(KIND_GO_SYSCALL_EXIT, pp.g, p, p);
      x.set_reason(REASON_EXITSYSCALL_FAST);
      write(x);
      pp.until = t + static_cast<int64_t>(rng() % 5000);
    } else {
      write(emit(KIND_GO_EXIT, pp.g, p, p));
      pp.g = -1;
    }
  }
  w.close();
}

// Two runs of the generator merged as two processes (see --processes above), into `path`.
void generate_processes(const std::string& path, uint64_t n, bool gc) {
  const std::string a = path + ".a", b = path + ".b";
  generate(a, n / 2, gc, 1);
  generate(b, n - n / 2, gc, 2);
  int64_t span = 1;
  {
    TraceReader r(a);
    Event e;
    while (r.next(e)) span = std::max(span, e.ts());
  }
  const int64_t period = std::max<int64_t>(span / 10, 10);
  Header h;
  h.set_producer("gmp_view_bench --processes");
  h.set_num_ps(8);
  h.set_num_ms(8);
  h.set_clock(CLOCK_VIRTUAL);
  Process* server = h.add_processes();
  server->set_id(0);
  server->set_name("server");
  server->set_num_ps(8);
  server->set_cpu_quota(2.5);
  server->set_cpu_period(period);
  Process* loadgen = h.add_processes();
  loadgen->set_id(1);
  loadgen->set_name("loadgen");
  loadgen->set_num_ps(8);
  TraceWriter w(path, h);
  TraceReader ra(a), rb(b);
  Event ea, eb;
  bool has_a = ra.next(ea), has_b = rb.next(eb);
  std::map<int64_t, int64_t> p_of;  // the server's Ms and the P each holds (-1: none)
  int64_t window_end = -1;          // the refill ending the throttled stretch in progress
  std::vector<std::pair<int64_t, int64_t>> throttled;  // (M, its P) throttled until window_end
  auto server_event = [&](Event e) {
    const int64_t k = e.ts() / period, throttle_at = k * period + period * 6 / 10;
    if (window_end >= 0 && e.ts() >= window_end) {  // the refill: the Ms run again
      for (const auto& [m, p] : throttled) {
        Event x;
        x.set_ts(window_end);
        x.set_kind(KIND_THROTTLE_END);
        x.set_m(m);
        if (p >= 0) x.set_p(p);
        w.write(x);
      }
      window_end = -1;
      throttled.clear();
    }
    if (window_end < 0 && e.ts() >= throttle_at && e.ts() < (k + 1) * period) {  // the quota is spent
      for (const auto& [m, p] : p_of) {
        if (p < 0) continue;  // only the Ms that run (hold a P) are throttled
        throttled.emplace_back(m, p);
        Event x;
        x.set_ts(throttle_at);
        x.set_kind(KIND_THROTTLE_BEGIN);
        x.set_m(m);
        if (p >= 0) x.set_p(p);
        w.write(x);
      }
      window_end = (k + 1) * period;
    }
    if (window_end >= 0) e.set_ts(window_end);  // held until the refill
    if (e.has_m() && e.kind() == KIND_P_ACQUIRE) p_of[e.m()] = e.has_p() ? e.p() : -1;
    if (e.has_m() && e.kind() == KIND_P_RELEASE) p_of[e.m()] = -1;
    if (e.has_m()) p_of.try_emplace(e.m(), -1);
    return e;
  };
  // Process 0's events are held to the refill, so its stream is read one ahead.
  std::optional<Event> next_a;
  if (has_a) next_a = server_event(ea);
  while (next_a || has_b) {
    if (next_a && (!has_b || next_a->ts() <= eb.ts())) {
      w.write(*next_a);
      next_a.reset();
      if (ra.next(ea)) next_a = server_event(ea);
    } else {
      eb.set_process(1);
      w.write(eb);
      has_b = rb.next(eb);
    }
  }
  w.close();
  std::remove(a.c_str());
  std::remove(b.c_str());
}

// CPU time of this process (all threads), seconds: unlike wall time, not inflated by other
// processes on a busy machine.
double cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

long rss_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, n, field) == 0) return std::atol(line.c_str() + n + 1);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t events = 10'000'000;
  int frames = 120;
  std::string path, keep;
  bool gc = false, processes = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--write" && i + 1 < argc) {
      keep = argv[++i];
    } else if (a == "--events" && i + 1 < argc) {
      events = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--gc") {
      gc = true;
    } else if (a == "--processes") {
      processes = true;
    } else if (a == "--frames" && i + 1 < argc) {
      frames = std::atoi(argv[++i]);
    } else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr,
                   "usage: gmp_view_bench [--events N] [--frames N] [--gc] [--processes] [--write FILE] [TRACE]\n");
      return 2;
    } else {
      path = a;
    }
  }
  bool generated = false;
  if (path.empty()) {
    path = !keep.empty() ? keep : "/tmp/gmp_view_bench." + std::to_string(getpid()) + ".gmptrace";
    const auto t0 = std::chrono::steady_clock::now();
    if (processes) {
      generate_processes(path, events, gc);
    } else {
      generate(path, events, gc);
    }
    std::printf("generated %llu events into %s in %.2f s\n", static_cast<unsigned long long>(events), path.c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    generated = true;
  }
  std::fflush(stdout);
  const long rss0 = rss_kib("VmRSS:");
  const double c0 = cpu_s();
  const auto t0 = std::chrono::steady_clock::now();
  gmp::view::Model m;
  try {
    m = gmp::view::load_trace(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gmp_view_bench: %s\n", e.what());
    return 1;
  }
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double load_cpu = cpu_s() - c0;
  const long rss1 = rss_kib("VmRSS:");
  const long hwm = rss_kib("VmHWM:");
  const double n = static_cast<double>(m.events.size());
  size_t segs = 0;
  for (const auto& l : m.p_lanes) segs += l.segs.size();
  for (const auto& l : m.m_lanes) segs += l.segs.size();
  std::printf("load: %zu events (%zu segments, %zu arrows, %zu latencies) in %.3f s wall, %.3f s CPU: %.0f ns/event\n",
              m.events.size(), segs, m.arrows.size(), m.latencies.size(), load_s, load_cpu, load_s * 1e9 / n);
  std::printf(
      "memory: model arrays %.1f MiB = %.1f bytes/event; resident +%.1f MiB = %.1f bytes/event "
      "(peak resident %.1f MiB)\n",
      static_cast<double>(m.memory_bytes()) / (1 << 20), static_cast<double>(m.memory_bytes()) / n,
      static_cast<double>(rss1 - rss0) / 1024, static_cast<double>(rss1 - rss0) * 1024 / n,
      static_cast<double>(hwm) / 1024);
#ifdef GMP_VIEW_BENCH_FRAMES
  gmp::view::bench_frames(m, frames);
#else
  (void)frames;
  std::printf("frames: not measured (gmpview was not built: ImGui, GLFW or GL missing)\n");
#endif
  if (generated && keep.empty()) std::remove(path.c_str());
  return 0;
}
