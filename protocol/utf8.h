#pragma once
// UTF-8 well-formedness (RFC 3629), shared by the wire's checks and the fast JSON parser.

#include <cstddef>

namespace rebound::protocol {

// The UTF-8 sequence that starts with the non-ASCII byte s[i]: its length when it is valid, else
// 0 with `prefix` set to the length of its longest valid beginning (at least 1: the maximal
// invalid subsequence that one U+FFFD replaces).
inline std::size_t utf8_sequence(const unsigned char* s, std::size_t n, std::size_t i,
                                 std::size_t& prefix) {
  const unsigned char c = s[i];
  prefix = 1;
  std::size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlongs
    if (c == 0xED) hi = 0x9F;  // no UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // no overlongs
    if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + 1 >= n || s[i + 1] < lo || s[i + 1] > hi) return 0;
  std::size_t k = 2;
  while (k < len && i + k < n && (s[i + k] & 0xC0) == 0x80)
    ++k;
  if (k == len) return len;
  prefix = k;
  return 0;
}

}  // namespace rebound::protocol
