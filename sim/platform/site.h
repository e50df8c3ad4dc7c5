// Where in the port an operation is: file, line and function, for the checker's counterexamples.
// std::source_location would do, but Debian 12's clang 14 (the fuzz build) lacks it with
// libstdc++ 12; the builtins it is made of are in both compilers.
#pragma once

#include <cstdint>

namespace gmp::plat {

class Site {
 public:
  constexpr Site() noexcept = default;
  // As a default argument, the caller's position.
  static constexpr Site current(const char* file = __builtin_FILE(), const char* func = __builtin_FUNCTION(),
                                uint32_t line = __builtin_LINE()) noexcept {
    Site s;
    s.file_ = file;
    s.func_ = func;
    s.line_ = line;
    return s;
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return func_; }
  constexpr uint32_t line() const noexcept { return line_; }

 private:
  const char* file_ = "";
  const char* func_ = "";
  uint32_t line_ = 0;
};

}  // namespace gmp::plat
