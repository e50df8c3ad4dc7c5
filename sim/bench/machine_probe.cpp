// Measures, on the machine it runs on, the operating-system and hardware costs a cost profile
// names (sim/cost/profiles): locked read-modify-writes, PAUSE, a cache line moving between cores,
// the futex wake-up path, a signal sent to a running thread, usleep(3)'s real length and spread,
// clock reads and sched_yield. It prints figures for a person to copy into a profile with this
// program named as the source; it is not a test and asserts nothing.
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

void print_spread(const char* what, std::vector<int64_t> d) {
  std::sort(d.begin(), d.end());
  const size_t n = d.size();
  double mean = 0, var = 0;
  for (auto x : d) mean += static_cast<double>(x);
  mean /= static_cast<double>(n);
  for (auto x : d) var += (static_cast<double>(x) - mean) * (static_cast<double>(x) - mean);
  const double sd = std::sqrt(var / static_cast<double>(n));
  std::printf("%-34s p10 %8lld  p50 %8lld  p90 %8lld  mean %8.0f  sd %7.0f ns  (uniform width sd*sqrt(12) = %.0f)\n",
              what, static_cast<long long>(d[n / 10]), static_cast<long long>(d[n / 2]),
              static_cast<long long>(d[n * 9 / 10]), mean, sd, sd * std::sqrt(12.0));
}

// ns per operation of a loop of `iters` calls of f, best of 5 runs.
template <class F>
double per_op(int64_t iters, F f) {
  double best = 1e18;
  for (int run = 0; run < 5; run++) {
    const int64_t a = now_ns();
    for (int64_t i = 0; i < iters; i++) f(i);
    best = std::min(best, static_cast<double>(now_ns() - a) / static_cast<double>(iters));
  }
  return best;
}

long futex(std::atomic<uint32_t>* addr, int op, uint32_t val) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, nullptr, nullptr, 0);
}

// Pins the calling thread to one CPU, if the machine has it.
void pin(unsigned cpu) {
  if (cpu >= std::thread::hardware_concurrency()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

std::atomic<int64_t> handled_at{0};
void on_signal(int) { handled_at.store(now_ns()); }

}  // namespace

int main() {
  constexpr int64_t kIters = 20'000'000;
  std::printf("machine probe: %u hardware threads\n\n", std::thread::hardware_concurrency());

  // Locked read-modify-writes on a line this core owns, back to back.
  alignas(64) static std::atomic<uint64_t> cell{0};
  std::printf("locked RMW on an owned line (atomic_cas, atomic_xadd, atomic_xchg), back to back:\n");
  std::printf("  compare-and-swap   %.2f ns\n", per_op(kIters, [](int64_t i) {
                uint64_t e = static_cast<uint64_t>(i);
                cell.compare_exchange_strong(e, e + 1);
              }));
  std::printf("  fetch-add          %.2f ns\n", per_op(kIters, [](int64_t) { cell.fetch_add(1); }));
  std::printf("  exchange           %.2f ns\n", per_op(kIters, [](int64_t i) { cell.exchange(static_cast<uint64_t>(i)); }));
#if defined(__x86_64__)
  std::printf("  PAUSE              %.2f ns  (procyield, per instruction)\n", per_op(kIters / 10, [](int64_t) { _mm_pause(); }));
#endif
  std::printf("  clock_gettime      %.2f ns  (nanotime)\n", per_op(kIters / 10, [](int64_t) { (void)now_ns(); }));
  std::printf("  sched_yield        %.2f ns  (osyield, nothing else runnable)\n\n",
              per_op(kIters / 100, [](int64_t) { sched_yield(); }));

  // A cache line bouncing between two threads: each waits for the other's write, so a round trip
  // is two transfers of a modified line (cacheline_transfer), if the two run on different cores.
  {
    alignas(64) static std::atomic<uint64_t> ball{0};
    constexpr uint64_t kRounds = 2'000'000;
    std::thread other([] {
      for (uint64_t i = 1; i < 2 * kRounds; i += 2) {
        while (ball.load(std::memory_order_acquire) != i) {
        }
        ball.store(i + 1, std::memory_order_release);
      }
    });
    const int64_t a = now_ns();
    for (uint64_t i = 0; i < 2 * kRounds; i += 2) {
      while (ball.load(std::memory_order_acquire) != i) {
      }
      ball.store(i + 1, std::memory_order_release);
    }
    const int64_t t = now_ns() - a;
    other.join();
    std::printf("cache line handed between two threads: %.1f ns per transfer (cacheline_transfer)\n\n",
                static_cast<double>(t) / (2.0 * kRounds));
  }

  // futex wake-up of a sleeping thread: the waker's cost (futex_wake) and the time until the
  // sleeper runs (futex_wake_latency).
  {
    constexpr int kWakes = 2000;
    static std::atomic<uint32_t> word{0};
    static std::atomic<int64_t> woken_at{0};
    static std::atomic<int> ready{0};
    std::vector<int64_t> cost, latency;
    std::thread sleeper([] {
      for (int i = 0; i < kWakes; i++) {
        ready.store(1);
        while (word.load() == 0) futex(&word, FUTEX_WAIT_PRIVATE, 0);
        woken_at.store(now_ns());
        word.store(0);
        ready.store(2);
        while (ready.load() != 0) {
        }
      }
    });
    for (int i = 0; i < kWakes; i++) {
      while (ready.load() != 1) {
      }
      usleep(200);  // let the sleeper reach futex_wait
      word.store(1);
      const int64_t a = now_ns();
      futex(&word, FUTEX_WAKE_PRIVATE, 1);
      const int64_t b = now_ns();
      while (ready.load() != 2) {
      }
      cost.push_back(b - a);
      latency.push_back(woken_at.load() - a);
      ready.store(0);
    }
    sleeper.join();
    print_spread("futex wake, waker's cost:", cost);
    print_spread("futex wake, until the sleeper runs:", latency);
  }

  // A signal to a thread running on another CPU, as sysmon's preemptM sends SIGURG to a running M:
  // the sender's cost of tgkill (signal_send) and the time until the target runs its handler
  // (signal_delivery_latency).
  {
    constexpr int kSignals = 2000;
    static std::atomic<pid_t> target_tid{0};
    static std::atomic<bool> stop{false};
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGURG, &sa, nullptr);
    std::thread target([] {
      pin(1);
      target_tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
    cpu_set_t was;
    pthread_getaffinity_np(pthread_self(), sizeof was, &was);
    pin(0);
    while (target_tid.load() == 0) {
    }
    std::vector<int64_t> cost, latency;
    for (int i = 0; i < kSignals; i++) {
      usleep(200);
      handled_at.store(0);
      const int64_t a = now_ns();
      syscall(SYS_tgkill, getpid(), target_tid.load(), SIGURG);
      const int64_t b = now_ns();
      while (handled_at.load() == 0) {
      }
      cost.push_back(b - a);
      latency.push_back(handled_at.load() - a);
    }
    stop.store(true);
    target.join();
    signal(SIGURG, SIG_DFL);
    pthread_setaffinity_np(pthread_self(), sizeof was, &was);
    print_spread("tgkill to a running thread, cost:", cost);
    print_spread("tgkill, until its handler runs:", latency);
  }

  // usleep(3), runqgrab's back-off: its real length and spread (usleep_min_latency, wakeup_jitter).
  {
    std::vector<int64_t> d(2000);
    for (auto& x : d) {
      const int64_t a = now_ns();
      usleep(3);
      x = now_ns() - a;
    }
    print_spread("usleep(3):", d);
  }
}
