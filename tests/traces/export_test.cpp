// The exporters (traces/export/export.h): what they write is decoded again, Perfetto's protobuf
// with its schema and Chrome's JSON with Boost.PropertyTree, into one neutral form, and checked
// against a small trace worked out by hand and against the structure each format requires, on
// simulated and on real Go traces.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include "tests/temp_dir.h"
#include "tests/view/gc_trace.h"
#include "tests/view/small_trace.h"
#include "tests/traces/two_process_trace.h"
#include "traces/export/export.h"
#include "traces/export/perfetto_trace.pb.h"
#include "traces/import/go_import.h"
#include "traces/lanes/model.h"
#include "traces/output_file.h"
#include "traces/timeline.h"
#include "traces/trace_writer.h"

namespace {

using Slice = std::tuple<std::string, int64_t, int64_t>;  // name, start, end (ns)

struct Flow {
  std::string name, from_track, to_track;
  int64_t from_ts = -1, to_ts = -1;
  int outs = 0, ins = 0;
};

// An export decoded: what each track holds, by track name.
struct Decoded {
  std::map<std::string, std::vector<Slice>> slices;
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> counters;
  std::map<std::string, std::vector<std::pair<int64_t, std::string>>> instants;  // markers only
  std::map<uint64_t, Flow> flows;
  std::map<std::string, std::string> group_of;  // track name -> its group's name
  // (group, track) of every track, and the slices by "group|track" (track names repeat across
  // the groups of several processes).
  std::set<std::pair<std::string, std::string>> tracks;
  std::map<std::string, std::vector<Slice>> gslices;
  std::vector<std::string> problems;            // structural errors found while decoding
};

Decoded decode_perfetto(const std::string& path) {
  Decoded d;
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  gmp::perfetto::Trace t;
  REQUIRE(t.ParseFromString(ss.str()));
  REQUIRE(t.packet_size() > 0);
  CHECK(t.packet(0).sequence_flags() == 1u);  // SEQ_INCREMENTAL_STATE_CLEARED
  std::map<uint64_t, std::string> name, groups, parent;
  std::set<uint64_t> counter_tracks;
  std::map<uint64_t, std::pair<std::string, int64_t>> open;  // track -> the slice begun on it
  int64_t last_ts = INT64_MIN;
  for (const auto& p : t.packet()) {
    if (p.trusted_packet_sequence_id() != 1u) d.problems.push_back("packet off sequence 1");
    if (p.has_track_descriptor()) {
      const auto& td = p.track_descriptor();
      if (name.count(td.uuid()) != 0) d.problems.push_back("uuid declared twice: " + td.name());
      if (td.has_process()) {
        groups[td.uuid()] = td.process().process_name();
        name[td.uuid()] = td.process().process_name();
        continue;
      }
      name[td.uuid()] = td.name();
      if (groups.count(td.parent_uuid()) == 0) d.problems.push_back("track " + td.name() + " has no parent group");
      d.group_of[td.name()] = groups[td.parent_uuid()];
      d.tracks.insert({groups[td.parent_uuid()], td.name()});
      parent[td.uuid()] = groups[td.parent_uuid()];
      if (td.has_counter()) counter_tracks.insert(td.uuid());
      continue;
    }
    REQUIRE(p.has_track_event());
    const auto& e = p.track_event();
    const auto ts = static_cast<int64_t>(p.timestamp());
    if (ts < last_ts) d.problems.push_back("time goes back at " + std::to_string(ts));
    last_ts = ts;
    if (name.count(e.track_uuid()) == 0 || groups.count(e.track_uuid()) != 0) {
      d.problems.push_back("event on an undeclared track " + std::to_string(e.track_uuid()));
      continue;
    }
    const std::string& tn = name[e.track_uuid()];
    const bool counter = counter_tracks.count(e.track_uuid()) != 0;
    if (counter != (e.type() == gmp::perfetto::TrackEvent::TYPE_COUNTER)) {
      d.problems.push_back("counter event and track disagree on " + tn);
    }
    switch (e.type()) {
      case gmp::perfetto::TrackEvent::TYPE_SLICE_BEGIN:
        if (open.count(e.track_uuid()) != 0) d.problems.push_back("slices nest on " + tn);
        open[e.track_uuid()] = {e.name(), ts};
        break;
      case gmp::perfetto::TrackEvent::TYPE_SLICE_END: {
        auto it = open.find(e.track_uuid());
        if (it == open.end()) {
          d.problems.push_back("an end without a begin on " + tn);
          break;
        }
        d.slices[tn].emplace_back(it->second.first, it->second.second, ts);
        d.gslices[parent[e.track_uuid()] + "|" + tn].emplace_back(it->second.first, it->second.second, ts);
        open.erase(it);
        break;
      }
      case gmp::perfetto::TrackEvent::TYPE_COUNTER: d.counters[tn].emplace_back(ts, e.counter_value()); break;
      case gmp::perfetto::TrackEvent::TYPE_INSTANT:
        for (uint64_t id : e.flow_ids()) {
          Flow& fl = d.flows[id];
          fl.name = e.name().substr(0, e.name().find(" ("));
          fl.from_track = tn;
          fl.from_ts = ts;
          ++fl.outs;
        }
        for (uint64_t id : e.terminating_flow_ids()) {
          Flow& fl = d.flows[id];
          fl.to_track = tn;
          fl.to_ts = ts;
          ++fl.ins;
        }
        if (e.flow_ids_size() == 0 && e.terminating_flow_ids_size() == 0) d.instants[tn].emplace_back(ts, e.name());
        break;
      default: d.problems.push_back("an event of no type on " + tn);
    }
  }
  for (const auto& [uuid, s] : open) d.problems.push_back("slice " + s.first + " never ends on " + name[uuid]);
  return d;
}

// Values are read as text and converted here: property_tree's numeric get<T> does not build
// warning-free under GCC 12 with ASan (maybe-uninitialized inside boost::optional).

// Chrome's microseconds ("12.345") back to nanoseconds.
int64_t ns_of(const std::string& us) { return std::llround(std::stod(us) * 1000.0); }

Decoded decode_chrome(const std::string& path) {
  Decoded d;
  boost::property_tree::ptree root;
  REQUIRE_NOTHROW(boost::property_tree::read_json(path, root));
  CHECK(root.count("displayTimeUnit") == 0);  // some Perfetto versions misread it as ts's unit
  std::map<int, std::string> procs;
  std::map<std::pair<int, int>, std::string> threads;
  const auto& evs = root.get_child("traceEvents");
  for (const auto& [k, e] : evs) {  // metadata first: names may be given anywhere in the file
    if (e.get<std::string>("ph") != "M") continue;
    const int pid = std::stoi(e.get<std::string>("pid")), tid = std::stoi(e.get<std::string>("tid"));
    if (e.get<std::string>("name") == "process_name") procs[pid] = e.get<std::string>("args.name");
    if (e.get<std::string>("name") == "thread_name") threads[{pid, tid}] = e.get<std::string>("args.name");
  }
  for (const auto& [pt, n] : threads) {
    d.group_of[n] = procs[pt.first];
    d.tracks.insert({procs[pt.first], n});
  }
  std::map<std::pair<int, int>, int64_t> last_end;  // by (pid, tid): track names repeat across processes
  for (const auto& [k, e] : evs) {
    const std::string ph = e.get<std::string>("ph");
    if (ph == "M") continue;
    const int pid = std::stoi(e.get<std::string>("pid")), tid = std::stoi(e.get<std::string>("tid"));
    const int64_t ts = ns_of(e.get<std::string>("ts"));
    if (ph == "C") {
      const std::string n = e.get<std::string>("name");
      d.counters[n].emplace_back(ts, std::stoll(e.get<std::string>("args.value")));
      d.group_of[n] = procs[pid];
      d.tracks.insert({procs[pid], n});
      continue;
    }
    if (threads.count({pid, tid}) == 0) {
      d.problems.push_back("an event on an unnamed thread");
      continue;
    }
    const std::string& tn = threads[{pid, tid}];
    if (ph == "X" && e.count("bind_id") != 0) {  // an arrow's end (flow events v2)
      Flow& fl = d.flows[std::stoull(e.get<std::string>("bind_id"))];
      const std::string n = e.get<std::string>("name");
      fl.name = n.substr(0, n.find(" ("));
      if (ns_of(e.get<std::string>("dur")) != 0) d.problems.push_back("a flow end with a duration");
      if (e.get<std::string>("flow_out", "") == "true") {
        fl.from_track = tn, fl.from_ts = ts, ++fl.outs;
      } else if (e.get<std::string>("flow_in", "") == "true") {
        fl.to_track = tn, fl.to_ts = ts, ++fl.ins;
      } else {
        d.problems.push_back("a bind_id without flow_in or flow_out");
      }
    } else if (ph == "X") {
      const int64_t end = ts + ns_of(e.get<std::string>("dur"));
      if (last_end.count({pid, tid}) != 0 && ts < last_end[{pid, tid}]) d.problems.push_back("slices overlap on " + tn);
      last_end[{pid, tid}] = end;
      d.slices[tn].emplace_back(e.get<std::string>("name"), ts, end);
      d.gslices[procs[pid] + "|" + tn].emplace_back(e.get<std::string>("name"), ts, end);
    } else if (ph == "i") {
      d.instants[tn].emplace_back(ts, e.get<std::string>("name"));
    } else {
      d.problems.push_back("unknown phase " + ph);
    }
  }
  return d;
}

// What every export must satisfy, in either format.
void check_structure(const Decoded& d) {
  CHECK(d.problems == std::vector<std::string>{});
  for (const auto& [id, f] : d.flows) {
    INFO("flow " << id << " " << f.name);
    CHECK(f.outs == 1);
    CHECK(f.ins == 1);
    CHECK(f.from_ts <= f.to_ts);
  }
  for (const auto& [track, v] : d.counters) {
    for (size_t i = 1; i < v.size(); ++i) CHECK(v[i - 1].first <= v[i].first);
  }
}

// The running time of Gs (slices named "G<n>", not system calls) on each P track.
std::map<std::string, int64_t> running_per_p(const Decoded& d) {
  std::map<std::string, int64_t> r;
  for (const auto& [track, v] : d.slices) {
    if (track[0] != 'P') continue;
    for (const auto& [n, t0, t1] : v) {
      if (n[0] == 'G' && n.find(' ') == std::string::npos) r[track] += t1 - t0;
    }
  }
  return r;
}

using Exporter = gmp::exporter::ExportCounts (*)(const gmp::lanes::Model&, const std::string&);
struct Format {
  const char* name;
  Exporter write;
  Decoded (*read)(const std::string&);
};
const Format kFormats[] = {{"perfetto", gmp::exporter::export_perfetto, decode_perfetto},
                           {"chrome", gmp::exporter::export_chrome_json, decode_chrome}};

const std::string kData = std::string(GMP_SOURCE_DIR) + "/tests/traces/data/";

}  // namespace

TEST_CASE("export: the small trace's slices, counters, markers and arrows, worked by hand, in both formats") {
  TempDir dir("gmp_export");
  gmp::view::testing::write_small_trace(dir.file("small.trace"));
  const gmp::lanes::Model m = gmp::lanes::load_trace(dir.file("small.trace"));
  for (const Format& f : kFormats) {
    SECTION(f.name) {
      const gmp::exporter::ExportCounts n = f.write(m, dir.file("out"));
      const Decoded d = f.read(dir.file("out"));
      check_structure(d);
      // small_trace.h's header comment: P0 runs g1, g3 (a syscall in the middle) and g1 again; P1
      // spins and runs g2 twice; M1 spins, runs g2, parks, runs g2 again.
      CHECK(d.slices.at("P0") == std::vector<Slice>{{"G1", 100, 500},
                                                    {"G3", 510, 800},
                                                    {"G3 syscall", 800, 900},
                                                    {"G3", 900, 1000},
                                                    {"G1", 1200, 1400}});
      CHECK(d.slices.at("P1") ==
            std::vector<Slice>{{"spinning", 150, 200}, {"G2", 250, 600}, {"G2", 750, 1100}});
      CHECK(d.slices.at("M1") == std::vector<Slice>{{"spinning", 150, 200},
                                                    {"G2", 250, 600},
                                                    {"parked", 620, 700},
                                                    {"G2", 750, 1100}});
      CHECK(d.group_of.at("P0").rfind("Ps", 0) == 0);
      CHECK(d.group_of.at("M1").rfind("Ms", 0) == 0);
      CHECK(d.instants.at("P0") == std::vector<std::pair<int64_t, std::string>>{{700, "preemption request"}});
      // Arrows: two steals P0 -> P1, M0 wakes M1, g2 readied on P0 starts on P1.
      std::multiset<std::tuple<std::string, std::string, int64_t, std::string, int64_t>> flows, want = {
          {"steal", "P0", 200, "P1", 200},
          {"steal", "P0", 720, "P1", 720},
          {"M wake-up", "M0", 660, "M1", 700},
          {"G wake-up", "P0", 650, "P1", 750},
      };
      for (const auto& [id, fl] : d.flows) flows.emplace(fl.name, fl.from_track, fl.from_ts, fl.to_track, fl.to_ts);
      CHECK(flows == want);
      // Counters: the spinning Ms (M1 spins 150-200), P1's local queue (g2 stolen into... runs).
      CHECK(d.counters.at("spinning Ms") == std::vector<std::pair<int64_t, int64_t>>{{150, 1}, {200, 0}});
      CHECK(d.counters.count("global queue") == 0);  // never changes from 0: no samples
      CHECK(d.slices.at("M0") == std::vector<Slice>{{"G1", 100, 500},
                                                    {"G3", 510, 800},
                                                    {"G3 syscall", 800, 900},
                                                    {"G3", 900, 1000},
                                                    {"G1", 1200, 1400}});
      CHECK(n.slices == 17);
      CHECK(n.flows == 4);
      CHECK(n.instants == 1);
      // A trace without GC events has no GC group: its output is as it was before the GC.
      for (const auto& [track, group] : d.group_of) CHECK(group.rfind("GC", 0) != 0);
    }
  }
}

TEST_CASE("export: a GC trace's cycles, pauses, assists, sweeps and heap counters, worked by hand") {
  TempDir dir("gmp_export");
  gmp::view::testing::write_gc_trace(dir.file("gc.trace"));
  const gmp::lanes::Model m = gmp::lanes::load_trace(dir.file("gc.trace"));
  for (const Format& f : kFormats) {
    SECTION(f.name) {
      f.write(m, dir.file("out"));
      const Decoded d = f.read(dir.file("out"));
      check_structure(d);
      // gc_trace.h's header comment.
      CHECK(d.slices.at("GC cycles") == std::vector<Slice>{{"GC 1", 220, 510}});
      CHECK(d.slices.at("stop-the-world") ==
            std::vector<Slice>{{"STW gc_sweep_term", 200, 230}, {"STW gc_mark_term", 500, 520}});
      CHECK(d.slices.at("G2 mark assist") == std::vector<Slice>{{"mark assist", 300, 400}});
      CHECK(d.slices.at("M0 sweeping") == std::vector<Slice>{{"sweep", 600, 650}});
      constexpr int64_t MiB = 1 << 20;
      CHECK(d.counters.at("heap") ==
            std::vector<std::pair<int64_t, int64_t>>{{150, 4 * MiB}, {350, 5 * MiB}, {660, 2 * MiB}});
      CHECK(d.counters.at("heap goal") == std::vector<std::pair<int64_t, int64_t>>{{150, 4 * MiB}, {520, 8 * MiB}});
      for (const char* t : {"GC cycles", "stop-the-world", "G2 mark assist", "M0 sweeping", "heap", "heap goal"}) {
        INFO(t);
        CHECK(d.group_of.at(t).rfind("GC (", 0) == 0);
      }
      // The scheduler's tracks are still there: G2 runs on P1 around its stop.
      CHECK(d.slices.at("P1") == std::vector<Slice>{{"G2", 110, 210}, {"G2", 240, 700}});
    }
  }
}

TEST_CASE("export: real Go traces (Go 1.19 and 1.23) export with each P's running time as the timeline has it") {
  TempDir dir("gmp_export");
  for (const char* go : {"goprog-1.19.trace", "goprog-1.23.trace"}) {
    const std::string in = dir.file(std::string(go) + ".gmp");
    gmp::trace::go::import_go_trace(kData + go, in, gmp::trace::go::FormatChoice::kAuto);
    const gmp::lanes::Model m = gmp::lanes::load_trace(in);
    const gmp::trace::Timeline tl = gmp::trace::build_timeline(in);
    for (const Format& f : kFormats) {
      INFO(go << " as " << f.name);
      const gmp::exporter::ExportCounts n = f.write(m, dir.file("out"));
      const Decoded d = f.read(dir.file("out"));
      check_structure(d);
      // The analyses' timeline (traces/timeline.h) is built from the events on its own; the P
      // tracks must hold the same running time.
      std::map<std::string, int64_t> want;
      for (const auto& [p, ns] : tl.p_busy) {
        if (ns > 0) want["P" + std::to_string(p.second)] = ns;
      }
      const std::map<std::string, int64_t> got = running_per_p(d);
      for (const auto& [p, ns] : want) {
        INFO(p);
        CHECK(got.count(p) == 1);
        CHECK((got.count(p) == 1 ? got.at(p) : -1) == ns);
      }
      CHECK(got.size() == want.size());
      CHECK(n.slices > 100);
      CHECK(n.flows > 0);
      CHECK(d.flows.size() == n.flows);
    }
  }
}

TEST_CASE("export: quotes, backslashes and control characters in names still make valid JSON") {
  TempDir dir("gmp_export");
  const char raw[] = "quote \" backslash \\ tab \t nl \n nul \0 end \xc3\xa9";
  const std::string odd(raw, sizeof raw - 1);
  gmp::view::testing::write_small_trace(dir.file("small.trace"), odd);
  const gmp::lanes::Model m = gmp::lanes::load_trace(dir.file("small.trace"));
  gmp::exporter::export_chrome_json(m, dir.file("out.json"));
  const Decoded d = decode_chrome(dir.file("out.json"));
  check_structure(d);
  CHECK(d.group_of.at("P0") == "Ps (" + odd + ")");
}

TEST_CASE("export: an unwritable output leaves nothing behind and says why") {
  TempDir dir("gmp_export");
  gmp::view::testing::write_small_trace(dir.file("small.trace"));
  const gmp::lanes::Model m = gmp::lanes::load_trace(dir.file("small.trace"));
  for (const Format& f : kFormats) {
    INFO(f.name);
    CHECK_THROWS_WITH(f.write(m, dir.path.string()), Catch::Contains("is a directory"));
    CHECK_THROWS_AS(f.write(m, dir.file("no/such/dir/out")), gmp::trace::OutputError);
    CHECK(dir.entries() == 1);  // only small.trace: no temporary file is left
  }
}

// The schema file and the decoder above share perfetto_trace.proto, so a wrong field number there
// would go unseen: here one packet is written out by hand from Perfetto's own numbers
// (trace_packet.proto: timestamp 8, trusted_packet_sequence_id 10, track_event 11; track_event.proto:
// type 9, track_uuid 11, name 23, flow_ids 47 as fixed64) and must equal what the schema encodes.
TEST_CASE("export: perfetto_trace.proto encodes with Perfetto's field numbers") {
  gmp::perfetto::TracePacket p;
  p.set_timestamp(100);
  p.set_trusted_packet_sequence_id(1);
  gmp::perfetto::TrackEvent* e = p.mutable_track_event();
  e->set_type(gmp::perfetto::TrackEvent::TYPE_SLICE_BEGIN);
  e->set_track_uuid(16);
  e->set_name("G1");
  e->add_flow_ids(5);
  std::string got;
  REQUIRE(p.SerializeToString(&got));
  const std::string want = std::string("\x40\x64"          // 8: timestamp, varint 100
                                       "\x50\x01"          // 10: trusted_packet_sequence_id 1
                                       "\x5a\x13"          // 11: track_event, 19 bytes
                                       "\x48\x01"          //   9: type TYPE_SLICE_BEGIN
                                       "\x58\x10"          //   11: track_uuid 16
                                       "\xba\x01\x02G1"   //   23: name "G1"
                                       "\xf9\x02\x05", 18) +  // 47: flow_ids, fixed64 5 ...
                           std::string(7, '\0');            // ... its other 7 bytes
  CHECK(got == want);
  gmp::perfetto::TracePacket d;
  d.mutable_track_descriptor()->set_uuid(1);
  d.mutable_track_descriptor()->mutable_process()->set_process_name("Ps");
  d.mutable_track_descriptor()->mutable_counter();
  REQUIRE(d.SerializeToString(&got));
  // 60: track_descriptor (tag 0x1e2 as a varint), 1: uuid, 3: process { 6: process_name }, 8: counter.
  CHECK(got == std::string("\xe2\x03\x0a\x08\x01\x1a\x04\x32\x02Ps\x42\x00", 13));
}

// Time outside the lane model's range (traces/lanes/model.h) is refused with the event's offset,
// never split into billions of segments or summed past int64.
TEST_CASE("export: traces beyond the model's time range are refused, and negative times are moved for Perfetto") {
  TempDir dir("gmp_export");
  using namespace gmp::trace;
  const auto two_events = [&](int64_t t0, int64_t t1) {
    Header h;
    h.set_producer("export test");
    h.set_num_ps(1);
    TraceWriter w(dir.file("t.trace"), h);
    for (const auto& [ts, kind] : {std::pair{t0, KIND_GO_START}, std::pair{t1, KIND_GO_EXIT}}) {
      Event e;
      e.set_ts(ts);
      e.set_kind(kind);
      e.set_g(1);
      e.set_m(0);
      e.set_p(0);
      w.write(e);
    }
    w.close();
    return dir.file("t.trace");
  };
  CHECK_THROWS_WITH(gmp::lanes::load_trace(two_events(INT64_MAX - 807, INT64_MAX)),
                    Catch::Contains("outside the viewer's range"));
  CHECK_THROWS_WITH(gmp::lanes::load_trace(two_events(-4000000000000000000, 4000000000000000000)),
                    Catch::Contains("outside the viewer's range"));
  CHECK_THROWS_WITH(gmp::lanes::load_trace(two_events(0, int64_t{1} << 51)), Catch::Contains("spans more than"));
  // Two weeks apart is refused; 12 days is a long sleep, still loaded (as 2^18 pieces at most).
  CHECK_NOTHROW(gmp::lanes::load_trace(two_events(0, 12LL * 86400 * 1000000000)));
  const gmp::lanes::Model m = gmp::lanes::load_trace(two_events(-2000, 1000));
  gmp::exporter::export_perfetto(m, dir.file("neg.pftrace"));
  const Decoded d = decode_perfetto(dir.file("neg.pftrace"));
  check_structure(d);
  CHECK(d.slices.at("P0") == std::vector<Slice>{{"G1", 0, 3000}});
  CHECK(d.group_of.at("P0") == "Ps (export test, times moved 2000 ns later)");
  gmp::exporter::export_chrome_json(m, dir.file("neg.json"));
  CHECK(decode_chrome(dir.file("neg.json")).slices.at("P0") == std::vector<Slice>{{"G1", -2000, 1000}});
}

// Issue 25: each process of a trace is its own group of tracks, in both formats.
TEST_CASE("export: a trace of two processes gives each process its group, with throttling and GOMAXPROCS") {
  TempDir dir;
  gmp::trace::testing::write_two_process_trace(dir.file("t"));
  const gmp::lanes::Model m = gmp::lanes::load_trace(dir.file("t"));
  const std::string server = "server (GOMAXPROCS 1, quota 0.5 CPUs) (two-process test)";
  const std::string loadgen = "loadgen (GOMAXPROCS 1) (two-process test)";
  const std::string machine = "machine (two-process test)";
  for (const Format& f : kFormats) {
    INFO(f.name);
    f.write(m, dir.file("out"));
    const Decoded d = f.read(dir.file("out"));
    check_structure(d);
    std::set<std::string> groups;
    for (const auto& [g, t] : d.tracks) groups.insert(g);
    CHECK(groups == std::set<std::string>{server, loadgen, machine});
    // Each process has its own P0 and M0; loadgen also P1, M1 and a GOMAXPROCS counter.
    for (const std::string& g : {server, loadgen}) {
      CHECK(d.tracks.count({g, "P0"}) == 1);
      CHECK(d.tracks.count({g, "M0"}) == 1);
    }
    CHECK(d.tracks.count({loadgen, "P1"}) == 1);
    CHECK(d.tracks.count({server, "P1"}) == 0);
    CHECK(d.tracks.count({loadgen, "GOMAXPROCS"}) == 1);
    CHECK(d.tracks.count({machine, "idle Ps"}) == 1);
    // The server's M0: G1 runs, is throttled (a slice of its own), runs again.
    CHECK(d.gslices.at(server + "|M0") ==
          std::vector<Slice>{{"G1", 10, 50}, {"throttled", 50, 80}, {"G1", 80, 120}});
    CHECK(d.gslices.at(server + "|P0") ==
          std::vector<Slice>{{"G1", 10, 50}, {"throttled", 50, 80}, {"G1", 80, 120}});
    CHECK(d.gslices.at(loadgen + "|M0") == std::vector<Slice>{{"G1", 10, 130}});
    CHECK(d.counters.at("GOMAXPROCS") == std::vector<std::pair<int64_t, int64_t>>{{90, 2}});
  }
}
