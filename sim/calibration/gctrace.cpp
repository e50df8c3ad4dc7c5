// GODEBUG=gctrace=1 lines: see gctrace.h.
#include "sim/calibration/gctrace.h"

#include "sim/scenario/limits.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gmp::calibration {

namespace {

constexpr std::string_view kComment = "# gctrace: ";

// A cursor over one line: each expect/number call consumes its part or throws with what was
// expected and where (the 1-based column).
struct Cursor {
  std::string_view s;
  size_t at = 0;
  const std::string& where;

  [[noreturn]] void fail(const std::string& what) const {
    throw GCTraceError(where + ": gctrace line, column " + std::to_string(at + 1) + ": expected " + what);
  }
  void expect(std::string_view lit) {
    if (s.substr(at, lit.size()) != lit) fail("\"" + std::string(lit) + "\"");
    at += lit.size();
  }
  bool accept(std::string_view lit) {
    if (s.substr(at, lit.size()) != lit) return false;
    at += lit.size();
    return true;
  }
  // A non-negative decimal such as 0, 74, 0.017 or 8532210231539 (Go's print of a float64 in
  // ms or MB); at most 1e15 (Go's "no goal" with GOGC=off prints about 8.5e12 MB).
  double number(const char* what) {
    size_t end = at;
    while (end < s.size() && ((s[end] >= '0' && s[end] <= '9') || s[end] == '.')) ++end;
    if (end == at || s[at] == '.') fail(std::string("a number (") + what + ")");
    const std::string tok(s.substr(at, end - at));
    char* stop = nullptr;
    errno = 0;
    const double v = std::strtod(tok.c_str(), &stop);
    if (stop != tok.c_str() + tok.size() || errno != 0 || !std::isfinite(v) || v > 1e15) {
      fail(std::string("a number (") + what + ") up to 1e15, not '" + tok + "'");
    }
    at = end;
    return v;
  }
  uint64_t whole(const char* what) {
    const size_t from = at;
    const double v = number(what);
    if (s.substr(from, at - from).find('.') != std::string_view::npos) {
      at = from;
      fail(std::string("a whole number (") + what + ")");
    }
    return static_cast<uint64_t>(v);
  }
};

}  // namespace

bool looks_like_gctrace(std::string_view s) {
  if (s.substr(0, 3) != "gc ") return false;
  size_t i = 3;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i > 3 && s.substr(i, 2) == " @";
}

std::optional<GCTraceLine> parse_gctrace_line(std::string_view line, const std::string& where) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (!looks_like_gctrace(line)) return std::nullopt;
  Cursor c{line, 0, where};
  GCTraceLine l;
  c.expect("gc ");
  const uint64_t n = c.whole("cycle number");
  if (n < 1 || n > 0xffffffffULL) c.fail("a cycle number from 1 to 2^32-1");
  l.n = static_cast<uint32_t>(n);
  c.expect(" @");
  l.at_s = c.number("seconds since the start");
  c.expect("s ");
  const uint64_t pct = c.whole("GC CPU percent");
  if (pct > 100) c.fail("a percentage of at most 100");
  l.percent = static_cast<int32_t>(pct);
  c.expect("%: ");
  l.sweep_term_clock_ms = c.number("sweep termination wall ms");
  c.expect("+");
  l.mark_clock_ms = c.number("mark wall ms");
  c.expect("+");
  l.mark_term_clock_ms = c.number("mark termination wall ms");
  c.expect(" ms clock, ");
  l.sweep_term_cpu_ms = c.number("sweep termination CPU ms");
  c.expect("+");
  l.assist_cpu_ms = c.number("assist CPU ms");
  c.expect("/");
  l.background_cpu_ms = c.number("background mark CPU ms");
  c.expect("/");
  l.idle_cpu_ms = c.number("idle mark CPU ms");
  c.expect("+");
  l.mark_term_cpu_ms = c.number("mark termination CPU ms");
  c.expect(" ms cpu, ");
  l.heap_start_mb = c.whole("heap MB at the start");
  c.expect("->");
  l.heap_end_mb = c.whole("heap MB at mark's end");
  c.expect("->");
  l.heap_live_mb = c.whole("marked heap MB");
  c.expect(" MB, ");
  l.goal_mb = c.whole("heap goal MB");
  c.expect(" MB goal, ");
  l.stacks_mb = c.whole("stacks MB");
  c.expect(" MB stacks, ");
  l.globals_mb = c.whole("globals MB");
  if (!c.accept(" MB globals, ")) c.expect("MB globals, ");
  const uint64_t procs = c.whole("P count");
  if (procs < 1 || procs > static_cast<uint64_t>(scenario::kMaxProcs)) {
    c.fail("a P count from 1 to " + std::to_string(scenario::kMaxProcs));
  }
  l.procs = static_cast<int32_t>(procs);
  c.expect(" P");
  l.forced = c.accept(" (forced)");
  if (c.at != line.size()) c.fail("the end of the line");
  return l;
}

std::string format_gctrace_line(const GCTraceLine& l) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "gc %u @%.3fs %d%%: %.3g+%.3g+%.3g ms clock, %.3g+%.3g/%.3g/%.3g+%.3g ms cpu, %llu->%llu->%llu MB, "
                "%llu MB goal, %llu MB stacks, %llu MB globals, %d P%s",
                l.n, l.at_s, l.percent, l.sweep_term_clock_ms, l.mark_clock_ms, l.mark_term_clock_ms,
                l.sweep_term_cpu_ms, l.assist_cpu_ms, l.background_cpu_ms, l.idle_cpu_ms, l.mark_term_cpu_ms,
                static_cast<unsigned long long>(l.heap_start_mb), static_cast<unsigned long long>(l.heap_end_mb),
                static_cast<unsigned long long>(l.heap_live_mb), static_cast<unsigned long long>(l.goal_mb),
                static_cast<unsigned long long>(l.stacks_mb), static_cast<unsigned long long>(l.globals_mb), l.procs,
                l.forced ? " (forced)" : "");
  return buf;
}

GoOutput split_go_output(const std::string& text, const std::string& origin) {
  GoOutput out;
  std::vector<GCTraceLine> pending_cycles;  // since the last result
  std::string pending_lines;                // their comment lines, for `clean`
  std::string prefix;                       // a result line's start, cut by gctrace output
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    at = nl == std::string::npos ? text.size() : nl + 1;
    ++line_no;
    const std::string where = origin + ":" + std::to_string(line_no);
    // Where a gctrace line starts inside this line: at 0, after "# gctrace: ", or after a cut
    // result line's start ("BenchmarkX-2 \t").
    size_t gc_at = std::string::npos;
    if (line.rfind(kComment, 0) == 0 && looks_like_gctrace(std::string_view(line).substr(kComment.size()))) {
      gc_at = kComment.size();
    } else {
      for (size_t k = line.find("gc "); k != std::string::npos; k = line.find("gc ", k + 1)) {
        if ((k == 0 || line[k - 1] == '\t' || line[k - 1] == ' ') && looks_like_gctrace(std::string_view(line).substr(k))) {
          gc_at = k;
          break;
        }
      }
    }
    if (gc_at != std::string::npos) {
      const std::string_view gc = std::string_view(line).substr(gc_at);
      if (gc_at > 0 && line.rfind(kComment, 0) != 0) prefix += line.substr(0, gc_at);
      pending_cycles.push_back(*parse_gctrace_line(gc, where));
      pending_lines += std::string(kComment) + std::string(gc) + "\n";
      continue;
    }
    if (!prefix.empty()) {
      line = prefix + line;
      prefix.clear();
    }
    if (const std::optional<BenchLine> b = parse_bench_line(line, origin, line_no)) {
      out.runs.push_back(BenchRun{b->key, b->iterations, b->ns_per_op, std::move(pending_cycles)});
      pending_cycles.clear();
    }
    out.clean += pending_lines;
    pending_lines.clear();
    out.clean += line + "\n";
  }
  out.clean += prefix.empty() ? "" : prefix + "\n";
  out.clean += pending_lines;
  return out;
}

GCFigures gc_figures(const BenchRun& r) {
  GCFigures f;
  size_t from = 0;
  for (size_t i = 0; i < r.cycles.size(); ++i) {
    if (r.cycles[i].forced) from = i + 1;
  }
  const double wall_ms = r.ns_per_op * static_cast<double>(r.iterations) / 1e6;
  double cpu = 0, pause = 0, goal = 0;
  for (size_t i = from; i < r.cycles.size(); ++i) {
    const GCTraceLine& c = r.cycles[i];
    ++f.cycles;
    cpu += c.gc_cpu_ms();
    pause += c.pause_ms();
    f.pause_ms_max = std::max(f.pause_ms_max, c.pause_ms());
    goal += static_cast<double>(c.goal_mb);
  }
  if (r.iterations > 0) f.cycles_per_op = static_cast<double>(f.cycles) / static_cast<double>(r.iterations);
  if (wall_ms > 0) {
    f.cycles_per_s = static_cast<double>(f.cycles) / (wall_ms / 1e3);
    f.gc_cpu_share = cpu / (wall_ms * std::max(r.key.procs, 1));
  }
  if (f.cycles > 0) {
    f.pause_ms_mean = pause / static_cast<double>(f.cycles);
    f.goal_mb_mean = goal / static_cast<double>(f.cycles);
  }
  return f;
}

}  // namespace gmp::calibration
