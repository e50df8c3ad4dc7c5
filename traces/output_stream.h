// A large output file written as a stream of bytes and published whole: the trace writer and the
// exporters write through it.
//
// Protocol:
//   - The constructor resolves `path` as output_file.h's output_target says: a regular file (or
//     an absent one, or one a symbolic link names) gets a temporary file beside it; a character
//     device or FIFO is opened and written in place.
//   - out() is a protobuf CodedOutputStream (deterministic serialization) over a buffered file;
//     write through it, then call check() now and then: it throws once a write has failed.
//   - commit() flushes, closes and renames the temporary file onto the target. Only then does the
//     target exist or change. A stream destroyed without commit() removes its temporary file.
//   - Every failure throws OutputError, its message starting with `path` (output_target's own
//     errors as they are); after one, the stream accepts only destruction.
#pragma once

#include <memory>
#include <string>

#include <google/protobuf/io/coded_stream.h>

#include "traces/output_file.h"

namespace gmp::trace {

class OutputStream {
 public:
  explicit OutputStream(const std::string& path);
  ~OutputStream();
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;

  google::protobuf::io::CodedOutputStream& out();
  void write(const std::string& bytes) { out().WriteRaw(bytes.data(), static_cast<int>(bytes.size())); }
  void check();
  void commit();

 private:
  struct Stream;
  [[noreturn]] void fail(const std::string& what);
  void discard() noexcept;

  std::string path_;
  std::string target_;  // the regular file to replace: path_, or what a symbolic link names
  TempFile tmp_;        // no path when streamed into a device or FIFO
  std::unique_ptr<Stream> s_;
};

}  // namespace gmp::trace
