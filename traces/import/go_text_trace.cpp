#include "traces/import/go_text_trace.h"

#include <cctype>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "traces/import/go_trace_v2.h"

namespace gmp::trace::go {
namespace {

[[noreturn]] void bad(size_t line, const std::string& what) {
  throw std::runtime_error("line " + std::to_string(line) + ": " + what);
}

void put_uvarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

// The tokens of a line up to a '#' comment.
std::vector<std::string> tokens(const std::string& line) {
  std::vector<std::string> t;
  std::string cur;
  for (char c : line) {
    if (c == '#') break;
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) t.push_back(cur), cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) t.push_back(cur);
  return t;
}

uint64_t arg_value(const std::string& tok, size_t line) {
  size_t eq = tok.find('=');
  if (eq == std::string::npos || eq + 1 == tok.size()) bad(line, "malformed argument '" + tok + "'");
  uint64_t v = 0;
  for (size_t i = eq + 1; i < tok.size(); i++) {
    if (!std::isdigit(static_cast<unsigned char>(tok[i]))) bad(line, "malformed argument '" + tok + "'");
    uint64_t d = static_cast<uint64_t>(tok[i] - '0');
    if (v > (UINT64_MAX - d) / 10) bad(line, "argument out of range '" + tok + "'");
    v = v * 10 + d;
  }
  return v;
}

// Go's strconv.Unquote for the double-quoted strings the tests use.
std::string unquote(std::string_view q, size_t line) {
  if (q.size() < 2 || q.front() != '"' || q.back() != '"') bad(line, "expected a quoted string");
  std::string out;
  for (size_t i = 1; i + 1 < q.size(); i++) {
    char c = q[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i + 1 >= q.size()) bad(line, "bad escape");
    char e = q[i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '\\': out += '\\'; break;
      case '"': out += '"'; break;
      case '\'': out += '\''; break;
      case 'x': {
        if (i + 2 >= q.size()) bad(line, "bad \\x escape");
        out += static_cast<char>(std::stoi(std::string(q.substr(i + 1, 2)), nullptr, 16));
        i += 2;
        break;
      }
      default: bad(line, std::string("unsupported escape \\") + e);
    }
  }
  return out;
}

}  // namespace

TextTrace parse_text_trace(const std::string& text) {
  // The txtar archive: "-- expect --" then "-- trace --".
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> expect, trace;
  std::vector<std::string>* cur = nullptr;
  std::vector<size_t> trace_lines;
  size_t n = 0;
  while (std::getline(in, line)) {
    n++;
    if (line == "-- expect --") {
      cur = &expect;
    } else if (line == "-- trace --") {
      cur = &trace;
    } else if (cur != nullptr) {
      cur->push_back(line);
      if (cur == &trace) trace_lines.push_back(n);
    }
  }
  if (expect.empty() || trace.empty()) throw std::runtime_error("not a Go trace test: expected files expect and trace");
  TextTrace t;
  if (expect[0] == "SUCCESS") {
  } else if (expect[0].rfind("FAILURE ", 0) == 0) {
    t.expect_failure = true;
    t.error_pattern = unquote(expect[0].substr(8), 1);
  } else {
    throw std::runtime_error("bad expectation: " + expect[0]);
  }
  size_t i = 0;
  auto next_line = [&](std::vector<std::string>& toks) {
    while (i < trace.size()) {
      toks = tokens(trace[i++]);
      if (!toks.empty()) return true;
    }
    return false;
  };
  std::vector<std::string> toks;
  if (!next_line(toks) || toks.size() != 2 || toks[0] != "Trace" || toks[1].rfind("Go1.", 0) != 0) {
    throw std::runtime_error("expected the header \"Trace Go1.N\"");
  }
  int minor = std::stoi(toks[1].substr(4));
  std::string header = "go 1." + std::to_string(minor) + " trace";
  header.resize(16, '\0');
  t.binary = header;
  while (next_line(toks)) {
    size_t ln = trace_lines[i - 1];
    int type = -1;
    V2Spec spec;
    for (int ty = 0; ty < 256; ty++) {
      V2Spec s = v2_spec(minor, static_cast<uint8_t>(ty));
      if (!s.name.empty() && s.name == toks[0]) {
        type = ty;
        spec = s;
        break;
      }
    }
    if (type < 0) bad(ln, "unidentified event " + toks[0]);
    if (static_cast<int>(toks.size()) - 1 != spec.args) bad(ln, "wrong number of arguments for " + toks[0]);
    t.binary += static_cast<char>(type);
    std::vector<uint64_t> args;
    for (size_t k = 1; k < toks.size(); k++) args.push_back(arg_value(toks[k], ln));
    for (uint64_t a : args) put_uvarint(t.binary, a);
    if (spec.is_stack) {
      for (uint64_t f = 0; f < args[1]; f++) {
        std::vector<std::string> frame;
        if (!next_line(frame) || frame.size() != 4) bad(ln, "expected a stack frame: pc= func= file= line=");
        for (const std::string& ft : frame) put_uvarint(t.binary, arg_value(ft, ln));
      }
    }
    if (spec.has_data) {
      while (i < trace.size() && tokens(trace[i]).empty()) i++;
      if (i >= trace.size()) bad(ln, "expected data= after " + toks[0]);
      const std::string& d = trace[i++];
      size_t eq = d.find('=');
      size_t start = d.find_first_not_of(" \t");
      if (eq == std::string::npos || d.compare(start, eq - start, "data") != 0) bad(ln + 1, "malformed data");
      std::string_view q(d);
      q = q.substr(eq + 1);
      while (!q.empty() && std::isspace(static_cast<unsigned char>(q.front()))) q.remove_prefix(1);
      while (!q.empty() && std::isspace(static_cast<unsigned char>(q.back()))) q.remove_suffix(1);
      std::string data = unquote(q, ln + 1);
      put_uvarint(t.binary, data.size());
      t.binary += data;
    }
  }
  return t;
}

}  // namespace gmp::trace::go
