// Lenient UTF-8 stepping for the pre-tokenizer (and encoding one code point back, for NFC and chat).
//
// Tokenization is total: any byte string must split without throwing. A well-formed UTF-8 sequence
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF) is one character; any byte that
// does not start such a sequence is a character of its own, reported as k_invalid_code_point, which
// classifies as CharClass::other. Invariant: the returned length is always >= 1 and never runs past
// the end of the input, so a scanner advancing by it terminates in linear time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace engine::tokenizer {

// Not a Unicode scalar value, so it can never collide with a decoded character.
inline constexpr uint32_t k_invalid_code_point = 0xFFFFFFFFu;

struct Utf8Char {
  uint32_t code_point;
  uint32_t length;  // bytes consumed, 1..4
};

inline Utf8Char decode_utf8(const unsigned char* p, std::size_t available) {
  const unsigned char b0 = p[0];
  if (b0 < 0x80) return {b0, 1};
  auto cont = [&](std::size_t i) { return i < available && (p[i] & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (cont(1)) return {(uint32_t(b0 & 0x1F) << 6) | (p[1] & 0x3F), 2};
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (cont(1) && cont(2)) {
      const uint32_t cp = (uint32_t(b0 & 0x0F) << 12) | (uint32_t(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
      if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) return {cp, 3};
    }
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (cont(1) && cont(2) && cont(3)) {
      const uint32_t cp =
          (uint32_t(b0 & 0x07) << 18) | (uint32_t(p[1] & 0x3F) << 12) | (uint32_t(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
      if (cp >= 0x10000 && cp <= 0x10FFFF) return {cp, 4};
    }
  }
  return {k_invalid_code_point, 1};
}

// Appends the UTF-8 encoding of `cp`, a Unicode scalar value (the caller guarantees it: < 0x110000,
// not a surrogate).
inline void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace engine::tokenizer
