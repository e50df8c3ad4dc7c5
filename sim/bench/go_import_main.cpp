// gmp_go_import_bench: the speed of `gmpsim trace import` (traces/import), as figures (never a
// test). For each input: the Go events a second of the reader alone (Go's ordering rules
// applied), of the reader and the converter with every schema event serialized in memory, and
// of the whole import into a trace file (two reader passes, the writer's file).
//   inputs: the largest Go test traces installed (first format: Go 1.19's and Go 1.23's v1 test
//   data; second format: Go 1.23's go122-gc-stress text test), and a synthetic second-format
//   trace of 10 million events (2 million with --quick): 4 Ms each running 2 goroutines that take turns, with
//   system calls, over 50 generations.
// Usage: gmp_go_import_bench [--quick] [FILE...]   (FILE: more Go traces to measure)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "traces/import/go_text_trace.h"
#include "traces/import/go_import.h"
#include "traces/trace_reader.h"

using namespace gmp::trace;
using namespace gmp::trace::go;

namespace {

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

void put_uvarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

// Event types of the second format used below (go_trace_v2.cpp has them all).
enum : uint8_t {
  kEventBatch = 1,
  kStacks = 2,
  kStack = 3,
  kStrings = 4,
  kString = 5,
  kFrequency = 8,
  kProcStatus = 13,
  kGoStart = 16,
  kGoBlock = 20,
  kGoUnblock = 21,
  kGoSyscallBegin = 22,
  kGoSyscallEnd = 23,
  kGoStatus = 25,
};

// Appends one batch of generation `gen` on M `m` starting at tick `time`.
void batch(std::string& out, uint64_t gen, uint64_t m, uint64_t time, const std::string& body) {
  out += static_cast<char>(kEventBatch);
  put_uvarint(out, gen);
  put_uvarint(out, m);
  put_uvarint(out, time);
  put_uvarint(out, body.size());
  out += body;
}

// A go 1.23 trace: `gens` generations; in each, every M runs `iters` rounds of its two Gs:
// the running one makes a system call, unblocks the other, blocks, and the other starts.
std::string synthetic_v2(int ms, int gens, int iters) {
  std::string out("go 1.23 trace\0\0\0", 16);
  const uint64_t kNoThread = ~uint64_t{0};
  std::vector<uint64_t> now(ms);
  std::vector<int> running(ms, 0);  // which of the M's two Gs runs
  for (int m = 0; m < ms; m++) now[m] = 1000 + 7 * m;
  for (int gen = 1; gen <= gens; gen++) {
    std::string body;
    body += static_cast<char>(kFrequency);
    put_uvarint(body, 1000000000);
    batch(out, gen, kNoThread, now[0], body);
    body.assign(1, static_cast<char>(kStacks));
    body += static_cast<char>(kStack);
    put_uvarint(body, 1);  // id
    put_uvarint(body, 2);  // frames
    for (uint64_t f : {0x401000, 1, 2, 10, 0x402000, 3, 2, 20}) put_uvarint(body, f);
    batch(out, gen, kNoThread, now[0], body);
    body.assign(1, static_cast<char>(kStrings));
    int id = 1;
    for (const char* s : {"main.worker", "/src/main.go", "main.main", "chan receive"}) {
      body += static_cast<char>(kString);
      put_uvarint(body, id++);
      put_uvarint(body, std::strlen(s));
      body += s;
    }
    batch(out, gen, kNoThread, now[0], body);
    for (int m = 0; m < ms; m++) {
      const uint64_t ga = 1 + 2 * static_cast<uint64_t>(m), gb = ga + 1;
      uint64_t cur = running[m] == 0 ? ga : gb, other = running[m] == 0 ? gb : ga;
      std::string ev;
      uint64_t start = now[m], last = now[m], pseq = 0, seq_cur = 0, seq_other = 0;
      auto emit = [&](uint8_t type, std::initializer_list<uint64_t> args) {
        ev += static_cast<char>(type);
        now[m] += 3 + (now[m] % 5);
        put_uvarint(ev, now[m] - last);
        last = now[m];
        for (uint64_t a : args) put_uvarint(ev, a);
        if (ev.size() > 60000) {  // batches stay under Go's 64 KiB
          batch(out, gen, 100 + m, start, ev);
          ev.clear();
          start = last = now[m];
        }
      };
      emit(kProcStatus, {static_cast<uint64_t>(m), 1});
      emit(kGoStatus, {cur, 100 + static_cast<uint64_t>(m), 2});
      emit(kGoStatus, {other, kNoThread, 4});
      for (int i = 0; i < iters; i++) {
        emit(kGoSyscallBegin, {++pseq, 1});
        emit(kGoSyscallEnd, {});
        emit(kGoUnblock, {other, ++seq_other, 1});
        emit(kGoBlock, {4, 1});
        emit(kGoStart, {other, ++seq_other});
        std::swap(cur, other);
        std::swap(seq_cur, seq_other);
        running[m] ^= 1;
      }
      if (!ev.empty()) batch(out, gen, 100 + m, start, ev);
    }
  }
  return out;
}

struct Input {
  std::string name;
  std::string data;
};

void measure(const Input& in, bool quick) {
  const int reps = quick ? 1 : 3;
  // The reader alone.
  uint64_t events = 0;
  double best_read = 1e9;
  for (int r = 0; r < reps; r++) {
    const double t0 = cpu_seconds();
    std::unique_ptr<GoTraceReader> reader = open_go_reader(in.name, in.data, FormatChoice::kAuto);
    GoEvent ev;
    events = 0;
    while (reader->next(ev)) events++;
    best_read = std::min(best_read, cpu_seconds() - t0);
  }
  // Reader and converter, every schema event serialized.
  double best_convert = 1e9;
  uint64_t written = 0;
  for (int r = 0; r < reps; r++) {
    std::string buf;
    uint64_t bytes = 0;
    const double t0 = cpu_seconds();
    ImportResult res = convert_go_trace(
        in.name, in.data, FormatChoice::kAuto, [](const Header&) {},
        [&](const Event& e) {
          buf.clear();
          e.SerializeToString(&buf);
          bytes += buf.size();
        });
    best_convert = std::min(best_convert, cpu_seconds() - t0);
    written = res.events_written;
  }
  // The whole import: file in, file out.
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string src = dir + "/gmp_go_import_bench." + std::to_string(getpid()) + ".in";
  const std::string dst = dir + "/gmp_go_import_bench." + std::to_string(getpid()) + ".out";
  std::ofstream(src, std::ios::binary) << in.data;
  double best_import = 1e9, best_wall = 1e9;
  for (int r = 0; r < reps; r++) {
    const auto w0 = std::chrono::steady_clock::now();
    const double t0 = cpu_seconds();
    import_go_trace(src, dst, FormatChoice::kAuto);
    best_import = std::min(best_import, cpu_seconds() - t0);
    best_wall = std::min(best_wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
  }
  const auto out_size = std::filesystem::file_size(dst);
  std::filesystem::remove(src);
  std::filesystem::remove(dst);
  auto rate = [&](double s) { return s > 0 ? static_cast<double>(events) / s / 1e6 : 0.0; };
  std::printf("%-40s %9zu bytes %9llu Go events -> %9llu schema events (%llu bytes)\n", in.name.c_str(), in.data.size(),
              static_cast<unsigned long long>(events), static_cast<unsigned long long>(written),
              static_cast<unsigned long long>(out_size));
  std::printf(
      "    read %7.2f M ev/s   read+convert+serialize %6.2f M ev/s   import to file %6.2f M ev/s "
      "(cpu %.3f s, wall %.3f s)\n",
      rate(best_read), rate(best_convert), rate(best_import), best_import, best_wall);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::vector<Input> inputs;
  try {
    for (int i = 1; i < argc; i++) {
      if (std::strcmp(argv[i], "--quick") == 0) {
        quick = true;
      } else {
        inputs.push_back({argv[i], read_file(argv[i])});
      }
    }
    for (const char* f : {"/usr/lib/go-1.19/src/internal/trace/testdata/stress_1_11_good",
                          "/usr/lib/go-1.23/src/internal/trace/internal/oldtrace/testdata/stress_1_21_good"}) {
      if (std::filesystem::exists(f)) inputs.push_back({f, read_file(f)});
    }
    const char* gc_stress = "/usr/lib/go-1.23/src/internal/trace/testdata/tests/go122-gc-stress.test";
    if (std::filesystem::exists(gc_stress)) {
      inputs.push_back({"go122-gc-stress.test (binary)", parse_text_trace(read_file(gc_stress)).binary});
    }
  } catch (const TraceFormatError& e) {
    std::printf("%s\n", e.what());
    return 1;
  }
  const int iters = quick ? 2000 : 10000;  // 5 events each, 4 Ms, 50 generations: 2 or 10 million
  inputs.push_back({"synthetic go 1.23, 4 Ms, 50 generations", synthetic_v2(4, 50, iters)});
  std::printf("gmp_go_import_bench: Go events a second (CPU time, best of %d)\n", quick ? 1 : 3);
  for (const Input& in : inputs) {
    try {
      measure(in, quick);
    } catch (const TraceFormatError& e) {
      std::printf("%s: %s\n", in.name.c_str(), e.what());
      return 1;
    }
  }
  return 0;
}
