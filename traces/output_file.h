// Output files named on the command line (a trace, a chart), and what a run leaves behind when
// it is interrupted.
//
// Protocol:
//   - output_target(path) says how `path` is written: an absent path or a regular file is
//     replaced by renaming a finished temporary file onto it, so that a reader never sees half a
//     file; a symbolic link is followed, and the file it names is replaced (the link stays); a
//     character device or a FIFO (/dev/null, /dev/stdout, a pipe) is opened and written in place
//     ("stream"), never replaced. A directory, a socket, a block device or a link to nothing is
//     refused with an OutputError that says what the path is.
//   - Temporary files are registered while they exist (register_temp_file); once
//     remove_temp_files_on_signals() has installed its handlers, SIGINT, SIGTERM and SIGHUP remove
//     every registered file and then end the process as the signal would have (default action).
//   - write_output_file(path, contents) writes a whole file that way.
#pragma once

#include <stdexcept>
#include <string>

namespace gmp::trace {

class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OutputTarget {
  std::string path;     // where to write: `path`, or the regular file a symbolic link names
  bool stream = false;  // a character device or FIFO: opened and written in place
};

// Throws OutputError ("PATH: is a directory", ...).
OutputTarget output_target(const std::string& path);

// Registers a temporary file to remove on SIGINT, SIGTERM and SIGHUP: a slot for
// unregister_temp_file, or -1 when the table (16 files) is full or the path longer than 4095
// bytes. The handlers are async-signal-safe: they read only this table.
int register_temp_file(const std::string& path);
void unregister_temp_file(int slot);
// Installs the handlers (once; signals that are ignored stay ignored).
void remove_temp_files_on_signals();

// A temporary file next to `target` (a name unique in this process, checked unique on disk by
// O_EXCL), registered for removal on signals and open for writing. Throws OutputError.
struct TempFile {
  std::string path;
  int fd = -1;
  int slot = -1;  // its registration (register_temp_file)
};
TempFile create_temp_file(const std::string& target);
// Removes the file and its registration (the descriptor is the caller's to close).
void remove_temp_file(const TempFile& t) noexcept;

// Writes `contents` to `path` as output_target says. Throws OutputError naming the path.
void write_output_file(const std::string& path, const std::string& contents);

}  // namespace gmp::trace
