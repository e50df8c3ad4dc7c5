// A file written through a CodedOutputStream and published by renaming: see output_stream.h.
#include "traces/output_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include <google/protobuf/io/zero_copy_stream_impl.h>

namespace gmp::trace {

namespace pbio = google::protobuf::io;

struct OutputStream::Stream {
  explicit Stream(int fd) : file(fd) {
    coded.emplace(&file);
    coded->SetSerializationDeterministic(true);
  }
  pbio::FileOutputStream file;
  std::optional<pbio::CodedOutputStream> coded;  // reset before closing `file`
};

OutputStream::OutputStream(const std::string& path) : path_(path) {
  const OutputTarget target = output_target(path);
  int fd = -1;
  if (target.stream) {
    fd = ::open(target.path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw OutputError(path + ": " + std::strerror(errno));
  } else {
    target_ = target.path;
    try {
      tmp_ = create_temp_file(target.path);
    } catch (const OutputError& e) {
      throw OutputError(path + ": " + e.what());
    }
    fd = tmp_.fd;
  }
  try {
    s_ = std::make_unique<Stream>(fd);
  } catch (...) {  // out of memory: no stream owns the file yet, so close and remove it here
    ::close(fd);
    if (!tmp_.path.empty()) remove_temp_file(tmp_);
    throw;
  }
}

OutputStream::~OutputStream() { discard(); }

pbio::CodedOutputStream& OutputStream::out() {
  if (!s_) fail("write after commit or after an error");
  return *s_->coded;
}

void OutputStream::check() {
  if (!s_) fail("write after commit or after an error");
  if (s_->coded->HadError()) fail("write failed: " + std::string(std::strerror(s_->file.GetErrno())));
}

void OutputStream::commit() {
  check();
  s_->coded.reset();  // hands the buffered bytes back to `file`
  if (!s_->file.Close()) fail("write failed: " + std::string(std::strerror(s_->file.GetErrno())));
  s_.reset();
  if (tmp_.path.empty()) return;  // streamed
  if (std::rename(tmp_.path.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    remove_temp_file(tmp_);
    throw OutputError(path_ + ": cannot rename " + tmp_.path + " to " + target_ + ": " + std::strerror(err));
  }
  unregister_temp_file(tmp_.slot);
}

void OutputStream::fail(const std::string& what) {
  discard();
  throw OutputError(path_ + ": " + what);
}

void OutputStream::discard() noexcept {
  if (!s_) return;
  if (!tmp_.path.empty()) remove_temp_file(tmp_);
  s_->coded.reset();
  s_->file.Close();  // the flush lands in the unlinked file
  s_.reset();
}

}  // namespace gmp::trace
