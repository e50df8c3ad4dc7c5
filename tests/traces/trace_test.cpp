// The trace file format: what the writer writes, the reader reads back, one event at a time; bad
// input is reported with its byte offset; an abandoned writer leaves nothing at its destination.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "tests/temp_dir.h"
#include "traces/dump_text.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace fs = std::filesystem;
using namespace gmp::trace;

namespace {

Header make_header() {
  Header h;
  h.set_producer("gmpsim test");
  h.set_num_ps(4);
  h.set_num_ms(2);
  h.set_clock(CLOCK_VIRTUAL);
  for (auto [k, v] : {std::pair{"scenario", "pingpong"}, {"seed", "42"}, {"gomaxprocs", "4"}}) {
    Metadata* md = h.add_metadata();
    md->set_key(k);
    md->set_value(v);
  }
  return h;
}

// Event i of a varied sequence: every kind of field, ids present and absent, id 0 present.
Event make_event(int64_t i) {
  Event e;
  e.set_ts(i * 37);
  switch (i % 5) {
    case 0:
      e.set_kind(KIND_GO_CREATE);
      e.set_g(i);
      e.set_peer_g(i / 2);
      e.set_reason(REASON_NEWPROC);
      break;
    case 1:
      e.set_kind(KIND_STEAL);
      e.set_p(i % 4);
      e.set_peer_p((i + 1) % 4);
      e.set_count(i % 128 + 1);
      e.set_queue(i % 2 ? QUEUE_LOCAL : QUEUE_RUNNEXT);
      e.set_reason(REASON_STEAL_WORK);
      break;
    case 2:
      e.set_kind(KIND_GO_PARK);
      e.set_g(0);  // present and zero: not the same as absent
      e.set_wait_reason(WAIT_REASON_CHAN_RECEIVE);
      e.set_reason(REASON_PARK);
      break;
    case 3:
      e.set_kind(KIND_SIGNAL_SEND);
      e.set_peer_m(i % 3);
      e.set_signal(23);
      e.set_reason(REASON_RETAKE);
      break;
    default:
      e.set_kind(KIND_ANNOTATION);
      e.set_user_op(USER_OP_CHAN_SEND);
      e.set_object(0xfeedULL << 20 | static_cast<uint64_t>(i));
      e.set_phase(PHASE_BEGIN);
      e.set_label("ch" + std::to_string(i));
      break;
  }
  if (i % 7 != 0) e.set_m(i % 3);  // sometimes absent
  return e;
}

void write_trace(const std::string& path, int64_t n) {
  TraceWriter w(path, make_header());
  for (int64_t i = 0; i < n; ++i) w.write(make_event(i));
  w.close();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Reads the whole trace; the error it throws, if any.
void read_all(const std::string& path) {
  TraceReader r(path);
  Event e;
  while (r.next(e)) {
  }
}

// Offsets at which each record starts: [0] the first event, ..., [n] the end of the file.
std::vector<uint64_t> event_offsets(const std::string& path) {
  TraceReader r(path);
  std::vector<uint64_t> at{r.offset()};
  Event e;
  while (r.next(e)) at.push_back(r.offset());
  return at;
}

// Checks that reading `path` fails at `offset` with a message containing `needle`.
void expect_error(const std::string& path, uint64_t offset, const std::string& needle) {
  try {
    read_all(path);
    FAIL("no error reading " << path);
  } catch (const TraceFormatError& err) {
    INFO(err.what());
    CHECK(err.offset() == offset);
    CHECK(err.path() == path);
    CHECK_THAT(err.what(), Catch::Matchers::Contains("at byte offset " + std::to_string(offset) + ": "));
    CHECK_THAT(err.what(), Catch::Matchers::Contains(needle));
  }
}

}  // namespace

TEST_CASE("a trace round-trips many events") {
  TempDir dir("gmp_trace_test");
  const std::string path = dir.file("t.gmptrace");
  constexpr int64_t kEvents = 20000;
  write_trace(path, kEvents);

  TraceReader r(path);
  CHECK(r.header().schema_version() == kSchemaVersion);
  Header want = make_header();
  want.set_schema_version(kSchemaVersion);
  CHECK(r.header().SerializeAsString() == want.SerializeAsString());
  CHECK(r.header().metadata(1).key() == "seed");

  Event e;
  for (int64_t i = 0; i < kEvents; ++i) {
    REQUIRE(r.next(e));
    REQUIRE(e.SerializeAsString() == make_event(i).SerializeAsString());
  }
  CHECK_FALSE(r.next(e));
  CHECK_FALSE(r.next(e));  // the end stays the end
  CHECK(r.events_read() == static_cast<uint64_t>(kEvents));
  CHECK(r.offset() == fs::file_size(path));
}

TEST_CASE("optional ids distinguish absent from zero") {
  TempDir dir("gmp_trace_test");
  const std::string path = dir.file("t.gmptrace");
  write_trace(path, 3);
  TraceReader r(path);
  Event e;
  REQUIRE(r.next(e));  // event 0: m absent (0 % 7 == 0), g present
  CHECK_FALSE(e.has_m());
  CHECK(e.has_g());
  CHECK_FALSE(e.has_p());
  REQUIRE(r.next(e));
  REQUIRE(r.next(e));  // event 2: g present and 0
  CHECK(e.has_g());
  CHECK(e.g() == 0);
}

TEST_CASE("the same events give the same bytes") {
  TempDir dir("gmp_trace_test");
  write_trace(dir.file("a"), 1000);
  write_trace(dir.file("b"), 1000);
  CHECK(slurp(dir.file("a")) == slurp(dir.file("b")));
  CHECK(slurp(dir.file("a")).substr(0, 12) == std::string("gmptrace\x01\0\0\0", 12));
}

TEST_CASE("process ids round-trip, and a one-process trace has none") {
  TempDir dir("gmp_trace_test");
  const std::string path = dir.file("t.gmptrace");
  Header h = make_header();
  for (auto [id, name, ps] : {std::tuple{0u, "server", 4}, {1u, "loadgen", 2}, {7u, "", 1}}) {
    Process* p = h.add_processes();
    p->set_id(id);
    p->set_name(name);
    p->set_num_ps(ps);
  }
  const uint32_t ids[] = {0, 1, 7, 1, 0};
  {
    TraceWriter w(path, h);
    for (int64_t i = 0; i < 100; ++i) {
      Event e = make_event(i);
      e.set_process(ids[i % 5]);
      w.write(e);
    }
    w.close();
  }
  TraceReader r(path);
  REQUIRE(r.header().processes_size() == 3);
  CHECK(r.header().processes(1).id() == 1);
  CHECK(r.header().processes(1).name() == "loadgen");
  CHECK(r.header().processes(1).num_ps() == 2);
  CHECK(r.header().processes(2).id() == 7);
  CHECK(r.header().num_ps() == 4);
  Event e;
  for (int64_t i = 0; i < 100; ++i) {
    REQUIRE(r.next(e));
    REQUIRE(e.process() == ids[i % 5]);
    e.clear_process();
    REQUIRE(e.SerializeAsString() == make_event(i).SerializeAsString());
  }
  CHECK_FALSE(r.next(e));

  // Process 0 is the default, never written: every event of process 0 is byte for byte the event
  // of a trace from before processes, and a reader of such a trace sees process 0.
  {
    TraceWriter w(dir.file("zero"), make_header());
    for (int64_t i = 0; i < 100; ++i) {
      Event z = make_event(i);
      z.set_process(0);
      w.write(z);
    }
    w.close();
  }
  write_trace(dir.file("before"), 100);
  CHECK(slurp(dir.file("zero")) == slurp(dir.file("before")));
  TraceReader old(dir.file("before"));
  CHECK(old.header().processes_size() == 0);
  while (old.next(e)) REQUIRE(e.process() == 0);

  // The text dump names them: the header's list, and each event's process but 0.
  const std::string text = dir.file("t.txt");
  std::FILE* out = std::fopen(text.c_str(), "w");
  REQUIRE(out != nullptr);
  CHECK(dump_text(path, out) == 100);
  std::fclose(out);
  const std::string dump = slurp(text);
  CHECK_THAT(dump, Catch::Matchers::Contains("\n# process 1 loadgen, 2 Ps\n"));
  CHECK_THAT(dump, Catch::Matchers::Contains("\n37 KIND_STEAL process=1 "));
  CHECK_THAT(dump, Catch::Matchers::Contains("\n74 KIND_GO_PARK process=7 "));
  CHECK_THAT(dump, Catch::Matchers::Contains("\n0 KIND_GO_CREATE g=0 "));
}

TEST_CASE("the reader streams one event at a time") {
  TempDir dir("gmp_trace_test");
  const std::string path = dir.file("t.gmptrace");
  write_trace(path, 500);
  TraceReader r(path);
  Event e;
  uint64_t last = r.offset();
  CHECK(last > 12);  // past magic, version and header
  for (int64_t i = 0; i < 500; ++i) {
    REQUIRE(r.next(e));
    CHECK(e.ts() == make_event(i).ts());
    CHECK(r.offset() > last);  // each call consumed exactly one more record
    CHECK(r.offset() - last == make_event(i).ByteSizeLong() + 1);  // 1-byte varint for small events
    last = r.offset();
  }
}

TEST_CASE("the writer streams to a temporary file and publishes it on close") {
  TempDir dir("gmp_trace_test");
  const std::string path = dir.file("t.gmptrace");
  TraceWriter w(path, make_header());
  for (int64_t i = 0; i < 50000; ++i) w.write(make_event(i));
  CHECK_FALSE(fs::exists(path));
  // The events are already on disk, in the one temporary file: the writer holds only a buffer.
  REQUIRE(dir.entries() == 1);
  const fs::path tmp = fs::directory_iterator(dir.path)->path();
  CHECK_THAT(tmp.filename().string(), Catch::Matchers::StartsWith("t.gmptrace.tmp-"));
  CHECK(fs::file_size(tmp) > 500000);
  w.close();
  CHECK(fs::exists(path));
  CHECK(dir.entries() == 1);
  CHECK(w.events_written() == 50000);
  CHECK_THROWS_AS(w.write(make_event(0)), TraceWriteError);
}

TEST_CASE("an abandoned writer leaves no file") {
  TempDir dir("gmp_trace_test");
  const std::string path = dir.file("t.gmptrace");

  SECTION("no file before") {
    try {
      TraceWriter w(path, make_header());
      for (int64_t i = 0; i < 10000; ++i) w.write(make_event(i));
      throw std::runtime_error("the run failed");
    } catch (const std::runtime_error& err) {
      CHECK(std::string(err.what()) == "the run failed");
    }
    CHECK_FALSE(fs::exists(path));
    CHECK(dir.entries() == 0);  // nor a temporary file
  }
  SECTION("an older trace stays as it was") {
    write_trace(path, 10);
    const std::string before = slurp(path);
    {
      TraceWriter w(path, make_header());
      for (int64_t i = 0; i < 10000; ++i) w.write(make_event(i));
    }
    CHECK(slurp(path) == before);
    CHECK(dir.entries() == 1);
  }
  SECTION("close replaces an older trace") {
    write_trace(path, 10);
    write_trace(path, 20);
    CHECK(event_offsets(path).size() == 21);
    CHECK(dir.entries() == 1);
  }
}

TEST_CASE("a writer that cannot create its file says so") {
  TempDir dir("gmp_trace_test");
  CHECK_THROWS_WITH(TraceWriter(dir.file("no/such/dir/t"), make_header()),
                    Catch::Matchers::Contains("cannot create") && Catch::Matchers::Contains("no/such/dir/t"));
}

TEST_CASE("bad input is reported with its byte offset") {
  TempDir dir("gmp_trace_test");
  const std::string good_path = dir.file("good");
  write_trace(good_path, 10);
  const std::string good = slurp(good_path);
  const std::vector<uint64_t> at = event_offsets(good_path);  // at[i]: start of event i
  REQUIRE(at.size() == 11);
  const std::string bad = dir.file("bad");

  SECTION("missing file") {
    expect_error(dir.file("absent"), 0, "cannot open");
  }
  SECTION("wrong magic") {
    spit(bad, "GIF89a" + good.substr(6));
    expect_error(bad, 0, "expected the magic \"gmptrace\", found \"GIF89ace\"");
  }
  SECTION("empty file") {
    spit(bad, "");
    expect_error(bad, 0, "the file has only 0 bytes");
  }
  SECTION("truncated magic") {
    spit(bad, good.substr(0, 5));
    expect_error(bad, 0, "expected the 8-byte magic, the file has only 5 bytes");
  }
  SECTION("unsupported format version") {
    std::string b = good;
    b[8] = 7;
    spit(bad, b);
    expect_error(bad, 8, "unsupported format version 7: expected 1");
  }
  SECTION("truncated format version") {
    spit(bad, good.substr(0, 10));
    expect_error(bad, 8, "truncated: expected the 4-byte format version");
  }
  SECTION("missing header") {
    spit(bad, good.substr(0, 12));
    expect_error(bad, 12, "expected the length of the Header record, found the end of the file");
  }
  SECTION("truncated header") {
    spit(bad, good.substr(0, 15));
    expect_error(bad, 12, "truncated: the Header record declares");
  }
  SECTION("unsupported schema version") {
    const std::string path = dir.file("future");
    Header h = make_header();
    h.set_schema_version(kSchemaVersion + 1);
    TraceWriter w(path, h);
    w.close();
    expect_error(path, 12, "unsupported schema version " + std::to_string(kSchemaVersion + 1));
  }
  SECTION("an event cut short") {
    spit(bad, good.substr(0, at[6] + 3));
    expect_error(bad, at[6], "truncated: an Event record declares");
  }
  SECTION("an event length cut short") {
    // A length varint of two bytes whose second byte is missing.
    spit(bad, good.substr(0, at[4]) + "\x85");
    expect_error(bad, at[4], "expected the length of an Event record, the file ends inside it");
  }
  SECTION("a malformed event length") {
    spit(bad, good + std::string(11, '\xff'));
    expect_error(bad, at[10], "malformed length of an Event record: varint overflows 64 bits");
  }
  SECTION("an event length over the limit") {
    spit(bad, good + "\xff\xff\xff\xff\x0f" + "xyz");  // 4 GiB - 1
    expect_error(bad, at[10], "malformed length of an Event record: 4294967295 bytes exceeds");
  }
  SECTION("an unparsable event: length-delimited field longer than the record") {
    spit(bad, good + std::string("\x02\x0a\x05", 3));
    expect_error(bad, at[10], "unparsable record: an Event record of 2 bytes is not a valid gmp.trace.Event message");
  }
  SECTION("an unparsable event: invalid wire type") {
    spit(bad, good.substr(0, at[3]) + std::string("\x01\x0f", 2) + good.substr(at[3]));
    expect_error(bad, at[3], "unparsable record: an Event record of 1 bytes");
  }
  SECTION("the good file reads to the end") {
    CHECK_NOTHROW(read_all(good_path));
  }
}
