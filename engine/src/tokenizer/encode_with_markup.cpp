// Tokenizer::encode_with_markup's fallback for tokenizers that do not override it: each markup range
// is encoded with special tokens allowed and each gap between ranges without, on its own. Correct
// about special tokens, but it splits the text at every range boundary, which can tokenize a word
// that spans markup and content differently from a whole-text encoding (the overrides do not).
#include <algorithm>

#include "engine/tokenizer.h"

namespace engine {

std::vector<int32_t> Tokenizer::encode_with_markup(std::string_view text, std::span<const TextRange> special_ranges,
                                                   std::vector<std::size_t>* offsets) const {
  std::vector<int32_t> ids;
  if (offsets) offsets->clear();
  auto add = [&](std::size_t begin, std::size_t end, bool special) {
    if (end <= begin) return;
    const std::vector<int32_t> part = encode(text.substr(begin, end - begin), special);
    ids.insert(ids.end(), part.begin(), part.end());
    if (offsets) offsets->insert(offsets->end(), part.size(), begin);
  };
  std::size_t pos = 0;
  for (const TextRange& r : special_ranges) {
    const std::size_t begin = std::clamp(r.begin, pos, text.size());
    const std::size_t end = std::clamp(r.end, begin, text.size());
    add(pos, begin, false);
    add(begin, end, true);
    pos = end;
  }
  add(pos, text.size(), false);
  return ids;
}

}  // namespace engine
