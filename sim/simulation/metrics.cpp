#include "sim/simulation/metrics.h"

#include <algorithm>
#include <cmath>

#include "sim/runtime/runtime2.h"

namespace gmp::engine {

using rt::Ev;

Metrics::Metrics(int32_t procs) { set_procs(static_cast<size_t>(procs), 0); }

// Room for n Ps' figures.
void Metrics::grow(size_t n) {
  if (n <= busy_.size()) return;
  busy_.resize(n, 0);
  since_.resize(n, 0);
  running_on_.resize(n, nullptr);
  existed_.resize(n, 0);
  alive_since_.resize(n, -1);
}

// GOMAXPROCS is n from now: new Ps start existing, and the Ps past n stop (their goroutine, if
// the event order left one, stops running with them).
void Metrics::set_procs(size_t n, int64_t now) {
  grow(n);
  for (size_t i = procs_; i < n; i++) alive_since_[i] = now;
  for (size_t i = n; i < procs_; i++) {
    stop_running(i, now);
    existed_[i] += now - alive_since_[i];
    alive_since_[i] = -1;
  }
  procs_ = n;
}

// P i stops running a goroutine.
void Metrics::stop_running(size_t i, int64_t now) {
  if (running_on_[i] == nullptr) return;
  busy_[i] += now - since_[i];
  running_on_[i] = nullptr;
}

void Metrics::on_event(Ev e, rt::g* gp, rt::p* pp, int64_t arg, int64_t now) {
  counts_[static_cast<size_t>(e)]++;
  // The moment a goroutine becomes runnable, for scheduling latency (GoStart reads it).
  const auto runnable = [&] {
    if (gp != nullptr) gp->runnableSince = now;
  };
  switch (e) {
    case Ev::ProcsChange:
      set_procs(static_cast<size_t>(arg), now);
      break;
    case Ev::GoCreate:
      runnable();
      if (!rt::isSystemGoroutine(gp)) user_goroutines_++;
      break;
    case Ev::GoUnpark:
      runnable();
      break;
    case Ev::GoStart:
      // The program's goroutines only: the runtime's own (parked since init) are not its work.
      if (!rt::isSystemGoroutine(gp)) {
        latency_.push_back(now - gp->runnableSince);
      }
      if (pp != nullptr) {
        const auto i = static_cast<size_t>(pp->id);
        grow(i + 1);
        stop_running(i, now);
        running_on_[i] = gp;
        since_[i] = now;
      }
      break;
    case Ev::GoSysExit:
      if (arg == 2) {  // no P: runnable
        runnable();
      } else if (pp != nullptr) {  // back on a P, running
        const auto i = static_cast<size_t>(pp->id);
        grow(i + 1);
        running_on_[i] = gp;
        since_[i] = now;
      }
      break;
    case Ev::GoSched:
    case Ev::GoPreempt:
      runnable();
      [[fallthrough]];
    case Ev::GoPark:
    case Ev::GoEnd:
    case Ev::GoSyscall:
      // These events carry the P the goroutine was running on.
      if (pp != nullptr && static_cast<size_t>(pp->id) < running_on_.size() &&
          running_on_[static_cast<size_t>(pp->id)] == gp)
        stop_running(static_cast<size_t>(pp->id), now);
      break;
    default:
      break;
  }
}

void Metrics::finish(int64_t now) {
  for (size_t i = 0; i < running_on_.size(); i++) {
    stop_running(i, now);
  }
  for (size_t i = 0; i < procs_; i++) {
    existed_[i] += now - alive_since_[i];
    alive_since_[i] = -1;
  }
  procs_ = 0;
  end_ = now;
}

int64_t nearest_rank(std::vector<int64_t>& samples, double q) {
  if (samples.empty()) return 0;
  // The k-th smallest by selection, not a full sort: a run can hold millions of samples.
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(samples.size())));
  const auto k = static_cast<std::ptrdiff_t>(std::min(samples.size() - 1, rank == 0 ? 0 : rank - 1));
  std::nth_element(samples.begin(), samples.begin() + k, samples.end());
  return samples[static_cast<size_t>(k)];
}

int64_t Metrics::latency_quantile(double q) { return nearest_rank(latency_, q); }

std::vector<double> Metrics::utilisation() const {
  std::vector<double> u;
  for (size_t i = 0; i < busy_.size(); i++) {
    const int64_t t = existed_[i];
    u.push_back(t > 0 ? static_cast<double>(busy_[i]) / static_cast<double>(t) : 0.0);
  }
  return u;
}

}  // namespace gmp::engine
