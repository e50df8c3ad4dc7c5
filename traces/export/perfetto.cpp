// Writes Perfetto's TrackEvent format (export.h): a Trace is a sequence of length-delimited
// `packet` fields (field 1), so packets are serialized one at a time, never a whole Trace.
#include <string>

#include "traces/export/export.h"
#include "traces/export/perfetto_trace.pb.h"
#include "traces/export/walk.h"
#include "traces/state_machine.h"
#include "traces/output_stream.h"

namespace gmp::exporter {

namespace {

namespace pf = gmp::perfetto;

constexpr uint32_t kSequence = 1;           // the one packet sequence
constexpr uint32_t kStateCleared = 1;       // TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
constexpr uint64_t kGroupUuid = 1;          // + Group
constexpr uint64_t kTrackUuid = 16;         // + track index
constexpr uint64_t kProcessGroupUuid = uint64_t{1} << 40;  // + group, for a trace of several processes
constexpr int32_t kGroupPid = 1;            // + Group

class PacketWriter {
 public:
  explicit PacketWriter(trace::OutputStream& out) : out_(out) {}
  void write(pf::TracePacket& p) {
    p.set_trusted_packet_sequence_id(kSequence);
    if (first_) {
      p.set_sequence_flags(kStateCleared);
      first_ = false;
    }
    auto& o = out_.out();
    o.WriteTag(1u << 3 | 2u);  // Trace.packet, length-delimited
    o.WriteVarint32(static_cast<uint32_t>(p.ByteSizeLong()));
    p.SerializeWithCachedSizes(&o);
    if (++written_ % 65536 == 0) out_.check();
  }

 private:
  trace::OutputStream& out_;
  bool first_ = true;
  uint64_t written_ = 0;
};

}  // namespace

ExportCounts export_perfetto(const lanes::Model& m, const std::string& path) {
  trace::OutputStream out(path);
  PacketWriter w(out);
  ExportCounts n;
  pf::TracePacket p;
  // Perfetto's timestamps are unsigned: a trace that starts before 0 (the schema allows it) is
  // moved so that it starts at 0, and the process names say by how much.
  const int64_t shift = m.t_begin < 0 ? -m.t_begin : 0;
  std::string title = m.producer.empty() ? std::string("trace") : m.producer;
  if (shift != 0) title += ", times moved " + std::to_string(shift) + " ns later";
  // The groups (walk.h): one process, Ps, Ms, scheduler and, for a trace with GC events, GC (a
  // GC-free trace's output is as it was); several, one per process and "machine".
  Walk walk(m);
  const std::vector<Track>& tracks = walk.tracks();
  const uint64_t group_uuid = walk.per_process() ? kProcessGroupUuid : kGroupUuid;
  for (size_t g = 0; g < walk.groups().size(); ++g) {
    p.Clear();
    pf::TrackDescriptor* d = p.mutable_track_descriptor();
    d->set_uuid(group_uuid + g);
    d->mutable_process()->set_pid(kGroupPid + static_cast<int32_t>(g));
    d->mutable_process()->set_process_name(walk.groups()[g] + " (" + title + ")");
    w.write(p);
  }
  for (size_t t = 0; t < tracks.size(); ++t) {
    p.Clear();
    pf::TrackDescriptor* d = p.mutable_track_descriptor();
    d->set_uuid(kTrackUuid + t);
    d->set_parent_uuid(group_uuid + tracks[t].gid);
    d->set_name(tracks[t].name);
    if (tracks[t].counter) d->mutable_counter();
    w.write(p);
    ++n.tracks;
  }
  Item it;
  while (walk.next(it)) {
    p.Clear();
    p.set_timestamp(static_cast<uint64_t>(it.ts + shift));
    pf::TrackEvent* e = p.mutable_track_event();
    e->set_track_uuid(kTrackUuid + it.track);
    switch (it.type) {
      case Item::SliceBegin:
        e->set_type(pf::TrackEvent::TYPE_SLICE_BEGIN);
        e->add_categories(it.gc != nullptr ? "gc" : "sched");
        e->set_name(slice_name(tracks[it.track], it));
        if (it.gc != nullptr && it.gc->value >= 0) {
          pf::DebugAnnotation* a = e->add_debug_annotations();
          a->set_name(static_cast<trace::GcSpan>(tracks[it.track].gc_span) == trace::GcSpan::Sweep ? "bytes" : "cycle");
          a->set_int_value(it.gc->value);
        }
        if (it.g != lanes::kNoG) {
          pf::DebugAnnotation* a = e->add_debug_annotations();
          a->set_name("goid");
          a->set_int_value(it.g);
        }
        ++n.slices;
        break;
      case Item::SliceEnd:
        e->set_type(pf::TrackEvent::TYPE_SLICE_END);
        break;
      case Item::Counter:
        e->set_type(pf::TrackEvent::TYPE_COUNTER);
        e->set_counter_value(it.value);
        ++n.counter_values;
        break;
      case Item::Instant:
        e->set_type(pf::TrackEvent::TYPE_INSTANT);
        e->add_categories("marker");
        e->set_name(lanes::marker_name(it.marker));
        ++n.instants;
        break;
      case Item::FlowOut:
      case Item::FlowIn:
        e->set_type(pf::TrackEvent::TYPE_INSTANT);
        e->add_categories("flow");
        e->set_name(std::string(arrow_name(it.arrow)) + (it.type == Item::FlowOut ? " (from)" : " (to)"));
        if (it.type == Item::FlowOut) {
          e->add_flow_ids(it.flow);
          ++n.flows;
        } else {
          e->add_terminating_flow_ids(it.flow);
        }
        break;
    }
    w.write(p);
  }
  out.commit();
  return n;
}

}  // namespace gmp::exporter
