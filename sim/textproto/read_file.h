// Reading a text file that a user named (a scenario, a cost profile): the whole file, or a
// sentence saying why not that follows the path in a diagnostic.
#pragma once

#include <cstddef>
#include <string>

namespace gmp::textproto {

// Larger inputs are refused: no scenario or profile comes near, and /dev/zero would never end.
inline constexpr size_t kMaxFileBytes = 64u << 20;

struct FileText {
  std::string text;
  std::string error;  // empty on success, else e.g. "cannot open: No such file or directory",
                      // "is a directory", "is larger than 64 MiB"
};

FileText read_file(const std::string& path);

}  // namespace gmp::textproto
