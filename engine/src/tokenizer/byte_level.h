// GPT-2's reversible byte <-> unicode mapping ("byte-level" alphabet).
//
// Every byte 0..255 is given a printable code point so vocabulary pieces are plain strings: the
// printable Latin-1 bytes ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) map to themselves and the other
// 68 bytes, in increasing order, to U+0100, U+0101, ... (so ' ' = 0x20 becomes U+0120 'Ġ').
// Invariant: the mapping is a bijection between the 256 bytes and 256 code points, so encoding text
// through it is lossless.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace engine::tokenizer {

// UTF-8 spelling of the code point that stands for `byte` (1 or 2 bytes long).
std::string_view byte_to_piece_char(uint8_t byte);

// Appends the byte-level spelling of raw `bytes` to `out`.
void bytes_to_piece(std::string_view bytes, std::string& out);

// Raw bytes of a vocabulary piece, or nullopt when a character of it is not in the byte-level
// alphabet (an added token such as "<|endoftext|>" is all ASCII and maps to itself, but a piece
// like "中" is not byte-level; callers then use the piece's own UTF-8 bytes, as HF's decoder does).
std::optional<std::string> piece_to_bytes(std::string_view piece);

}  // namespace engine::tokenizer
