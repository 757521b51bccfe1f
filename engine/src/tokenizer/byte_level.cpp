// GPT-2 byte <-> unicode tables, built once at first use (the definition is the one in GPT-2's
// encoder.py: printable Latin-1 bytes keep their code point, the rest are shifted to 256 + n).
#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace engine::tokenizer {
namespace {

constexpr bool keeps_own_code_point(unsigned b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct ByteTables {
  std::array<uint32_t, 256> code_point{};  // byte -> code point
  std::array<std::string, 256> utf8{};     // byte -> UTF-8 of that code point
  std::array<int16_t, 0x144> byte_of{};    // code point (< 0x144) -> byte, or -1

  ByteTables() {
    byte_of.fill(-1);
    unsigned shifted = 0;
    for (unsigned b = 0; b < 256; ++b) {
      const uint32_t cp = keeps_own_code_point(b) ? b : 256 + shifted++;
      code_point[b] = cp;
      byte_of[cp] = static_cast<int16_t>(b);
      std::string s;
      if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
      } else {
        s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
      utf8[b] = std::move(s);
    }
  }
};

const ByteTables& tables() {
  static const ByteTables t;  // thread-safe initialisation (C++11 magic statics)
  return t;
}

}  // namespace

std::string_view byte_to_piece_char(uint8_t byte) { return tables().utf8[byte]; }

void bytes_to_piece(std::string_view bytes, std::string& out) {
  const ByteTables& t = tables();
  for (unsigned char b : bytes) out += t.utf8[b];
}

std::optional<std::string> piece_to_bytes(std::string_view piece) {
  const ByteTables& t = tables();
  std::string out;
  out.reserve(piece.size());
  const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
  std::size_t i = 0;
  while (i < piece.size()) {
    const Utf8Char c = decode_utf8(p + i, piece.size() - i);
    if (c.code_point >= t.byte_of.size() || t.byte_of[c.code_point] < 0) return std::nullopt;
    out.push_back(static_cast<char>(t.byte_of[c.code_point]));
    i += c.length;
  }
  return out;
}

}  // namespace engine::tokenizer
