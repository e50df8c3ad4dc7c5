// Reads a trace file (format: traces/trace_writer.h) one event at a time.
//
// Protocol:
//   - The constructor opens the file and checks the magic, the format version and the Header;
//     header() is valid from then on.
//   - next(event) reads the next Event into `event` and returns true, or returns false at the
//     clean end of the file (right after a complete record). Memory use does not grow with the
//     trace.
//   - Any bad input throws TraceFormatError naming the file, the byte offset where the bad part
//     starts and what was expected there: a wrong magic, an unsupported format or schema
//     version, a record cut short by the end of the file, a record length that is malformed or
//     too large, or record bytes that do not parse. After a throw, the reader is unusable.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "traces/trace.pb.h"

namespace gmp::trace {

class TraceFormatError : public std::runtime_error {
 public:
  TraceFormatError(const std::string& path, uint64_t offset, const std::string& problem);
  const std::string& path() const { return path_; }
  uint64_t offset() const { return offset_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string path_;
  uint64_t offset_;
  std::string problem_;
};

class TraceReader {
 public:
  explicit TraceReader(const std::string& path);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  const Header& header() const { return header_; }
  bool next(Event& event);

  // Byte offset of the next record to read.
  uint64_t offset() const { return offset_; }
  // Number of events read so far.
  uint64_t events_read() const { return events_; }

 private:
  struct Stream;
  // Reads the next record into `msg`; false at a clean end of file (only if `eof_ok`).
  bool read_record(google::protobuf::MessageLite& msg, const char* what, bool eof_ok);
  void read_exact(void* buf, uint64_t n, const char* expected);
  [[noreturn]] void fail(uint64_t offset, const std::string& problem) const;

  std::string path_;
  std::unique_ptr<Stream> in_;
  uint64_t size_ = 0;    // file size at open
  uint64_t offset_ = 0;  // bytes consumed so far
  uint64_t events_ = 0;
  Header header_;
};

}  // namespace gmp::trace
