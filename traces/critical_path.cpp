#include "traces/critical_path.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dag_shortest_paths.hpp>
#include <boost/graph/exception.hpp>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <map>

#include "traces/text.h"

namespace gmp::trace {

namespace {

struct EdgeData {
  int64_t weight = 0;  // negated length: dag_shortest_paths then finds the longest path
  int32_t seg = -1;    // index into the segments an edge stands for; -1: a creation or wake-up
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, EdgeData>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

std::string wait_name(const Interval& iv) {
  if (!iv.label.empty()) return iv.label;
  if (iv.wait != WAIT_REASON_UNSPECIFIED) return WaitReason_Name(iv.wait);
  return "";
}

// When g's run ends: its exit, or the end of the trace if it was running then, or else its last
// change of state (a goroutine parked for good does not hold the run up).
int64_t effective_end(const GLife& life, int64_t t_end) {
  const Interval& last = life.intervals.back();
  if (life.exited || !last.open_end) return last.t1;
  return last.state == GState::Running || last.state == GState::Syscall ? t_end : last.t0;
}

}  // namespace

CriticalPath critical_path(const Timeline& tl) {
  CriticalPath cp;
  cp.span = tl.t_end - tl.t_begin;
  // The creations and wake-ups each goroutine made, by the interval they happened in (in trace
  // order, which within an interval is time order), and the intervals a waker ended.
  std::map<std::pair<GKey, size_t>, std::vector<size_t>> made;  // (waker, its interval) -> wakes
  std::map<std::pair<GKey, size_t>, bool> woken;                // (g, interval begun) by a G
  for (size_t w = 0; w < tl.wakes.size(); w++) {
    const WakeEdge& x = tl.wakes[w];
    if (x.by < 0 || x.by_interval == SIZE_MAX) continue;
    made[{GKey{x.process, x.by}, x.by_interval}].push_back(w);
    if (!x.create) woken[{GKey{x.process, x.g}, x.interval}] = true;
  }
  Graph graph;
  std::vector<PathSegment> segs;
  std::vector<Vertex> from_waker(tl.wakes.size(), 0);  // the waker's node at each wake
  std::vector<bool> has_waker_node(tl.wakes.size(), false);
  std::map<std::pair<GKey, size_t>, Vertex> first_node;  // (g, interval) -> node where it begins
  std::map<GKey, Vertex> last_node;
  GKey end_g;
  int64_t end_t = std::numeric_limits<int64_t>::min();
  for (const auto& [key, life] : tl.gs) {
    const GKey id = key;  // (a structured binding cannot be captured by clang 14's lambdas)
    if (life.intervals.empty()) continue;
    const int64_t gend = effective_end(life, tl.t_end);
    if (gend > end_t) {
      end_t = gend;
      end_g = id;
    }
    Vertex prev = boost::add_vertex(graph);
    for (size_t i = 0; i < life.intervals.size(); i++) {
      const Interval& iv = life.intervals[i];
      const bool last = i + 1 == life.intervals.size();
      const int64_t stop = last ? std::min(iv.t1, gend) : iv.t1;
      first_node[{id, i}] = prev;
      // A blocked interval ended by another goroutine stands for that goroutine's time: no edge.
      const bool skip = iv.state == GState::Blocked && !last && woken.count({id, i + 1}) != 0;
      int64_t from = iv.t0;
      // The interval, cut where this goroutine created or readied others.
      auto piece = [&](int64_t to) {
        const Vertex v = boost::add_vertex(graph);
        if (!skip) {
          PathSegment sg;
          sg.g = id.g;
          sg.process = id.process;
          sg.state = iv.state;
          sg.t0 = from;
          sg.t1 = to;
          sg.p = iv.p;
          if (iv.state == GState::Blocked) sg.wait = wait_name(iv);
          segs.push_back(sg);
          boost::add_edge(prev, v, EdgeData{-(to - from), static_cast<int32_t>(segs.size() - 1)}, graph);
        }
        prev = v;
        from = to;
      };
      if (auto it = made.find({id, i}); it != made.end()) {
        for (size_t w : it->second) {
          piece(std::clamp(tl.wakes[w].t, from, std::max(from, stop)));
          from_waker[w] = prev;
          has_waker_node[w] = true;
        }
      }
      piece(std::max(from, stop));
      if (stop < iv.t1) break;  // past the goroutine's end for the path
    }
    last_node[id] = prev;
  }
  // Creations and wake-ups: from the waker's node at that moment to the interval it began.
  for (size_t w = 0; w < tl.wakes.size(); w++) {
    if (!has_waker_node[w]) continue;
    auto target = first_node.find({GKey{tl.wakes[w].process, tl.wakes[w].g}, tl.wakes[w].interval});
    if (target != first_node.end()) boost::add_edge(from_waker[w], target->second, EdgeData{0, -1}, graph);
  }
  if (end_g.g < 0) return cp;
  const Vertex end = last_node[end_g];
  // A source before every node that has no predecessor.
  const size_t n = boost::num_vertices(graph);
  std::vector<bool> has_pred(n, false);
  for (auto [e, last] = boost::edges(graph); e != last; ++e) has_pred[boost::target(*e, graph)] = true;
  const Vertex source = boost::add_vertex(graph);
  for (Vertex v = 0; v < n; v++) {
    if (!has_pred[v]) boost::add_edge(source, v, EdgeData{0, -1}, graph);
  }
  std::vector<int64_t> dist(boost::num_vertices(graph));
  std::vector<Vertex> pred(boost::num_vertices(graph));
  try {
    boost::dag_shortest_paths(graph, source,
                              boost::weight_map(boost::get(&EdgeData::weight, graph))
                                  .distance_map(dist.data())
                                  .predecessor_map(pred.data())
                                  .distance_inf(std::numeric_limits<int64_t>::max())
                                  .distance_zero(0));
  } catch (const boost::not_a_dag&) {
    throw CriticalPathError(
        "the trace's creations and wake-ups lead in a circle, so it has no critical path; the trace is "
        "inconsistent (gmpsim trace validate says where)");
  }
  // Walk back from the end; each step takes the edge that gave the predecessor its distance.
  std::vector<PathSegment> path;
  for (Vertex v = end; v != source && pred[v] != v;) {
    const Vertex u = pred[v];
    int32_t seg = -1;
    for (auto [e, last] = boost::out_edges(u, graph); e != last; ++e) {
      if (boost::target(*e, graph) == v && dist[u] + graph[*e].weight == dist[v]) {
        seg = graph[*e].seg;
        break;
      }
    }
    if (seg >= 0) path.push_back(segs[static_cast<size_t>(seg)]);
    v = u;
  }
  std::reverse(path.begin(), path.end());
  // Merge consecutive pieces of one interval; note where the path moves to another goroutine.
  for (const PathSegment& s : path) {
    if (s.t1 == s.t0) continue;  // an instant: a state entered and left at once
    if (!cp.segments.empty()) {
      PathSegment& b = cp.segments.back();
      if (b.g == s.g && b.process == s.process && b.state == s.state && b.t1 == s.t0 && b.p == s.p && b.wait == s.wait) {
        b.t1 = s.t1;
        continue;
      }
      if (b.g != s.g || b.process != s.process) {
        b.woke = s.g;
        b.woke_process = s.process;
      }
    }
    PathSegment c = s;
    c.woke = -1;
    cp.segments.push_back(c);
  }
  cp.end_g = end_g.g;
  cp.end_process = end_g.process;
  if (!cp.segments.empty()) {
    cp.t_begin = cp.segments.front().t0;
    cp.t_end = cp.segments.back().t1;
  }
  return cp;
}

std::string critical_path_text(const CriticalPath& cp) {
  if (cp.segments.empty()) return "critical path: the trace has no goroutine to follow\n";
  const double total = static_cast<double>(cp.t_end - cp.t_begin);
  std::string out =
      strfmt("critical path: %s, from %s to %s, ending with %s (the trace spans %s)\n",
             human_ns(total).c_str(), human_ns(static_cast<double>(cp.t_begin)).c_str(),
             human_ns(static_cast<double>(cp.t_end)).c_str(), g_text({cp.end_process, cp.end_g}).c_str(), human_ns(static_cast<double>(cp.span)).c_str());
  auto share = [&](int64_t d) { return total > 0 ? 100.0 * static_cast<double>(d) / total : 0.0; };
  std::map<GKey, int64_t> by_g;
  std::map<std::string, int64_t> by_state;
  // A long path is shown by its first and last kShown segments; the totals below cover it all.
  constexpr size_t kShown = 25;
  const size_t n = cp.segments.size();
  for (size_t i = 0; i < n; i++) {
    const PathSegment& s = cp.segments[i];
    const int64_t d = s.t1 - s.t0;
    if (s.state == GState::Running) by_g[{s.process, s.g}] += d;
    by_state[s.state == GState::Blocked ? "blocked" + (s.wait.empty() ? "" : " (" + s.wait + ")")
                                        : gstate_name(s.state)] += d;
    if (n > 2 * kShown && i >= kShown && i < n - kShown) {
      if (i == kShown) out += strfmt("  ... %zu segments ...\n", n - 2 * kShown);
      continue;
    }
    std::string what = gstate_name(s.state);
    if (s.state == GState::Running && s.p >= 0) what += strfmt(" on P%" PRId64, s.p);
    if (s.state == GState::Runnable) what = "runnable, waiting for a P";
    if (s.state == GState::Blocked) what = "blocked" + (s.wait.empty() ? std::string() : " (" + s.wait + ")");
    out += strfmt("  %12s .. %-12s %-7s %-36s %10s %5.1f%%", human_ns(static_cast<double>(s.t0)).c_str(),
                  human_ns(static_cast<double>(s.t1)).c_str(), g_text({s.process, s.g}).c_str(), what.c_str(),
                  human_ns(static_cast<double>(d)).c_str(), share(d));
    if (s.woke >= 0) out += "  -> readies " + g_text({s.woke_process, s.woke});
    out += "\n";
  }
  out += "by state:";
  for (const auto& [k, d] : by_state) out += strfmt(" %s %.1f%%;", k.c_str(), share(d));
  out += "\nrunning time on the path by goroutine (what a faster core would shorten):";
  for (const auto& [g, d] : by_g) out += strfmt(" %s %.1f%%;", g_text(g).c_str(), share(d));
  out += "\n";
  return out;
}

}  // namespace gmp::trace
