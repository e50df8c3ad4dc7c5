// Writes a trace file: see trace_writer.h for the format and the protocol.
#include "traces/trace_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

namespace gmp::trace {

namespace pbio = google::protobuf::io;

struct TraceWriter::Stream {
  explicit Stream(int fd) : file(fd) {
    coded.emplace(&file);
    coded->SetSerializationDeterministic(true);
  }
  pbio::FileOutputStream file;
  std::optional<pbio::CodedOutputStream> coded;  // reset before closing `file`
};

TraceWriter::TraceWriter(const std::string& path, const Header& header) : path_(path) {
  OutputTarget target;
  try {
    target = output_target(path);
  } catch (const OutputError& e) {
    throw TraceWriteError(std::string("trace writer: cannot write ") + e.what());
  }
  int fd = -1;
  if (target.stream) {
    fd = ::open(target.path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw TraceWriteError("trace writer: cannot open " + path + ": " + std::strerror(errno));
  } else {
    target_ = target.path;
    try {
      tmp_ = create_temp_file(target.path);
    } catch (const OutputError& e) {
      throw TraceWriteError(std::string("trace writer: ") + e.what());
    }
    fd = tmp_.fd;
  }
  try {
    out_ = std::make_unique<Stream>(fd);
  } catch (...) {  // out of memory: no stream owns the file yet, so close and remove it here
    ::close(fd);
    if (!tmp_.path.empty()) remove_temp_file(tmp_);
    throw;
  }
  try {
    out_->coded->WriteRaw(kMagic, sizeof kMagic);
    out_->coded->WriteLittleEndian32(kFormatVersion);
    if (header.schema_version() == 0) {
      Header h = header;
      h.set_schema_version(kSchemaVersion);
      write_record(h);
    } else {
      write_record(header);
    }
  } catch (...) {
    discard();
    throw;
  }
}

TraceWriter::~TraceWriter() { discard(); }

void TraceWriter::write(const Event& event) {
  write_record(event);
  ++events_;
}

void TraceWriter::write_record(const google::protobuf::MessageLite& msg) {
  if (!out_) fail("write after close or after an error");
  const size_t size = msg.ByteSizeLong();
  if (size > kMaxRecordBytes) {
    fail("record of " + std::to_string(size) + " bytes exceeds the limit of " +
         std::to_string(kMaxRecordBytes));
  }
  out_->coded->WriteVarint32(static_cast<uint32_t>(size));
  msg.SerializeWithCachedSizes(&*out_->coded);
  if (out_->coded->HadError()) fail("write failed: " + std::string(std::strerror(out_->file.GetErrno())));
}

void TraceWriter::close() {
  if (!out_) fail("close after close or after an error");
  out_->coded.reset();  // hands the buffered bytes back to `file`
  if (!out_->file.Close()) fail("write failed: " + std::string(std::strerror(out_->file.GetErrno())));
  out_.reset();
  if (tmp_.path.empty()) return;  // streamed
  if (std::rename(tmp_.path.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    remove_temp_file(tmp_);
    throw TraceWriteError("trace writer: cannot rename " + tmp_.path + " to " + target_ + ": " +
                          std::strerror(err));
  }
  unregister_temp_file(tmp_.slot);
}

void TraceWriter::fail(const std::string& what) {
  discard();
  throw TraceWriteError("trace writer: " + path_ + ": " + what);
}

void TraceWriter::discard() noexcept {
  if (!out_) return;
  if (!tmp_.path.empty()) remove_temp_file(tmp_);
  out_->coded.reset();
  out_->file.Close();  // the flush lands in the unlinked file
  out_.reset();
}

}  // namespace gmp::trace
