// Writes a trace file (schema: traces/trace.proto).
//
// File format, version kFormatVersion:
//   offset 0: the 8 bytes kMagic ("gmptrace")
//   offset 8: the format version, 4 bytes little-endian
//   offset 12: varint length, then that many bytes: the serialized Header
//   then, until the end of the file: varint length, then that many bytes: one serialized Event
// The end of the file is the end of the trace; there is no trailer.
//
// Protocol of the writer:
//   - The constructor creates a temporary file next to `path` and writes the magic, the version
//     and the header. write() appends one event; nothing is kept in memory beyond a small buffer.
//   - close() flushes and renames the temporary file onto `path`. Only then does `path` exist
//     (or get replaced): a reader never sees a half-written trace.
//   - A writer destroyed without close() (an exception, a failed run) removes its temporary file
//     and leaves `path` untouched.
//   - Every I/O failure throws TraceWriteError; after one, the writer accepts only destruction.
//   - `path` is written as output_file.h's output_target says: a symbolic link is followed to the
//     file it names, which is replaced; a character device or FIFO (/dev/null, a pipe) is written
//     in place, with no temporary file (a failed run may then have written part of a trace to
//     it); a directory or other kind of file is refused (TraceWriteError).
//   - The temporary file is registered with output_file.h: once the program has called
//     remove_temp_files_on_signals(), SIGINT, SIGTERM and SIGHUP remove it. A process killed
//     outright (SIGKILL, abort) may leave the temporary file "<path>.tmp-*".
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "traces/output_stream.h"
#include "traces/trace.pb.h"

namespace gmp::trace {

inline constexpr char kMagic[8] = {'g', 'm', 'p', 't', 'r', 'a', 'c', 'e'};
inline constexpr uint32_t kFormatVersion = 1;  // the framing above
inline constexpr uint32_t kSchemaVersion = 1;  // Header.schema_version of trace.proto
inline constexpr uint32_t kMaxRecordBytes = 64u << 20;  // no Header or Event is larger

class TraceWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class TraceWriter {
 public:
  // Starts a trace that will appear at `path` on close(). `header.schema_version` 0 is written
  // as kSchemaVersion.
  TraceWriter(const std::string& path, const Header& header);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void write(const Event& event);
  void close();

  const std::string& path() const { return path_; }
  uint64_t events_written() const { return events_; }

 private:
  void write_record(const google::protobuf::MessageLite& msg);
  [[noreturn]] void fail(const std::string& what);

  std::string path_;
  std::unique_ptr<OutputStream> out_;  // null after close() or an error
  uint64_t events_ = 0;
};

}  // namespace gmp::trace
