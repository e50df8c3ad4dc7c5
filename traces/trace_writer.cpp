// Writes a trace file: see trace_writer.h for the format and the protocol.
#include "traces/trace_writer.h"

#include <string>

namespace gmp::trace {

TraceWriter::TraceWriter(const std::string& path, const Header& header) : path_(path) {
  try {
    out_ = std::make_unique<OutputStream>(path);
  } catch (const OutputError& e) {
    throw TraceWriteError(std::string("trace writer: cannot write ") + e.what());
  }
  try {
    out_->out().WriteRaw(kMagic, sizeof kMagic);
    out_->out().WriteLittleEndian32(kFormatVersion);
    if (header.schema_version() == 0) {
      Header h = header;
      h.set_schema_version(kSchemaVersion);
      write_record(h);
    } else {
      write_record(header);
    }
  } catch (...) {
    out_.reset();
    throw;
  }
}

TraceWriter::~TraceWriter() = default;

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
  try {
    out_->out().WriteVarint32(static_cast<uint32_t>(size));
    msg.SerializeWithCachedSizes(&out_->out());
    out_->check();
  } catch (const OutputError& e) {
    out_.reset();
    throw TraceWriteError(std::string("trace writer: ") + e.what());
  }
}

void TraceWriter::close() {
  if (!out_) fail("close after close or after an error");
  try {
    out_->commit();
    out_.reset();
  } catch (const OutputError& e) {
    out_.reset();
    throw TraceWriteError(std::string("trace writer: ") + e.what());
  }
}

void TraceWriter::fail(const std::string& what) {
  out_.reset();  // removes the temporary file
  throw TraceWriteError("trace writer: " + path_ + ": " + what);
}

}  // namespace gmp::trace
