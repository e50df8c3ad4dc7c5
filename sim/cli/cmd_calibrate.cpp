// gmpsim calibrate [--go PATH] [--cpus 1,2,4] [--count K] [--benchtime D] [--profile BASE]
//                  [-o PROFILE] [--suite DIR] [--heldout DIR|none] [--measured FILE]
//                  [--measured-heldout FILE] [--params LIST] [--placement spread|affine] [--jobs N]
//                  [--max-evaluations N] [--regularize L] [--no-cross-validate] [--cv-evaluations N]
//                  [--gc-weight W]
// Fits the cost profile to this machine: runs the Go benchmarks of the fit suite (sim/calibration/
// suite) with the user's Go, sets their ns/op against those of the scenarios in the same folder
// whose `benchmark` has the same name (sim/calibration/fit.h), fits, cross-validates the fit by
// leaving out one benchmark at a time, and reports the error on the held-out set
// (sim/calibration/heldout), which the fit never sees. Prints a table per set (benchmark x
// GOMAXPROCS: measured with its confidence interval and spread, simulated before and after, error)
// and writes the fitted profile with its measurements beside it.
//
// Stages, one function each: flags (parse_calibrate_flags); measuring (build_go_test: a copy of a
// set's Go files in a temporary folder, built once with go test -c; measure_set: the binary run
// once per repetition and GOMAXPROCS, interleaved, with the machine's quietness); pairing
// (make_points); the speed (measure_speed); the fit and its cross-validation (run_calibration,
// cross_validate_fit); the report (print_calibration); the profile (write_calibration).
//
// Unlike sweep, calibrate is not split across machines (no --shard): its measurements are of the
// machine it fits, the fit is a coordinate descent whose every step starts from the profile the
// step before left, and each leave-one-out fit of the cross-validation is the same; the tables'
// simulations (before and after the fit, the GC targets) are a few dozen runs, on --jobs threads.
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/calibration/bench_output.h"
#include "sim/calibration/fit.h"
#include "sim/calibration/gctrace.h"
#include "sim/calibration/quiet.h"
#include "sim/calibration/speed_curve.h"
#include "sim/cli/commands.h"
#include "sim/cli/flags.h"
#include "sim/scenario/error.h"
#include "sim/scenario/limits.h"
#include "sim/textproto/read_file.h"
#include "traces/output_file.h"

namespace gmp::cli {

namespace fs = std::filesystem;
using calibration::Point;

namespace {

// How quiet the machine was over a set's runs.
struct QuietSummary {
  int runs = 0, noisy = 0, unknown = 0;
  double worst_others = 0, worst_steal = 0;
  std::optional<double> load_before;
};

struct Set {
  std::string label, dir;
  std::map<std::string, scenario::Scenario> scenarios;  // by the name of their benchmark
  std::string output;                                   // go test -bench's output
  std::vector<Point> points;
  std::vector<std::string> unpaired;                    // measured, with no scenario
  QuietSummary quiet;                                   // when measured here
};

std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Saved go test -bench output.
std::string read_measurements(const std::string& path) {
  textproto::FileText file = textproto::read_file(path);
  if (!file.error.empty()) {
    std::fprintf(stderr, "gmpsim: calibrate: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return std::move(file.text);
}

// The folder as given, or else under the source tree this gmpsim was built from.
std::string find_dir(const std::string& dir) {
  if (fs::is_directory(dir)) return dir;
  const std::string in_source = std::string(GMP_SOURCE_DIR) + "/" + dir;
  if (fs::is_directory(in_source)) return in_source;
  std::fprintf(stderr, "gmpsim: calibrate: no folder %s\n", dir.c_str());
  std::exit(1);
}

void load_scenarios(Set& s) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(s.dir)) {
    if (e.path().extension() == ".textproto") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // directory order is the file system's
  for (const fs::path& f : files) {
    try {
      scenario::Scenario sc = scenario::load_scenario(f.string());
      if (!sc.benchmark) continue;  // measures nothing go test could be set against
      const std::string name = sc.benchmark->name;
      if (!s.scenarios.emplace(name, std::move(sc)).second) {
        std::fprintf(stderr, "gmpsim: calibrate: two scenarios of %s report %s\n", s.dir.c_str(), name.c_str());
        std::exit(1);
      }
    } catch (const scenario::ScenarioError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      std::exit(1);
    }
  }
}

// The temporary folders calibrate made, removed at exit whatever the path out (std::exit runs
// atexit handlers; an interrupt leaves them, under the system's temporary folder).
std::vector<std::string>& temp_dirs() {
  static std::vector<std::string> dirs;
  return dirs;
}

void remove_temp_dirs() {
  for (const std::string& d : temp_dirs()) {
    std::error_code ec;
    fs::remove_all(d, ec);
  }
  temp_dirs().clear();
}

// A set's Go package copied to a fresh temporary folder and its test binary built there once, so
// that neither go's build nor the benchmarks' runs write into the source tree (go.sum under
// -mod=mod, files a benchmark might leave).
struct GoWork {
  std::string dir;  // the copy
  std::string bin;  // the test binary, built with go test -c
};

GoWork build_go_test(const Set& s, const std::string& go) {
  static bool registered = false;
  if (!registered) {
    std::atexit(remove_temp_dirs);
    registered = true;
  }
  std::string tmpl = (fs::temp_directory_path() / "gmpsim-calibrate-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::fprintf(stderr, "gmpsim: calibrate: cannot make a temporary folder under %s\n",
                 fs::temp_directory_path().c_str());
    std::exit(1);
  }
  temp_dirs().push_back(tmpl);
  GoWork w{tmpl + "/src", tmpl + "/bench.test"};
  fs::create_directories(w.dir);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(s.dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && (e.path().extension() == ".go" || name == "go.mod" || name == "go.sum")) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) fs::copy_file(f, w.dir + "/" + f.filename().string());
  std::fprintf(stderr, "calibrate: building %s's Go benchmarks with %s (in %s)\n", s.label.c_str(), go.c_str(),
               w.dir.c_str());
  const std::string build = "cd " + sh_quote(w.dir) + " && GOTOOLCHAIN=local GOFLAGS=-mod=mod " + sh_quote(go) +
                            " test -c -o " + sh_quote(w.bin);
  if (std::system(build.c_str()) != 0 || access(w.bin.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "gmpsim: calibrate: building the %s benchmarks failed: %s\n", s.label.c_str(), build.c_str());
    std::exit(1);
  }
  return w;
}

std::optional<calibration::CpuTimes> read_proc_stat() {
  const textproto::FileText f = textproto::read_file("/proc/stat");
  return f.error.empty() ? calibration::parse_proc_stat(f.text) : std::nullopt;
}

double cpu_seconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The 1-minute load average before a set's build (a Go build or a benchmark lifts it for a minute
// after), printed and written as a comment with a warning above
// kQuietLoad. For the sets measured after the first, the average would mostly show calibrate's own
// runs: it is written down but not judged (each run's own figures are, in run_once).
std::optional<double> read_load() {
  const textproto::FileText f = textproto::read_file("/proc/loadavg");
  return f.error.empty() ? calibration::parse_loadavg(f.text) : std::nullopt;
}

std::string check_load(const Set& s, QuietSummary& q, bool first) {
  q.load_before = read_load();
  if (!q.load_before) return "# quiet: no /proc/loadavg\n";
  char line[200];
  if (!first) {
    std::snprintf(line, sizeof line, "load average %.2f before measuring the %s (not judged: it includes this "
                  "calibrate's own runs)", *q.load_before, s.label.c_str());
    return std::string("# quiet: ") + line + "\n";
  }
  std::snprintf(line, sizeof line, "load average %.2f before measuring", *q.load_before);
  if (*q.load_before > calibration::kQuietLoad) {
    std::fprintf(stderr, "calibrate: WARNING: the machine is not quiet: %s (limit %.2f); the figures carry that load\n",
                 line, calibration::kQuietLoad);
  } else {
    std::fprintf(stderr, "calibrate: %s\n", line);
  }
  return std::string("# quiet: ") + line + "\n";
}

// One run of the test binary at one GOMAXPROCS: its output, with a "# quiet:" comment line after
// it giving the other processes' CPU and the steal over the run; a warning when not quiet.
std::string run_once(const GoWork& w, const Set& s, const std::string& cpu, int rep, int count, const std::string& bt,
                     size_t& done, size_t expected, QuietSummary& q) {
  // GODEBUG=gctrace=1: the runtime prints a line per GC cycle on stderr, joined here to stdout so
  // that each cycle stays next to the benchmark it ran in (sim/calibration/gctrace.h splits them).
  const char* const godebug = std::getenv("GODEBUG");
  const std::string gd = godebug != nullptr && *godebug != '\0' ? std::string(godebug) + ",gctrace=1" : "gctrace=1";
  const std::string run = "cd " + sh_quote(w.dir) + " && GODEBUG=" + sh_quote(gd) + " exec " + sh_quote(w.bin) +
                          " -test.run '^$' -test.bench . -test.cpu " + cpu + " -test.count 1 -test.benchtime " +
                          sh_quote(bt) + " 2>&1";
  const std::optional<calibration::CpuTimes> before = read_proc_stat();
  const double own_before = cpu_seconds(RUSAGE_CHILDREN) + cpu_seconds(RUSAGE_SELF);
  FILE* p = popen(run.c_str(), "r");
  if (p == nullptr) {
    std::fprintf(stderr, "gmpsim: calibrate: cannot run %s\n", run.c_str());
    std::exit(1);
  }
  std::string out;
  char line[4096];
  while (std::fgets(line, sizeof line, p) != nullptr) {
    out += line;
    if (std::strncmp(line, "Benchmark", 9) == 0 && std::strchr(line, '\t') != nullptr &&
        std::strstr(line, "gc ") == nullptr) {
      std::string l(line);
      while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
      std::fprintf(stderr, "calibrate: [%zu/%zu] %s\n", ++done, expected, l.c_str());
    }
  }
  const int st = pclose(p);
  const double own = cpu_seconds(RUSAGE_CHILDREN) + cpu_seconds(RUSAGE_SELF) - own_before;
  const std::optional<calibration::CpuTimes> after = read_proc_stat();
  if (st != 0) {
    std::fprintf(stderr, "gmpsim: calibrate: the %s benchmarks failed (status %d): %s\n%s", s.label.c_str(), st,
                 run.c_str(), out.c_str());
    std::exit(1);
  }
  // The saved output keeps each cycle as a "# gctrace: " comment before its benchmark's result.
  try {
    out = calibration::split_go_output(out, "the output of " + run).clean;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gmpsim: calibrate: %s\n", e.what());
    std::exit(1);
  }
  char where[80];
  std::snprintf(where, sizeof where, "repetition %d of %d, -cpu %s", rep, count, cpu.c_str());
  ++q.runs;
  calibration::Quietness qu;
  if (before && after) qu = calibration::quietness(*before, *after, own, static_cast<double>(sysconf(_SC_CLK_TCK)));
  if (!qu.known) {
    ++q.unknown;
    return out + "# quiet: " + where + ": not known (no /proc/stat, or under " +
           std::to_string(calibration::kQuietMinSeconds).substr(0, 3) + " s)\n";
  }
  q.worst_others = std::max(q.worst_others, qu.others_cores);
  q.worst_steal = std::max(q.worst_steal, qu.steal);
  char figures[200];
  std::snprintf(figures, sizeof figures, "other processes %.3f cores, steal %.1f%%, over %.2f s", qu.others_cores,
                100 * qu.steal, qu.wall_s);
  if (!qu.quiet()) {
    ++q.noisy;
    std::fprintf(stderr, "calibrate: WARNING: the machine was not quiet during %s: %s (limits %.2f cores, %.0f%%)\n",
                 where, figures, calibration::kQuietOthersCores, 100 * calibration::kQuietSteal);
  }
  return out + "# quiet: " + where + ": " + figures + "\n";
}

// Measures a set: its test binary run once per (repetition, GOMAXPROCS), the GOMAXPROCS values in
// turn within each repetition (1 2 4 1 2 4 ...), so that a drift of the machine's speed over the
// minutes of measuring falls on every GOMAXPROCS alike rather than on the last one. The output is
// the runs' go test output one after the other (valid go test -bench output) with "# " comments.
std::string measure_set(const Set& s, const std::string& go, const std::string& cpus, int count, const std::string& bt,
                        QuietSummary& q, bool first) {
  std::string load = check_load(s, q, first);  // before the build, which lifts the load average
  const GoWork w = build_go_test(s, go);
  std::vector<std::string> each;
  std::stringstream ss(cpus);
  for (std::string c; std::getline(ss, c, ',');) each.push_back(c);
  std::string out = "# gmpsim calibrate: go test -c of " + s.dir + ", run with -test.run '^$' -test.bench . " +
                    "-test.count 1 -test.benchtime " + bt + " once per repetition (" + std::to_string(count) +
                    ") and -test.cpu value (" + cpus + "), interleaved\n";
  out += load;
  const size_t expected = s.scenarios.size() * each.size() * static_cast<size_t>(count);
  size_t done = 0;
  for (int rep = 1; rep <= count; ++rep) {
    for (const std::string& c : each) out += run_once(w, s, c, rep, count, bt, done, expected, q);
  }
  if (q.noisy > 0) {
    std::fprintf(stderr, "calibrate: WARNING: %d of %d runs of the %s were not quiet (worst: other processes %.3f cores, "
                 "steal %.1f%%)\n", q.noisy, q.runs, s.label.c_str(), q.worst_others, 100 * q.worst_steal);
  }
  remove_temp_dirs();
  return out;
}

void make_points(Set& s, const std::string& origin, const std::vector<int32_t>& only_procs) {
  calibration::BenchSamples samples;
  // GC figures per (benchmark, GOMAXPROCS), one per run, from the gctrace lines of the output.
  std::map<calibration::BenchKey, std::pair<std::vector<double>, std::vector<double>>> gc;
  try {
    for (const calibration::BenchRun& r : calibration::split_go_output(s.output, origin).runs) {
      samples[r.key].push_back(r.ns_per_op);
      const calibration::GCFigures f = calibration::gc_figures(r);
      gc[r.key].first.push_back(f.cycles_per_op);
      gc[r.key].second.push_back(f.gc_cpu_share);
    }
  } catch (const std::exception& e) {  // BenchOutputError, GCTraceError
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(1);
  }
  for (const auto& [key, v] : samples) {
    if (!only_procs.empty() && std::find(only_procs.begin(), only_procs.end(), key.procs) == only_procs.end()) continue;
    const auto it = s.scenarios.find(key.name);
    if (it == s.scenarios.end()) {
      if (std::find(s.unpaired.begin(), s.unpaired.end(), key.name) == s.unpaired.end()) s.unpaired.push_back(key.name);
      continue;
    }
    const calibration::Summary sum = calibration::summarize(v);
    if (sum.median <= 0) {  // nothing to set a ratio against
      std::fprintf(stderr, "calibrate: %s at %d Ps measured 0 ns/op; left out\n", key.name.c_str(), key.procs);
      continue;
    }
    s.points.push_back(Point{key.name, key.procs, sum.median, sum.spread, &it->second, sum.ci_lo, sum.ci_hi,
                             sum.ci_level, sum.n});
    s.points.back().gc_cycles_per_op = calibration::summarize(gc[key].first).median;
    s.points.back().gc_cpu_share = calibration::summarize(gc[key].second).median;
  }
}

struct Errors {
  double median_abs = 0, worst_abs = 0;
  int right = 0, wrong = 0, noise = 0;  // changes between GOMAXPROCS values
  std::string wrong_list, right_list;
  int within = 0;            // points whose |error| is at most their runs' spread
  double median_spread = 0;
};

double relative_error(double simulated, double measured) { return (simulated - measured) / measured; }

double median_of_sorted(const std::vector<double>& v) {
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The error figures of one set, simulated with the fitted profile (`after`).
Errors errors_of(const Set& s, const std::vector<double>& after) {
  Errors e;
  std::vector<double> abs_err, spreads;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const Point& p = s.points[i];
    const double ea = relative_error(after[i], p.measured);
    abs_err.push_back(std::isfinite(ea) ? std::abs(ea) : 1e9);
    spreads.push_back(p.spread);
    if (std::abs(ea) <= p.spread) ++e.within;
    // The change from the previous GOMAXPROCS of the same benchmark: inside the noise when the
    // two medians' confidence intervals overlap, else in the measured direction or not.
    if (i > 0 && s.points[i - 1].bench == p.bench) {
      const Point& q = s.points[i - 1];
      const double m = p.measured / q.measured - 1, sim = after[i] / after[i - 1] - 1;
      if (p.ci_lo <= q.ci_hi && q.ci_lo <= p.ci_hi) {
        ++e.noise;
      } else if ((m > 0) == (sim > 0)) {
        ++e.right;
        e.right_list += ", " + p.bench + " " + std::to_string(q.procs) + "->" + std::to_string(p.procs) +
                        (m > 0 ? " up" : " down");
      } else {
        ++e.wrong;
        e.wrong_list += ", " + p.bench + " " + std::to_string(q.procs) + "->" + std::to_string(p.procs);
      }
    }
  }
  if (!abs_err.empty()) {
    std::sort(abs_err.begin(), abs_err.end());
    e.median_abs = median_of_sorted(abs_err);
    e.worst_abs = abs_err.back();
    std::sort(spreads.begin(), spreads.end());
    e.median_spread = median_of_sorted(spreads);
  }
  return e;
}

// What the flags ask for.
struct CalibrateOptions {
  std::string go;  // the go command or a GOROOT; empty: Go 1.23's if installed, else the PATH's
  std::string cpus = "1,2";  // go test's -cpu
  bool cpus_given = false;   // --cpus named them: with --measured, only those points are fitted
  int count = 5;             // its -count
  std::string benchtime = "200ms";
  std::string base;  // the profile the fit starts from (a path or a builtin); empty: the default
  std::string out;   // the fitted profile, written with its measurements beside it; empty: none
  std::string suite_dir = "sim/calibration/suite";
  std::string heldout_dir = "sim/calibration/heldout";  // "none": no held-out set
  std::string measured, measured_heldout;  // saved go test -bench output, used instead of running Go
  std::string placement;                   // spread or affine; empty: the base profile's
  std::vector<calibration::FitParam> params = calibration::default_fit_params();
  bool params_given = false;  // --params named them
  size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  int max_evals = 300;
  double regularize = 0.05;  // lambda (fit.h)
  double gc_weight = 0.5;    // the GC targets' weight in the objective (fit.h, docs/calibration.md)
  bool cross_validate = true;
  int cv_evals = 60;         // each leave-one-out fit's budget
};

CalibrateOptions parse_calibrate_flags(int argc, char** argv) {
  CalibrateOptions o;
  Args a(argc, argv);
  while (!a.done()) {
    const std::string arg = a.next();
    if (arg == "-o") {
      if (a.done()) usage_error("calibrate: -o: expected a file name");
      o.out = a.next();
      continue;
    }
    if (!a.is_flag()) usage_error("calibrate: unexpected argument '" + arg + "'");
    const std::string f = a.flag();
    if (f == "--go") {
      o.go = a.value();
    } else if (f == "--cpus") {
      o.cpus = a.value();
      o.cpus_given = true;
      parse_list("--cpus", o.cpus, 1, scenario::kMaxProcs);
    } else if (f == "--count") {
      o.count = static_cast<int>(parse_uint("--count", a.value(), 1, 100));
    } else if (f == "--benchtime") {
      o.benchtime = a.value();
      if (o.benchtime.empty() || o.benchtime.find_first_of("'\"\\ ") != std::string::npos) {
        usage_error("calibrate: bad --benchtime");
      }
    } else if (f == "--profile") {
      o.base = a.value();
    } else if (f == "--out") {
      o.out = a.value();
    } else if (f == "--suite") {
      o.suite_dir = a.value();
    } else if (f == "--heldout") {
      o.heldout_dir = a.value();
    } else if (f == "--measured") {
      o.measured = a.value();
    } else if (f == "--measured-heldout") {
      o.measured_heldout = a.value();
    } else if (f == "--jobs") {
      o.jobs = static_cast<size_t>(parse_uint("--jobs", a.value(), 1, 256));
    } else if (f == "--max-evaluations") {
      o.max_evals = static_cast<int>(parse_uint("--max-evaluations", a.value(), 1, 100000));
    } else if (f == "--regularize") {
      const std::string v = a.value();
      char* end = nullptr;
      o.regularize = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(o.regularize >= 0) || o.regularize > 1000) {
        usage_error("calibrate: --regularize: expected a number from 0 to 1000, got '" + v + "'");
      }
    } else if (f == "--gc-weight") {
      const std::string v = a.value();
      char* end = nullptr;
      o.gc_weight = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(o.gc_weight >= 0) || o.gc_weight > 100) {
        usage_error("calibrate: --gc-weight: expected a number from 0 to 100, got '" + v + "'");
      }
    } else if (f == "--no-cross-validate") {
      o.cross_validate = false;
    } else if (f == "--cv-evaluations") {
      o.cv_evals = static_cast<int>(parse_uint("--cv-evaluations", a.value(), 1, 100000));
    } else if (f == "--placement") {
      o.placement = a.value();
      if (o.placement != "spread" && o.placement != "affine") {
        usage_error("calibrate: --placement: expected spread or affine");
      }
    } else if (f == "--params") {
      o.params_given = true;
      o.params.clear();
      std::stringstream ss(a.value());
      for (std::string n; std::getline(ss, n, ',');) {
        try {
          o.params.push_back(calibration::fit_param_by_name(n));
        } catch (const std::invalid_argument& e) {
          usage_error(std::string("calibrate: --params: ") + e.what());
        }
      }
    } else {
      usage_error("calibrate: unknown flag '" + f + "'");
    }
  }
  if (o.go.empty()) o.go = access("/usr/lib/go-1.23/bin/go", X_OK) == 0 ? "/usr/lib/go-1.23/bin/go" : "go";
  if (fs::is_directory(o.go)) o.go += "/bin/go";  // a GOROOT
  return o;
}

// What a calibration found: the profile it started from, what it fitted, and each set's points
// simulated before and after.
struct Calibration {
  cost::Profile start;  // the base, with its speed measured when the suite has BenchmarkCPU
  std::vector<calibration::FitParam> params;  // those fitted
  std::vector<Set> sets;                      // the fit suite, then the held-out set if any
  calibration::FitResult fit;
  std::vector<std::vector<double>> before, after;  // per set, per point: simulated ns/op
  std::vector<Errors> errors;                      // per set, after the fit
  std::vector<double> cv;  // per fit-suite point: predicted by the fit without its benchmark; empty: none
  Errors cv_errors;
  std::string cv_worst;    // the point of the worst cross-validation error
};

// The base profile with --placement; affine placement adds its own costs to those fitted.
cost::Profile starting_profile(const CalibrateOptions& o, std::vector<calibration::FitParam>& params) {
  RunOptions ro;
  ro.profile = o.base;
  cost::Profile start = load_profile_option(ro);
  if (!o.placement.empty()) start.machine.os_placement = o.placement;
  if (start.machine.os_placement == "affine") {
    // Affine placement follows the kernel's constants (machine.linux_scheduler), which are not
    // fitted; its two costs are.
    if (!start.machine.linux_scheduler.has) {
      usage_error("calibrate: affine placement needs machine.linux_scheduler in the base profile (docs/placement.md)");
    }
    if (!o.params_given) {
      for (const char* n : {"os_idle_exit_latency", "os_wake_ipi"}) params.push_back(calibration::fit_param_by_name(n));
    }
  }
  return start;
}

// The speed is measured, not fitted, when the suite has BenchmarkCPU at 1 P (unless --params names
// it): that benchmark is compute and nothing else, so the speed that matches it is the base's
// scaled by measured over simulated. A fitted speed drifts to trade CPU-bound points against the
// costs of others. The base's speed is replaced before the fit, so "before" includes it.
void measure_speed(const CalibrateOptions& o, const Set& suite, Calibration& c) {
  const auto speed_param = std::find_if(c.params.begin(), c.params.end(), [](const auto& f) { return f.speed; });
  for (const calibration::Point& p : suite.points) {
    if (o.params_given || speed_param == c.params.end() || p.bench != "BenchmarkCPU" || p.procs != 1) continue;
    const double sim = calibration::simulate_points({p}, c.start, 1)[0];
    if (!(sim > 0) || !std::isfinite(sim)) {
      std::fprintf(stderr, "calibrate: BenchmarkCPU did not run at 1 P; speed_ns_per_iteration is fitted\n");
      break;
    }
    cost::Sourced& speed = c.start.machine.speed_ns_per_iteration;
    const double was = speed.value;
    speed.value = std::clamp(was * p.measured / sim, cost::kMinNsPerIteration, cost::kMaxNsPerIteration);
    char figures[160];
    std::snprintf(figures, sizeof figures, "median %.1f ns/op, spread %.1f%%", p.measured, 100 * p.spread);
    char from[64];
    std::snprintf(from, sizeof from, "%.6g", was);
    speed.source = std::string("measured: BenchmarkCPU at -cpu 1, ") + figures + " (" +
                   (o.measured.empty() ? "go test -bench of sim/calibration/suite" : o.measured) +
                   "), by gmpsim calibrate: " + from + " ns/iteration scaled by measured over simulated";
    std::fprintf(stderr, "calibrate: speed_ns_per_iteration %.4g -> %.4g, measured by BenchmarkCPU at 1 P "
                 "(not fitted)\n", was, speed.value);
    c.params.erase(speed_param);
    break;
  }
}

// Leave-one-benchmark-out cross-validation of the fit: each leave-one-out fit starts from the full
// fit's profile with a first factor of kCvFirstFactor and o.cv_evals runs, its penalty still
// pulling toward the base (c.start), as the full fit's did.
constexpr double kCvFirstFactor = 1.25;

void cross_validate_fit(const CalibrateOptions& o, calibration::FitOptions fo, Calibration& c) {
  fo.first_factor = kCvFirstFactor;
  fo.max_evaluations = o.cv_evals;
  fo.anchor = &c.start;
  std::fprintf(stderr, "calibrate: cross-validating: one fit per benchmark left out, at most %d runs each\n",
               o.cv_evals);
  const bool tty = isatty(STDERR_FILENO) != 0;
  c.cv = calibration::cross_validate(c.sets[0].points, c.fit.profile, fo, [tty](const std::string& l) {
    std::fprintf(stderr, "calibrate: %s\n", l.c_str());
    if (tty) std::fflush(stderr);
  });
  if (c.cv.empty()) {
    std::fprintf(stderr, "calibrate: cross-validation needs two benchmarks or more in the fit suite; none done\n");
    return;
  }
  c.cv_errors = errors_of(c.sets[0], c.cv);
  double worst = -1;
  for (size_t i = 0; i < c.cv.size(); ++i) {
    const Point& p = c.sets[0].points[i];
    const double e = std::isfinite(c.cv[i]) ? std::abs(relative_error(c.cv[i], p.measured)) : 1e9;
    if (e > worst) {
      worst = e;
      c.cv_worst = p.bench + " at " + std::to_string(p.procs) + " P";
    }
  }
}

// Measures (or reads) each set, fits the suite and simulates both sets with the fitted profile.
// Progress goes to stderr; 1 when there is nothing to fit or the output cannot be written.
int run_calibration(const CalibrateOptions& o, Calibration& c) {
  if (!o.out.empty()) {
    try {
      trace::output_target(o.out);
    } catch (const trace::OutputError& e) {
      std::fprintf(stderr, "gmpsim: cannot write %s\n", e.what());
      return 1;
    }
    // The profile is written after minutes of measuring and fitting: a folder that is missing or
    // read-only is said now, not then.
    const fs::path dir = fs::path(o.out).has_parent_path() ? fs::path(o.out).parent_path() : fs::path(".");
    if (!fs::is_directory(dir) || ::access(dir.c_str(), W_OK) != 0) {
      std::fprintf(stderr, "gmpsim: cannot write %s: %s is not a folder this user may write into\n", o.out.c_str(),
                   dir.c_str());
      return 1;
    }
  }
  c.params = o.params;
  c.start = starting_profile(o, c.params);

  c.sets.push_back(Set{"fit suite", find_dir(o.suite_dir), {}, {}, {}, {}, {}});
  if (o.heldout_dir != "none") c.sets.push_back(Set{"held-out", find_dir(o.heldout_dir), {}, {}, {}, {}, {}});
  for (size_t i = 0; i < c.sets.size(); ++i) {
    Set& s = c.sets[i];
    load_scenarios(s);
    const std::string& file = i == 0 ? o.measured : o.measured_heldout;
    if (!file.empty()) {
      s.output = read_measurements(file);
      // --cpus with saved measurements: the points at those GOMAXPROCS values only.
      std::vector<int32_t> only;
      if (o.cpus_given) {
        std::stringstream cs(o.cpus);
        for (std::string c; std::getline(cs, c, ',');) only.push_back(static_cast<int32_t>(std::stoi(c)));
      }
      make_points(s, file, only);
    } else {
      s.output = measure_set(s, o.go, o.cpus, o.count, o.benchtime, s.quiet, i == 0);
      make_points(s, s.label + " benchmarks", {});
    }
    if (s.points.empty()) {
      std::fprintf(stderr, "gmpsim: calibrate: no benchmark of %s has both a measurement and a scenario\n",
                   s.dir.c_str());
      return 1;
    }
  }
  measure_speed(o, c.sets[0], c);
  const std::string curve = calibration::measure_speed_curve(
      c.sets[0].points, c.start, o.jobs, o.measured.empty() ? "go test -bench of sim/calibration/suite" : o.measured);
  if (!curve.empty()) std::fprintf(stderr, "calibrate: %s (not fitted)\n", curve.c_str());
  std::fprintf(stderr, "calibrate: fitting %zu parameters to %zu points\n", c.params.size(), c.sets[0].points.size());
  calibration::FitOptions fo;
  fo.params = c.params;
  fo.jobs = o.jobs;
  fo.max_evaluations = o.max_evals;
  fo.regularize = o.regularize;
  fo.gc_weight = o.gc_weight;
  fo.progress = [](const std::string& l) { std::fprintf(stderr, "calibrate: %s\n", l.c_str()); };
  c.fit = calibration::fit_profile(c.sets[0].points, c.start, fo);
  if (o.cross_validate) cross_validate_fit(o, fo, c);
  for (const Set& s : c.sets) {
    c.before.push_back(calibration::simulate_points(s.points, c.start, o.jobs));
    c.after.push_back(calibration::simulate_points(s.points, c.fit.profile, o.jobs));
    c.errors.push_back(errors_of(s, c.after.back()));
  }
  return 0;
}

// "lo-hi" of a point's confidence interval, marked * when it covers less than 95%.
std::string ci_text(const Point& p) {
  char b[64];
  std::snprintf(b, sizeof b, "%.1f-%.1f%s", p.ci_lo, p.ci_hi, p.ci_level < 0.95 ? "*" : "");
  return b;
}

// The table of one set (benchmark x GOMAXPROCS: measured with its confidence interval and spread,
// simulated before and after, errors; for the fit suite, the cross-validation's prediction when
// `cv` is not empty) and its error figures.
void print_set(const Set& s, const std::vector<double>& before, const std::vector<double>& after, const Errors& e,
               const std::vector<double>& cv) {
  std::printf("\n%s (%s): ns/op, measured (median of n runs, its 95%% confidence interval, spread of the runs) "
              "against simulated\n", s.label.c_str(), s.dir.c_str());
  std::printf("%-28s %5s %3s %12s %23s %7s %12s %8s %12s %8s", "benchmark", "procs", "n", "measured", "CI95",
              "spread", "before", "error", "after", "error");
  std::printf(cv.empty() ? "\n" : " %12s %8s\n", "left out", "error");
  double least_level = 1;
  size_t least_n = 0;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const Point& p = s.points[i];
    if (p.ci_level < least_level) {
      least_level = p.ci_level;
      least_n = p.samples;
    }
    std::printf("%-28s %5d %3zu %12.1f %23s %6.1f%% %12.1f %+7.1f%% %12.1f %+7.1f%%", p.bench.c_str(), p.procs,
                p.samples, p.measured, ci_text(p).c_str(), 100 * p.spread, before[i],
                100 * relative_error(before[i], p.measured), after[i], 100 * relative_error(after[i], p.measured));
    if (cv.empty()) {
      std::printf("\n");
    } else {
      std::printf(" %12.1f %+7.1f%%\n", cv[i], 100 * relative_error(cv[i], p.measured));
    }
  }
  if (least_level < 0.95) {
    std::printf("* fewer than 6 runs: the interval is their min-max, which holds the median with probability %.1f%% "
                "(%zu run%s); more runs (--count) give 95%%\n", 100 * least_level, least_n, least_n == 1 ? "" : "s");
  }
  for (const std::string& n : s.unpaired) std::printf("%-28s (measured; no scenario to pair it with)\n", n.c_str());
  std::printf("%s after the fit: median |error| %.1f%%, worst %.1f%%; changes between GOMAXPROCS values: %d in the "
              "measured direction%s, %d against it%s, %d inside the noise (confidence intervals overlap)\n",
              s.label.c_str(), 100 * e.median_abs, 100 * e.worst_abs, e.right,
              e.right == 0 ? "" : (" (" + e.right_list.substr(2) + ")").c_str(), e.wrong,
              e.wrong == 0 ? "" : (" (" + e.wrong_list.substr(2) + ")").c_str(), e.noise);
  // The machine's own noise, for scale: an error inside a point's spread is one that another set of
  // runs on the same machine could have shown.
  std::printf("%s: %d of %zu points within their runs' spread; median spread %.1f%%\n", s.label.c_str(), e.within,
              s.points.size(), 100 * e.median_spread);
  if (s.quiet.runs > 0) {
    std::printf("%s measured: %d of %d runs not quiet, %d too short to tell (worst: other processes %.3f cores, "
                "steal %.1f%%)%s\n", s.label.c_str(), s.quiet.noisy, s.quiet.runs, s.quiet.unknown,
                s.quiet.worst_others, 100 * s.quiet.worst_steal,
                s.quiet.noisy > 0 ? "; the figures carry that load" : "");
  }
}

// The GC targets of a set (points whose loop collected): cycles per op and GC CPU share, measured
// from gctrace against simulated with the fitted profile.
void print_gc_targets(const Set& s, const cost::Profile& fitted, size_t jobs) {
  std::vector<Point> pts;
  for (const Point& p : s.points) {
    if (p.has_gc_target()) pts.push_back(p);
  }
  if (pts.empty()) return;
  const std::vector<calibration::SimPoint> sim = calibration::simulate_points_gc(pts, fitted, jobs);
  std::printf("\n%s: GC targets (GODEBUG=gctrace=1; the loop's cycles, after its last forced one)\n", s.label.c_str());
  std::printf("%-28s %5s %14s %14s %8s %10s %10s %8s\n", "benchmark", "procs", "cycles/op", "simulated", "error",
              "GC CPU", "simulated", "diff");
  for (size_t i = 0; i < pts.size(); ++i) {
    std::printf("%-28s %5d %14.4g %14.4g %+7.1f%% %9.1f%% %9.1f%% %+7.1f\n", pts[i].bench.c_str(), pts[i].procs,
                pts[i].gc_cycles_per_op, sim[i].gc_cycles_per_op,
                100 * relative_error(sim[i].gc_cycles_per_op, pts[i].gc_cycles_per_op), 100 * pts[i].gc_cpu_share,
                100 * sim[i].gc_cpu_share, 100 * (sim[i].gc_cpu_share - pts[i].gc_cpu_share));
  }
  std::printf("%s: GC error (fit.h gc_fit_error) %.4f\n", s.label.c_str(), calibration::gc_fit_error(pts, sim));
}

// The fitted parameters (and those that ended at a physical bound), then a table per set; the GC
// targets' simulations on `jobs` threads (--jobs), as every other simulation of calibrate.
void print_calibration(const Calibration& c, size_t jobs) {
  std::printf("calibrate: profile %s fitted to %s; mean |log error| %.4f before, %.4f after, regularisation "
              "penalty %.4f (%d runs of the suite)\n",
              c.start.origin.c_str(), c.sets[0].dir.c_str(), c.fit.error_before, c.fit.error_after,
              c.fit.penalty_after, c.fit.evaluations);
  std::printf("%-26s %12s %12s %21s\n", "parameter", "before", "after", "physical range");
  for (const calibration::FitParam& f : c.params) {
    const calibration::Range r = calibration::fit_range(f);
    char range[48];
    std::snprintf(range, sizeof range, "%.4g-%.4g", r.lo, r.hi);
    std::printf("%-26s %12.4g %12.4g %21s\n", f.name().c_str(), calibration::get(c.start, f),
                calibration::get(c.fit.profile, f), range);
  }
  for (const std::string& b : c.fit.at_bound) {
    std::printf("calibrate: %s: the fit wanted to go further; the model may be missing what this stands for\n",
                b.c_str());
  }
  for (size_t i = 0; i < c.sets.size(); ++i) {
    print_set(c.sets[i], c.before[i], c.after[i], c.errors[i], i == 0 ? c.cv : std::vector<double>{});
    print_gc_targets(c.sets[i], c.fit.profile, jobs);
  }
  if (!c.cv.empty()) {
    std::printf("cross-validation (each fit-suite benchmark predicted by a fit without it): median |error| %.1f%%, "
                "worst %.1f%% (%s)\n", 100 * c.cv_errors.median_abs, 100 * c.cv_errors.worst_abs, c.cv_worst.c_str());
  }
}

// The fitted profile at o.out and, beside it, the measurements it was fitted to (those read with
// --measured are cited where they are). 1 if a file cannot be written.
int write_calibration(const CalibrateOptions& o, const Calibration& c) {
  cost::Profile prof = c.fit.profile;
  const std::string suite_file = o.measured.empty() ? o.out + ".suite.txt" : o.measured;
  const std::string heldout_file = o.measured_heldout.empty() ? o.out + ".heldout.txt" : o.measured_heldout;
  char quality[160];
  std::snprintf(quality, sizeof quality, "mean |log error| %.4f over %zu points; median |error| %.1f%%, worst %.1f%%",
                c.fit.error_after, c.sets[0].points.size(), 100 * c.errors[0].median_abs,
                100 * c.errors[0].worst_abs);
  for (const calibration::FitParam& f : c.params) {
    if (calibration::get(prof, f) == calibration::get(c.start, f)) continue;
    cost::Sourced& s = calibration::sourced(prof, f);
    const std::string how = o.measured.empty()
                                ? " (go test -bench of " + c.sets[0].dir + ", -cpu " + o.cpus + ", -count " +
                                      std::to_string(o.count) + " interleaved, -benchtime " + o.benchtime + ")"
                                : " (saved go test -bench output of " + c.sets[0].dir + ")";
    char from[64];
    std::snprintf(from, sizeof from, "%.6g", calibration::get(c.start, f));
    s.source = "fitted by gmpsim calibrate to " + suite_file + how + ": " + quality + "; started from " + from +
               " (" + c.start.origin + ")";
  }
  std::string comment = "Fitted by gmpsim calibrate from " + c.start.origin + " to the Go benchmarks of " +
                        c.sets[0].dir + ";\nmeasurements: " + suite_file + ".\n" + quality + ".";
  char reg[120];
  std::snprintf(reg, sizeof reg, "Regularisation toward the base's values: --regularize %g (penalty %.4f).",
                o.regularize, c.fit.penalty_after);
  comment += std::string("\n") + reg;
  for (const std::string& b : c.fit.at_bound) comment += "\nEnded at a physical bound: " + b + ".";
  if (!c.cv.empty()) {
    char cv[200];
    std::snprintf(cv, sizeof cv,
                  "Leave-one-benchmark-out cross-validation (%d runs per fit): median |error| %.1f%%, worst %.1f%% (",
                  o.cv_evals, 100 * c.cv_errors.median_abs, 100 * c.cv_errors.worst_abs);
    comment += std::string("\n") + cv + c.cv_worst + ").";
  }
  if (c.sets.size() > 1) {
    char h[160];
    std::snprintf(h, sizeof h, "Held out (%s): median |error| %.1f%%, worst %.1f%%;\nmeasurements: ",
                  c.sets[1].dir.c_str(), 100 * c.errors[1].median_abs, 100 * c.errors[1].worst_abs);
    comment += std::string("\n") + h + heldout_file + ".";
  }
  prof.description = c.start.description;
  if (!prof.description.empty() && prof.description.back() != '.') prof.description += '.';
  prof.description += " Fitted by gmpsim calibrate (see the header).";
  try {
    if (o.measured.empty()) trace::write_output_file(suite_file, c.sets[0].output);
    if (c.sets.size() > 1 && o.measured_heldout.empty()) trace::write_output_file(heldout_file, c.sets[1].output);
    trace::write_output_file(o.out, cost::profile_text(prof, comment));
  } catch (const trace::OutputError& e) {
    std::fprintf(stderr, "gmpsim: cannot write %s\n", e.what());
    return 1;
  }
  std::printf("\nprofile: %s (measurements: %s%s)\n", o.out.c_str(), suite_file.c_str(),
              c.sets.size() > 1 ? (", " + heldout_file).c_str() : "");
  return 0;
}

}  // namespace

int cmd_calibrate(int argc, char** argv) {
  const CalibrateOptions o = parse_calibrate_flags(argc, argv);
  Calibration c;
  if (const int status = run_calibration(o, c); status != 0) return status;
  print_calibration(c, o.jobs);
  return o.out.empty() ? 0 : write_calibration(o, c);
}

}  // namespace gmp::cli
