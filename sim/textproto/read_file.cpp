// See read_file.h.
#include "sim/textproto/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gmp::textproto {

FileText read_file(const std::string& path) {
  FileText out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.error = std::string("cannot open: ") + std::strerror(errno);
    return out;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    out.error = "is a directory, not a file";
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
