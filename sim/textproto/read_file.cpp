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

// Why a file of this type and size is not read, or nullptr.
const char* refusal(const struct stat& st, bool regular_only) {
  if (S_ISDIR(st.st_mode)) return "is a directory, not a file";
  if (!regular_only) return nullptr;
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) return "is larger than 64 MiB";
  return nullptr;
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
    if (const char* bad = refusal(st, true)) {
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
  const char* bad = known ? refusal(st, opt.regular_only) : nullptr;
  if (opt.regular_only && (!known || bad != nullptr)) bad = "is not a regular file";
  if (bad != nullptr) {
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
    if (out.text.size() + static_cast<size_t>(n) > kMaxFileBytes) {
      out.error = "is larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB";
      break;
    }
    out.text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (!out.error.empty()) out.text.clear();
  return out;
}

}  // namespace gmp::textproto
