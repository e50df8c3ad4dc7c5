// The second Go trace format. The ordering rules follow Go's internal/trace (order.go): an event
// is taken from an M's batch only when the states of the Gs and Ps it names allow it, with
// per-generation sequence numbers on G and P transitions that other Ms cause.
#include "traces/import/go_trace_v2.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "traces/import/go_header.h"
#include "traces/trace_reader.h"
#include "traces/varint.h"

namespace gmp::trace::go {
namespace {

// Wire event types of the second format.
enum : uint8_t {
  kEvNone = 0,
  kEvEventBatch,
  kEvStacks,
  kEvStack,
  kEvStrings,
  kEvString,
  kEvCPUSamples,
  kEvCPUSample,
  kEvFrequency,
  kEvProcsChange,
  kEvProcStart,
  kEvProcStop,
  kEvProcSteal,
  kEvProcStatus,
  kEvGoCreate,
  kEvGoCreateSyscall,
  kEvGoStart,
  kEvGoDestroy,
  kEvGoDestroySyscall,
  kEvGoStop,
  kEvGoBlock,
  kEvGoUnblock,
  kEvGoSyscallBegin,
  kEvGoSyscallEnd,
  kEvGoSyscallEndBlocked,
  kEvGoStatus,
  kEvSTWBegin,
  kEvSTWEnd,
  kEvGCActive,
  kEvGCBegin,
  kEvGCEnd,
  kEvGCSweepActive,
  kEvGCSweepBegin,
  kEvGCSweepEnd,
  kEvGCMarkAssistActive,
  kEvGCMarkAssistBegin,
  kEvGCMarkAssistEnd,
  kEvHeapAlloc,
  kEvHeapGoal,
  kEvGoLabel,
  kEvUserTaskBegin,
  kEvUserTaskEnd,
  kEvUserRegionBegin,
  kEvUserRegionEnd,
  kEvUserLog,
  kEvGoSwitch,  // Go 1.23
  kEvGoSwitchDestroy,
  kEvGoCreateBlocked,
  kEvGoStatusStack,
  kEvExperimentalBatch,
  kEvSync,  // Go 1.25
  kEvClockSnapshot,
  kEvEndOfGeneration,  // Go 1.26
  kNumEvents,
  kEvFirstExperimental = 128,  // the AllocFree experiment's events: Span .. GoroutineStackFree
  kEvLastExperimental = 136,
};

struct Spec {
  const char* name;
  uint8_t nargs;  // arguments after the timestamp delta (timed events) or in all (others)
  bool timed;
  int8_t stack_arg = -1;   // index (after the delta) of a stack id checked against the table
  int8_t stack_arg2 = -1;  // a second one (GoCreate's new stack)
  int8_t string_arg = -1;  // index of a string id checked against the table
  int8_t string_arg2 = -1;
};

constexpr std::array<Spec, kNumEvents> kSpecs = [] {
  std::array<Spec, kNumEvents> s{};
  s[kEvNone] = {"None", 0, false};
  s[kEvEventBatch] = {"EventBatch", 4, false};
  s[kEvStacks] = {"Stacks", 0, false};
  s[kEvStack] = {"Stack", 2, false};
  s[kEvStrings] = {"Strings", 0, false};
  s[kEvString] = {"String", 1, false};
  s[kEvCPUSamples] = {"CPUSamples", 0, false};
  s[kEvCPUSample] = {"CPUSample", 5, false};
  s[kEvFrequency] = {"Frequency", 1, false};
  s[kEvProcsChange] = {"ProcsChange", 2, true, 1};
  s[kEvProcStart] = {"ProcStart", 2, true};
  s[kEvProcStop] = {"ProcStop", 0, true};
  s[kEvProcSteal] = {"ProcSteal", 3, true};
  s[kEvProcStatus] = {"ProcStatus", 2, true};
  s[kEvGoCreate] = {"GoCreate", 3, true, 2, 1};
  s[kEvGoCreateSyscall] = {"GoCreateSyscall", 1, true};
  s[kEvGoStart] = {"GoStart", 2, true};
  s[kEvGoDestroy] = {"GoDestroy", 0, true};
  s[kEvGoDestroySyscall] = {"GoDestroySyscall", 0, true};
  s[kEvGoStop] = {"GoStop", 2, true, 1, -1, 0};
  s[kEvGoBlock] = {"GoBlock", 2, true, 1, -1, 0};
  s[kEvGoUnblock] = {"GoUnblock", 3, true, 2};
  s[kEvGoSyscallBegin] = {"GoSyscallBegin", 2, true, 1};
  s[kEvGoSyscallEnd] = {"GoSyscallEnd", 0, true};
  s[kEvGoSyscallEndBlocked] = {"GoSyscallEndBlocked", 0, true};
  s[kEvGoStatus] = {"GoStatus", 3, true};
  s[kEvSTWBegin] = {"STWBegin", 2, true, 1, -1, 0};
  s[kEvSTWEnd] = {"STWEnd", 0, true};
  s[kEvGCActive] = {"GCActive", 1, true};
  s[kEvGCBegin] = {"GCBegin", 2, true, 1};
  s[kEvGCEnd] = {"GCEnd", 1, true};
  s[kEvGCSweepActive] = {"GCSweepActive", 1, true};
  s[kEvGCSweepBegin] = {"GCSweepBegin", 1, true, 0};
  s[kEvGCSweepEnd] = {"GCSweepEnd", 2, true};
  s[kEvGCMarkAssistActive] = {"GCMarkAssistActive", 1, true};
  s[kEvGCMarkAssistBegin] = {"GCMarkAssistBegin", 1, true, 0};
  s[kEvGCMarkAssistEnd] = {"GCMarkAssistEnd", 0, true};
  s[kEvHeapAlloc] = {"HeapAlloc", 1, true};
  s[kEvHeapGoal] = {"HeapGoal", 1, true};
  s[kEvGoLabel] = {"GoLabel", 1, true, -1, -1, 0};
  s[kEvUserTaskBegin] = {"UserTaskBegin", 4, true, 3, -1, 2};
  s[kEvUserTaskEnd] = {"UserTaskEnd", 2, true, 1};
  s[kEvUserRegionBegin] = {"UserRegionBegin", 3, true, 2, -1, 1};
  s[kEvUserRegionEnd] = {"UserRegionEnd", 3, true, 2, -1, 1};
  s[kEvUserLog] = {"UserLog", 4, true, 3, -1, 1, 2};
  s[kEvGoSwitch] = {"GoSwitch", 2, true};
  s[kEvGoSwitchDestroy] = {"GoSwitchDestroy", 2, true};
  s[kEvGoCreateBlocked] = {"GoCreateBlocked", 3, true, 2, 1};
  s[kEvGoStatusStack] = {"GoStatusStack", 4, true, 3};
  s[kEvExperimentalBatch] = {"ExperimentalBatch", 4, false};
  s[kEvSync] = {"Sync", 0, false};
  s[kEvClockSnapshot] = {"ClockSnapshot", 3, true};
  s[kEvEndOfGeneration] = {"EndOfGeneration", 0, false};
  return s;
}();

constexpr std::array<const char*, 9> kExperimentalNames = {
    "Span",           "SpanAlloc",           "SpanFree",           "HeapObject", "HeapObjectAlloc", "HeapObjectFree",
    "GoroutineStack", "GoroutineStackAlloc", "GoroutineStackFree",
};
constexpr std::array<uint8_t, 9> kExperimentalArgs = {3, 3, 1, 2, 2, 1, 2, 2, 1};

constexpr uint64_t kMaxBatchSize = 64 << 10;
constexpr uint64_t kMaxFramesPerStack = 128;
constexpr uint64_t kMaxStringSize = 1 << 10;
constexpr int64_t kNone = -1;

// The last event type a version knows (Go's version.Specs()).
uint8_t last_type(int minor) {
  switch (minor) {
    case 22: return kEvUserLog;
    case 23: return kEvExperimentalBatch;
    case 25: return kEvClockSnapshot;
    default: return kEvEndOfGeneration;
  }
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Go's P and G status numbers on the wire.
enum : uint8_t { kGoBad, kGoRunnable, kGoRunning, kGoSyscall, kGoWaiting };
enum : uint8_t { kProcBad, kProcRunning, kProcIdle, kProcSyscall, kProcSyscallAbandoned };

GStatus g_status(uint64_t s) {
  switch (s) {
    case kGoRunnable: return GStatus::kRunnable;
    case kGoRunning: return GStatus::kRunning;
    case kGoSyscall: return GStatus::kSyscall;
    case kGoWaiting: return GStatus::kWaiting;
    default: return GStatus::kUnknown;
  }
}

PStatus p_status(uint64_t s) {
  switch (s) {
    case kProcRunning: return PStatus::kRunning;
    case kProcIdle: return PStatus::kIdle;
    case kProcSyscall: return PStatus::kSyscall;
    case kProcSyscallAbandoned: return PStatus::kSyscallAbandoned;
    default: return PStatus::kUnknown;
  }
}

const char* g_status_name(uint8_t s) {
  static constexpr const char* kNames[] = {"Bad", "Runnable", "Running", "Syscall", "Waiting"};
  return s < 5 ? kNames[s] : "Bad";
}
const char* p_status_name(uint8_t s) {
  static constexpr const char* kNames[] = {"Bad", "Running", "Idle", "Syscall", "SyscallAbandoned"};
  return s < 5 ? kNames[s] : "Bad";
}

struct Seq {
  uint64_t gen = 0;
  uint64_t seq = 0;
  bool succeeds(const Seq& b) const { return gen == b.gen && seq == b.seq + 1; }
};

// An in-flight range (STW, mark assist, sweep): its begin type and, for STW, its kind string.
struct Range {
  uint8_t type;
  uint64_t desc;
  bool operator==(const Range&) const = default;
};

struct RangeState {
  std::vector<Range> in_flight;
  bool has(const Range& r) const { return std::find(in_flight.begin(), in_flight.end(), r) != in_flight.end(); }
};

struct Region {
  uint64_t task;
  std::string_view name;
  bool operator==(const Region&) const = default;
};

struct GState {
  uint8_t status = kGoBad;
  Seq seq;
  std::vector<Region> regions;
  RangeState ranges;
  std::string_view stw_reason;  // of the world stop it is in (STWBegin's string)
};

struct PState {
  uint8_t status = kProcBad;
  Seq seq;
  RangeState ranges;
};

struct MState {
  int64_t g = kNone;
  int64_t p = kNone;
};

struct Ctx {
  int64_t g = kNone;
  int64_t p = kNone;
  int64_t m = kNone;
};

struct Batch {
  int64_t m;
  uint64_t time;
  uint64_t off;  // of its data in the file
  uint64_t size;
};

struct RawEvent {
  uint8_t type = 0;
  int64_t time = 0;
  std::array<uint64_t, 5> args{};
  uint64_t offset = 0;
};

// One M's batches of a generation and the position of the next event in them.
struct Cursor {
  int64_t m = kNone;
  MState* ms = nullptr;  // the ordering's state of m (none for kNone)
  size_t batches = 0;    // index into Generation::ms
  int64_t last_ts = 0;
  size_t idx = 0;
  uint64_t data_off = 0;
  RawEvent ev;
};

struct Frame {
  uint64_t func;
  uint64_t file;
  uint64_t line;
};

// A table of ids to values; id 0 always means "none" and holds the empty value.
template <class V>
struct Table {
  std::unordered_map<uint64_t, V> map;
  const V* get(uint64_t id) const {
    static const V kEmpty{};
    if (id == 0) return &kEmpty;
    auto it = map.find(id);
    return it == map.end() ? nullptr : &it->second;
  }
};

struct Generation {
  uint64_t gen = 0;
  std::vector<std::pair<int64_t, std::vector<Batch>>> ms;  // in the order each M first appears
  std::unordered_map<int64_t, size_t> m_index;
  uint64_t min_ts = 0;
  double freq = 0;  // ns per tick
  bool has_clock_snapshot = false;
  Table<std::string_view> strings;
  Table<std::vector<uint64_t>> stacks;
  std::unordered_map<uint64_t, Frame> pcs;
  std::unordered_map<uint64_t, std::string> stack_text;  // built on first use
};

// An event Advance accepted, waiting to be handed out: its string and stack ids are resolved
// when it leaves the queue.
struct Queued {
  GoEvent ev;
  uint64_t stack = 0, new_stack = 0;
  uint64_t str = 0, str2 = 0;
  bool has_stack = false, has_new_stack = false, has_str = false, has_str2 = false;
};

class V2Reader final : public GoTraceReader {
 public:
  V2Reader(const std::string& path, std::string_view data) : path_(path), data_(data) {
    GoHeader h = parse_go_header(path, data);
    if (h.format != GoFormat::kV2) throw TraceFormatError(path, 0, "not a trace of the second format (Go 1.22+)");
    minor_ = h.minor;
    last_type_ = last_type(minor_);
    pos_ = kHeaderBytes;
  }

  std::string go_version() const override { return "1." + std::to_string(minor_); }
  std::string_view type_name(uint8_t type) const override { return v2_type_name(type); }
  uint64_t generation() const override { return gen_.gen; }
  void rewind() override { *this = V2Reader(path_, data_); }

  bool next(GoEvent& out) override {
    for (;;) {
      if (queue_head_ < queue_.size()) {
        pop(out);
        return true;
      }
      if (frontier_.empty()) {
        if (!read_generation()) return false;
        continue;
      }
      advance_one();
    }
  }

 private:
  [[noreturn]] void fail(uint64_t offset, const std::string& what) const {
    throw TraceFormatError(path_, offset, what);
  }

  // ---- Bytes.

  uint64_t uvarint(uint64_t& pos, uint64_t end, const char* what) const {
    Varint v;  // traces/varint.h
    for (;;) {
      if (pos >= end) fail(pos, std::string("truncated varint (") + what + ")");
      const Varint::Step step = v.push(static_cast<uint8_t>(data_[pos++]));
      if (v.overflows()) fail(pos - 1, std::string("varint overflows 64 bits (") + what + ")");
      if (step == Varint::Step::Done) return v.value();
    }
  }

  int64_t ns(uint64_t ticks, uint64_t offset) const {
    double v = static_cast<double>(ticks) * gen_.freq;
    if (!(v < 9.2e18)) fail(offset, "timestamp out of range");
    return static_cast<int64_t>(v);
  }

  // ---- Generations.

  // Reads the next generation's batches and tables; false at the end of the trace.
  bool read_generation() {
    if (deferred_error_ != nullptr) throw *deferred_error_;
    if (done_) return false;
    gen_ = Generation{};
    if (spill_) {
      gen_.gen = spill_gen_;
      gen_.min_ts = spill_batch_.time;
      if (spill_exp_ == 0) process_batch(spill_batch_, spill_off_);
      spill_ = false;
    }
    bool ended = false;
    for (;;) {
      if (pos_ >= data_.size()) {
        if (minor_ >= 26 && gen_.gen != 0) fail(pos_, "incomplete generation: trace likely truncated");
        done_ = true;
        break;
      }
      uint64_t start = pos_;
      uint64_t gen = 0;
      Batch b{};
      bool end_of_gen = false;
      uint8_t exp = 0;
      if (minor_ >= 26 || gen_.gen == 0) {
        exp = read_batch(b, gen, end_of_gen);
      } else {
        // Go reports a bad batch after the generation before it, whose events may well be
        // fine (and whose own errors come first).
        try {
          exp = read_batch(b, gen, end_of_gen);
        } catch (const TraceFormatError& e) {
          deferred_error_ = std::make_unique<TraceFormatError>(e);
          done_ = true;
          break;
        }
      }
      if (end_of_gen) {
        ended = true;
        break;
      }
      if (gen == 0) fail(start, "invalid generation number 0");
      if (gen_.gen == 0) gen_.gen = gen;
      if (minor_ >= 26) {
        if (gen != gen_.gen)
          fail(start, "broken trace: missing end-of-generation event, or generations are interleaved");
      } else if (gen != gen_.gen) {
        if (gen == gen_.gen + 1) {
          spill_ = true;
          spill_gen_ = gen;
          spill_batch_ = b;
          spill_exp_ = exp;
          spill_off_ = start;
          break;
        }
        fail(start, "generations out of order: batch of generation " + std::to_string(gen) + " after generation " +
                        std::to_string(gen_.gen));
      }
      if (gen_.min_ts == 0 || b.time < gen_.min_ts) gen_.min_ts = b.time;
      if (exp != 0) continue;  // experimental data: not scheduler events
      process_batch(b, start);
    }
    if (gen_.gen == 0 && !ended) return false;  // nothing more
    if (gen_.freq == 0) fail(pos_, "generation " + std::to_string(gen_.gen) + " has no frequency event");
    if (minor_ >= 25 && !gen_.has_clock_snapshot) {
      fail(pos_, "generation " + std::to_string(gen_.gen) + " has no clock snapshot event");
    }
    validate_stacks();
    if (initial_gen_ == 0) initial_gen_ = gen_.gen;
    // Go's reader hands out a sync event at the generation's first batch time, which the strictly
    // increasing timestamps must pass.
    last_ts_ = std::max(last_ts_ + 1, ns(gen_.min_ts, pos_));
    for (size_t i = 0; i < gen_.ms.size(); i++) {
      Cursor c;
      c.m = gen_.ms[i].first;
      if (c.m != kNone) c.ms = &ms_[c.m];
      c.batches = i;
      if (next_event(c)) heap_insert(std::move(c));
    }
    return true;
  }

  // Reads one batch header at pos_ and skips its data; returns the experiment number.
  uint8_t read_batch(Batch& b, uint64_t& gen, bool& end_of_gen) {
    uint64_t start = pos_;
    uint8_t typ = static_cast<uint8_t>(data_[pos_++]);
    if (minor_ >= 26 && typ == kEvEndOfGeneration) {
      end_of_gen = true;
      return 0;
    }
    if (typ != kEvEventBatch && typ != kEvExperimentalBatch) {
      fail(start, "expected a batch (EventBatch), got event type " + std::to_string(typ));
    }
    uint8_t exp = 0;
    if (typ == kEvExperimentalBatch) {
      if (minor_ < 23) fail(start, "experimental batch in a go 1.22 trace");
      if (pos_ >= data_.size()) fail(pos_, "truncated batch header");
      exp = static_cast<uint8_t>(data_[pos_++]);
    }
    uint64_t end = data_.size();
    gen = uvarint(pos_, end, "batch generation");
    b.m = static_cast<int64_t>(uvarint(pos_, end, "batch M"));
    b.time = uvarint(pos_, end, "batch timestamp");
    uint64_t size_at = pos_;
    b.size = uvarint(pos_, end, "batch size");
    if (b.size > kMaxBatchSize) {
      fail(size_at, "invalid batch size " + std::to_string(b.size) + ", maximum is " + std::to_string(kMaxBatchSize));
    }
    if (b.size > data_.size() - pos_) {
      fail(pos_, "batch cut short: " + std::to_string(b.size) + " bytes announced, " +
                     std::to_string(data_.size() - pos_) + " left");
    }
    b.off = pos_;
    pos_ += b.size;
    return exp;
  }

  void process_batch(const Batch& b, uint64_t start) {
    if (b.size == 0) {
      add_event_batch(b);
      return;
    }
    uint8_t first = static_cast<uint8_t>(data_[b.off]);
    if (first == kEvStrings) {
      add_strings(b);
    } else if (first == kEvStacks) {
      add_stacks(b);
    } else if (first == kEvCPUSamples) {
      check_cpu_samples(b);  // not scheduler events, but Go refuses malformed ones
    } else if ((minor_ < 25 && first == kEvFrequency) || (minor_ >= 25 && first == kEvSync)) {
      add_sync(b);
    } else if (minor_ >= 26 && first == kEvEndOfGeneration) {
      fail(start, "unexpected EndOfGeneration inside a batch");
    } else {
      add_event_batch(b);
    }
  }

  void add_event_batch(const Batch& b) {
    auto [it, fresh] = gen_.m_index.try_emplace(b.m, gen_.ms.size());
    if (fresh) gen_.ms.emplace_back(b.m, std::vector<Batch>{});
    gen_.ms[it->second].second.push_back(b);
  }

  void add_strings(const Batch& b) {
    uint64_t pos = b.off + 1, end = b.off + b.size;
    while (pos < end) {
      uint64_t at = pos;
      uint8_t ev = static_cast<uint8_t>(data_[pos++]);
      if (ev != kEvString) fail(at, "expected a String event in a strings batch, got type " + std::to_string(ev));
      uint64_t id = uvarint(pos, end, "string id");
      uint64_t len = uvarint(pos, end, "string length");
      if (len > kMaxStringSize) {
        fail(at, "invalid string size " + std::to_string(len) + ", maximum is " + std::to_string(kMaxStringSize));
      }
      if (len > end - pos) fail(pos, "string cut short");
      if (id == 0 || !gen_.strings.map.emplace(id, data_.substr(pos, len)).second) {
        fail(at, "multiple strings with the same id " + std::to_string(id));
      }
      pos += len;
    }
  }

  void add_stacks(const Batch& b) {
    uint64_t pos = b.off + 1, end = b.off + b.size;
    while (pos < end) {
      uint64_t at = pos;
      uint8_t ev = static_cast<uint8_t>(data_[pos++]);
      if (ev != kEvStack) fail(at, "expected a Stack event in a stacks batch, got type " + std::to_string(ev));
      uint64_t id = uvarint(pos, end, "stack id");
      uint64_t n = uvarint(pos, end, "stack frame count");
      if (n > kMaxFramesPerStack) {
        fail(at, "invalid stack size " + std::to_string(n) + ", maximum is " + std::to_string(kMaxFramesPerStack));
      }
      std::vector<uint64_t> frames;
      frames.reserve(n);
      for (uint64_t i = 0; i < n; i++) {
        uint64_t pc = uvarint(pos, end, "frame pc");
        Frame f;
        f.func = uvarint(pos, end, "frame function");
        f.file = uvarint(pos, end, "frame file");
        f.line = uvarint(pos, end, "frame line");
        frames.push_back(pc);
        gen_.pcs.try_emplace(pc, f);
      }
      if (id == 0 || !gen_.stacks.map.emplace(id, std::move(frames)).second) {
        fail(at, "multiple stacks with the same id " + std::to_string(id));
      }
    }
  }

  void check_cpu_samples(const Batch& b) {
    uint64_t pos = b.off + 1, end = b.off + b.size;
    while (pos < end) {
      const uint64_t at = pos;
      const uint8_t ev = static_cast<uint8_t>(data_[pos++]);
      if (ev != kEvCPUSample)
        fail(at, "expected a CPUSample event in a CPU samples batch, got type " + std::to_string(ev));
      for (const char* what : {"sample time", "sample M", "sample P", "sample G", "sample stack"})
        uvarint(pos, end, what);
    }
  }

  void add_sync(const Batch& b) {
    uint64_t pos = b.off, end = b.off + b.size;
    if (minor_ >= 25) pos++;  // the Sync byte
    while (pos < end) {
      uint64_t at = pos;
      uint8_t ev = static_cast<uint8_t>(data_[pos++]);
      if (ev == kEvFrequency) {
        if (gen_.freq != 0) fail(at, "multiple frequency events in one generation");
        uint64_t f = uvarint(pos, end, "frequency");
        if (f == 0) fail(at, "frequency 0");
        gen_.freq = 1.0 / (static_cast<double>(f) / 1e9);
      } else if (ev == kEvClockSnapshot && minor_ >= 25) {
        if (gen_.has_clock_snapshot) fail(at, "multiple clock snapshot events in one generation");
        gen_.has_clock_snapshot = true;
        (void)uvarint(pos, end, "clock snapshot time");
        (void)uvarint(pos, end, "clock snapshot mono");
        (void)uvarint(pos, end, "clock snapshot seconds");
        (void)uvarint(pos, end, "clock snapshot nanoseconds");
      } else {
        fail(at, "expected a frequency or clock snapshot event, got type " + std::to_string(ev));
      }
    }
  }

  void validate_stacks() {
    // Go checks every stack of the generation; the stack ids are visited in increasing order so
    // that the first error reported does not depend on hashing.
    std::vector<uint64_t> ids;
    ids.reserve(gen_.stacks.map.size());
    for (const auto& kv : gen_.stacks.map) ids.push_back(kv.first);
    std::sort(ids.begin(), ids.end());
    for (uint64_t id : ids) {
      for (uint64_t pc : gen_.stacks.map[id]) {
        auto it = gen_.pcs.find(pc);
        if (it == gen_.pcs.end()) fail(pos_, "unknown pc " + hex(pc) + " in stack " + std::to_string(id));
        if (gen_.strings.get(it->second.func) == nullptr) {
          fail(pos_,
               "invalid function string id " + std::to_string(it->second.func) + " in stack " + std::to_string(id));
        }
        if (gen_.strings.get(it->second.file) == nullptr) {
          fail(pos_, "invalid file string id " + std::to_string(it->second.file) + " in stack " + std::to_string(id));
        }
      }
    }
  }

  const std::string& stack_text(uint64_t id) {
    static const std::string kEmpty;
    if (id == 0) return kEmpty;
    auto [it, fresh] = gen_.stack_text.try_emplace(id);
    if (fresh) {
      std::string& s = it->second;
      for (uint64_t pc : gen_.stacks.map[id]) {
        const Frame& f = gen_.pcs[pc];
        if (!s.empty()) s += '\n';
        s += *gen_.strings.get(f.func);
        s += ' ';
        s += *gen_.strings.get(f.file);
        s += ':';
        s += std::to_string(f.line);
      }
    }
    return it->second;
  }

  // ---- Batch cursors and the frontier (a min-heap on time, as Go's).

  bool next_event(Cursor& c) {
    const std::vector<Batch>& batches = gen_.ms[c.batches].second;
    while (c.idx < batches.size() && batches[c.idx].size == c.data_off) {
      c.idx++;
      c.data_off = 0;
      c.last_ts = 0;
    }
    if (c.idx == batches.size()) return false;
    const Batch& b = batches[c.idx];
    if (c.last_ts == 0) c.last_ts = ns(b.time, b.off);
    uint64_t pos = b.off + c.data_off, end = b.off + b.size;
    RawEvent& e = c.ev;
    e.offset = pos;
    e.type = static_cast<uint8_t>(data_[pos++]);
    uint8_t nargs;
    if (e.type >= kEvFirstExperimental && e.type <= kEvLastExperimental && minor_ >= 23) {
      nargs = kExperimentalArgs[e.type - kEvFirstExperimental];
    } else if (e.type > last_type_ || e.type >= kNumEvents) {
      fail(e.offset, "invalid event type " + std::to_string(e.type) + " for go 1." + std::to_string(minor_));
    } else if (!kSpecs[e.type].timed) {
      fail(e.offset, std::string("event without a timestamp in an event batch: ") + kSpecs[e.type].name);
    } else {
      nargs = kSpecs[e.type].nargs;
    }
    uint64_t dt = uvarint(pos, end, "event time");
    for (uint8_t i = 0; i < nargs; i++) e.args[i] = uvarint(pos, end, "event argument");
    for (uint8_t i = nargs; i < e.args.size(); i++) e.args[i] = 0;
    e.time = static_cast<int64_t>(static_cast<uint64_t>(ns(dt, e.offset)) + static_cast<uint64_t>(c.last_ts));
    c.last_ts = e.time;
    c.data_off = pos - b.off;
    return true;
  }

  // A GC mark worker's GoStart is followed, in its M's batch, by a GoLabel naming the worker's
  // mode ("GC (dedicated)"): the start just queued gets the label as its reason, as the first
  // format's GoStartLabel has it. (The GoLabel itself is read as any other.)
  void label_start(const RawEvent& next) {
    if (next.type != kEvGoLabel || queue_.empty() || queue_.back().ev.kind != GoKind::kGoStart) return;
    const std::string_view* label = gen_.strings.get(next.args[0]);
    if (label != nullptr && label->rfind("GC (", 0) == 0) queue_.back().ev.reason = *label;
  }

  // Moves frontier_[i] up to its place; returns where it ends.
  size_t sift_up(size_t i) {
    while (i > 0 && frontier_[(i - 1) / 2].ev.time > frontier_[i].ev.time) {
      std::swap(frontier_[(i - 1) / 2], frontier_[i]);
      i = (i - 1) / 2;
    }
    return i;
  }
  void sift_down(size_t i) {
    for (;;) {
      size_t m = i;
      int64_t min_t = frontier_[i].ev.time;
      for (size_t c : {2 * i + 1, 2 * i + 2}) {
        if (c < frontier_.size() && frontier_[c].ev.time < min_t) {
          min_t = frontier_[c].ev.time;
          m = c;
        }
      }
      if (m == i) return;
      std::swap(frontier_[i], frontier_[m]);
      i = m;
    }
  }
  void heap_insert(Cursor c) {
    frontier_.push_back(std::move(c));
    sift_up(frontier_.size() - 1);
  }
  void heap_update(size_t i) {
    if (sift_up(i) != i) return;
    sift_down(i);
  }
  void heap_remove(size_t i) {
    while (i > 0) {
      std::swap(frontier_[(i - 1) / 2], frontier_[i]);
      i = (i - 1) / 2;
    }
    std::swap(frontier_[0], frontier_.back());
    frontier_.pop_back();
    if (!frontier_.empty()) sift_down(0);
  }

  bool try_advance(size_t i) {
    Cursor& c = frontier_[i];
    if (!advance(c.ev, c.m, c.ms)) return false;
    const bool started = c.ev.type == kEvGoStart;
    if (next_event(frontier_[i])) {
      if (started) label_start(frontier_[i].ev);
      heap_update(i);
    } else {
      heap_remove(i);
    }
    return true;
  }

  void advance_one() {
    if (try_advance(0)) return;
    std::stable_sort(frontier_.begin(), frontier_.end(),
                     [](const Cursor& a, const Cursor& b) { return a.ev.time < b.ev.time; });
    for (size_t i = 1; i < frontier_.size(); i++) {
      if (try_advance(i)) return;
    }
    const RawEvent& e = frontier_[0].ev;
    fail(e.offset, "broken trace: no M can advance in generation " + std::to_string(gen_.gen) + " (first pending: " +
                       kSpecs[e.type < kNumEvents ? e.type : 0].name + " on M " + std::to_string(frontier_[0].m) + ")");
  }

  // ---- Ordering (Go's order.go): true if the event could be taken now; throws if it never can.

  Queued& push(const RawEvent& e, const Ctx& ctx, GoKind kind) {
    Queued& q = queue_.emplace_back();  // a reference valid until the next push
    q.ev.kind = kind;
    q.ev.type = e.type;
    q.ev.ts = e.time;
    q.ev.g = ctx.g;
    q.ev.p = ctx.p;
    q.ev.m = ctx.m;
    q.ev.offset = e.offset;
    if (e.type < kNumEvents) {
      const Spec& s = kSpecs[e.type];
      if (s.stack_arg >= 0) q.stack = e.args[s.stack_arg], q.has_stack = true;
      if (s.stack_arg2 >= 0) q.new_stack = e.args[s.stack_arg2], q.has_new_stack = true;
      if (s.string_arg >= 0) q.str = e.args[s.string_arg], q.has_str = true;
      if (s.string_arg2 >= 0) q.str2 = e.args[s.string_arg2], q.has_str2 = true;
    }
    return q;
  }

  enum Req { kMustNot, kMay, kMust };
  void need(const RawEvent& e, const Ctx& c, Req m, Req p, Req g) const {
    auto check = [&](int64_t v, Req r, const char* what) {
      if (r == kMust && v == kNone) {
        fail(e.offset, std::string(name(e.type)) + ": expected a " + what + " but didn't have one");
      }
      if (r == kMustNot && v != kNone)
        fail(e.offset, std::string(name(e.type)) + ": expected no " + what + " but had one");
    };
    check(c.m, m, "thread");
    check(c.p, p, "proc");
    check(c.g, g, "goroutine");
  }
  void need_user(const RawEvent& e, const Ctx& c) const { need(e, c, kMust, kMust, kMust); }

  static const char* name(uint8_t type) {
    if (type < kNumEvents) return kSpecs[type].name;
    if (type >= kEvFirstExperimental && type <= kEvLastExperimental)
      return kExperimentalNames[type - kEvFirstExperimental];
    return "Invalid";
  }

  GState* g_state(int64_t g) {
    auto it = gs_.find(g);
    return it == gs_.end() ? nullptr : &it->second;
  }
  PState* p_state(int64_t p) {
    auto it = ps_.find(p);
    return it == ps_.end() ? nullptr : &it->second;
  }
  GState& cur_g(const RawEvent& e, const Ctx& c) {
    GState* s = g_state(c.g);
    if (s == nullptr)
      fail(e.offset, std::string(name(e.type)) + " for goroutine " + std::to_string(c.g) + " that doesn't exist");
    return *s;
  }

  std::string_view string_of(uint64_t id, const RawEvent& e) const {
    const std::string_view* s = gen_.strings.get(id);
    if (s == nullptr) fail(e.offset, "invalid string id " + std::to_string(id) + " for " + name(e.type) + " event");
    return *s;
  }

  static Range range_of(uint8_t type, uint64_t desc) {
    switch (type) {
      case kEvSTWEnd: type = kEvSTWBegin; break;
      case kEvGCSweepActive:
      case kEvGCSweepEnd: type = kEvGCSweepBegin; break;
      case kEvGCMarkAssistActive:
      case kEvGCMarkAssistEnd: type = kEvGCMarkAssistBegin; break;
      default: break;
    }
    return Range{type, desc};
  }
  void begin_range(RangeState& s, const Range& r, const RawEvent& e) const {
    if (s.has(r)) fail(e.offset, std::string("range already in flight when starting ") + name(r.type));
    s.in_flight.push_back(r);
  }
  void active_range(RangeState& s, const Range& r, bool initial, const RawEvent& e) const {
    if (initial) {
      if (s.has(r)) fail(e.offset, std::string("range already active in the first generation: ") + name(r.type));
      s.in_flight.push_back(r);
    } else if (!s.has(r)) {
      fail(e.offset, std::string("resource is missing active range ") + name(r.type));
    }
  }
  uint64_t end_range(RangeState& s, uint8_t type, const RawEvent& e) const {
    uint8_t begin = range_of(type, 0).type;
    for (size_t i = 0; i < s.in_flight.size(); i++) {
      if (s.in_flight[i].type == begin) {
        uint64_t desc = s.in_flight[i].desc;
        s.in_flight[i] = s.in_flight.back();
        s.in_flight.pop_back();
        return desc;
      }
    }
    fail(e.offset, std::string("tried to end ") + name(begin) + ", but it is not in flight");
  }

  // ---- The advance functions: one per event type, or per group of types handled alike, found
  // through a table indexed by the type (kAdvance, after the class), as in Go's internal/trace
  // (order.go's orderingDispatch). Each returns false when the event has to wait for another M's
  // events, throws when it can never be taken, and otherwise queues what it hands out and sets
  // `next`, the M's context after it.
  using Advance = bool (V2Reader::*)(const RawEvent& e, const Ctx& cur, Ctx& next);
  static const std::array<Advance, 256> kAdvance;

  // `ms` is m's state (ms_ keeps its nodes in place as it grows).
  bool advance(const RawEvent& e, int64_t m, MState* ms) {
    Ctx cur;
    cur.m = m;
    if (ms != nullptr) {
      cur.p = ms->p;
      cur.g = ms->g;
    }
    Ctx next = cur;
    const Advance step = kAdvance[e.type];
    if (step == nullptr) {
      fail(e.offset, "bad event type " + std::to_string(e.type) + " (" + name(e.type) + ") in an event batch");
    }
    const bool ok = (this->*step)(e, cur, next);
    if (ok && ms != nullptr) {
      ms->p = next.p;
      ms->g = next.g;
    }
    return ok;
  }

  // Whether the events being ordered are those of the trace's first generation.
  bool initial_gen() const { return gen_.gen == initial_gen_; }

  // Procs.

  bool advance_procs_change(const RawEvent& e, const Ctx& cur, Ctx&) {
    need_user(e, cur);
    push(e, cur, GoKind::kProcsChange).ev.value = e.args[0];
    return true;
  }

  bool advance_proc_status(const RawEvent& e, const Ctx& cur, Ctx& next) {
    const uint64_t gen = gen_.gen;
    int64_t pid = static_cast<int64_t>(e.args[0]);
    uint64_t status = e.args[1];
    if (status > kProcSyscallAbandoned) {
      fail(e.offset, "invalid status " + std::to_string(status) + " for proc " + std::to_string(pid));
    }
    PStatus old_status = p_status(status);
    bool abandoned_running = false;
    if (PState* s = p_state(pid)) {
      if (status == kProcSyscallAbandoned && s->status == kProcSyscall) {
        old_status = PStatus::kSyscall;
        abandoned_running = true;
      } else if (status == kProcSyscallAbandoned && s->status == kProcSyscallAbandoned) {
        old_status = PStatus::kSyscallAbandoned;
      } else if (s->status != status) {
        fail(e.offset, "inconsistent status for proc " + std::to_string(pid) + ": old " + p_status_name(s->status) +
                           " vs. new " + p_status_name(static_cast<uint8_t>(status)));
      }
      s->seq = Seq{gen, 0};
    } else {
      PState& ns = ps_[pid];
      ns.status = static_cast<uint8_t>(status);
      ns.seq = Seq{gen, 0};
      old_status = initial_gen() ? PStatus::kUnknown : PStatus::kNotExist;
    }
    if (status == kProcRunning || status == kProcSyscall) next.p = pid;
    Ctx ev_ctx = cur;
    if (abandoned_running) {
      // The P sits with an M in a syscall: the event is about that M (the lowest id if the
      // trace names several, so that the answer does not depend on hashing).
      int64_t found = kNone;
      for (const auto& [id, st] : ms_) {
        if (st.p == pid && (found == kNone || id < found)) found = id;
      }
      if (found == kNone) fail(e.offset, "no thread holds proc " + std::to_string(pid) + " that is about to be stolen");
      ev_ctx.m = found;
      ev_ctx.p = pid;
      ev_ctx.g = ms_[found].g;
    }
    Queued& q = push(e, ev_ctx, GoKind::kProcStatus);
    q.ev.arg_p = pid;
    q.ev.status = static_cast<uint8_t>(abandoned_running ? PStatus::kSyscall : p_status(status));
    q.ev.old_status = static_cast<uint8_t>(old_status);
    return true;
  }

  bool advance_proc_start(const RawEvent& e, const Ctx& cur, Ctx& next) {
    int64_t pid = static_cast<int64_t>(e.args[0]);
    Seq seq{gen_.gen, e.args[1]};
    PState* s = p_state(pid);
    if (s == nullptr || s->status != kProcIdle || !seq.succeeds(s->seq) || cur.p != kNone) return false;
    need(e, cur, kMust, kMustNot, kMay);
    s->status = kProcRunning;
    s->seq = seq;
    next.p = pid;
    push(e, cur, GoKind::kProcStart).ev.arg_p = pid;
    return true;
  }

  bool advance_proc_stop(const RawEvent& e, const Ctx& cur, Ctx& next) {
    PState* s = p_state(cur.p);
    if (s == nullptr) fail(e.offset, "ProcStop for proc " + std::to_string(cur.p) + " that doesn't exist");
    if (s->status != kProcRunning && s->status != kProcSyscall) {
      fail(e.offset, "ProcStop for a proc that is not Running or Syscall");
    }
    need(e, cur, kMust, kMust, kMay);
    s->status = kProcIdle;
    next.p = kNone;
    push(e, cur, GoKind::kProcStop);
    return true;
  }

  bool advance_proc_steal(const RawEvent& e, const Ctx& cur, Ctx& next) {
    int64_t pid = static_cast<int64_t>(e.args[0]);
    Seq seq{gen_.gen, e.args[1]};
    PState* s = p_state(pid);
    if (s == nullptr || (s->status != kProcSyscall && s->status != kProcSyscallAbandoned) || !seq.succeeds(s->seq)) {
      return false;
    }
    need(e, cur, kMust, kMay, kMay);
    uint8_t old = s->status;
    s->status = kProcIdle;
    s->seq = seq;
    if (old == kProcSyscallAbandoned) {
      Queued& q = push(e, cur, GoKind::kProcSteal);
      q.ev.arg_p = pid;
      q.ev.old_status = static_cast<uint8_t>(PStatus::kSyscallAbandoned);
      return true;
    }
    int64_t victim = static_cast<int64_t>(e.args[2]);
    if (victim == cur.m) {
      if (cur.p != pid) {
        fail(e.offset, "tried to self-steal proc " + std::to_string(pid) + " (thread " + std::to_string(victim) +
                           "), but got proc " + std::to_string(cur.p) + " instead");
      }
      next.p = kNone;
    } else {
      auto it = ms_.find(victim);
      if (it == ms_.end()) fail(e.offset, "stole proc from non-existent thread " + std::to_string(victim));
      if (it->second.p != pid) {
        fail(e.offset, "tried to steal proc " + std::to_string(pid) + " from thread " + std::to_string(victim) +
                           ", but got proc " + std::to_string(it->second.p) + " instead");
      }
      it->second.p = kNone;
    }
    Queued& q = push(e, cur, GoKind::kProcSteal);
    q.ev.arg_p = pid;
    q.ev.arg_m = victim;
    q.ev.old_status = static_cast<uint8_t>(PStatus::kSyscall);
    return true;
  }

  // Goroutines.

  // GoStatus and GoStatusStack.
  bool advance_go_status(const RawEvent& e, const Ctx& cur, Ctx& next) {
    const uint64_t gen = gen_.gen;
    const bool initial = initial_gen();
    int64_t gid = static_cast<int64_t>(e.args[0]);
    int64_t mid = static_cast<int64_t>(e.args[1]);
    uint64_t status = e.args[2];
    if (status > kGoWaiting) {
      fail(e.offset, "invalid status " + std::to_string(status) + " for goroutine " + std::to_string(gid));
    }
    GStatus old_status = g_status(status);
    if (GState* s = g_state(gid)) {
      if (s->status != status) {
        fail(e.offset, "inconsistent status for goroutine " + std::to_string(gid) + ": old " +
                           g_status_name(s->status) + " vs. new " + g_status_name(static_cast<uint8_t>(status)));
      }
      s->seq = Seq{gen, 0};
    } else if (initial) {
      GState& ns = gs_[gid];
      ns.status = static_cast<uint8_t>(status);
      ns.seq = Seq{gen, 0};
      old_status = GStatus::kUnknown;
    } else {
      fail(e.offset, "status for new goroutine " + std::to_string(gid) + " after the first generation");
    }
    Ctx ev_ctx = cur;
    if (status == kGoRunning) {
      next.g = gid;
    } else if (status == kGoSyscall) {
      if (mid == kNone) fail(e.offset, "goroutine " + std::to_string(gid) + " in syscall without a thread");
      if (mid == cur.m) {
        if (!initial && cur.g != gid) {
          fail(e.offset, "inconsistent thread for syscalling goroutine " + std::to_string(gid) +
                             ": thread has goroutine " + std::to_string(cur.g));
        }
        next.g = gid;
      } else {
        auto it = ms_.find(mid);
        if (it != ms_.end()) {
          if (it->second.g != gid) {
            fail(e.offset, "inconsistent thread for syscalling goroutine " + std::to_string(gid) +
                               ": thread has goroutine " + std::to_string(it->second.g));
          }
          ev_ctx.g = it->second.g;
        } else {
          ms_[mid] = MState{gid, kNone};
        }
        ev_ctx.m = mid;
        ev_ctx.p = kNone;  // the stating M's P is not the syscalling G's
      }
    }
    Queued& q = push(e, ev_ctx, GoKind::kGoStatus);
    q.ev.arg_g = gid;
    q.ev.arg_m = mid;
    q.ev.status = static_cast<uint8_t>(g_status(status));
    q.ev.old_status = static_cast<uint8_t>(old_status);
    return true;
  }

  // GoCreate and GoCreateBlocked.
  bool advance_go_create(const RawEvent& e, const Ctx& cur, Ctx&) {
    need(e, cur, kMust, kMust, kMay);
    if (GState* s = g_state(cur.g); s != nullptr && s->status != kGoRunning) {
      fail(e.offset, std::string(name(e.type)) + " by goroutine " + std::to_string(cur.g) + " that is not running");
    }
    int64_t gid = static_cast<int64_t>(e.args[0]);
    if (g_state(gid) != nullptr) {
      fail(e.offset, "tried to create goroutine " + std::to_string(gid) + " that already exists");
    }
    GState& s = gs_[gid];
    s.status = e.type == kEvGoCreateBlocked ? kGoWaiting : kGoRunnable;
    s.seq = Seq{gen_.gen, 0};
    push(e, cur, e.type == kEvGoCreateBlocked ? GoKind::kGoCreateBlocked : GoKind::kGoCreate).ev.arg_g = gid;
    return true;
  }

  // GoDestroy, GoStop and GoBlock: the running G leaves its M.
  bool advance_go_stop_exec(const RawEvent& e, const Ctx& cur, Ctx& next) {
    need_user(e, cur);
    GState& s = cur_g(e, cur);
    if (s.status != kGoRunning) fail(e.offset, std::string(name(e.type)) + " for a goroutine that is not Running");
    GoKind kind = GoKind::kGoDestroy;
    if (e.type == kEvGoDestroy) {
      gs_.erase(cur.g);
    } else if (e.type == kEvGoStop) {
      s.status = kGoRunnable;
      kind = GoKind::kGoStop;
    } else {
      s.status = kGoWaiting;
      kind = GoKind::kGoBlock;
    }
    next.g = kNone;
    push(e, cur, kind);
    return true;
  }

  bool advance_go_start(const RawEvent& e, const Ctx& cur, Ctx& next) {
    int64_t gid = static_cast<int64_t>(e.args[0]);
    Seq seq{gen_.gen, e.args[1]};
    GState* s = g_state(gid);
    if (s == nullptr || s->status != kGoRunnable || !seq.succeeds(s->seq)) return false;
    need(e, cur, kMust, kMust, kMustNot);
    s->status = kGoRunning;
    s->seq = seq;
    next.g = gid;
    push(e, cur, GoKind::kGoStart).ev.arg_g = gid;
    return true;
  }

  bool advance_go_unblock(const RawEvent& e, const Ctx& cur, Ctx&) {
    int64_t gid = static_cast<int64_t>(e.args[0]);
    Seq seq{gen_.gen, e.args[1]};
    GState* s = g_state(gid);
    if (s == nullptr || s->status != kGoWaiting || !seq.succeeds(s->seq)) return false;
    s->status = kGoRunnable;
    s->seq = seq;
    push(e, cur, GoKind::kGoUnblock).ev.arg_g = gid;
    return true;
  }

  // GoSwitch and GoSwitchDestroy.
  bool advance_go_switch(const RawEvent& e, const Ctx& cur, Ctx& next) {
    need_user(e, cur);
    GState& s = cur_g(e, cur);
    if (s.status != kGoRunning) fail(e.offset, std::string(name(e.type)) + " for a goroutine that is not Running");
    int64_t next_g = static_cast<int64_t>(e.args[0]);
    Seq seq{gen_.gen, e.args[1]};
    GState* ns = g_state(next_g);
    if (ns == nullptr || ns->status != kGoWaiting || !seq.succeeds(ns->seq)) return false;
    // Go hands out the switch as an unblock of the next G, the block (or end) of the current
    // one and the start of the next.
    push(e, cur, GoKind::kGoUnblock).ev.arg_g = next_g;
    if (e.type == kEvGoSwitch) {
      s.status = kGoWaiting;
      push(e, cur, GoKind::kGoBlock).ev.synthetic = true;
    } else {
      gs_.erase(cur.g);
      push(e, cur, GoKind::kGoDestroy).ev.synthetic = true;
    }
    ns = g_state(next_g);
    ns->status = kGoRunning;
    ns->seq = seq;
    next.g = next_g;
    Ctx start = cur;
    start.g = kNone;
    Queued& q = push(e, start, GoKind::kGoStart);
    q.ev.arg_g = next_g;
    q.ev.synthetic = true;
    return true;
  }

  bool advance_go_syscall_begin(const RawEvent& e, const Ctx& cur, Ctx&) {
    need_user(e, cur);
    GState& s = cur_g(e, cur);
    if (s.status != kGoRunning) fail(e.offset, "GoSyscallBegin for a goroutine that is not Running");
    s.status = kGoSyscall;
    PState* ps = p_state(cur.p);
    if (ps == nullptr) fail(e.offset, "uninitialized proc " + std::to_string(cur.p) + " in GoSyscallBegin");
    ps->status = kProcSyscall;
    Seq seq{gen_.gen, e.args[0]};
    if (!seq.succeeds(ps->seq)) fail(e.offset, "GoSyscallBegin: proc sequence number does not follow");
    ps->seq = seq;
    push(e, cur, GoKind::kGoSyscallBegin);
    return true;
  }

  bool advance_go_syscall_end(const RawEvent& e, const Ctx& cur, Ctx&) {
    need_user(e, cur);
    GState& s = cur_g(e, cur);
    if (s.status != kGoSyscall) fail(e.offset, "GoSyscallEnd for a goroutine that is not in a syscall");
    s.status = kGoRunning;
    PState* ps = p_state(cur.p);
    if (ps == nullptr) fail(e.offset, "uninitialized proc " + std::to_string(cur.p) + " in GoSyscallEnd");
    if (ps->status != kProcSyscall) {
      fail(e.offset, "GoSyscallEnd: proc " + std::to_string(cur.p) + " is not in Syscall");
    }
    ps->status = kProcRunning;
    push(e, cur, GoKind::kGoSyscallEnd);
    return true;
  }

  bool advance_go_syscall_end_blocked(const RawEvent& e, const Ctx& cur, Ctx& next) {
    if (cur.p != kNone) {
      PState* ps = p_state(cur.p);
      if (ps == nullptr) fail(e.offset, "uninitialized proc " + std::to_string(cur.p) + " in GoSyscallEndBlocked");
      if (ps->status == kProcSyscall) return false;
    }
    need(e, cur, kMust, kMay, kMust);
    GState& s = cur_g(e, cur);
    if (s.status != kGoSyscall) fail(e.offset, "GoSyscallEndBlocked for a goroutine that is not in a syscall");
    s.status = kGoRunnable;
    next.g = kNone;
    push(e, cur, GoKind::kGoSyscallEndBlocked);
    return true;
  }

  bool advance_go_create_syscall(const RawEvent& e, const Ctx& cur, Ctx& next) {
    need(e, cur, kMust, kMay, kMustNot);
    int64_t gid = static_cast<int64_t>(e.args[0]);
    if (g_state(gid) != nullptr) {
      fail(e.offset, "tried to create goroutine " + std::to_string(gid) + " in syscall that already exists");
    }
    GState& s = gs_[gid];
    s.status = kGoSyscall;
    s.seq = Seq{gen_.gen, 0};
    next.g = gid;
    push(e, cur, GoKind::kGoCreateSyscall).ev.arg_g = gid;
    return true;
  }

  bool advance_go_destroy_syscall(const RawEvent& e, const Ctx& cur, Ctx& next) {
    need(e, cur, kMust, kMay, kMust);
    GState& s = cur_g(e, cur);
    if (s.status != kGoSyscall) fail(e.offset, "GoDestroySyscall for a goroutine that is not in a syscall");
    gs_.erase(cur.g);
    next.g = kNone;
    if (cur.p != kNone) {
      PState* ps = p_state(cur.p);
      if (ps == nullptr) fail(e.offset, "invalid proc " + std::to_string(cur.p) + " in GoDestroySyscall");
      if (ps->status != kProcSyscall) {
        fail(e.offset, "GoDestroySyscall: proc " + std::to_string(cur.p) + " is not in Syscall");
      }
      ps->status = kProcSyscallAbandoned;
      next.p = kNone;
      // Go's parser reports the P as stolen from this M.
      Queued& q = push(e, cur, GoKind::kProcSteal);
      q.ev.arg_p = cur.p;
      q.ev.arg_m = cur.m;
      q.ev.old_status = static_cast<uint8_t>(PStatus::kSyscall);
      q.ev.synthetic = true;
    }
    push(e, cur, GoKind::kGoDestroySyscall);
    return true;
  }

  // Annotations.

  bool advance_user_task_begin(const RawEvent& e, const Ctx& cur, Ctx&) {
    uint64_t id = e.args[0];
    if (tasks_.count(id) != 0) fail(e.offset, "task id conflict: " + std::to_string(id));
    std::string_view task_name = string_of(e.args[2], e);
    tasks_.emplace(id, task_name);
    need_user(e, cur);
    Queued& q = push(e, cur, GoKind::kUserTaskBegin);
    q.ev.value = id;
    return true;
  }

  bool advance_user_task_end(const RawEvent& e, const Ctx& cur, Ctx&) {
    auto it = tasks_.find(e.args[0]);
    std::string_view task_name;
    if (it != tasks_.end()) {
      task_name = it->second;
      tasks_.erase(it);
    }
    need_user(e, cur);
    Queued& q = push(e, cur, GoKind::kUserTaskEnd);
    q.ev.value = e.args[0];
    q.ev.reason = task_name;
    return true;
  }

  // UserRegionBegin and UserRegionEnd: a G's stack of regions.
  bool advance_user_region(const RawEvent& e, const Ctx& cur, Ctx&) {
    need_user(e, cur);
    Region r{e.args[0], string_of(e.args[1], e)};
    GState* s = g_state(cur.g);
    if (s == nullptr) {
      fail(e.offset, std::string(name(e.type)) + " without a known state for goroutine " + std::to_string(cur.g));
    }
    if (e.type == kEvUserRegionBegin) {
      s->regions.push_back(r);
    } else if (!s->regions.empty()) {
      if (!(s->regions.back() == r)) {
        fail(e.offset, "misuse of region in goroutine " + std::to_string(cur.g) + ": region end \"" +
                           std::string(r.name) + "\" does not match the innermost region \"" +
                           std::string(s->regions.back().name) + "\"");
      }
      s->regions.pop_back();
    }
    Queued& q = push(e, cur, e.type == kEvUserRegionBegin ? GoKind::kUserRegionBegin : GoKind::kUserRegionEnd);
    q.ev.value = e.args[0];
    return true;
  }

  // GoLabel and UserLog.
  bool advance_annotation(const RawEvent& e, const Ctx& cur, Ctx&) {
    need_user(e, cur);
    Queued& q = push(e, cur, e.type == kEvGoLabel ? GoKind::kGoLabel : GoKind::kUserLog);
    q.ev.value = e.type == kEvUserLog ? e.args[0] : 0;
    return true;
  }

  // The GC: its cycles are numbered across the trace. Active events restate a range in progress
  // at each generation's start: those of the first generation begin it, the later ones are
  // checked and dropped.

  bool advance_gc_active(const RawEvent& e, const Ctx& cur, Ctx&) {
    uint64_t seq = e.args[0];
    if (initial_gen()) {
      if (gc_state_ != kGCUndetermined) fail(e.offset, "GCActive in the first generation isn't the first GC event");
      gc_seq_ = seq;
      gc_state_ = kGCRunning;
      push(e, cur, GoKind::kGCBegin).ev.status = 1;
      return true;
    }
    if (seq != gc_seq_ + 1) return false;
    if (gc_state_ != kGCRunning) fail(e.offset, "GCActive while GC was not in progress");
    gc_seq_ = seq;
    need_user(e, cur);
    push(e, cur, GoKind::kDropped);
    return true;
  }

  bool advance_gc_begin(const RawEvent& e, const Ctx& cur, Ctx&) {
    uint64_t seq = e.args[0];
    if (gc_state_ == kGCUndetermined) {
      gc_seq_ = seq;
      gc_state_ = kGCRunning;
      push(e, cur, GoKind::kGCBegin);
      return true;
    }
    if (seq != gc_seq_ + 1) return false;
    if (gc_state_ == kGCRunning) fail(e.offset, "GCBegin while GC was already in progress");
    gc_seq_ = seq;
    gc_state_ = kGCRunning;
    need_user(e, cur);
    push(e, cur, GoKind::kGCBegin);
    return true;
  }

  bool advance_gc_end(const RawEvent& e, const Ctx& cur, Ctx&) {
    uint64_t seq = e.args[0];
    if (seq != gc_seq_ + 1) return false;
    if (gc_state_ == kGCNotRunning) fail(e.offset, "GCEnd when GC was not in progress");
    if (gc_state_ == kGCUndetermined) fail(e.offset, "GCEnd when GC was in an undetermined state");
    gc_seq_ = seq;
    gc_state_ = kGCNotRunning;
    need_user(e, cur);
    push(e, cur, GoKind::kGCEnd);
    return true;
  }

  // HeapAlloc and HeapGoal.
  bool advance_heap_metric(const RawEvent& e, const Ctx& cur, Ctx&) {
    need(e, cur, kMust, kMust, kMay);
    Queued& q = push(e, cur, e.type == kEvHeapAlloc ? GoKind::kHeapAlloc : GoKind::kHeapGoal);
    q.ev.value = e.args[0];
    return true;
  }

  // Ranges on a P (sweeping) and on a G (STW, mark assist).

  bool advance_gc_sweep_begin(const RawEvent& e, const Ctx& cur, Ctx&) {
    need(e, cur, kMust, kMust, kMay);
    begin_range(ps_[cur.p].ranges, range_of(e.type, 0), e);
    push(e, cur, GoKind::kGCSweepBegin);
    return true;
  }

  bool advance_gc_sweep_active(const RawEvent& e, const Ctx& cur, Ctx&) {
    PState* ps = p_state(static_cast<int64_t>(e.args[0]));
    if (ps == nullptr) fail(e.offset, "GCSweepActive for unknown proc " + std::to_string(e.args[0]));
    active_range(ps->ranges, range_of(e.type, 0), initial_gen(), e);
    Queued& q = push(e, cur, initial_gen() ? GoKind::kGCSweepBegin : GoKind::kDropped);
    q.ev.arg_p = static_cast<int64_t>(e.args[0]);
    q.ev.status = 1;
    return true;
  }

  bool advance_gc_sweep_end(const RawEvent& e, const Ctx& cur, Ctx&) {
    need(e, cur, kMust, kMust, kMay);
    end_range(ps_[cur.p].ranges, e.type, e);
    push(e, cur, GoKind::kGCSweepEnd).ev.value = e.args[0];
    return true;
  }

  // STWBegin and GCMarkAssistBegin.
  bool advance_go_range_begin(const RawEvent& e, const Ctx& cur, Ctx&) {
    need_user(e, cur);
    uint64_t desc = e.type == kEvSTWBegin ? e.args[0] : 0;
    GState* s = g_state(cur.g);
    if (s == nullptr) {
      fail(e.offset, std::string(name(e.type)) + " without a known state for goroutine " + std::to_string(cur.g));
    }
    begin_range(s->ranges, range_of(e.type, desc), e);
    if (e.type == kEvSTWBegin) s->stw_reason = string_of(desc, e);
    push(e, cur, e.type == kEvSTWBegin ? GoKind::kSTWBegin : GoKind::kGCMarkAssistBegin);
    return true;
  }

  // GCMarkAssistActive.
  bool advance_go_range_active(const RawEvent& e, const Ctx& cur, Ctx&) {
    GState* s = g_state(static_cast<int64_t>(e.args[0]));
    if (s == nullptr) fail(e.offset, "uninitialized goroutine " + std::to_string(e.args[0]) + " in GCMarkAssistActive");
    active_range(s->ranges, range_of(e.type, 0), initial_gen(), e);
    Queued& q = push(e, cur, initial_gen() ? GoKind::kGCMarkAssistBegin : GoKind::kDropped);
    q.ev.arg_g = static_cast<int64_t>(e.args[0]);
    q.ev.status = 1;
    return true;
  }

  // STWEnd and GCMarkAssistEnd.
  bool advance_go_range_end(const RawEvent& e, const Ctx& cur, Ctx&) {
    need_user(e, cur);
    GState* s = g_state(cur.g);
    if (s == nullptr) {
      fail(e.offset, std::string(name(e.type)) + " without a known state for goroutine " + std::to_string(cur.g));
    }
    end_range(s->ranges, e.type, e);
    if (e.type == kEvSTWEnd) {
      // The reason its begin named (a view into the file: valid after that generation too).
      push(e, cur, GoKind::kSTWEnd).ev.reason = s->stw_reason;
    } else {
      push(e, cur, GoKind::kGCMarkAssistEnd);
    }
    return true;
  }

  // The AllocFree experiment's events (spans, heap objects, goroutine stacks).
  bool advance_alloc_free(const RawEvent& e, const Ctx& cur, Ctx&) {
    need(e, cur, kMust, kMay, kMay);
    push(e, cur, GoKind::kDropped);
    return true;
  }

  void pop(GoEvent& out) {
    Queued& q = queue_[queue_head_];
    out = q.ev;
    if (q.has_stack) {
      if (gen_.stacks.get(q.stack) == nullptr) {
        fail(q.ev.offset, "invalid stack id " + std::to_string(q.stack) + " for " + name(q.ev.type) + " event");
      }
      out.stack = stack_text(q.stack);
    }
    if (q.has_new_stack) {
      if (gen_.stacks.get(q.new_stack) == nullptr) {
        fail(q.ev.offset, "invalid stack id " + std::to_string(q.new_stack) + " for " + name(q.ev.type) + " event");
      }
      out.new_stack = stack_text(q.new_stack);
    }
    std::string_view s1, s2;
    if (q.has_str) {
      const std::string_view* s = gen_.strings.get(q.str);
      if (s == nullptr)
        fail(q.ev.offset, "invalid string id " + std::to_string(q.str) + " for " + name(q.ev.type) + " event");
      s1 = *s;
    }
    if (q.has_str2) {
      const std::string_view* s = gen_.strings.get(q.str2);
      if (s == nullptr)
        fail(q.ev.offset, "invalid string id " + std::to_string(q.str2) + " for " + name(q.ev.type) + " event");
      s2 = *s;
    }
    switch (out.kind) {
      case GoKind::kGoStop:
      case GoKind::kGoBlock:
      case GoKind::kGoLabel:
      case GoKind::kSTWBegin:
      case GoKind::kUserTaskBegin:
      case GoKind::kUserRegionBegin:
      case GoKind::kUserRegionEnd: out.reason = s1; break;
      case GoKind::kUserLog:
        scratch_.assign(s1);
        scratch_ += '=';
        scratch_ += s2;
        out.reason = scratch_;
        break;
      default: break;
    }
    if (q.ev.type == kEvUserTaskBegin) out.reason = s1;
    if (out.ts <= last_ts_) out.ts = last_ts_ + 1;
    last_ts_ = out.ts;
    if (++queue_head_ == queue_.size()) {
      queue_.clear();
      queue_head_ = 0;
    }
  }

  enum GCState { kGCUndetermined, kGCNotRunning, kGCRunning };

  std::string path_;
  std::string_view data_;
  int minor_ = 0;
  uint8_t last_type_ = 0;
  uint64_t pos_ = 0;
  bool done_ = false;
  Generation gen_;
  bool spill_ = false;
  uint64_t spill_gen_ = 0;
  Batch spill_batch_{};
  uint8_t spill_exp_ = 0;
  uint64_t spill_off_ = 0;
  uint64_t initial_gen_ = 0;
  std::vector<Cursor> frontier_;
  std::vector<Queued> queue_;  // events accepted, from queue_head_ on
  size_t queue_head_ = 0;
  std::unordered_map<int64_t, GState> gs_;
  std::unordered_map<int64_t, PState> ps_;
  std::unordered_map<int64_t, MState> ms_;
  std::unordered_map<uint64_t, std::string_view> tasks_;
  uint64_t gc_seq_ = 0;
  GCState gc_state_ = kGCUndetermined;
  int64_t last_ts_ = 0;
  std::string scratch_;
  std::unique_ptr<TraceFormatError> deferred_error_;  // a bad batch after the current generation
};

// The advance function of each event type (Go's orderingDispatch, internal/trace/order.go). A type
// without one cannot appear in an event batch.
const std::array<V2Reader::Advance, 256> V2Reader::kAdvance = [] {
  std::array<Advance, 256> a{};
  a[kEvProcsChange] = &V2Reader::advance_procs_change;
  a[kEvProcStart] = &V2Reader::advance_proc_start;
  a[kEvProcStop] = &V2Reader::advance_proc_stop;
  a[kEvProcSteal] = &V2Reader::advance_proc_steal;
  a[kEvProcStatus] = &V2Reader::advance_proc_status;

  a[kEvGoCreate] = &V2Reader::advance_go_create;
  a[kEvGoCreateSyscall] = &V2Reader::advance_go_create_syscall;
  a[kEvGoStart] = &V2Reader::advance_go_start;
  a[kEvGoDestroy] = &V2Reader::advance_go_stop_exec;
  a[kEvGoDestroySyscall] = &V2Reader::advance_go_destroy_syscall;
  a[kEvGoStop] = &V2Reader::advance_go_stop_exec;
  a[kEvGoBlock] = &V2Reader::advance_go_stop_exec;
  a[kEvGoUnblock] = &V2Reader::advance_go_unblock;
  a[kEvGoSyscallBegin] = &V2Reader::advance_go_syscall_begin;
  a[kEvGoSyscallEnd] = &V2Reader::advance_go_syscall_end;
  a[kEvGoSyscallEndBlocked] = &V2Reader::advance_go_syscall_end_blocked;
  a[kEvGoStatus] = &V2Reader::advance_go_status;

  a[kEvSTWBegin] = &V2Reader::advance_go_range_begin;
  a[kEvSTWEnd] = &V2Reader::advance_go_range_end;

  a[kEvGCActive] = &V2Reader::advance_gc_active;
  a[kEvGCBegin] = &V2Reader::advance_gc_begin;
  a[kEvGCEnd] = &V2Reader::advance_gc_end;
  a[kEvGCSweepActive] = &V2Reader::advance_gc_sweep_active;
  a[kEvGCSweepBegin] = &V2Reader::advance_gc_sweep_begin;
  a[kEvGCSweepEnd] = &V2Reader::advance_gc_sweep_end;
  a[kEvGCMarkAssistActive] = &V2Reader::advance_go_range_active;
  a[kEvGCMarkAssistBegin] = &V2Reader::advance_go_range_begin;
  a[kEvGCMarkAssistEnd] = &V2Reader::advance_go_range_end;
  a[kEvHeapAlloc] = &V2Reader::advance_heap_metric;
  a[kEvHeapGoal] = &V2Reader::advance_heap_metric;

  a[kEvGoLabel] = &V2Reader::advance_annotation;
  a[kEvUserTaskBegin] = &V2Reader::advance_user_task_begin;
  a[kEvUserTaskEnd] = &V2Reader::advance_user_task_end;
  a[kEvUserRegionBegin] = &V2Reader::advance_user_region;
  a[kEvUserRegionEnd] = &V2Reader::advance_user_region;
  a[kEvUserLog] = &V2Reader::advance_annotation;

  a[kEvGoSwitch] = &V2Reader::advance_go_switch;  // Go 1.23
  a[kEvGoSwitchDestroy] = &V2Reader::advance_go_switch;
  a[kEvGoCreateBlocked] = &V2Reader::advance_go_create;
  a[kEvGoStatusStack] = &V2Reader::advance_go_status;

  for (int t = kEvFirstExperimental; t <= kEvLastExperimental; t++) a[t] = &V2Reader::advance_alloc_free;
  return a;
}();

}  // namespace

bool v2_version_supported(int minor) { return minor == 22 || minor == 23 || minor == 25 || minor == 26; }

std::unique_ptr<GoTraceReader> make_v2_reader(const std::string& path, std::string_view data) {
  return std::make_unique<V2Reader>(path, data);
}

V2Spec v2_spec(int minor, uint8_t type) {
  V2Spec v;
  if (type >= kEvFirstExperimental && type <= kEvLastExperimental) {
    if (minor < 23) return v;
    v.name = kExperimentalNames[type - kEvFirstExperimental];
    v.args = 1 + kExperimentalArgs[type - kEvFirstExperimental];
    return v;
  }
  if (type == kEvNone || type > last_type(minor) || type >= kNumEvents) return v;
  const Spec& s = kSpecs[type];
  v.name = s.name;
  v.args = s.nargs + (s.timed ? 1 : 0);
  v.is_stack = type == kEvStack;
  v.has_data = type == kEvString || type == kEvExperimentalBatch;
  return v;
}

std::string_view v2_type_name(uint8_t type) {
  if (type < kNumEvents) return kSpecs[type].name;
  if (type >= kEvFirstExperimental && type <= kEvLastExperimental)
    return kExperimentalNames[type - kEvFirstExperimental];
  return "";
}

}  // namespace gmp::trace::go
