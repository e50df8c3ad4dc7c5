// Several traces of one program combined: see replay_combine.h.
#include "traces/replay_combine.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "traces/replay_clean.h"

namespace gmp::trace {

namespace {

const char* const kBeforeTrace = "(before the trace)";

std::string key_fn(const GKey& key, const GLife& life) {
  const std::string f = start_function(key, life);
  return f.empty() ? kBeforeTrace : f;
}

// The median of v (sorted here); of an even count, the mean of the middle two.
int64_t median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : static_cast<int64_t>((static_cast<__int128>(v[n / 2 - 1]) + v[n / 2]) / 2);
}

// Scales a goroutine's work to `target` through its running intervals' off_cpu.
void scale_work(GLife& life, int64_t target) {
  const int64_t own = work_ns(life);
  if (own <= 0 || target == own) return;
  int64_t given = 0;
  Interval* last = nullptr;
  for (Interval& iv : life.intervals) {
    if (iv.state != GState::Running) continue;
    const int64_t d = iv.t1 - iv.t0, w = d - iv.off_cpu;
    const auto nw = static_cast<int64_t>(static_cast<__int128>(w) * target / own);
    iv.off_cpu = d - nw;
    given += nw;
    if (w > 0) last = &iv;
  }
  if (last != nullptr) last->off_cpu -= target - given;  // what the division left
}

}  // namespace

std::vector<std::pair<std::pair<std::string, uint64_t>, GKey>> match_keys(const Timeline& tl) {
  std::vector<std::pair<std::pair<std::string, uint64_t>, GKey>> out;
  std::map<std::string, uint64_t> seen;
  std::map<GKey, bool> done;
  auto add = [&](const GKey& key) {
    auto it = tl.gs.find(key);
    if (it == tl.gs.end() || done[key] || !program_goroutine(tl, key, it->second)) return;
    done[key] = true;
    const std::string f = key_fn(key, it->second);
    out.push_back({{f, seen[f]++}, key});
  };
  for (const WakeEdge& w : tl.wakes) {
    if (w.create) add(GKey{w.process, w.g});
  }
  for (const auto& [key, life] : tl.gs) add(key);
  return out;
}

Timeline combine_timelines(const std::vector<Timeline>& tls, const std::vector<std::string>& names,
                           CombineReport* report) {
  CombineReport rep;
  for (const Timeline& tl : tls) rep.spans.push_back(sat_sub(tl.t_end, tl.t_begin));
  if (tls.empty()) return {};
  std::vector<size_t> order(tls.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rep.spans[a] < rep.spans[b]; });
  rep.median = order[(order.size() - 1) / 2];
  Timeline out = tls[rep.median];
  const auto keys = match_keys(out);
  rep.goroutines = keys.size();
  std::vector<std::map<std::pair<std::string, uint64_t>, GKey>> by_key(tls.size());
  for (size_t i = 0; i < tls.size(); i++) {
    for (const auto& [k, g] : match_keys(tls[i])) by_key[i][k] = g;
  }
  // Traces of one program: most goroutines match, and main starts in the same function.
  for (size_t i = 0; i < tls.size(); i++) {
    if (i == rep.median) continue;
    uint64_t both = 0;
    for (const auto& [k, g] : keys) both += by_key[i].count(k);
    const size_t most = std::max(keys.size(), by_key[i].size());
    const std::string pair = names[rep.median] + " and " + names[i];
    if (most > 0 && 2 * both < most) {
      throw CombineError(pair + " look like traces of different programs: only " + std::to_string(both) + " of " +
                         std::to_string(most) + " goroutines match by start function and creation order");
    }
    const GKey main{0, 1};
    const auto m0 = out.gs.find(main);
    const auto m1 = tls[i].gs.find(main);
    if (m0 != out.gs.end() && m1 != tls[i].gs.end()) {
      const std::string f0 = start_function(main, m0->second), f1 = start_function(main, m1->second);
      if (!f0.empty() && !f1.empty() && f0 != f1) {
        throw CombineError(pair + " look like traces of different programs: main starts in " + f0 + " and in " + f1);
      }
    }
  }
  // One program at different GOMAXPROCS: combined, but the work of each is another run's.
  for (size_t i = 0; i < tls.size(); i++) {
    const int32_t p0 = out.header.num_ps(), p1 = tls[i].header.num_ps();
    if (i == rep.median || p0 <= 0 || p1 <= 0 || p0 == p1) continue;
    rep.warnings.push_back(names[rep.median] + " was traced at GOMAXPROCS " + std::to_string(p0) + " and " + names[i] +
                           " at " + std::to_string(p1) +
                           ": each goroutine's median work mixes runs at different GOMAXPROCS (combine traces of one "
                           "GOMAXPROCS)");
  }
  for (const auto& [k, g] : keys) {
    std::vector<int64_t> works;
    bool everywhere = true;
    for (size_t i = 0; i < tls.size(); i++) {
      auto it = by_key[i].find(k);
      if (it == by_key[i].end()) {
        everywhere = false;
        continue;
      }
      works.push_back(work_ns(tls[i].gs.at(it->second)));
    }
    if (everywhere) rep.matched++;
    GLife& life = out.gs.at(g);
    rep.work_before += work_ns(life);
    scale_work(life, median(works));
    rep.work_after += work_ns(life);
  }
  if (report != nullptr) *report = rep;
  return out;
}

std::vector<std::string> start_function_lines(const Timeline& tl) {
  std::map<std::string, std::pair<uint64_t, int64_t>> by_fn;
  for (const auto& [k, g] : match_keys(tl)) {
    auto& [n, ns] = by_fn[k.first];
    n++;
    ns += work_ns(tl.gs.at(g));
  }
  std::vector<std::pair<std::string, std::pair<uint64_t, int64_t>>> v(by_fn.begin(), by_fn.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  std::vector<std::string> out;
  for (const auto& [fn, c] : v) out.push_back(std::to_string(c.first) + " x " + fn + ": " + ms_text(c.second) + " running");
  return out;
}

std::string add_header_comments(const std::string& text, const std::vector<std::string>& lines) {
  size_t at = 0;
  while (at < text.size() && text[at] == '#') {
    const size_t nl = text.find('\n', at);
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  std::string add;
  for (const std::string& l : lines) add += "# " + l + "\n";
  return text.substr(0, at) + add + text.substr(at);
}

std::string replay_output_path(const std::string& trace_path) {
  std::string base = trace_path;
  const size_t slash = base.find_last_of('/');
  for (const std::string ext : {".trace", ".gmp"}) {
    if (base.size() > ext.size() && base.compare(base.size() - ext.size(), ext.size(), ext) == 0 &&
        (slash == std::string::npos || base.size() - ext.size() > slash + 1)) {
      base.resize(base.size() - ext.size());
      break;
    }
  }
  return base + ".replay.textproto";
}


}  // namespace gmp::trace
