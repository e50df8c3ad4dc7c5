// The part files of a split sweep (sim/cli/sweep_part.h, part_text.h, result_text.h): every field
// of a result reads back as written, a part reads back byte for byte, and the reader and the merge
// refuse what is not a whole part of one sweep, saying where.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "sim/cli/result_text.h"
#include "sim/cli/sweep_part.h"

namespace {

using gmp::cli::PartError;
using gmp::engine::SimResult;

uint64_t bits(double d) {
  uint64_t b = 0;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// A result with every field set, each to a value of its own (derived from `n`), the awkward ones
// included: a message with newlines, quotes, a backslash, a tab and bytes outside ASCII; NaN and
// -0.0; the ends of the integer types.
SimResult filled(int64_t n, bool with_process) {
  SimResult r;
  r.stop = gmp::engine::Engine::Stop::Livelock;
  r.exit_code = -3;
  r.message = "fatal error: \"x\"\n\tgoroutine 1 \\ \x01\xff\xc3\xa9 end";
  r.end_time = std::numeric_limits<int64_t>::min();
  r.bench_name = "BenchmarkX";
  r.ops = n + 1;
  r.ns_per_op = std::nan("7");
  r.measured = true;
  r.lat_p50 = n + 2, r.lat_p90 = n + 3, r.lat_p99 = n + 4, r.lat_max = n + 5;
  r.lat_samples = std::numeric_limits<uint64_t>::max();
  r.utilisation = {0.25, -0.0, std::numeric_limits<double>::infinity()};
  uint64_t u = static_cast<uint64_t>(n) * 100;
  for (uint64_t* f : {&r.steals, &r.wakeps, &r.handoffs, &r.preempt_signals, &r.preempt_requests, &r.ms_created,
                      &r.goroutines, &r.global_puts, &r.os_preemptions, &r.line_transfers, &r.wakep_spinning,
                      &r.wakep_no_p, &r.runnext_backoffs, &r.runnext_cas_fails, &r.placed_on_prev, &r.woken_delayed,
                      &r.queued_busy, &r.wake_preemptions, &r.placed_on_other, &r.balance_pulls, &r.newidle_pulls,
                      &r.wakeups, &r.wakeups_ran, &r.wake_on_prev, &r.migrations, &r.events, &r.seed}) {
    *f = ++u;
  }
  int64_t i = n * 1000;
  for (int64_t* f : {&r.requests, &r.answered, &r.req_p50, &r.req_p99, &r.req_p999, &r.req_max, &r.client_requests,
                     &r.client_answered, &r.client_p50, &r.client_p99, &r.client_p999, &r.client_max, &r.idle_wait_ns,
                     &r.cpu_quota, &r.cpu_period, &r.exit_time}) {
    *f = -(++i);
  }
  r.req_per_s = 1.0 / 3;
  r.client_per_s = 1e300;
  r.affine = true;
  r.schedtrace = {"SCHED 0ms: gomaxprocs=2", ""};
  r.event_counts = {{"GoCreate", 5}, {"GoStart", 0}};
  r.procs = std::numeric_limits<int32_t>::max();
  r.cores = std::numeric_limits<int32_t>::min();
  r.assertions = 2;
  r.violations = {{"a.textproto:1:1: start_latency {}", "goroutine 7 started late", 12, 1}, {"b", "", -1, 0}};
  r.assertions_unchecked = 1;
  gmp::rt::GCCycleRecord c;
  c.n = std::numeric_limits<uint32_t>::max();
  c.start = 1, c.forced = true, c.sweepTermWall = 2, c.markWall = 3, c.markTermWall = 4, c.sweepTermCpu = 5;
  c.assistCpu = 6, c.backgroundCpu = 7, c.idleCpu = 8, c.markTermCpu = 9, c.heapStart = 10, c.heapEnd = 11;
  c.heapLive = 12, c.heapGoal = 13, c.stacks = 14, c.globals = 15, c.procs = -16;
  r.gc.cycles = {c, gmp::rt::GCCycleRecord{}};
  r.gc.gcCpu = 21, r.gc.idleMarkCpu = 22, r.gc.assistTime = 23, r.gc.sweepCpu = 24, r.gc.stwCount = 25;
  r.gc.stwTotal = 26, r.gc.stwMax = 27, r.gc.allocBytes = 28, r.gc.allocObjects = 29, r.gc.peakHeap = 30;
  r.gc.lastHeapGoal = 31;
  r.cpu_stat = {41, 42, 43, 44};
  r.procs_end = 7;
  r.procs_changes = std::numeric_limits<uint32_t>::max();
  r.procs_auto = true, r.daemon = true, r.exited = true;
  r.process = "server";
  if (with_process) r.processes = {filled(n + 1, false), SimResult{}};
  return r;
}

// Field by field, doubles by their bits.
void require_same(const SimResult& a, const SimResult& b) {
  CHECK(a.stop == b.stop);
  CHECK(a.exit_code == b.exit_code);
  CHECK(a.message == b.message);
  CHECK(a.end_time == b.end_time);
  CHECK(a.bench_name == b.bench_name);
  CHECK(a.ops == b.ops);
  CHECK(bits(a.ns_per_op) == bits(b.ns_per_op));
  CHECK(a.measured == b.measured);
  CHECK(a.lat_p50 == b.lat_p50);
  CHECK(a.lat_p90 == b.lat_p90);
  CHECK(a.lat_p99 == b.lat_p99);
  CHECK(a.lat_max == b.lat_max);
  CHECK(a.lat_samples == b.lat_samples);
  REQUIRE(a.utilisation.size() == b.utilisation.size());
  for (size_t i = 0; i < a.utilisation.size(); i++) CHECK(bits(a.utilisation[i]) == bits(b.utilisation[i]));
  CHECK(a.steals == b.steals);
  CHECK(a.wakeps == b.wakeps);
  CHECK(a.handoffs == b.handoffs);
  CHECK(a.preempt_signals == b.preempt_signals);
  CHECK(a.preempt_requests == b.preempt_requests);
  CHECK(a.ms_created == b.ms_created);
  CHECK(a.goroutines == b.goroutines);
  CHECK(a.global_puts == b.global_puts);
  CHECK(a.os_preemptions == b.os_preemptions);
  CHECK(a.line_transfers == b.line_transfers);
  CHECK(a.wakep_spinning == b.wakep_spinning);
  CHECK(a.wakep_no_p == b.wakep_no_p);
  CHECK(a.runnext_backoffs == b.runnext_backoffs);
  CHECK(a.runnext_cas_fails == b.runnext_cas_fails);
  CHECK(a.requests == b.requests);
  CHECK(a.answered == b.answered);
  CHECK(a.req_p50 == b.req_p50);
  CHECK(a.req_p99 == b.req_p99);
  CHECK(a.req_p999 == b.req_p999);
  CHECK(a.req_max == b.req_max);
  CHECK(bits(a.req_per_s) == bits(b.req_per_s));
  CHECK(a.client_requests == b.client_requests);
  CHECK(a.client_answered == b.client_answered);
  CHECK(a.client_p50 == b.client_p50);
  CHECK(a.client_p99 == b.client_p99);
  CHECK(a.client_p999 == b.client_p999);
  CHECK(a.client_max == b.client_max);
  CHECK(bits(a.client_per_s) == bits(b.client_per_s));
  CHECK(a.placed_on_prev == b.placed_on_prev);
  CHECK(a.woken_delayed == b.woken_delayed);
  CHECK(a.queued_busy == b.queued_busy);
  CHECK(a.wake_preemptions == b.wake_preemptions);
  CHECK(a.placed_on_other == b.placed_on_other);
  CHECK(a.balance_pulls == b.balance_pulls);
  CHECK(a.newidle_pulls == b.newidle_pulls);
  CHECK(a.wakeups == b.wakeups);
  CHECK(a.wakeups_ran == b.wakeups_ran);
  CHECK(a.wake_on_prev == b.wake_on_prev);
  CHECK(a.migrations == b.migrations);
  CHECK(a.idle_wait_ns == b.idle_wait_ns);
  CHECK(a.affine == b.affine);
  CHECK(a.events == b.events);
  CHECK(a.schedtrace == b.schedtrace);
  CHECK(a.event_counts == b.event_counts);
  CHECK(a.procs == b.procs);
  CHECK(a.cores == b.cores);
  CHECK(a.seed == b.seed);
  CHECK(a.assertions == b.assertions);
  REQUIRE(a.violations.size() == b.violations.size());
  for (size_t i = 0; i < a.violations.size(); i++) {
    CHECK(a.violations[i].assertion == b.violations[i].assertion);
    CHECK(a.violations[i].detail == b.violations[i].detail);
    CHECK(a.violations[i].at == b.violations[i].at);
    CHECK(a.violations[i].index == b.violations[i].index);
  }
  CHECK(a.assertions_unchecked == b.assertions_unchecked);
  REQUIRE(a.gc.cycles.size() == b.gc.cycles.size());
  for (size_t i = 0; i < a.gc.cycles.size(); i++) {
    const gmp::rt::GCCycleRecord &x = a.gc.cycles[i], &y = b.gc.cycles[i];
    CHECK(x.n == y.n);
    CHECK(x.start == y.start);
    CHECK(x.forced == y.forced);
    CHECK(x.sweepTermWall == y.sweepTermWall);
    CHECK(x.markWall == y.markWall);
    CHECK(x.markTermWall == y.markTermWall);
    CHECK(x.sweepTermCpu == y.sweepTermCpu);
    CHECK(x.assistCpu == y.assistCpu);
    CHECK(x.backgroundCpu == y.backgroundCpu);
    CHECK(x.idleCpu == y.idleCpu);
    CHECK(x.markTermCpu == y.markTermCpu);
    CHECK(x.heapStart == y.heapStart);
    CHECK(x.heapEnd == y.heapEnd);
    CHECK(x.heapLive == y.heapLive);
    CHECK(x.heapGoal == y.heapGoal);
    CHECK(x.stacks == y.stacks);
    CHECK(x.globals == y.globals);
    CHECK(x.procs == y.procs);
  }
  CHECK(a.gc.gcCpu == b.gc.gcCpu);
  CHECK(a.gc.idleMarkCpu == b.gc.idleMarkCpu);
  CHECK(a.gc.assistTime == b.gc.assistTime);
  CHECK(a.gc.sweepCpu == b.gc.sweepCpu);
  CHECK(a.gc.stwCount == b.gc.stwCount);
  CHECK(a.gc.stwTotal == b.gc.stwTotal);
  CHECK(a.gc.stwMax == b.gc.stwMax);
  CHECK(a.gc.allocBytes == b.gc.allocBytes);
  CHECK(a.gc.allocObjects == b.gc.allocObjects);
  CHECK(a.gc.peakHeap == b.gc.peakHeap);
  CHECK(a.gc.lastHeapGoal == b.gc.lastHeapGoal);
  CHECK(a.cpu_stat.nr_periods == b.cpu_stat.nr_periods);
  CHECK(a.cpu_stat.nr_throttled == b.cpu_stat.nr_throttled);
  CHECK(a.cpu_stat.throttled_time == b.cpu_stat.throttled_time);
  CHECK(a.cpu_stat.usage == b.cpu_stat.usage);
  CHECK(a.procs_end == b.procs_end);
  CHECK(a.procs_changes == b.procs_changes);
  CHECK(a.cpu_quota == b.cpu_quota);
  CHECK(a.cpu_period == b.cpu_period);
  CHECK(a.procs_auto == b.procs_auto);
  CHECK(a.daemon == b.daemon);
  CHECK(a.exited == b.exited);
  CHECK(a.exit_time == b.exit_time);
  CHECK(a.process == b.process);
  REQUIRE(a.processes.size() == b.processes.size());
  for (size_t i = 0; i < a.processes.size(); i++) require_same(a.processes[i], b.processes[i]);
}

// A sweep of 2 points x 3 seeds (6 runs), shard `shard` of `shards`, its runs filled.
gmp::cli::SweepPart part_of(uint64_t shard, uint64_t shards) {
  gmp::cli::SweepPart p;
  p.id.scenario = "sim/scenarios/pingpong.textproto";
  p.id.profile = "builtin:default";
  p.id.title = "BenchmarkPingPong";
  p.id.scenario_digest = gmp::cli::file_digest("func {}");
  p.id.flags = "sim/scenarios/pingpong.textproto --procs 1,2 --seeds 3 --cpu-quota 0,1.5";
  p.id.dims.quota = true;
  p.id.seed = 5;
  p.id.seeds = 3;
  for (int64_t procs : {1, 2}) {
    gmp::cli::SweepPoint pt;
    pt.procs = procs;
    pt.cpu_quota = 1.5;
    pt.gc.gcPercent = -1;
    p.id.points.push_back(pt);
  }
  p.shard = shard;
  p.shards = shards;
  for (uint64_t j = shard - 1; j < 6; j += shards) {
    p.runs.emplace_back(j, filled(static_cast<int64_t>(j), j == 0));
  }
  return p;
}

std::string error_of(const std::string& text) {
  try {
    gmp::cli::read_sweep_part(text);
  } catch (const PartError& e) {
    return e.what();
  }
  return "";
}

// The text with its end line's checksum made right again, for a change the checksum should not
// be what catches.
std::string resealed(std::string text) {
  const size_t end = text.rfind("end ");
  text.resize(end);
  return text + "end " + gmp::cli::hex16(gmp::cli::fnv1a64(text)) + "\n";
}

}  // namespace

TEST_CASE("every field of a result reads back as written, a process's results too", "[sweep_part]") {
  const SimResult r = filled(3, true);
  gmp::cli::PartWriter w;
  gmp::cli::write_result(w, r);
  gmp::cli::PartReader rd(w.out());
  const SimResult back = gmp::cli::read_result(rd);
  CHECK(rd.at_end());
  require_same(r, back);
  gmp::cli::PartWriter again;
  gmp::cli::write_result(again, back);
  CHECK(again.out() == w.out());
}

TEST_CASE("a part reads back byte for byte, and the shards of a sweep hold each run once", "[sweep_part]") {
  const gmp::cli::SweepPart p = part_of(2, 4);
  const std::string text = gmp::cli::write_sweep_part(p);
  CHECK(text.rfind("gmpsim-sweep-part 1\nscenario \"sim/scenarios/pingpong.textproto\"\n", 0) == 0);
  const gmp::cli::SweepPart back = gmp::cli::read_sweep_part(text);
  CHECK(gmp::cli::write_sweep_part(back) == text);
  REQUIRE(back.runs.size() == 2);  // runs 1 and 5 of 0..5
  CHECK(back.runs[0].first == 1);
  CHECK(back.runs[1].first == 5);
  require_same(back.runs[1].second, p.runs[1].second);
  CHECK(back.id.points.size() == 2);
  CHECK(back.id.points[1].procs == 2);
  CHECK(back.id.points[1].cpu_quota == 1.5);
  CHECK(back.id.points[1].gc.gcPercent == -1);
  for (uint64_t shards : {1, 2, 5, 6, 7, 100}) {
    uint64_t held = 0;
    for (uint64_t s = 1; s <= shards; s++) held += gmp::cli::shard_runs(6, s, shards);
    CHECK(held == 6);
    for (uint64_t j = 0; j < 6; j++) {
      int in = 0;
      for (uint64_t s = 1; s <= shards; s++) in += gmp::cli::in_shard(j, s, shards) ? 1 : 0;
      CHECK(in == 1);
    }
  }
}

TEST_CASE("merged parts put every run in its point and seed, whatever their order", "[sweep_part]") {
  std::vector<gmp::cli::NamedPart> parts;
  for (uint64_t s : {3, 1, 2}) parts.push_back({"p" + std::to_string(s), part_of(s, 3)});
  const std::vector<gmp::cli::SweepPoint> pts = gmp::cli::merge_sweep_parts(parts);
  REQUIRE(pts.size() == 2);
  for (size_t i = 0; i < 2; i++) {
    REQUIRE(pts[i].runs.size() == 3);
    for (size_t k = 0; k < 3; k++) require_same(pts[i].runs[k], filled(static_cast<int64_t>(i * 3 + k), i * 3 + k == 0));
  }
}

TEST_CASE("merge refuses parts of other sweeps, other splits, and shards missing or doubled", "[sweep_part]") {
  auto merge_error = [](std::vector<gmp::cli::NamedPart> parts) -> std::string {
    try {
      gmp::cli::merge_sweep_parts(parts);
    } catch (const gmp::cli::MergeError& e) {
      return e.what();
    }
    return "";
  };
  gmp::cli::SweepPart other = part_of(2, 2);
  other.id.seed = 6;
  CHECK(merge_error({{"a", part_of(1, 2)}, {"b", other}}) ==
        "b is not a part of the same sweep as a: they differ at 'seed' (a: seed 5; b: seed 6)");
  other = part_of(2, 2);
  other.id.points[1].procs = 4;
  CHECK(merge_error({{"a", part_of(1, 2)}, {"b", other}}).find("they differ at 'procs' (a: procs 2; b: procs 4)") !=
        std::string::npos);
  CHECK(merge_error({{"a", part_of(1, 2)}, {"b", part_of(2, 3)}}) ==
        "b is shard 2 of 3, a shard 1 of 2: the parts come from splits into different numbers of shards");
  CHECK(merge_error({{"a", part_of(1, 2)}, {"b", part_of(1, 2)}}) == "a and b are both shard 1 of 2");
  CHECK(merge_error({{"a", part_of(2, 3)}, {"b", part_of(1, 3)}}) == "shard 3 of 3 is missing (2 of 3 parts given)");
}

TEST_CASE("the part reader names the byte where a part is cut, altered or not a part", "[sweep_part]") {
  const std::string text = gmp::cli::write_sweep_part(part_of(1, 2));
  // Cut anywhere: an error, never a part.
  for (size_t n = 0; n < text.size(); n++) CHECK_FALSE(error_of(text.substr(0, n)).empty());
  const size_t last = text.rfind('\n', text.size() - 2) + 1;
  CHECK(error_of(text.substr(0, last)) == "byte " + std::to_string(last) +
                                               ": the part ends where \"end\" was expected (truncated?)");
  CHECK(error_of(text.substr(0, last + 3)) ==
        "byte " + std::to_string(last) + ": the part ends inside a line, with no newline (truncated?)");
  // A digit changed: the checksum, at the end line's value.
  std::string changed = text;
  const size_t at = changed.find("\nops ") + 5;
  changed[at] = changed[at] == '1' ? '2' : '1';
  CHECK(error_of(changed).rfind("byte " + std::to_string(text.size() - 17) +
                                    ": the checksum does not match the bytes before it (",
                                0) == 0);
  CHECK(error_of(text + "x\n") == "byte " + std::to_string(text.size()) + ": bytes after the end line");
  CHECK(error_of("seed 1\n") == "byte 0: not a gmpsim sweep part (it does not begin with \"gmpsim-sweep-part \")");
  CHECK(error_of("gmpsim-sweep-part 12\n") == "byte 0: format version 12 is not known (this gmpsim reads version 1)");
  // Each value has one spelling, and a key its place; the checksum made right, the reader still
  // says what is wrong and where.
  auto at_line = [&](const std::string& line) { return std::to_string(text.find("\n" + line) + 1); };
  auto swapped = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find("\n" + from) + 1, from.size(), to);
    return error_of(resealed(t));
  };
  CHECK(swapped("seed 5", "seed 05") == "byte " + std::to_string(std::stoul(at_line("seed 5")) + 5) +
                                            ": \"seed\": expected an unsigned decimal integer, got \"05\"");
  CHECK(swapped("seed 5", "seeds 5") == "byte " + at_line("seed 5") + ": expected \"seed\", got \"seeds\"");
  CHECK(swapped("seeds 3", "seeds 0").find("\"seeds\": 0 is below 1") != std::string::npos);
  CHECK(swapped("exit_code -3", "exit_code -0").find("-0 is written 0") != std::string::npos);
  CHECK(swapped("cpu_quota 3ff8000000000000", "cpu_quota 3FF8000000000000")
            .find("expected a double's bits as 16 lowercase hex digits") != std::string::npos);
  CHECK(swapped("measured 1", "measured 2").find("expected 0 or 1") != std::string::npos);
  CHECK(swapped("bench_name \"BenchmarkX\"", "bench_name \"Benchmark\\x58\"")
            .find("\"bench_name\": not a string as gmpsim quotes one") != std::string::npos);
  CHECK(swapped("stop 7", "stop 8").find("\"stop\": 8 is above 7") != std::string::npos);
  CHECK(swapped("shard 1", "shard 3").find("\"shard\": 3 is above 2") != std::string::npos);
  CHECK(swapped("runs 3", "runs 2").find("the part says it holds 2 runs; shard 1 of 2 of a sweep of 6 runs holds 3") !=
        std::string::npos);
  CHECK(swapped("run 2", "run 3").find("run 3 where the shard's run 2 belongs") != std::string::npos);
  // A process's own results have no processes below them.
  std::string nested = text;
  const size_t first_process = nested.find("\nprocesses 2\n");
  REQUIRE(first_process != std::string::npos);
  const size_t inner = nested.find("\nprocesses 0\n", first_process + 1);
  nested.replace(inner, 13, "\nprocesses 1\n");
  CHECK(error_of(resealed(nested)).find("\"processes\": 1 is above 0") != std::string::npos);
}

TEST_CASE("quoted strings: one spelling for every byte", "[sweep_part]") {
  std::string all;
  for (int c = 0; c < 256; c++) all += static_cast<char>(c);
  const std::string q = gmp::cli::quote(all);
  std::string back;
  size_t bad = 0;
  REQUIRE(gmp::cli::unquote(q, back, bad));
  CHECK(back == all);
  for (const char* wrong : {"\"a", "a\"", "\"\\q\"", "\"\\x4\"", "\"\\x41\"", "\"\\x0A\"", "\"\\x0a\"", "\"a\"b\"",
                            "\"\\\"", "\"\t\""}) {
    INFO(wrong);
    CHECK_FALSE(gmp::cli::unquote(wrong, back, bad));
  }
}
