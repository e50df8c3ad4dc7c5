// gmpsim sweep SCENARIO --procs 1,2,4,8,16 [--cores 4,16,64] [--seeds K] [--profile F]
//                       [--gogc 50,100,off] [--memlimit 64MiB,off] [--cpu-quota 0.5,1,2]
//                       [--svg OUT] [--seed S] [--jobs N] [--shard I/N -o PART]
// gmpsim sweep --merge PART... [--svg OUT]
// Runs the scenario at every (procs, cores, CPU quota, GOGC, GOMEMLIMIT) point under K seeds; prints a table
// per metric, then `go test -bench` lines for benchstat, and with --svg writes an SVG chart there.
//
// Split across machines: --shard I/N -o PART runs share I (from 1) of N of the runs (run j, in the
// order the points are made times the seeds, when j % N == I - 1) and writes their results to PART
// instead of the report (sim/cli/sweep_part.h; -o alone: the whole sweep, as shard 1/1); --merge
// reads the N parts and prints what the unsplit sweep prints, stderr and exit status included.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "sim/cli/report.h"
#include "sim/cli/sweep_part.h"
#include "sim/textproto/read_file.h"
#include "traces/output_file.h"

namespace gmp::cli {

namespace {

// sweep's own flags, taken out of the command line before the common flags are parsed; the rest
// is the sweep's identity in a part.
struct SweepFlags {
  size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  std::string svg_path, part_path;
  bool jobs_given = false, part_given = false, shard_given = false, merge = false;
  uint64_t shard = 1, shards = 1;
  std::vector<std::string> rest;
};

// --shard I/N: 1 <= I <= N.
void parse_shard(const std::string& text, SweepFlags& f) {
  const size_t slash = text.find('/');
  const std::string i = text.substr(0, slash), n = slash == std::string::npos ? "" : text.substr(slash + 1);
  auto number = [](const std::string& s) {
    return !s.empty() && s.size() <= 7 && s.find_first_not_of("0123456789") == std::string::npos ? std::stoull(s) : 0;
  };
  f.shard = number(i);
  f.shards = number(n);
  if (f.shard < 1 || f.shards < 1 || f.shard > f.shards || f.shards > kMaxShards) {
    usage_error("--shard: expected I/N with 1 <= I <= N <= " + std::to_string(kMaxShards) +
                " (I counts from 1, as Slurm's --array=1-N and seq N do), got '" + text + "'");
  }
}

SweepFlags split_flags(int argc, char** argv) {
  SweepFlags f;
  for (int i = 0; i < argc; i++) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string name = arg.rfind("--", 0) == 0 && eq != std::string::npos ? arg.substr(0, eq) : arg;
    auto value = [&]() -> std::string {
      if (name != arg) return arg.substr(eq + 1);
      if (i + 1 >= argc) usage_error(name + ": missing value");
      return argv[++i];
    };
    if (name == "-o" || name == "--part") {
      f.part_path = value();
      if (f.part_path.empty()) usage_error(name + ": expected a file name");
      f.part_given = true;
    } else if (name == "--shard") {
      parse_shard(value(), f);
      f.shard_given = true;
    } else if (name == "--jobs") {
      f.jobs = static_cast<size_t>(parse_uint("--jobs", value(), 1, 256));
      f.jobs_given = true;
    } else if (name == "--svg") {
      f.svg_path = value();
      if (f.svg_path.empty()) usage_error("--svg: expected a file name");
    } else if (arg == "--merge") {
      f.merge = true;
    } else {
      f.rest.push_back(arg);
    }
  }
  return f;
}

// The command line as a part keeps it: --flag=value as --flag value, each word as it is unless it
// needs quoting (a quoted one starts with '"', which a plain one cannot).
std::string flags_text(const std::vector<std::string>& args) {
  std::string s;
  auto word = [&s](const std::string& w) {
    const bool plain = !w.empty() && w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                         "0123456789_./,:=+@%-") == std::string::npos;
    s += (s.empty() ? "" : " ") + (plain ? w : quote(w));
  };
  for (const std::string& a : args) {
    const size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      word(a.substr(0, eq));
      word(a.substr(eq + 1));
    } else {
      word(a);
    }
  }
  return s;
}

// An input file's digest for the part's identity; exits 1 if it cannot be read (again).
std::string digest_of(const std::string& path) {
  const textproto::FileText f = textproto::read_file(path);
  if (!f.error.empty()) {
    std::fprintf(stderr, "gmpsim: %s: %s\n", path.c_str(), f.error.c_str());
    std::exit(1);
  }
  return file_digest(f.text);
}

// The arrival times the scenario's connections read from their files (and its processes'), as
// loaded: an arrival file edited between two shards makes another sweep. "" when there are none.
std::string arrivals_digest(const scenario::Scenario& sc) {
  std::string bytes;
  auto add = [&bytes](const scenario::Scenario& s) {
    for (const scenario::Conn& c : s.conns) {
      for (const std::vector<int64_t>* v : {&c.times, &c.first}) {
        bytes += std::to_string(v->size()) + ':';
        for (int64_t x : *v) bytes += std::to_string(x) + ',';
      }
    }
  };
  add(sc);
  for (const scenario::ProcessSpec& p : sc.processes) {
    if (p.program) add(*p.program);
  }
  return bytes.find_first_not_of("0:") == std::string::npos ? "" : "+" + file_digest(bytes);
}

// Whether the output named by path can be written; says why not, for exit status 1.
bool writable(const std::string& path) {
  if (path.empty()) return true;
  try {
    trace::output_target(path);  // a directory or the like is refused before the runs
    return true;
  } catch (const trace::OutputError& e) {
    std::fprintf(stderr, "gmpsim: cannot write %s\n", e.what());
    return false;
  }
}

// What a whole sweep prints once its runs are in: each failed run on stderr, the tables and bench
// lines on stdout, the chart to svg_path; returns the exit status. The same for a merged sweep.
int report(std::vector<SweepPoint>& pts, SweepDims dims, const std::string& scenario, const std::string& profile,
           const std::string& title, const std::string& svg_path) {
  int status = 0;
  for (auto& pt : pts) {
    if (pt.cores == 0) pt.cores = pt.runs.front().cores;
    for (const engine::SimResult& r : pt.runs) {
      const int st = exit_status(r);
      if (st == 0) continue;
      if (st == kAssertionsViolated && !r.violations.empty()) {  // a part's word alone is not enough
        if (status == 0) status = st;
        const auto& v = r.violations.front();
        std::fprintf(stderr, "gmpsim: %sGOMAXPROCS=%s seed=%llu: assertion violated: %s: %s%s\n",
                     gc_point_label(pt, dims).c_str(), procs_text(pt.procs).c_str(), static_cast<unsigned long long>(r.seed), v.assertion.c_str(),
                     v.detail.c_str(), r.violations.size() > 1 ? " (and more: gmpsim run shows them all)" : "");
        continue;
      }
      status = 2;
      std::fprintf(stderr, "gmpsim: %sGOMAXPROCS=%s seed=%llu: %s\n", gc_point_label(pt, dims).c_str(),
                   procs_text(pt.procs).c_str(),
                   static_cast<unsigned long long>(r.seed), r.message.c_str());
    }
  }

  std::printf("sweep of %s (profile %s)\n", scenario.c_str(), profile.c_str());
  std::fputs(format_sweep_tables(pts, dims).c_str(), stdout);
  const std::string bench = format_bench_lines(pts, dims);
  if (!bench.empty()) std::printf("\n%s", bench.c_str());

  if (svg_path.empty()) return status;
  try {
    trace::write_output_file(svg_path, sweep_svg(pts, title, dims));
  } catch (const trace::OutputError& e) {
    std::fprintf(stderr, "gmpsim: %s\n", e.what());
    return 1;
  }
  std::printf("\nchart: %s\n", svg_path.c_str());
  return status;
}

// gmpsim sweep --merge PART... [--svg OUT]: every refusal (a part unreadable, of another sweep,
// a shard twice or missing) exits 2 before anything is printed or written.
int merge(const SweepFlags& f) {
  if (f.jobs_given || f.part_given || f.shard_given) {
    usage_error("sweep --merge: takes PART files and --svg only (not --jobs, --shard or -o)");
  }
  for (const std::string& a : f.rest) {
    if (a.rfind("--", 0) == 0) {
      usage_error("sweep --merge: takes PART files and --svg only, not '" + a + "' (each part keeps its sweep's flags)");
    }
  }
  if (f.rest.empty()) usage_error("sweep --merge: expected the PART files of a sweep");
  if (!writable(f.svg_path)) return 1;
  std::vector<NamedPart> parts;
  for (const std::string& name : f.rest) {
    textproto::ReadOptions ro;
    ro.max_bytes = kMaxPartBytes;
    const textproto::FileText file = textproto::read_file(name, ro);
    if (!file.error.empty()) {
      std::fprintf(stderr, "gmpsim: sweep --merge: %s: %s\n", name.c_str(), file.error.c_str());
      return 2;
    }
    try {
      parts.push_back({name, read_sweep_part(file.text)});
    } catch (const PartError& e) {
      std::fprintf(stderr, "gmpsim: sweep --merge: %s: %s\n", name.c_str(), e.what());
      return 2;
    }
  }
  std::vector<SweepPoint> pts;
  try {
    pts = merge_sweep_parts(parts);
  } catch (const MergeError& e) {
    std::fprintf(stderr, "gmpsim: sweep --merge: %s\n", e.what());
    return 2;
  }
  const SweepIdentity& id = parts.front().part.id;
  return report(pts, id.dims, id.scenario, id.profile, id.title, f.svg_path);
}

}  // namespace

int cmd_sweep(int argc, char** argv) {
  SweepFlags f = split_flags(argc, argv);
  if (f.merge) return merge(f);
  if (f.shard_given && !f.part_given) usage_error("sweep: --shard needs -o PART (or --part PART), the file its share of the runs goes to");
  if (f.part_given && !f.svg_path.empty()) {
    usage_error("sweep: --svg goes with --merge when the runs go to a part (-o)");
  }
  RunOptions o;
  std::vector<char*> rest;
  for (std::string& a : f.rest) rest.push_back(a.data());
  parse_sim_args("sweep", static_cast<int>(rest.size()), rest.data(), o, [](Args&) { return false; });
  if (!o.sim.trace_path.empty()) usage_error("sweep: --trace is for gmpsim run");
  if (!writable(f.svg_path) || !writable(f.part_path)) return 1;
  const Loaded in = load_inputs(o);

  // GOGC and GOMEMLIMIT are dimensions only when given (the output is unchanged otherwise).
  const SweepDims dims{!o.gogc.empty(), !o.memlimit.empty(), !o.cpu_quota.empty()};
  const rt::GCSettings go_default;
  const std::vector<int64_t> limits = dims.memlimit ? o.memlimit : std::vector<int64_t>{go_default.memoryLimit};
  const std::vector<int32_t> gogcs = dims.gogc ? o.gogc : std::vector<int32_t>{go_default.gcPercent};
  const std::vector<double> quotas = dims.quota ? o.cpu_quota : std::vector<double>{0};
  std::vector<SweepPoint> pts;
  for (int64_t c : o.cores) {
    for (double quota : quotas) {
      for (int64_t limit : limits) {
        for (int32_t gogc : gogcs) {
          for (int64_t p : o.procs) pts.push_back(SweepPoint{p, c, {}, rt::GCSettings{gogc, limit}, quota});
        }
      }
    }
  }
  // A point's configuration under one seed.
  auto point_config = [&o](const SweepPoint& pt, uint64_t seed) {
    engine::SimConfig cfg = sim_config(o, pt.procs, pt.cores, seed);
    cfg.gc = pt.gc;
    cfg.cgroup.quota = quota_ns(o, pt.cpu_quota);
    return cfg;
  };
  // A cgroup the machine cannot hold (a cpuset past its cores, a quota above them) is refused
  // before any run.
  for (const SweepPoint& pt : pts) {
    try {
      engine::check_machine(in.scenario, in.profile, point_config(pt, o.seed));
    } catch (const engine::SimConfigError& e) {
      usage_error(std::string("sweep: ") + e.what() + (pt.cores > 0 ? " (--cores " + std::to_string(pt.cores) + ")" : ""));
    }
  }
  const std::string title = in.scenario.benchmark ? in.scenario.benchmark->name : in.scenario.source;
  // The part's identity, before the runs: the points as made, without results.
  SweepPart part;
  if (f.part_given) {
    SweepIdentity& id = part.id;
    id.scenario = in.scenario.source;
    id.profile = in.profile.origin;
    id.title = title;
    id.scenario_digest = digest_of(o.scenario_path) + arrivals_digest(in.scenario);
    constexpr std::string_view kBuiltin = "builtin:";  // Profile::origin of a shipped profile
    id.profile_digest = in.profile.origin.rfind(kBuiltin, 0) == 0
                            ? file_digest(cost::builtin_profile_text(std::string_view(in.profile.origin).substr(kBuiltin.size())))
                            : digest_of(o.profile);
    id.flags = flags_text(f.rest);
    id.dims = dims;
    id.seed = o.seed;
    id.seeds = o.seeds;
    id.points = pts;
    part.shard = f.shard;
    part.shards = f.shards;
  }
  // Every (point, seed) run is independent and deterministic on its own, so they run on worker
  // threads, one simulation per thread at a time; results land in fixed slots, so the output does
  // not depend on which thread finished first. This shard's runs are j = shard - 1 + t * shards.
  const size_t total = shard_runs(pts.size() * o.seeds, f.shard, f.shards);
  auto run_index = [&f](size_t t) { return f.shard - 1 + t * f.shards; };
  for (auto& pt : pts) pt.runs.resize(o.seeds);
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  size_t done = 0;
  // An exception on a worker (out of memory; bad input is refused before) is handed to the main
  // thread, which rethrows it once every worker has stopped; the remaining runs are skipped.
  std::exception_ptr failure;
  auto worker = [&] {
    for (size_t t = next.fetch_add(1); t < total; t = next.fetch_add(1)) {
      const size_t j = run_index(t);
      SweepPoint& pt = pts[j / o.seeds];
      const uint64_t k = j % o.seeds;
      try {
        pt.runs[k] = engine::simulate(in.scenario, in.profile, point_config(pt, o.seed + k));
      } catch (...) {
        std::lock_guard<std::mutex> l(mu);
        if (!failure) failure = std::current_exception();
        next.store(total);
        done = total;
        cv.notify_one();
        return;
      }
      std::lock_guard<std::mutex> l(mu);
      done++;
      cv.notify_one();
    }
  };
  const size_t nthreads = std::min<size_t>(total, f.jobs);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < nthreads; t++) threads.emplace_back(worker);
  const bool tty = isatty(STDERR_FILENO) != 0;
  {
    std::unique_lock<std::mutex> l(mu);
    for (size_t shown = 0; shown < total;) {
      cv.wait(l, [&] { return done > shown; });
      shown = done;
      if (tty) std::fprintf(stderr, "\r[%zu/%zu] runs done   ", shown, total);
    }
  }
  for (auto& t : threads) t.join();
  end_progress();
  if (failure) std::rethrow_exception(failure);

  if (!f.part_given) return report(pts, dims, in.scenario.source, in.profile.origin, title, f.svg_path);
  for (size_t t = 0; t < total; t++) {
    const size_t j = run_index(t);
    part.runs.emplace_back(j, std::move(pts[j / o.seeds].runs[j % o.seeds]));
  }
  const std::string text = write_sweep_part(part);
  if (text.size() > kMaxPartBytes) {  // refused now rather than by the merge
    std::fprintf(stderr, "gmpsim: sweep: this shard's part would take %zu MiB, more than the %zu MiB a merge reads: split the sweep into more shards (at least %llu)\n",
                 text.size() >> 20, kMaxPartBytes >> 20,
                 static_cast<unsigned long long>(f.shards * (text.size() / kMaxPartBytes + 1)));
    return 1;
  }
  try {
    trace::write_output_file(f.part_path, text);
  } catch (const trace::OutputError& e) {
    std::fprintf(stderr, "gmpsim: %s\n", e.what());
    return 1;
  }
  // On stderr: the part itself may be going to stdout.
  std::fprintf(stderr, "sweep of %s (profile %s): shard %llu of %llu, %zu of %zu runs, written to %s\n", in.scenario.source.c_str(),
              in.profile.origin.c_str(), static_cast<unsigned long long>(f.shard), static_cast<unsigned long long>(f.shards),
              total, pts.size() * o.seeds, f.part_path.c_str());
  return 0;
}

}  // namespace gmp::cli
