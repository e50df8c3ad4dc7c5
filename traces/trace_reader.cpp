// Reads a trace file: see trace_reader.h for the protocol, trace_writer.h for the format.
#include "traces/trace_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "traces/trace_writer.h"
#include "traces/varint.h"

namespace gmp::trace {

namespace pbio = google::protobuf::io;

namespace {

std::string printable(const char* data, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(data[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace

TraceFormatError::TraceFormatError(const std::string& path, uint64_t offset,
                                   const std::string& problem)
    : std::runtime_error(path + ": at byte offset " + std::to_string(offset) + ": " + problem),
      path_(path),
      offset_(offset),
      problem_(problem) {}

struct TraceReader::Stream {
  explicit Stream(int fd) : file(fd) { file.SetCloseOnDelete(true); }
  pbio::FileInputStream file;
  std::string buf;  // the current record's bytes, reused
};

TraceReader::TraceReader(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw TraceFormatError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw TraceFormatError(path, 0, std::string("cannot stat: ") + std::strerror(err));
  }
  size_ = static_cast<uint64_t>(st.st_size);
  in_ = std::make_unique<Stream>(fd);

  char magic[sizeof kMagic] = {};
  const uint64_t have = std::min<uint64_t>(size_, sizeof kMagic);
  read_exact(magic, have, "the magic");
  if (std::memcmp(magic, kMagic, have) != 0) {
    fail(0, "not a gmpsim trace: expected the magic \"" + printable(kMagic, sizeof kMagic) +
                "\", found \"" + printable(magic, have) + "\"");
  }
  if (have < sizeof kMagic) {
    fail(0, "truncated: expected the " + std::to_string(sizeof kMagic) +
                "-byte magic, the file has only " + std::to_string(have) + " bytes");
  }
  unsigned char v[4];
  read_exact(v, sizeof v, "the 4-byte format version");
  const uint32_t version = v[0] | v[1] << 8 | v[2] << 16 | static_cast<uint32_t>(v[3]) << 24;
  if (version != kFormatVersion) {
    fail(sizeof kMagic, "unsupported format version " + std::to_string(version) +
                            ": expected " + std::to_string(kFormatVersion));
  }
  const uint64_t header_at = offset_;
  read_record(header_, "the Header record", false);
  if (header_.schema_version() == 0 || header_.schema_version() > kSchemaVersion) {
    fail(header_at, "unsupported schema version " + std::to_string(header_.schema_version()) +
                        ": expected 1 to " + std::to_string(kSchemaVersion));
  }
}

TraceReader::~TraceReader() = default;

bool TraceReader::next(Event& event) {
  if (!read_record(event, "an Event record", true)) return false;
  ++events_;
  return true;
}

bool TraceReader::read_record(google::protobuf::MessageLite& msg, const char* what, bool eof_ok) {
  const uint64_t start = offset_;
  pbio::CodedInputStream coded(&in_->file);
  // The varint length (traces/varint.h), read a byte at a time.
  Varint length;
  for (;;) {
    uint8_t byte;
    if (!coded.ReadRaw(&byte, 1)) {
      if (in_->file.GetErrno() != 0) fail(offset_, std::string("read error: ") + std::strerror(in_->file.GetErrno()));
      if (length.bytes() == 0 && eof_ok) return false;
      fail(start, std::string("truncated: expected the length of ") + what +
                      (length.bytes() == 0 ? ", found the end of the file" : ", the file ends inside it"));
    }
    ++offset_;
    const Varint::Step step = length.push(byte);
    if (length.overflows()) fail(start, std::string("malformed length of ") + what + ": varint overflows 64 bits");
    if (step == Varint::Step::Done) break;
  }
  const uint64_t len = length.value();
  if (len > kMaxRecordBytes) {
    fail(start, std::string("malformed length of ") + what + ": " + std::to_string(len) +
                    " bytes exceeds the limit of " + std::to_string(kMaxRecordBytes));
  }
  // offset_ > size_ only if the file grew since it was opened; the bytes read are then still checked.
  if (offset_ <= size_ && len > size_ - offset_) {
    fail(start, std::string("truncated: ") + what + " declares " + std::to_string(len) +
                    " bytes, the file ends after " + std::to_string(size_ - offset_));
  }
  in_->buf.resize(len);
  if (!coded.ReadRaw(in_->buf.data(), static_cast<int>(len))) {
    fail(start, std::string("truncated: ") + what + " declares " + std::to_string(len) +
                    " bytes, the file ended early while reading them");
  }
  offset_ += len;
  if (!msg.ParseFromString(in_->buf)) {
    fail(start, std::string("unparsable record: ") + what + " of " + std::to_string(len) +
                    " bytes is not a valid " + msg.GetTypeName() + " message");
  }
  return true;
}

void TraceReader::read_exact(void* buf, uint64_t n, const char* expected) {
  pbio::CodedInputStream coded(&in_->file);
  if (!coded.ReadRaw(buf, static_cast<int>(n))) {
    fail(offset_, std::string("truncated: expected ") + expected + ", found the end of the file");
  }
  offset_ += n;
}

void TraceReader::fail(uint64_t offset, const std::string& problem) const {
  throw TraceFormatError(path_, offset, problem);
}

}  // namespace gmp::trace
