// Go's throw and fatal: the runtime stops with "fatal error: <msg>". Here they raise GoFatal,
// which a driver catches at the edge of the simulation and reports with Go's wording.
#pragma once

#include <stdexcept>
#include <string>

namespace gmp::plat {

class GoFatal : public std::runtime_error {
 public:
  enum class Kind { Throw, Fatal };
  GoFatal(Kind kind, const std::string& msg)
      : std::runtime_error("fatal error: " + msg), kind_(kind), msg_(msg) {}
  Kind kind() const { return kind_; }
  // The message without the "fatal error: " prefix.
  const std::string& message() const { return msg_; }

 private:
  Kind kind_;
  std::string msg_;
};

}  // namespace gmp::plat
