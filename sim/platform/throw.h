// Go's throw and fatal: the runtime stops with "fatal error: <msg>"; an unrecovered panic stops
// the program with "panic: <msg>" (the scenario has no recover, so every panic is one). Here they
// raise GoFatal, which a driver catches at the edge of the simulation and reports with Go's
// wording; either way the process exits with status 2.
#pragma once

#include <stdexcept>
#include <string>

namespace gmp::plat {

class GoFatal : public std::runtime_error {
 public:
  enum class Kind { Throw, Fatal, Panic };
  GoFatal(Kind kind, const std::string& msg)
      : std::runtime_error((kind == Kind::Panic ? "panic: " : "fatal error: ") + msg), kind_(kind), msg_(msg) {}
  Kind kind() const { return kind_; }
  // The message without the "fatal error: " or "panic: " prefix.
  const std::string& message() const { return msg_; }

 private:
  Kind kind_;
  std::string msg_;
};

}  // namespace gmp::plat
