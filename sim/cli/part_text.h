// The line format of gmpsim's part files (sim/cli/sweep_part.h): one "key value" line per field,
// in a fixed order that the reader checks key by key.
//
//   unsigned integers   decimal, no sign, no leading zero ("0", "42")
//   signed integers     the same with '-' before a negative one (never "-0")
//   doubles             the IEEE-754 bit pattern as 16 lowercase hex digits, so every value, NaN
//                       and infinities included, reads back bit for bit
//   booleans            0 or 1
//   strings             in double quotes: printable ASCII as is but for \" and \\; \n and \t;
//                       every other byte as \xHH (lowercase)
//   lists               "key N", then the N items' lines
//
// The reader takes only what the writer writes (the one spelling of each value): a file it reads
// writes back byte for byte. Each of PartWriter and PartReader has the same member functions, so
// that one function template naming each field in order (a "visit") both writes and reads a
// record, and the two cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gmp::cli {

// What the reader could not read, and where: the byte offset from the start of the file.
class PartError : public std::runtime_error {
 public:
  PartError(size_t offset, const std::string& what);
  size_t offset;
};

// FNV-1a, 64 bits: the checksum at a part's end, and the digest of its input files.
uint64_t fnv1a64(std::string_view bytes, uint64_t h = 14695981039346656037ULL);
// 16 lowercase hex digits.
std::string hex16(uint64_t v);

class PartWriter {
 public:
  void num(std::string_view key, const uint64_t& v);
  void num(std::string_view key, const int64_t& v);
  void num(std::string_view key, const uint32_t& v);
  void num(std::string_view key, const int32_t& v);
  void num(std::string_view key, const double& v);
  void num(std::string_view key, const bool& v);
  void text(std::string_view key, const std::string& v);
  // A count the reader takes in [lo, hi].
  void ranged(std::string_view key, const uint64_t& v, uint64_t /*lo*/, uint64_t /*hi*/) { num(key, v); }
  // An enumeration as its number, which the reader takes in [0, max].
  template <class E>
  void enumeration(std::string_view key, const E& v, uint64_t /*max*/) {
    num(key, static_cast<uint64_t>(v));
  }
  // "key N", then item(*this, x) for each x. max_count is the reader's.
  template <class T, class Item>
  void list(std::string_view key, const std::vector<T>& v, Item item, uint64_t /*max_count*/ = UINT64_MAX) {
    num(key, static_cast<uint64_t>(v.size()));
    for (const T& x : v) item(*this, x);
  }
  const std::string& out() const { return out_; }
  std::string& out() { return out_; }

 private:
  void line(std::string_view key, std::string_view value);
  std::string out_;
};

class PartReader {
 public:
  explicit PartReader(std::string_view text) : text_(text) {}
  void num(std::string_view key, uint64_t& v);
  void num(std::string_view key, int64_t& v);
  void num(std::string_view key, uint32_t& v);
  void num(std::string_view key, int32_t& v);
  void num(std::string_view key, double& v);
  void num(std::string_view key, bool& v);
  void text(std::string_view key, std::string& v);
  void ranged(std::string_view key, uint64_t& v, uint64_t lo, uint64_t hi) { v = bounded(key, lo, hi); }
  template <class E>
  void enumeration(std::string_view key, E& v, uint64_t max) {
    v = static_cast<E>(bounded(key, 0, max));
  }
  // Reads the count, at most max_count, then as many items (no space is reserved up front: a
  // count the file cannot hold fails at its end, not in an allocation).
  template <class T, class Item>
  void list(std::string_view key, std::vector<T>& v, Item item, uint64_t max_count = UINT64_MAX) {
    const uint64_t n = bounded(key, 0, max_count);
    v.clear();
    for (uint64_t i = 0; i < n; i++) {
      v.emplace_back();
      item(*this, v.back());
    }
  }
  // An unsigned integer in [lo, hi]; the error names the key and the range.
  uint64_t bounded(std::string_view key, uint64_t lo, uint64_t hi);

  // The next line's key and value, without checking the key: for a file's first line. `at` is
  // the line's offset.
  struct Line {
    std::string_view key, value;
    size_t at = 0, value_at = 0;
    bool has_value = false;
  };
  Line next_line(std::string_view expected);
  size_t offset() const { return pos_; }
  bool at_end() const { return pos_ >= text_.size(); }
  [[noreturn]] void fail(size_t at, const std::string& what) const;

 private:
  // The next line's value, its key checked against `key`.
  std::string_view value(std::string_view key, size_t& at);
  uint64_t unsigned_value(std::string_view key, std::string_view v, size_t at, uint64_t max);
  std::string_view text_;
  size_t pos_ = 0;
};

// The quoted form of a string, and back; unquote returns false (with the bad byte's index in
// the quoted text) for anything quote would not write.
std::string quote(std::string_view s);
bool unquote(std::string_view q, std::string& out, size_t& bad);

}  // namespace gmp::cli
