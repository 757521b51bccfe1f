// Unicode Normalization Form C (UAX #15), for tokenizer.json's {"type": "NFC"} normalizer (Qwen2).
//
// nfc(text) = canonical composition of the canonical ordering of the full canonical decomposition,
// with Hangul syllables decomposed and composed algorithmically. Tables: nfc_tables.cpp (Unicode
// 16.0, the version of the reference tokenizers build).
// Invariants: total -- invalid UTF-8 bytes pass through unchanged, each acting as a starter that
// composes with nothing; linear time apart from sorting runs of combining marks (bounded by the run
// length); pure ASCII returns without allocation work beyond the copy. When `source` is given it
// receives, per output byte, the offset of the input byte its character came from (a composite
// takes its starter's offset), so token offsets can be mapped back to the caller's text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace engine::tokenizer {

std::string nfc(std::string_view text, std::vector<std::size_t>* source = nullptr);

}  // namespace engine::tokenizer
