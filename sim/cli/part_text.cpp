#include "sim/cli/part_text.h"

#include <cstring>
#include <limits>

namespace gmp::cli {

PartError::PartError(size_t offset_, const std::string& what)
    : std::runtime_error("byte " + std::to_string(offset_) + ": " + what), offset(offset_) {}

uint64_t fnv1a64(std::string_view bytes, uint64_t h) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex16(uint64_t v) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; i--, v >>= 4) s[static_cast<size_t>(i)] = kDigits[v & 15];
  return s;
}

namespace {

bool printable(unsigned char c) { return c >= 0x20 && c <= 0x7e; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is not the writer's spelling
}

// A key as the reader shows it in a message: printable, and not too long.
std::string shown(std::string_view s) {
  std::string q = quote(s.substr(0, 40));
  if (s.size() > 40) q.insert(q.size() - 1, "...");
  return q;
}

// A number as a message shows it: a long run of digits cut short.
std::string cut_number(std::string_view v) {
  return v.size() <= 24 ? std::string(v) : std::string(v.substr(0, 24)) + "...";
}

}  // namespace

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (printable(c)) {
      out += ch;
    } else {
      out += "\\x";
      out += "0123456789abcdef"[c >> 4];
      out += "0123456789abcdef"[c & 15];
    }
  }
  return out + "\"";
}

bool unquote(std::string_view q, std::string& out, size_t& bad) {
  out.clear();
  if (q.size() < 2 || q.front() != '"' || q.back() != '"') {
    bad = q.empty() || q.front() != '"' ? 0 : q.size() - 1;
    return false;
  }
  for (size_t i = 1; i + 1 < q.size(); i++) {
    const auto c = static_cast<unsigned char>(q[i]);
    if (c == '"' || !printable(c)) {
      bad = i;
      return false;
    }
    if (c != '\\') {
      out += q[i];
      continue;
    }
    bad = i;
    if (i + 2 >= q.size()) return false;  // a backslash before the closing quote
    const char e = q[++i];
    if (e == '"' || e == '\\') {
      out += e;
    } else if (e == 'n') {
      out += '\n';
    } else if (e == 't') {
      out += '\t';
    } else if (e == 'x' && i + 3 < q.size()) {
      const int hi = hex_digit(q[i + 1]), lo = hex_digit(q[i + 2]);
      if (hi < 0 || lo < 0) return false;
      const auto b = static_cast<unsigned char>(hi * 16 + lo);
      // Only the bytes quote writes this way: not a printable one, a newline or a tab.
      if (printable(b) || b == '\n' || b == '\t') return false;
      out += static_cast<char>(b);
      i += 2;
    } else {
      return false;
    }
  }
  return true;
}

void PartWriter::line(std::string_view key, std::string_view value) {
  out_.append(key);
  out_ += ' ';
  out_.append(value);
  out_ += '\n';
}

void PartWriter::num(std::string_view key, const uint64_t& v) { line(key, std::to_string(v)); }
void PartWriter::num(std::string_view key, const int64_t& v) { line(key, std::to_string(v)); }
void PartWriter::num(std::string_view key, const uint32_t& v) { line(key, std::to_string(v)); }
void PartWriter::num(std::string_view key, const int32_t& v) { line(key, std::to_string(v)); }
void PartWriter::num(std::string_view key, const bool& v) { line(key, v ? "1" : "0"); }

void PartWriter::num(std::string_view key, const double& v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  line(key, hex16(bits));
}

void PartWriter::text(std::string_view key, const std::string& v) { line(key, quote(v)); }

void PartReader::fail(size_t at, const std::string& what) const { throw PartError(at, what); }

PartReader::Line PartReader::next_line(std::string_view expected) {
  Line l;
  l.at = pos_;
  if (at_end()) fail(pos_, "the part ends where " + shown(expected) + " was expected (truncated?)");
  const size_t nl = text_.find('\n', pos_);
  if (nl == std::string_view::npos) fail(pos_, "the part ends inside a line, with no newline (truncated?)");
  const std::string_view whole = text_.substr(pos_, nl - pos_);
  pos_ = nl + 1;
  const size_t sp = whole.find(' ');
  l.key = whole.substr(0, sp);
  if (sp != std::string_view::npos) {
    l.has_value = true;
    l.value = whole.substr(sp + 1);
    l.value_at = l.at + sp + 1;
  }
  return l;
}

std::string_view PartReader::value(std::string_view key, size_t& at) {
  const Line l = next_line(key);
  if (l.key != key) fail(l.at, "expected " + shown(key) + ", got " + shown(l.key));
  if (!l.has_value || l.value.empty()) fail(l.at, shown(key) + " has no value");
  at = l.value_at;
  return l.value;
}

uint64_t PartReader::unsigned_value(std::string_view key, std::string_view v, size_t at, uint64_t max) {
  const bool digits = !v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos;
  if (!digits || (v.size() > 1 && v[0] == '0')) {
    fail(at, shown(key) + ": expected an unsigned decimal integer, got " + shown(v));
  }
  uint64_t n = 0;
  for (const char c : v) {
    const auto d = static_cast<uint64_t>(c - '0');
    if (n > max / 10 || (n == max / 10 && d > max % 10)) {
      fail(at, shown(key) + ": " + cut_number(v) + " is above " + std::to_string(max));
    }
    n = n * 10 + d;
  }
  return n;
}

uint64_t PartReader::bounded(std::string_view key, uint64_t lo, uint64_t hi) {
  size_t at = 0;
  const std::string_view v = value(key, at);
  const uint64_t n = unsigned_value(key, v, at, hi);
  if (n < lo) fail(at, shown(key) + ": " + cut_number(v) + " is below " + std::to_string(lo));
  return n;
}

void PartReader::num(std::string_view key, uint64_t& v) { v = bounded(key, 0, UINT64_MAX); }
void PartReader::num(std::string_view key, uint32_t& v) { v = static_cast<uint32_t>(bounded(key, 0, UINT32_MAX)); }

void PartReader::num(std::string_view key, int64_t& v) {
  size_t at = 0;
  std::string_view s = value(key, at);
  const bool neg = s[0] == '-';
  if (neg) s.remove_prefix(1);
  const uint64_t mag = unsigned_value(key, s, at + (neg ? 1 : 0), neg ? uint64_t{1} << 63 : INT64_MAX);
  if (neg && mag == 0) fail(at, shown(key) + ": -0 is written 0");
  v = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
}

void PartReader::num(std::string_view key, int32_t& v) {
  int64_t w = 0;
  const size_t at = pos_;
  num(key, w);
  if (w < std::numeric_limits<int32_t>::min() || w > std::numeric_limits<int32_t>::max()) {
    fail(at, shown(key) + ": " + std::to_string(w) + " does not fit 32 bits");
  }
  v = static_cast<int32_t>(w);
}

void PartReader::num(std::string_view key, double& v) {
  size_t at = 0;
  const std::string_view s = value(key, at);
  uint64_t bits = 0;
  bool ok = s.size() == 16;
  for (size_t i = 0; ok && i < s.size(); i++) {
    const int d = hex_digit(s[i]);
    ok = d >= 0;
    bits = bits << 4 | static_cast<uint64_t>(d < 0 ? 0 : d);
  }
  if (!ok) fail(at, shown(key) + ": expected a double's bits as 16 lowercase hex digits, got " + shown(s));
  std::memcpy(&v, &bits, sizeof v);
}

void PartReader::num(std::string_view key, bool& v) {
  size_t at = 0;
  const std::string_view s = value(key, at);
  if (s != "0" && s != "1") fail(at, shown(key) + ": expected 0 or 1, got " + shown(s));
  v = s == "1";
}

void PartReader::text(std::string_view key, std::string& v) {
  size_t at = 0;
  const std::string_view s = value(key, at);
  size_t bad = 0;
  if (!unquote(s, v, bad)) fail(at + bad, shown(key) + ": not a string as gmpsim quotes one");
}

}  // namespace gmp::cli
