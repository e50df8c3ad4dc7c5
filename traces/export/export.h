// Exporters of a trace to other tools' formats: `gmpsim trace export IN --format perfetto|chrome
// -o OUT`. Both read the lane model (traces/lanes/model.h) through the same walk (walk.h), so
// they show the same tracks and items:
//   - perfetto: Perfetto's TrackEvent protobuf (perfetto_trace.proto), opened by ui.perfetto.dev
//     and Perfetto's trace processor. Groups are process tracks; P, M and counter tracks are
//     their children; slices are SLICE_BEGIN/SLICE_END pairs; counters TYPE_COUNTER events;
//     markers TYPE_INSTANT; arrows instants at both ends joined by flow_ids (out) and
//     terminating_flow_ids (in). One packet sequence, written in time order.
//   - chrome: the Chrome JSON trace event format (chrome://tracing, Perfetto's JSON importer):
//     process and thread names as metadata events, "X" complete events for slices, "C" for
//     counters, "i" for markers, and for each arrow a zero-length "X" event at each end joined by
//     "bind_id" with "flow_out" / "flow_in" (flow events v2); timestamps in microseconds with
//     three decimals, so nanoseconds are kept exactly.
// Perfetto's timestamps are unsigned: a trace that starts before 0 is moved to start at 0 there
// (its process names say by how much); Chrome's JSON keeps the times as they are.
// The output is written as traces/output_stream.h says: it appears whole or not at all.
#pragma once

#include <cstdint>
#include <string>

#include "traces/lanes/model.h"

namespace gmp::exporter {

struct ExportCounts {
  uint64_t tracks = 0, slices = 0, counter_values = 0, instants = 0, flows = 0;
};

// Throw trace::OutputError when the output cannot be written.
ExportCounts export_perfetto(const lanes::Model& m, const std::string& path);
ExportCounts export_chrome_json(const lanes::Model& m, const std::string& path);

}  // namespace gmp::exporter
