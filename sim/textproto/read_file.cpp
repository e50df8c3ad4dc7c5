// See read_file.h.
#include "sim/textproto/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace gmp::textproto {

namespace {

// "is larger than N MiB" for a read capped at max_bytes.
std::string too_large(size_t max_bytes) { return "is larger than " + std::to_string(max_bytes >> 20) + " MiB"; }

// Why a file of this type and size is not read, or "".
std::string refusal(const struct stat& st, bool regular_only, size_t max_bytes) {
  if (S_ISDIR(st.st_mode)) return "is a directory, not a file";
  if (!regular_only) return "";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return too_large(max_bytes);
  return "";
}

}  // namespace

FileText read_file(const std::string& path, ReadOptions opt) {
  FileText out;
  struct stat st {};
  if (opt.regular_only) {
    // The type is checked on the path first, so that opening cannot block.
    if (::stat(path.c_str(), &st) != 0) {
      out.error = std::string("cannot open: ") + std::strerror(errno);
      return out;
    }
    if (std::string bad = refusal(st, true, opt.max_bytes); !bad.empty()) {
      out.error = bad;
      return out;
    }
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (opt.regular_only ? O_NONBLOCK : 0));
  if (fd < 0) {
    out.error = std::string("cannot open: ") + std::strerror(errno);
    return out;
  }
  // Checked again on the descriptor: the path may name another file by now.
  const bool known = ::fstat(fd, &st) == 0;
  std::string bad = known ? refusal(st, opt.regular_only, opt.max_bytes) : "";
  if (opt.regular_only && (!known || !bad.empty())) bad = "is not a regular file";
  if (!bad.empty()) {
    ::close(fd);
    out.error = bad;
    return out;
  }
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.error = std::string("cannot read: ") + std::strerror(errno);
      break;
    }
    if (n == 0) break;
    if (out.text.size() + static_cast<size_t>(n) > opt.max_bytes) {
      out.error = too_large(opt.max_bytes);
      break;
    }
    out.text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (!out.error.empty()) out.text.clear();
  return out;
}

}  // namespace gmp::textproto
