// The one varint decoder (traces/varint.h): the value of each length, where the tenth byte
// overflows 64 bits, and a varint cut short or longer than ten bytes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "traces/varint.h"

using namespace gmp::trace;

namespace {

struct Read {
  VarintEnd end;
  uint64_t value;
  bool overflows;
  size_t used;  // bytes read
};

Read read(const std::vector<uint8_t>& bytes) {
  const uint8_t* p = bytes.data();
  Varint v;
  const VarintEnd end = read_varint(p, bytes.data() + bytes.size(), v);
  return Read{end, v.value(), v.overflows(), static_cast<size_t>(p - bytes.data())};
}

std::vector<uint8_t> bytes(int n_ff, std::vector<uint8_t> tail) {
  std::vector<uint8_t> out(static_cast<size_t>(n_ff), 0xff);
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

}  // namespace

TEST_CASE("varint: values of one to ten bytes, least significant group first") {
  CHECK(read({0x00}).value == 0);
  CHECK(read({0x7f}).value == 127);
  const Read r = read({0xac, 0x02, 0x55});  // 300, then another varint's byte
  CHECK(r.end == VarintEnd::Done);
  CHECK(r.value == 300);
  CHECK(r.used == 2);
  const Read max = read(bytes(9, {0x01}));
  CHECK(max.end == VarintEnd::Done);
  CHECK(max.value == UINT64_MAX);
  CHECK_FALSE(max.overflows);
  CHECK(read({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}).value == 0);  // zero, padded
}

TEST_CASE("varint: a tenth byte above 1 overflows, and the value keeps the low 64 bits") {
  const Read r = read(bytes(9, {0x02}));
  CHECK(r.end == VarintEnd::Done);
  CHECK(r.overflows);
  CHECK(r.value == (UINT64_MAX >> 1));
  // Below the tenth byte nothing overflows, however large the byte.
  CHECK_FALSE(read(bytes(8, {0x7f})).overflows);
}

TEST_CASE("varint: cut short, or running past ten bytes") {
  const Read cut = read({0x80, 0x80});
  CHECK(cut.end == VarintEnd::Truncated);
  CHECK(cut.used == 2);
  CHECK(read({}).end == VarintEnd::Truncated);
  const Read long_one = read(bytes(11, {0x01}));
  CHECK(long_one.end == VarintEnd::TooLong);
  CHECK(long_one.used == 10);  // stops at the tenth byte
  CHECK(long_one.overflows);
  // Byte by byte, as the trace reader pushes them.
  Varint v;
  CHECK(v.push(0x96) == Varint::Step::More);
  CHECK(v.push(0x01) == Varint::Step::Done);
  CHECK(v.value() == 150);
  CHECK(v.bytes() == 2);
}
