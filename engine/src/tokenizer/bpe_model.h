// The BPE model: a vocabulary plus ranked merge rules, turning one pre-tokenized word into ids.
//
// A word's bytes start as one symbol each (the vocabulary token of that byte's byte-level
// character); then, repeatedly, the adjacent pair with the lowest merge rank (leftmost on ties) is
// replaced by its merge result, until no adjacent pair has a rule. This is exactly what HF
// tokenizers' BPE does (and, for merges learned by BPE training, what GPT-2's encoder.py does).
// Implemented with a linked list of symbols and a min-heap of candidate pairs with lazy
// invalidation: O(n log n) in the word length, so a 1 MB word is fine.
// A byte with no token in the vocabulary becomes the unknown token when one is configured and is
// dropped otherwise (HF's behaviour); complete byte-level vocabularies such as GPT-2's have all 256.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocabulary.h"
#include "tokenizer/word_cache.h"

namespace engine::tokenizer {

struct BpeOptions {
  // HF "ignore_merges": a word that is itself a vocabulary token is emitted as that token unmerged.
  bool ignore_merges = false;
  std::optional<int32_t> unk_id;
  bool fuse_unk = false;  // consecutive unknown bytes give one unknown token
};

class BpeModel {
 public:
  BpeModel(Vocabulary vocab, BpeOptions options);

  // Adds the next rule; its rank is the number of rules added before it. A pair given again
  // replaces the earlier rule (HF tokenizers and encoder.py both keep the last occurrence).
  // left, right and result must be ids of `vocab()`.
  void add_merge(int32_t left, int32_t right, int32_t result);
  std::size_t merge_count() const { return m_merges.size(); }
  // The rules as (left, right) ids, lowest rank first (for exporting merges.txt / GGUF merges).
  std::vector<std::pair<int32_t, int32_t>> merges_by_rank() const;

  const Vocabulary& vocab() const { return m_vocab; }

  // Appends the ids of one word (raw bytes) to `out`. Thread-safe.
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

 private:
  struct MergeRule {
    int32_t rank;
    int32_t result;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  void merge_word(std::string_view word, std::vector<int32_t>& out) const;

  Vocabulary m_vocab;
  BpeOptions m_options;
  std::array<int32_t, 256> m_byte_ids{};  // byte -> id of its byte-level character, or -1
  std::unordered_map<uint64_t, MergeRule> m_merges;
  int32_t m_next_rank = 0;
  std::unique_ptr<WordCache> m_cache;  // behind a pointer: mutexes do not move
};

}  // namespace engine::tokenizer
