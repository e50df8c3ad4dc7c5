// Writes the Chrome JSON trace event format (export.h). Groups are processes (pid 1 + Group),
// tracks are threads (tid 1 + track index); counters are "C" events of their group's process,
// named after the track.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "traces/export/export.h"
#include "traces/export/walk.h"
#include "traces/state_machine.h"
#include "traces/output_stream.h"

namespace gmp::exporter {

namespace {

constexpr int kGroupPid = 1;  // + Group
constexpr int kTrackTid = 1;  // + track index

// `s` as a JSON string, quotes included, with '"', '\\' and control characters escaped. The
// trace reader has already refused strings that are not UTF-8 (protobuf checks them).
void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += '"';
}

// Nanoseconds as microseconds with three decimals ("-0.001" for -1 ns).
void append_us(std::string& out, int64_t ns) {
  char buf[32];
  const uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", mag / 1000, mag % 1000);
  out += buf;
}

class JsonWriter {
 public:
  // No displayTimeUnit: it only chooses how a viewer prints times, and some versions of Perfetto's
  // importer read it as the unit of "ts".
  explicit JsonWriter(trace::OutputStream& out) : out_(out) { buf_ = "{\"traceEvents\":[\n"; }
  // Starts an event object: the text up to its first field.
  std::string& begin() {
    if (events_++ != 0) buf_ += ",\n";
    buf_ += '{';
    return buf_;
  }
  void end() {
    buf_ += '}';
    if (buf_.size() >= (1u << 20)) flush();
  }
  void finish() {
    buf_ += "\n]}\n";
    flush();
  }

 private:
  void flush() {
    out_.write(buf_);
    out_.check();
    buf_.clear();
  }
  trace::OutputStream& out_;
  std::string buf_;
  uint64_t events_ = 0;
};

void append_place(std::string& b, int pid, int tid) {
  b += "\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid);
}

}  // namespace

ExportCounts export_chrome_json(const lanes::Model& m, const std::string& path) {
  trace::OutputStream out(path);
  JsonWriter w(out);
  ExportCounts n;
  const std::string title = m.producer.empty() ? std::string("trace") : m.producer;
  // The groups (walk.h): one process, Ps, Ms, scheduler and, for a trace with GC events, GC (a
  // GC-free trace's output is as it was); several, one per process and "machine".
  Walk walk(m);
  const std::vector<Track>& tracks = walk.tracks();
  for (size_t g = 0; g < walk.groups().size(); ++g) {
    std::string& b = w.begin();
    b += "\"ph\":\"M\",\"name\":\"process_name\",";
    append_place(b, kGroupPid + static_cast<int>(g), 0);
    b += ",\"args\":{\"name\":";
    append_json_string(b, walk.groups()[g] + " (" + title + ")");
    b += "}";
    w.end();
  }
  for (size_t t = 0; t < tracks.size(); ++t) {
    ++n.tracks;
    if (tracks[t].counter) continue;  // a "C" event names its own series
    const int pid = kGroupPid + static_cast<int>(tracks[t].gid), tid = kTrackTid + static_cast<int>(t);
    for (const char* meta : {"thread_name", "thread_sort_index"}) {
      std::string& b = w.begin();
      b += "\"ph\":\"M\",\"name\":\"" + std::string(meta) + "\",";
      append_place(b, pid, tid);
      b += ",\"args\":{";
      if (meta[7] == 'n') {
        b += "\"name\":";
        append_json_string(b, tracks[t].name);
      } else {
        b += "\"sort_index\":" + std::to_string(t);
      }
      b += "}";
      w.end();
    }
  }
  Item it;
  while (walk.next(it)) {
    if (it.type == Item::SliceEnd) continue;  // "X" events carry their duration
    const Track& tr = tracks[it.track];
    const int pid = kGroupPid + static_cast<int>(tr.gid), tid = kTrackTid + static_cast<int>(it.track);
    std::string& b = w.begin();
    switch (it.type) {
      case Item::SliceBegin:
        b += it.gc != nullptr ? "\"ph\":\"X\",\"cat\":\"gc\",\"name\":" : "\"ph\":\"X\",\"cat\":\"sched\",\"name\":";
        append_json_string(b, slice_name(tr, it));
        b += ",\"dur\":";
        append_us(b, it.end - it.ts);
        if (it.gc != nullptr && it.gc->value >= 0) {
          b += static_cast<trace::GcSpan>(tr.gc_span) == trace::GcSpan::Sweep ? ",\"args\":{\"bytes\":" : ",\"args\":{\"cycle\":";
          b += std::to_string(it.gc->value) + (it.g != lanes::kNoG ? ",\"goid\":" + std::to_string(it.g) : "") + "}";
        } else if (it.g != lanes::kNoG) {
          b += ",\"args\":{\"goid\":" + std::to_string(it.g) + "}";
        }
        ++n.slices;
        break;
      case Item::Counter:
        b += "\"ph\":\"C\",\"name\":";
        append_json_string(b, tr.name);
        b += ",\"args\":{\"value\":" + std::to_string(it.value) + "}";
        ++n.counter_values;
        break;
      case Item::Instant:
        b += "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"marker\",\"name\":";
        append_json_string(b, lanes::marker_name(it.marker));
        ++n.instants;
        break;
      case Item::FlowOut:
      case Item::FlowIn:
        // A zero-length slice at each end, bound by id (flow events v2): an end often falls where
        // its track runs nothing, where "s"/"f" events would bind to no slice or a stale one.
        b += "\"ph\":\"X\",\"dur\":0,\"cat\":\"flow\",\"name\":";
        append_json_string(b, std::string(arrow_name(it.arrow)) + (it.type == Item::FlowOut ? " (from)" : " (to)"));
        b += ",\"bind_id\":" + std::to_string(it.flow);
        b += it.type == Item::FlowOut ? ",\"flow_out\":true" : ",\"flow_in\":true";
        if (it.type == Item::FlowOut) ++n.flows;
        break;
      case Item::SliceEnd: break;
    }
    b += ",\"ts\":";
    append_us(b, it.ts);
    b += ',';
    append_place(b, pid, tid);
    w.end();
  }
  w.finish();
  out.commit();
  return n;
}

}  // namespace gmp::exporter
