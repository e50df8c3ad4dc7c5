// A fresh directory for a test's files, removed with everything in it when the test ends.
#pragma once

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <filesystem>
#include <iterator>
#include <string>

struct TempDir {
  std::filesystem::path path;
  // `prefix` names the directory (PREFIX.XXXXXX under the system's temporary folder).
  explicit TempDir(const std::string& prefix = "gmp_test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
  size_t entries() const {
    return static_cast<size_t>(
        std::distance(std::filesystem::directory_iterator(path), std::filesystem::directory_iterator()));
  }
};
