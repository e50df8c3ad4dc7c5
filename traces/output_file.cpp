// See output_file.h.
#include "traces/output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

namespace gmp::trace {

namespace {

std::string why(int err) { return std::strerror(err); }

// What a stat() says the file is, when it is not one output_target writes.
std::string refused(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file";
  if (S_ISBLK(st.st_mode)) return "is a block device, not a regular file";
  return "is not a regular file, a character device or a FIFO";
}

// The table of temporary files the signal handlers remove. A slot's word holds its state in the
// low two bits and, above them, how many times it was taken. A slot is taken by a CAS from kFree
// to kFilling (the count going up), filled, then published as kUsed. The handler copies a kUsed
// slot's path and removes the file only if the word is unchanged after the copy: a slot freed and
// taken again meanwhile (on another thread) cannot hand it a path torn between two names.
constexpr int kSlots = 16;
constexpr uint32_t kFree = 0, kFilling = 1, kUsed = 2, kStateMask = 3, kTaken = 4;
struct Slot {
  std::atomic<uint32_t> word{kFree};
  char path[PATH_MAX];
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);
Slot g_slots[kSlots];

void on_signal(int sig) {
  for (Slot& s : g_slots) {
    const uint32_t w = s.word.load();
    if ((w & kStateMask) != kUsed) continue;
    char path[PATH_MAX];
    std::memcpy(path, s.path, sizeof path);
    path[PATH_MAX - 1] = '\0';
    if (s.word.load() == w) ::unlink(path);
  }
  // Back to the default action, then the same signal again: it is blocked (as are the other two)
  // until this handler returns, and then ends the process as it would have without us. Not
  // SA_RESETHAND: Linux then leaves the signal unblocked in the handler, and a second one (timeout
  // sends SIGINT to the process and to its group) killed the process before the unlink.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

}  // namespace

OutputTarget output_target(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {path, false};
    throw OutputError(path + ": " + why(errno));
  }
  OutputTarget t{path, false};
  if (S_ISLNK(st.st_mode)) {
    if (::stat(path.c_str(), &st) != 0) {
      throw OutputError(path + ": is a symbolic link to a file that cannot be reached (" + why(errno) + ")");
    }
    // A regular file is replaced where it is; a device or pipe (/dev/stdout is a link to
    // /proc/self/fd/1) is opened through the link, below.
    if (S_ISREG(st.st_mode)) {
      std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
      if (!real) throw OutputError(path + ": " + why(errno));
      t.path = real.get();
    }
  }
  if (S_ISREG(st.st_mode)) return t;
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return {path, true};
  throw OutputError(path + ": " + refused(st));
}

int register_temp_file(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; i++) {
    Slot& s = g_slots[i];
    uint32_t w = s.word.load();
    if ((w & kStateMask) != kFree) continue;
    const uint32_t taken = (w & ~kStateMask) + kTaken;
    if (!s.word.compare_exchange_strong(w, taken | kFilling)) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.word.store(taken | kUsed);
    return i;
  }
  return -1;
}

void unregister_temp_file(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  std::atomic<uint32_t>& word = g_slots[slot].word;
  word.store((word.load() & ~kStateMask) | kFree);
}

void remove_temp_files_on_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
    for (int sig : kSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
      struct sigaction sa {};
      sa.sa_handler = &on_signal;
      sigemptyset(&sa.sa_mask);
      for (int other : kSignals) sigaddset(&sa.sa_mask, other);  // one handler at a time
      sa.sa_flags = 0;
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

void write_output_file(const std::string& path, const std::string& contents) {
  const OutputTarget t = output_target(path);
  auto write_all = [&](int fd) {
    for (size_t done = 0; done < contents.size();) {
      const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno;
      done += static_cast<size_t>(n);
    }
    return 0;
  };
  if (t.stream) {
    const int fd = ::open(t.path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw OutputError("cannot write " + path + ": " + why(errno));
    const int err = write_all(fd);
    ::close(fd);
    if (err != 0) throw OutputError("cannot write " + path + ": " + why(err));
    return;
  }
  const TempFile tmp = create_temp_file(t.path);
  int err = write_all(tmp.fd);
  if (::close(tmp.fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.path.c_str(), t.path.c_str()) != 0) err = errno;
  if (err != 0) {
    remove_temp_file(tmp);
    throw OutputError("cannot write " + path + ": " + why(err));
  }
  unregister_temp_file(tmp.slot);
}

TempFile create_temp_file(const std::string& target) {
  static std::atomic<uint64_t> counter{0};
  TempFile t;
  t.path = target + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  t.slot = register_temp_file(t.path);  // before it exists: a signal may come at any time
  t.fd = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (t.fd < 0) {
    const int err = errno;
    unregister_temp_file(t.slot);
    throw OutputError("cannot create " + t.path + ": " + why(err));
  }
  return t;
}

void remove_temp_file(const TempFile& t) noexcept {
  ::unlink(t.path.c_str());
  unregister_temp_file(t.slot);
}

}  // namespace gmp::trace
