// The first Go trace format. The steps follow Go 1.19's internal/trace (parser.go, order.go):
// read the raw events and the string table; split the events into per-P lists; merge them by
// timestamp, taking an event only when its G's sequence number and state allow it; move syscall
// exits to their real time; drop futile wake-ups; check the G and P states.
#include "traces/import/go_trace_v1.h"

#include <algorithm>
#include <array>
#include <functional>
#include <iterator>
#include <map>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "traces/import/go_header.h"
#include "traces/trace_reader.h"
#include "traces/varint.h"

namespace gmp::trace::go {
namespace {

enum : uint8_t {
  kEvNone,
  kEvBatch,
  kEvFrequency,
  kEvStack,
  kEvGomaxprocs,
  kEvProcStart,
  kEvProcStop,
  kEvGCStart,
  kEvGCDone,
  kEvGCSTWStart,
  kEvGCSTWDone,
  kEvGCSweepStart,
  kEvGCSweepDone,
  kEvGoCreate,
  kEvGoStart,
  kEvGoEnd,
  kEvGoStop,
  kEvGoSched,
  kEvGoPreempt,
  kEvGoSleep,
  kEvGoBlock,
  kEvGoUnblock,
  kEvGoBlockSend,
  kEvGoBlockRecv,
  kEvGoBlockSelect,
  kEvGoBlockSync,
  kEvGoBlockCond,
  kEvGoBlockNet,
  kEvGoSysCall,
  kEvGoSysExit,
  kEvGoSysBlock,
  kEvGoWaiting,
  kEvGoInSyscall,
  kEvHeapAlloc,
  kEvHeapGoal,
  kEvTimerGoroutine,
  kEvFutileWakeup,
  kEvString,
  kEvGoStartLocal,
  kEvGoUnblockLocal,
  kEvGoSysExitLocal,
  kEvGoStartLabel,
  kEvGoBlockGC,
  kEvGCMarkAssistStart,
  kEvGCMarkAssistDone,
  kEvUserTaskCreate,
  kEvUserTaskEnd,
  kEvUserRegion,
  kEvUserLog,
  kEvCPUSample,
  kEvCount,
};

struct Desc {
  const char* name;
  int min_minor;  // first version with the event
  bool stack;     // the last argument is a stack id
  uint8_t args;   // arguments after the timestamp (the stack excluded)
};

constexpr std::array<Desc, kEvCount> kDescs = {{
    {"None", 5, false, 0},
    {"Batch", 5, false, 2},
    {"Frequency", 5, false, 1},
    {"Stack", 5, false, 2},
    {"Gomaxprocs", 5, true, 1},
    {"ProcStart", 5, false, 1},
    {"ProcStop", 5, false, 0},
    {"GCStart", 5, true, 1},
    {"GCDone", 5, false, 0},
    {"GCSTWStart", 5, false, 1},
    {"GCSTWDone", 5, false, 0},
    {"GCSweepStart", 5, true, 0},
    {"GCSweepDone", 5, false, 2},
    {"GoCreate", 5, true, 2},
    {"GoStart", 5, false, 2},
    {"GoEnd", 5, false, 0},
    {"GoStop", 5, true, 0},
    {"GoSched", 5, true, 0},
    {"GoPreempt", 5, true, 0},
    {"GoSleep", 5, true, 0},
    {"GoBlock", 5, true, 0},
    {"GoUnblock", 5, true, 2},
    {"GoBlockSend", 5, true, 0},
    {"GoBlockRecv", 5, true, 0},
    {"GoBlockSelect", 5, true, 0},
    {"GoBlockSync", 5, true, 0},
    {"GoBlockCond", 5, true, 0},
    {"GoBlockNet", 5, true, 0},
    {"GoSysCall", 5, true, 0},
    {"GoSysExit", 5, false, 3},
    {"GoSysBlock", 5, false, 0},
    {"GoWaiting", 5, false, 1},
    {"GoInSyscall", 5, false, 1},
    {"HeapAlloc", 5, false, 1},
    {"HeapGoal", 5, false, 1},
    {"TimerGoroutine", 5, false, 1},
    {"FutileWakeup", 5, false, 0},
    {"String", 7, false, 0},
    {"GoStartLocal", 7, false, 1},
    {"GoUnblockLocal", 7, true, 1},
    {"GoSysExitLocal", 7, false, 2},
    {"GoStartLabel", 8, false, 3},
    {"GoBlockGC", 8, true, 0},
    {"GCMarkAssistStart", 9, true, 0},
    {"GCMarkAssistDone", 9, false, 0},
    {"UserTaskCreate", 11, true, 3},
    {"UserTaskEnd", 11, true, 1},
    {"UserRegion", 11, true, 3},
    {"UserLog", 11, true, 2},
    {"CPUSample", 19, true, 3},
}};

constexpr int32_t kFakeP = 1000000;
constexpr int32_t kTimerP = kFakeP + 1;
constexpr int32_t kNetpollP = kFakeP + 2;
constexpr int32_t kSyscallP = kFakeP + 3;
constexpr int32_t kGCP = kFakeP + 4;
constexpr int32_t kProfileP = kFakeP + 5;

constexpr uint64_t kMaxString = 1000000;

struct Ev {
  uint64_t off = 0;
  int64_t ts = 0;
  uint64_t g = 0;
  std::array<uint64_t, 3> args{};
  uint64_t stk = 0;
  int32_t p = 0;
  uint8_t type = 0;
  bool linked = false;    // a GoSysCall whose syscall blocked (Go links it to the GoSysExit)
  std::string_view sarg;  // UserLog's value
};

struct Frame {
  uint64_t pc, fn, file, line;
};

// The G states of Go's ordering (order.go).
enum GStat : uint8_t { kDead, kRunnable, kRunning, kWaiting };
constexpr uint64_t kNoSeq = ~uint64_t{0};
constexpr uint64_t kSeqInc = ~uint64_t{0} - 1;
constexpr uint64_t kUnordered = ~uint64_t{0};
constexpr uint64_t kGarbage = ~uint64_t{0} - 1;

struct GSeq {
  uint64_t seq = 0;
  GStat status = kDead;
};

struct Transition {
  uint64_t g = kUnordered;
  GSeq init, next;
};

Transition transition_of(const Ev& ev) {
  Transition t;
  switch (ev.type) {
    case kEvGoCreate:
      t.g = ev.args[0];
      t.init = {0, kDead};
      t.next = {1, kRunnable};
      break;
    case kEvGoWaiting:
    case kEvGoInSyscall:
      t.g = ev.g;
      t.init = {1, kRunnable};
      t.next = {2, kWaiting};
      break;
    case kEvGoStart:
    case kEvGoStartLabel:
      t.g = ev.g;
      t.init = {ev.args[1], kRunnable};
      t.next = {ev.args[1] + 1, kRunning};
      break;
    case kEvGoStartLocal:
      t.g = ev.g;
      t.init = {kNoSeq, kRunnable};
      t.next = {kSeqInc, kRunning};
      break;
    case kEvGoBlock:
    case kEvGoBlockSend:
    case kEvGoBlockRecv:
    case kEvGoBlockSelect:
    case kEvGoBlockSync:
    case kEvGoBlockCond:
    case kEvGoBlockNet:
    case kEvGoSleep:
    case kEvGoSysBlock:
    case kEvGoBlockGC:
      t.g = ev.g;
      t.init = {kNoSeq, kRunning};
      t.next = {kNoSeq, kWaiting};
      break;
    case kEvGoSched:
    case kEvGoPreempt:
      t.g = ev.g;
      t.init = {kNoSeq, kRunning};
      t.next = {kNoSeq, kRunnable};
      break;
    case kEvGoUnblock:
    case kEvGoSysExit:
      t.g = ev.args[0];
      t.init = {ev.args[1], kWaiting};
      t.next = {ev.args[1] + 1, kRunnable};
      break;
    case kEvGoUnblockLocal:
    case kEvGoSysExitLocal:
      t.g = ev.args[0];
      t.init = {kNoSeq, kWaiting};
      t.next = {kSeqInc, kRunnable};
      break;
    case kEvGCStart:
      t.g = kGarbage;
      t.init = {ev.args[0], kDead};
      t.next = {ev.args[0] + 1, kDead};
      break;
    default: break;
  }
  return t;
}

bool ready(const Transition& t, const GSeq& cur) {
  return t.g == kUnordered || ((t.init.seq == kNoSeq || t.init.seq == cur.seq) && t.init.status == cur.status);
}

class V1Reader final : public GoTraceReader {
 public:
  V1Reader(const std::string& path, std::string_view data) : path_(path), data_(data) {
    GoHeader h = parse_go_header(path, data);
    if (h.format != GoFormat::kV1) throw TraceFormatError(path, 0, "not a trace of the first format (Go 1.11 to 1.21)");
    minor_ = h.minor;
    read_raw();
    order();
    remove_futile();
    post_process();
  }

  std::string go_version() const override { return "1." + std::to_string(minor_); }
  std::string_view type_name(uint8_t type) const override { return v1_type_name(type); }
  uint64_t generation() const override { return 1; }
  void rewind() override {
    next_ = 0;
    p_thread_.clear();
    orphaned_.clear();
    g_thread_.clear();
    pending_.clear();
    pending_head_ = 0;
    pre_init_ = true;
  }

  bool next(GoEvent& out) override {
    while (pending_head_ == pending_.size()) {
      pending_.clear();
      pending_head_ = 0;
      if (next_ >= events_.size()) return false;
      convert(all_[events_[next_++]]);
    }
    out = pending_[pending_head_++];
    return true;
  }

 private:
  [[noreturn]] void fail(uint64_t offset, const std::string& what) const {
    throw TraceFormatError(path_, offset, what);
  }

  // A varint (traces/varint.h); as Go's reader of this format, bits past the 64th are dropped.
  uint64_t uvarint(uint64_t& pos) const {
    const uint64_t start = pos;
    Varint v;
    for (;;) {
      if (pos >= data_.size()) fail(start, "truncated varint");
      switch (v.push(static_cast<uint8_t>(data_[pos++]))) {
        case Varint::Step::Done: return v.value();
        case Varint::Step::TooLong: fail(start, "bad varint");
        case Varint::Step::More: break;
      }
    }
  }

  // Orders indexes into all_ by the time of their events.
  auto by_time() const {
    return [this](uint32_t a, uint32_t b) { return all_[a].ts < all_[b].ts; };
  }

  // Reads every raw event and splits them into per-P lists (Go's readTrace and parseEvents).
  void read_raw() {
    uint64_t pos = kHeaderBytes;
    std::vector<uint64_t> args;
    int64_t ticks_per_sec = 0, last_ts = 0;
    uint64_t last_g = 0;
    int32_t last_p = 0;
    std::unordered_map<int32_t, uint64_t> last_gs;
    std::map<int32_t, std::vector<uint32_t>> batches;  // indexes into all_, by P id: a deterministic order
    all_.reserve(data_.size() / 4);
    while (pos < data_.size()) {
      const uint64_t off = pos;
      const uint8_t b = static_cast<uint8_t>(data_[pos++]);
      const uint8_t type = b & 0x3f;
      const int narg = (b >> 6) + 1;
      if (type == kEvNone || type >= kEvCount || kDescs[type].min_minor > minor_) {
        fail(off, "unknown event type " + std::to_string(type));
      }
      if (type == kEvString) {
        const uint64_t id = uvarint(pos);
        if (id == 0) fail(off, "string with invalid id 0");
        if (strings_.count(id) != 0) fail(off, "string with duplicate id " + std::to_string(id));
        const uint64_t len = uvarint(pos);
        if (len == 0) fail(off, "string with invalid length 0");
        if (len > kMaxString) fail(off, "string too long: " + std::to_string(len) + " bytes");
        if (len > data_.size() - pos) fail(pos, "string cut short");
        strings_.emplace(id, data_.substr(pos, len));
        pos += len;
        continue;
      }
      args.clear();
      if (narg < 4) {
        for (int i = 0; i < narg; i++) args.push_back(uvarint(pos));
      } else {
        const uint64_t len = uvarint(pos);
        const uint64_t start = pos;
        while (len > pos - start) args.push_back(uvarint(pos));
        if (len != pos - start) fail(off, "event has the wrong length");
      }
      std::string_view sarg;
      if (type == kEvUserLog) {
        const uint64_t len = uvarint(pos);
        if (len > kMaxString) fail(off, "string too long: " + std::to_string(len) + " bytes");
        if (len > data_.size() - pos) fail(pos, "string cut short");
        sarg = data_.substr(pos, len);
        pos += len;
      }
      // parseEvents
      const Desc& d = kDescs[type];
      size_t want = d.args + (d.stack ? 1 : 0);
      if (type == kEvStack) {
        want = args.size();
      } else if (type != kEvBatch && type != kEvFrequency && type != kEvTimerGoroutine) {
        want++;  // the timestamp
      }
      if (args.size() != want) {
        fail(off, std::string(d.name) + " has the wrong number of arguments: want " + std::to_string(want) + ", got " +
                      std::to_string(args.size()));
      }
      switch (type) {
        case kEvBatch:
          last_gs[last_p] = last_g;
          last_p = static_cast<int32_t>(args[0]);
          last_g = last_gs[last_p];
          last_ts = static_cast<int64_t>(args[1]);
          break;
        case kEvFrequency:
          ticks_per_sec = static_cast<int64_t>(args[0]);
          if (ticks_per_sec <= 0) fail(off, "time stamps out of order (frequency " + std::to_string(args[0]) + ")");
          break;
        case kEvTimerGoroutine: timer_gs_[args[0]] = true; break;
        case kEvStack: {
          if (args.size() < 2) fail(off, "Stack has too few arguments");
          const uint64_t n = args[1];
          if (n > 1000) fail(off, "Stack has a bad number of frames: " + std::to_string(n));
          if (args.size() != 2 + 4 * n) fail(off, "Stack has the wrong number of arguments");
          if (args[0] != 0 && n > 0) {
            std::vector<Frame>& f = stacks_[args[0]];
            f.clear();
            for (uint64_t i = 0; i < n; i++)
              f.push_back({args[2 + 4 * i], args[3 + 4 * i], args[4 + 4 * i], args[5 + 4 * i]});
          }
          break;
        }
        default: {
          Ev e;
          e.off = off;
          e.type = type;
          e.p = last_p;
          e.g = last_g;
          e.ts = static_cast<int64_t>(static_cast<uint64_t>(last_ts) + args[0]);
          last_ts = e.ts;
          const size_t narg_all = args.size();
          for (size_t i = 1; i < narg_all; i++) {
            if (i == narg_all - 1 && d.stack) {
              e.stk = args[i];
            } else {
              e.args[i - 1] = args[i];
            }
          }
          e.sarg = sarg;
          switch (type) {
            case kEvGoStart:
            case kEvGoStartLocal:
            case kEvGoStartLabel:
              last_g = e.args[0];
              e.g = last_g;
              break;
            case kEvGCSTWStart:
              e.g = 0;
              // Go 1.21 added STW kinds; Go 1.19 knew two.
              if (minor_ < 21 && e.args[0] > 1) fail(off, "unknown STW kind " + std::to_string(e.args[0]));
              break;
            case kEvGCStart:
            case kEvGCDone:
            case kEvGCSTWDone: e.g = 0; break;
            case kEvGoEnd:
            case kEvGoStop:
            case kEvGoSched:
            case kEvGoPreempt:
            case kEvGoSleep:
            case kEvGoBlock:
            case kEvGoBlockSend:
            case kEvGoBlockRecv:
            case kEvGoBlockSelect:
            case kEvGoBlockSync:
            case kEvGoBlockCond:
            case kEvGoBlockNet:
            case kEvGoSysBlock:
            case kEvGoBlockGC: last_g = 0; break;
            case kEvGoSysExit:
            case kEvGoWaiting:
            case kEvGoInSyscall: e.g = e.args[0]; break;
            case kEvCPUSample:
              e.ts = static_cast<int64_t>(e.args[0]);
              e.p = static_cast<int32_t>(e.args[1]);
              e.g = e.args[2];
              e.args[0] = 0;
              break;
            default: break;
          }
          if (all_.size() >= UINT32_MAX) fail(off, "too many events");
          batches[type == kEvCPUSample ? kProfileP : last_p].push_back(static_cast<uint32_t>(all_.size()));
          all_.push_back(e);
        }
      }
    }
    if (batches.empty()) fail(pos, "trace is empty");
    if (ticks_per_sec == 0) fail(pos, "no Frequency event");
    freq_ = 1e9 / static_cast<double>(ticks_per_sec);
    for (auto& [p, evs] : batches) {
      if (p == kProfileP) std::stable_sort(evs.begin(), evs.end(), by_time());
      lists_.push_back(std::move(evs));
    }
  }

  // Go's order1007: merges the per-P lists by time, each event only once its G's sequence
  // number and state allow it.
  void order() {
    size_t pending = 0;
    for (const auto& l : lists_) pending += l.size();
    events_.reserve(pending);
    // Go checks every list's first event again after each one it takes. An event that is not
    // ready waits for its G to change, so here it waits in `waiting` under that G and is checked
    // again when it does; the events that are ready sit in a heap by time (then by P).
    std::vector<size_t> head(lists_.size(), 0);
    std::vector<Transition> front(lists_.size());
    struct Key {
      int64_t ts;
      size_t list;
      bool operator>(const Key& o) const { return ts != o.ts ? ts > o.ts : list > o.list; }
    };
    std::priority_queue<Key, std::vector<Key>, std::greater<Key>> frontier;
    std::unordered_map<uint64_t, std::vector<size_t>> waiting;
    std::unordered_map<uint64_t, GSeq> gs;
    auto select = [&](size_t i) {
      if (head[i] == lists_[i].size()) return;
      const Ev& ev = all_[lists_[i][head[i]]];
      const Transition t = transition_of(ev);
      if (t.g != kUnordered && !ready(t, gs[t.g])) {
        waiting[t.g].push_back(i);
        return;
      }
      front[i] = t;
      frontier.push({ev.ts, i});
    };
    for (size_t i = 0; i < lists_.size(); i++) select(i);
    std::vector<size_t> woken;
    for (; pending != 0; pending--) {
      if (frontier.empty()) {
        size_t first = 0;
        while (head[first] == lists_[first].size()) first++;
        fail(all_[lists_[first][head[first]]].off, "no consistent ordering of events possible");
      }
      const size_t i = frontier.top().list;
      frontier.pop();
      const uint32_t k = lists_[i][head[i]++];
      Ev& ev = all_[k];
      const Transition& t = front[i];
      if (ev.type == kEvGoStartLocal) ev.type = kEvGoStart;
      if (ev.type == kEvGoUnblockLocal) ev.type = kEvGoUnblock;
      if (ev.type == kEvGoSysExitLocal) ev.type = kEvGoSysExit;
      events_.push_back(k);
      if (t.g != kUnordered) {
        GSeq& cur = gs[t.g];
        if (!ready(t, cur)) fail(ev.off, "event sequences are broken");
        GSeq next = t.next;
        if (next.seq == kNoSeq) next.seq = cur.seq;
        if (next.seq == kSeqInc) next.seq = cur.seq + 1;
        cur = next;
        auto w = waiting.find(t.g);
        if (w != waiting.end()) {
          woken.swap(w->second);
          waiting.erase(w);
          for (size_t k : woken) select(k);
          woken.clear();
        }
      }
      select(i);
    }
    lists_.clear();
    for (size_t i = 1; i < events_.size(); i++) {
      if (all_[events_[i]].ts < all_[events_[i - 1]].ts) fail(all_[events_[i]].off, "time stamps out of order");
    }
    std::unordered_map<uint64_t, int64_t> last_sys_block;
    for (uint32_t k : events_) {
      Ev& ev = all_[k];
      if (ev.type == kEvGoSysBlock || ev.type == kEvGoInSyscall) {
        last_sys_block[ev.g] = ev.ts;
      } else if (ev.type == kEvGoSysExit) {
        const auto ts = static_cast<int64_t>(ev.args[2]);
        if (ts == 0) continue;
        auto it = last_sys_block.find(ev.g);
        if (it == last_sys_block.end() || it->second == 0) fail(ev.off, "stray syscall exit");
        if (ts < it->second) fail(ev.off, "time stamps out of order (syscall exit)");
        ev.ts = ts;
      }
    }
    std::stable_sort(events_.begin(), events_.end(), by_time());
    const int64_t min_ts = all_[events_.front()].ts;
    for (uint32_t k : events_) {
      Ev& ev = all_[k];
      // Sorted, so the difference is not negative; in uint64 it cannot overflow.
      const double ns = static_cast<double>(static_cast<uint64_t>(ev.ts) - static_cast<uint64_t>(min_ts)) * freq_;
      if (!(ns < 9.2e18)) fail(ev.off, "timestamp out of range");
      ev.ts = static_cast<int64_t>(ns);
      if (ev.type == kEvGoUnblock && timer_gs_.count(ev.g) != 0) ev.p = kTimerP;
      if (ev.type == kEvGoSysExit) ev.p = kSyscallP;
    }
  }

  // Go's removeFutile: a wake-up that ends in blocking again after a FutileWakeup is dropped,
  // with the events in between.
  void remove_futile() {
    struct G {
      bool futile = false;
      std::vector<size_t> wakeup;
    };
    std::unordered_map<uint64_t, G> gs;
    std::vector<char> futile(events_.size(), 0);
    bool any = false;
    for (size_t i = 0; i < events_.size(); i++) {
      const Ev& ev = all_[events_[i]];
      switch (ev.type) {
        case kEvGoUnblock: gs[ev.args[0]].wakeup.assign(1, i); break;
        case kEvGoStart:
        case kEvGoPreempt:
        case kEvFutileWakeup: {
          G& g = gs[ev.g];
          g.wakeup.push_back(i);
          if (ev.type == kEvFutileWakeup) g.futile = true;
          break;
        }
        case kEvGoBlock:
        case kEvGoBlockSend:
        case kEvGoBlockRecv:
        case kEvGoBlockSelect:
        case kEvGoBlockSync:
        case kEvGoBlockCond: {
          auto it = gs.find(ev.g);
          if (it != gs.end() && it->second.futile) {
            futile[i] = 1;
            for (size_t k : it->second.wakeup) futile[k] = 1;
            any = true;
          }
          if (it != gs.end()) gs.erase(it);
          break;
        }
        default: break;
      }
    }
    if (!any) return;
    size_t w = 0;
    for (size_t i = 0; i < events_.size(); i++) {
      if (!futile[i]) events_[w++] = events_[i];
    }
    events_.resize(w);
  }

  // Go's postProcessTrace: the states of Gs and Ps along the ordered events; also links each
  // blocking GoSysCall to its exit.
  void post_process() {
    enum { kGDead, kGRunnable, kGRunning, kGWaiting };
    struct GDesc {
      int state = kGDead;
      int64_t ev = -1;  // last event that changed its state (index)
      bool started = false;
    };
    struct PDesc {
      bool running = false;
      uint64_t g = 0;
      bool stw = false, sweep = false;
    };
    std::unordered_map<uint64_t, GDesc> gs;
    std::unordered_map<int32_t, PDesc> ps;
    std::unordered_map<uint64_t, bool> tasks;
    std::unordered_map<uint64_t, std::vector<std::pair<uint64_t, std::string_view>>> regions;
    gs[0].state = kGRunning;
    bool gc = false, stw = false;
    std::unordered_map<uint64_t, bool> mark_assist;
    for (size_t i = 0; i < events_.size(); i++) {
      Ev& ev = all_[events_[i]];
      GDesc g = gs[ev.g];
      PDesc p = ps[ev.p];
      const std::string name = kDescs[ev.type].name;
      auto check_running = [&](bool allow_g0) {
        if (g.state != kGRunning) fail(ev.off, "g " + std::to_string(ev.g) + " is not running while " + name);
        if (p.g != ev.g)
          fail(ev.off, "p " + std::to_string(ev.p) + " is not running g " + std::to_string(ev.g) + " while " + name);
        if (!allow_g0 && ev.g == 0) fail(ev.off, "g 0 did " + name);
      };
      switch (ev.type) {
        case kEvProcStart:
          if (p.running) fail(ev.off, "p " + std::to_string(ev.p) + " is running before start");
          p.running = true;
          break;
        case kEvProcStop:
          if (!p.running) fail(ev.off, "p " + std::to_string(ev.p) + " is not running before stop");
          if (p.g != 0) fail(ev.off, "p " + std::to_string(ev.p) + " is running a goroutine during stop");
          p.running = false;
          break;
        case kEvGCStart:
          if (gc) fail(ev.off, "previous GC is not ended before a new one");
          gc = true;
          ev.p = kGCP;
          break;
        case kEvGCDone:
          if (!gc) fail(ev.off, "bogus GC end");
          gc = false;
          break;
        case kEvGCSTWStart:
          if (stw) fail(ev.off, "previous STW is not ended before a new one");
          stw = true;
          break;
        case kEvGCSTWDone:
          if (!stw) fail(ev.off, "bogus STW end");
          stw = false;
          break;
        case kEvGCSweepStart:
          if (p.sweep) fail(ev.off, "previous sweeping is not ended before a new one");
          p.sweep = true;
          break;
        case kEvGCSweepDone:
          if (!p.sweep) fail(ev.off, "bogus sweeping end");
          p.sweep = false;
          break;
        case kEvGCMarkAssistStart:
          if (mark_assist[ev.g]) fail(ev.off, "previous mark assist is not ended before a new one");
          mark_assist[ev.g] = true;
          break;
        case kEvGCMarkAssistDone: mark_assist[ev.g] = false; break;
        case kEvGoWaiting:
        case kEvGoInSyscall:
          if (g.state != kGRunnable) fail(ev.off, "g " + std::to_string(ev.g) + " is not runnable before " + name);
          g.state = kGWaiting;
          g.ev = static_cast<int64_t>(i);
          break;
        case kEvGoCreate:
          check_running(true);
          if (gs.count(ev.args[0]) != 0) fail(ev.off, "g " + std::to_string(ev.args[0]) + " already exists");
          gs[ev.args[0]] = GDesc{kGRunnable, static_cast<int64_t>(i), false};
          break;
        case kEvGoStart:
        case kEvGoStartLabel:
          if (g.state != kGRunnable) fail(ev.off, "g " + std::to_string(ev.g) + " is not runnable before start");
          if (p.g != 0) fail(ev.off, "p " + std::to_string(ev.p) + " is already running g " + std::to_string(p.g));
          g.state = kGRunning;
          g.started = true;
          p.g = ev.g;
          g.ev = -1;
          break;
        case kEvGoEnd:
        case kEvGoStop:
          check_running(false);
          g.started = false;
          g.state = kGDead;
          p.g = 0;
          if (ev.type == kEvGoEnd) regions.erase(ev.g);
          break;
        case kEvGoSched:
        case kEvGoPreempt:
          check_running(false);
          g.state = kGRunnable;
          g.started = false;
          p.g = 0;
          g.ev = static_cast<int64_t>(i);
          break;
        case kEvGoUnblock: {
          if (g.state != kGRunning) fail(ev.off, "g " + std::to_string(ev.g) + " is not running while unpark");
          if (ev.p != kTimerP && p.g != ev.g) {
            fail(ev.off, "p " + std::to_string(ev.p) + " is not running g " + std::to_string(ev.g) + " while unpark");
          }
          GDesc& g1 = gs[ev.args[0]];
          if (g1.state != kGWaiting) fail(ev.off, "g " + std::to_string(ev.args[0]) + " is not waiting before unpark");
          if (g1.ev >= 0 && all_[events_[g1.ev]].type == kEvGoBlockNet && ev.p != kTimerP) ev.p = kNetpollP;
          g1.state = kGRunnable;
          g1.ev = static_cast<int64_t>(i);
          break;
        }
        case kEvGoSysCall:
          check_running(false);
          g.ev = static_cast<int64_t>(i);
          break;
        case kEvGoSysBlock:
          check_running(false);
          g.state = kGWaiting;
          g.started = false;
          p.g = 0;
          break;
        case kEvGoSysExit:
          if (g.state != kGWaiting) fail(ev.off, "g " + std::to_string(ev.g) + " is not waiting during syscall exit");
          if (g.ev >= 0 && all_[events_[g.ev]].type == kEvGoSysCall) all_[events_[g.ev]].linked = true;
          g.state = kGRunnable;
          g.ev = static_cast<int64_t>(i);
          break;
        case kEvGoSleep:
        case kEvGoBlock:
        case kEvGoBlockSend:
        case kEvGoBlockRecv:
        case kEvGoBlockSelect:
        case kEvGoBlockSync:
        case kEvGoBlockCond:
        case kEvGoBlockNet:
        case kEvGoBlockGC:
          check_running(false);
          g.state = kGWaiting;
          g.ev = static_cast<int64_t>(i);
          g.started = false;
          p.g = 0;
          break;
        case kEvUserTaskCreate:
          if (tasks.count(ev.args[0]) != 0) fail(ev.off, "task id conflicts (id " + std::to_string(ev.args[0]) + ")");
          tasks[ev.args[0]] = true;
          break;
        case kEvUserTaskEnd: tasks.erase(ev.args[0]); break;
        case kEvUserRegion: {
          const uint64_t mode = ev.args[1];
          auto& stack = regions[ev.g];
          const std::string_view rname = string(ev.args[2]);
          if (mode == 0) {
            stack.emplace_back(ev.args[0], rname);
          } else if (mode == 1) {
            if (!stack.empty()) {
              if (stack.back().first != ev.args[0] || stack.back().second != rname) {
                fail(ev.off, "misuse of region in goroutine " + std::to_string(ev.g) + ": region end \"" +
                                 std::string(rname) + "\" does not match the innermost region");
              }
              stack.pop_back();
            }
          } else {
            fail(ev.off, "invalid user region mode " + std::to_string(mode));
          }
          break;
        }
        default: break;
      }
      gs[ev.g] = g;
      ps[ev.p] = p;
    }
  }

  std::string_view string(uint64_t id) const {
    auto it = strings_.find(id);
    return it == strings_.end() ? std::string_view() : it->second;
  }

  std::string_view stack_text(uint64_t id) {
    if (id == 0) return {};
    auto it = stacks_.find(id);
    if (it == stacks_.end()) return {};
    auto [t, fresh] = stack_text_.try_emplace(id);
    if (fresh) {
      for (const Frame& f : it->second) {
        if (!t->second.empty()) t->second += '\n';
        t->second += string(f.fn);
        t->second += ' ';
        t->second += string(f.file);
        t->second += ':';
        t->second += std::to_string(f.line);
      }
    }
    return t->second;
  }

  static int64_t id(uint64_t g) { return g == 0 ? -1 : static_cast<int64_t>(g); }
  static bool real_p(int32_t p) { return p >= 0 && p < kFakeP; }

  // The first format names Ms only when a P starts (ProcStart's thread). A G whose system call
  // blocks keeps its M, and its P goes on without it: to the M of a G that leaves a system call
  // and starts on it at once, or to an M that starts it (ProcStart), or it stops. Before an event
  // on such a P, the P's move is spelled out: released by the M of the system call (a synthetic
  // ProcStop) and, when the new M is known, taken by it (a synthetic ProcStart).
  void reassign_p(const Ev& ev) {
    auto o = orphaned_.find(ev.p);
    if (o == orphaned_.end()) return;
    const int64_t old_m = o->second;
    orphaned_.erase(o);
    if (ev.type == kEvProcStop) {
      p_thread_[ev.p] = old_m;  // the M of the system call (or sysmon for it) stops it
      return;
    }
    int64_t new_m = -1;
    if (ev.type == kEvGoStart || ev.type == kEvGoStartLabel) {
      auto t = g_thread_.find(ev.args[0]);
      if (t != g_thread_.end()) new_m = t->second;
    }
    if (ev.type != kEvProcStart && (new_m < 0 || new_m == old_m)) {
      p_thread_[ev.p] = old_m;  // no sign of another M: the same one goes on
      return;
    }
    GoEvent& stop = pending_.emplace_back();
    stop.kind = GoKind::kProcStop;
    stop.type = kEvProcStop;
    stop.synthetic = true;
    stop.ts = ev.ts;
    stop.offset = ev.off;
    stop.p = ev.p;
    stop.m = old_m;
    if (ev.type == kEvProcStart) return;
    GoEvent& start = pending_.emplace_back();
    start = stop;
    start.kind = GoKind::kProcStart;
    start.type = kEvProcStart;
    start.p = -1;
    start.arg_p = ev.p;
    start.m = new_m;
    p_thread_[ev.p] = new_m;
  }

  void convert(const Ev& ev) {
    if (real_p(ev.p)) reassign_p(ev);
    GoEvent& out = pending_.emplace_back();
    out.type = ev.type;
    out.ts = ev.ts;
    out.offset = ev.off;
    if (real_p(ev.p)) {
      out.p = ev.p;
      auto it = p_thread_.find(ev.p);
      if (it != p_thread_.end()) out.m = it->second;
    }
    out.g = id(ev.g);
    out.stack = stack_text(ev.stk);
    switch (ev.type) {
      case kEvGomaxprocs:
        out.kind = GoKind::kProcsChange;
        out.value = ev.args[0];
        pre_init_ = false;  // the events before it state the Gs that exist when the trace starts
        break;
      case kEvProcStart:
        out.kind = GoKind::kProcStart;
        out.arg_p = ev.p;
        out.p = -1;
        out.g = -1;
        out.m = static_cast<int64_t>(ev.args[0]);
        p_thread_[ev.p] = out.m;
        break;
      case kEvProcStop:
        out.kind = GoKind::kProcStop;
        out.g = -1;
        p_thread_.erase(ev.p);
        break;
      case kEvGoCreate:
        out.kind = GoKind::kGoCreate;
        out.arg_g = static_cast<int64_t>(ev.args[0]);
        out.new_stack = stack_text(ev.args[1]);
        if (pre_init_) {
          // A G that existed before the trace: a status, as Go's own reader takes it.
          out.kind = GoKind::kGoStatus;
          out.status = static_cast<uint8_t>(GStatus::kRunnable);
          out.old_status = static_cast<uint8_t>(GStatus::kUnknown);
          out.g = out.p = out.m = -1;
        }
        break;
      case kEvGoStart:
      case kEvGoStartLabel:
        out.kind = GoKind::kGoStart;
        out.arg_g = static_cast<int64_t>(ev.args[0]);
        out.g = -1;
        if (ev.type == kEvGoStartLabel) out.reason = string(ev.args[2]);  // "GC (dedicated)"...
        break;
      case kEvGCStart: out.kind = GoKind::kGCBegin; break;
      case kEvGCDone: out.kind = GoKind::kGCEnd; break;
      case kEvGCSTWStart:
        out.kind = GoKind::kSTWBegin;
        stw_reason_ = stw_reason(ev.args[0]);
        out.reason = stw_reason_;
        break;
      case kEvGCSTWDone:
        out.kind = GoKind::kSTWEnd;
        out.reason = stw_reason_;
        break;
      case kEvGCSweepStart: out.kind = GoKind::kGCSweepBegin; break;
      case kEvGCSweepDone:
        out.kind = GoKind::kGCSweepEnd;
        out.value = ev.args[0];  // bytes swept
        break;
      case kEvGCMarkAssistStart: out.kind = GoKind::kGCMarkAssistBegin; break;
      case kEvGCMarkAssistDone: out.kind = GoKind::kGCMarkAssistEnd; break;
      case kEvHeapAlloc:
      case kEvHeapGoal:
        out.kind = ev.type == kEvHeapAlloc ? GoKind::kHeapAlloc : GoKind::kHeapGoal;
        out.value = ev.args[0];
        break;
      case kEvGoEnd: out.kind = GoKind::kGoDestroy; break;
      case kEvGoSched:
        out.kind = GoKind::kGoStop;
        out.reason = "runtime.Gosched";
        break;
      case kEvGoPreempt:
        out.kind = GoKind::kGoStop;
        out.reason = "preempted";
        break;
      case kEvGoStop:
      case kEvGoSleep:
      case kEvGoBlock:
      case kEvGoBlockSend:
      case kEvGoBlockRecv:
      case kEvGoBlockSelect:
      case kEvGoBlockSync:
      case kEvGoBlockCond:
      case kEvGoBlockNet:
      case kEvGoBlockGC:
        out.kind = GoKind::kGoBlock;
        out.reason = block_reason(ev.type);
        break;
      case kEvGoUnblock:
        out.kind = GoKind::kGoUnblock;
        out.arg_g = static_cast<int64_t>(ev.args[0]);
        if (!real_p(ev.p)) out.g = -1;
        break;
      case kEvGoSysCall:
        out.kind = GoKind::kGoSyscallBegin;
        if (out.m >= 0) g_thread_[ev.g] = out.m;
        if (!ev.linked) {
          // The end of a syscall that never blocked: Go's first format has no event for it.
          GoEvent& end = pending_.emplace_back();
          end = pending_[pending_.size() - 2];
          end.kind = GoKind::kGoSyscallEnd;
          end.synthetic = true;
          end.stack = {};
        }
        break;
      case kEvGoSysBlock:
        pending_.back().kind = GoKind::kGoSyscallBlocked;
        if (real_p(ev.p)) {
          auto it = p_thread_.find(ev.p);
          if (it != p_thread_.end()) {
            orphaned_[ev.p] = it->second;
            p_thread_.erase(it);
          }
        }
        break;
      case kEvGoSysExit: {
        out.kind = GoKind::kGoSyscallEndBlocked;
        out.g = static_cast<int64_t>(ev.args[0]);
        auto t = g_thread_.find(ev.args[0]);  // it leaves the system call on the M it entered it on
        if (t != g_thread_.end()) out.m = t->second;
        break;
      }
      case kEvGoWaiting:
      case kEvGoInSyscall:
        out.kind = GoKind::kGoStatus;
        out.arg_g = static_cast<int64_t>(ev.args[0]);
        out.status = static_cast<uint8_t>(ev.type == kEvGoWaiting ? GStatus::kWaiting : GStatus::kSyscall);
        out.old_status = static_cast<uint8_t>(pre_init_ ? GStatus::kUnknown : GStatus::kRunnable);
        out.g = -1;
        out.p = -1;  // the P that states it is not the G's
        out.m = -1;
        break;
      case kEvUserTaskCreate:
        out.kind = GoKind::kUserTaskBegin;
        out.value = ev.args[0];
        out.reason = string(ev.args[2]);
        break;
      case kEvUserTaskEnd:
        out.kind = GoKind::kUserTaskEnd;
        out.value = ev.args[0];
        break;
      case kEvUserRegion:
        out.kind = ev.args[1] == 0 ? GoKind::kUserRegionBegin : GoKind::kUserRegionEnd;
        out.value = ev.args[0];
        out.reason = string(ev.args[2]);
        break;
      case kEvUserLog:
        out.kind = GoKind::kUserLog;
        out.value = ev.args[0];
        scratch_.assign(string(ev.args[1]));
        scratch_ += '=';
        scratch_ += ev.sarg;
        out.reason = scratch_;
        break;
      default: out.kind = GoKind::kDropped; break;
    }
  }

  // The stwReason string of an STW kind number, as Go 1.23 reads first-format traces: before 1.21
  // the kinds were 0 (mark termination) and 1 (sweep termination); 1.21 wrote Go's stwReason.
  std::string_view stw_reason(uint64_t kind) const {
    if (minor_ < 21) return kind <= 1 ? kGoStwReasons[kind + 1] : kGoStwReasons[0];
    return kind < std::size(kGoStwReasons) ? kGoStwReasons[kind] : kGoStwReasons[0];
  }

  static std::string_view block_reason(uint8_t type) {
    switch (type) {
      case kEvGoStop: return "forever";
      case kEvGoSleep: return "sleep";
      case kEvGoBlockSend: return "chan send";
      case kEvGoBlockRecv: return "chan receive";
      case kEvGoBlockSelect: return "select";
      case kEvGoBlockSync: return "sync";
      case kEvGoBlockCond: return "sync.(*Cond).Wait";
      case kEvGoBlockNet: return "network";
      case kEvGoBlockGC: return "GC mark assist wait for work";
      default: return "unspecified";
    }
  }

  std::string path_;
  std::string_view data_;
  int minor_ = 0;
  double freq_ = 0;
  std::unordered_map<uint64_t, std::string_view> strings_;
  std::unordered_map<uint64_t, std::vector<Frame>> stacks_;
  std::unordered_map<uint64_t, std::string> stack_text_;
  std::unordered_map<uint64_t, bool> timer_gs_;
  std::vector<Ev> all_;                       // every event, in the order of the file
  std::vector<std::vector<uint32_t>> lists_;  // per P: indexes into all_
  std::vector<uint32_t> events_;              // the trace in order: indexes into all_
  size_t next_ = 0;
  std::unordered_map<int32_t, int64_t> p_thread_;   // the M of each running P
  std::unordered_map<int32_t, int64_t> orphaned_;   // Ps whose G's system call blocked: its M
  std::unordered_map<uint64_t, int64_t> g_thread_;  // the M of each G's last system call
  std::vector<GoEvent> pending_;                    // events convert() made, from pending_head_
  size_t pending_head_ = 0;
  bool pre_init_ = true;  // before the first Gomaxprocs event
  std::string_view stw_reason_;  // of the last GCSTWStart
  std::string scratch_;
};

}  // namespace

bool v1_version_supported(int minor) { return minor == 11 || minor == 19 || minor == 21; }

std::unique_ptr<GoTraceReader> make_v1_reader(const std::string& path, std::string_view data) {
  return std::make_unique<V1Reader>(path, data);
}

std::string_view v1_type_name(uint8_t type) { return type < kEvCount ? kDescs[type].name : ""; }

}  // namespace gmp::trace::go
