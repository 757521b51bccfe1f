// Finding added tokens (e.g. "<|endoftext|>") in text before pre-tokenization.
//
// Added tokens are matched as literal strings and bypass BPE. Special ones (control tokens) are
// matched only when the caller allows it, so user text can never forge them (reliability.md §2.1,
// special-token injection); non-special added tokens are always matched, as HF tokenizers does.
// Matching is leftmost-longest (HF uses Aho-Corasick with the same semantics) through a byte trie.
// Invariants: contents are non-empty (an empty token would match everywhere and never advance) and at
// most k_max_added_token_bytes long, which bounds the trie walk per text position and so keeps
// find() linear in the text for any vocabulary.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer.h"

namespace engine::tokenizer {

inline constexpr std::size_t k_max_added_token_bytes = 256;

class AddedTokenMatcher {
 public:
  struct Match {
    std::size_t pos;
    std::size_t length;
    int32_t id;
  };

  // `content` must satisfy the invariants above (the loader checks and reports them).
  void add(std::string_view content, int32_t id, bool special);
  bool has_tokens(bool allow_special) const { return allow_special ? m_any : m_any_non_special; }

  // First match starting at or after `from`, or nullopt.
  std::optional<Match> find(std::string_view text, std::size_t from, bool allow_special) const;
  // Same, but a special token matches only where it lies wholly inside one of `special_ranges`
  // (sorted, non-overlapping: chat markup); non-special added tokens match anywhere.
  std::optional<Match> find_in(std::string_view text, std::size_t from,
                               std::span<const TextRange> special_ranges) const;
  // Every added token as (id, special), in no particular order (for exporting the vocabulary).
  std::vector<std::pair<int32_t, bool>> tokens() const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> children;  // sorted by byte
    int32_t id = -1;                                          // token ending here, or -1
    bool special = false;
  };
  int32_t child(int32_t node, unsigned char byte) const;
  // Leftmost-longest match from `from` among the tokens accept(pos, length, special) lets through.
  template <typename Accept>
  std::optional<Match> find_where(std::string_view text, std::size_t from, Accept accept) const;

  std::vector<Node> m_nodes = std::vector<Node>(1);  // node 0 is the root
  std::array<bool, 256> m_first_byte{};              // bytes that start some token
  bool m_any = false;
  bool m_any_non_special = false;
};

}  // namespace engine::tokenizer
