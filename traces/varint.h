// The base-128 varints of protobuf's wire format and of Go's execution traces: each byte gives 7
// bits, least significant first, and a set high bit means another byte follows. One decoder for
// every reader of them (the trace reader's record lengths, the viewer's event decoder, the Go
// trace readers), each of which words its own errors.
//
// Protocol:
//   - Varint::push takes the bytes one at a time and says whether the number is complete, needs
//     another byte, or has run past the 10 bytes a 64-bit number can take (TooLong).
//   - At the 10th byte only its lowest bit still fits in 64 bits; overflows() says the 10th byte
//     held more (a larger value, or a continuation bit). value() keeps the low 64 bits. Whether
//     that is an error is the caller's to decide: protobuf's length prefixes and Go's v2 format
//     refuse it, the viewer's decoder and Go's v1 reader (like Go's own) take the low bits.
//   - read_varint decodes from a buffer, never reading at or past `end`.
#pragma once

#include <cstdint>

namespace gmp::trace {

// The most bytes a 64-bit varint takes.
inline constexpr int kMaxVarintBytes = 10;

class Varint {
 public:
  enum class Step : uint8_t { More, Done, TooLong };

  Step push(uint8_t b) {
    value_ |= static_cast<uint64_t>(b & 0x7f) << shift_;
    shift_ += 7;
    last_ = b;
    if (b < 0x80) return Step::Done;
    return shift_ == 7 * kMaxVarintBytes ? Step::TooLong : Step::More;
  }

  uint64_t value() const { return value_; }
  // Bytes pushed so far.
  int bytes() const { return static_cast<int>(shift_ / 7); }
  // The 10th byte held bits beyond the 64th, or a continuation bit.
  bool overflows() const { return shift_ == 7 * kMaxVarintBytes && last_ > 1; }

 private:
  uint64_t value_ = 0;
  uint32_t shift_ = 0;  // 7 per byte pushed
  uint8_t last_ = 0;    // the byte pushed last
};

// How read_varint ended.
enum class VarintEnd : uint8_t { Done, Truncated, TooLong };

// Decodes the varint at `p`, reading no byte at or past `end`; `p` is left after the last byte
// read (after the varint when Done, at `end` when Truncated).
inline VarintEnd read_varint(const uint8_t*& p, const uint8_t* end, Varint& v) {
  for (;;) {
    if (p >= end) return VarintEnd::Truncated;
    switch (v.push(*p++)) {
      case Varint::Step::Done: return VarintEnd::Done;
      case Varint::Step::TooLong: return VarintEnd::TooLong;
      case Varint::Step::More: break;
    }
  }
}

}  // namespace gmp::trace
