// Reading a file that a user named (a scenario, a cost profile, a connection's arrival times, saved
// go test -bench output): the whole file, or a sentence saying why not that follows the path in a
// diagnostic. The one such reader under sim/; each caller words its own diagnostic around it.
#pragma once

#include <cstddef>
#include <string>

namespace gmp::textproto {

// Larger inputs are refused: no scenario or profile comes near, and /dev/zero would never end.
inline constexpr size_t kMaxFileBytes = 64u << 20;

struct FileText {
  std::string text;
  std::string error;  // empty on success, else e.g. "cannot open: No such file or directory",
                      // "is a directory, not a file", "is larger than 64 MiB"
};

struct ReadOptions {
  // Anything but a regular file is refused ("is not a regular file"), before it is opened, so that
  // the read can neither block (a FIFO with no writer) nor run on (/dev/zero); a file that is too
  // large is refused by its size. Otherwise a FIFO or a device is read as it comes.
  bool regular_only = false;
  // The most bytes read: kMaxFileBytes, or more for a format that is written large (sweep parts).
  size_t max_bytes = kMaxFileBytes;
};

FileText read_file(const std::string& path, ReadOptions opt = {});

}  // namespace gmp::textproto
