// Training a byte-level BPE tokenizer from text (the `tokenizer train` command and the starter recipe).
//
// The algorithm is the classic one GPT-2's vocabulary came from: split the text with a family's
// pre-tokenizer (so merges never cross a word boundary), start from the 256 byte tokens, and repeatedly
// merge the adjacent pair of tokens that occurs most often in the corpus until the vocabulary is full or
// no pair occurs at least `min_pair_count` times. Ties go to the pair of smaller token ids, so a
// training run is fully deterministic. The result is an ordinary engine::Tokenizer (the same class the
// loaders build), so encoding with it replays the merges in rank order and reproduces the training
// segmentation exactly.
//
// Ids: the special tokens first, in the order given, then the 256 byte tokens in byte order, then one
// token per merge in the order learned.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer.h"

namespace engine {

struct BpeTrainingOptions {
  // The whole vocabulary: special tokens + 256 bytes + merges. At least specials + 256.
  int32_t vocab_size = 4096;
  // Added tokens matched only in markup (chat templates); never merged with text. The first one that
  // is "<|endoftext|>" (or else the first one) becomes the end-of-sequence token.
  std::vector<std::string> special_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  // The split pattern by its GGUF name: "qwen2" (every digit its own piece, which helps arithmetic),
  // "llama-bpe" (numbers in groups of up to three) or "gpt-2".
  std::string pre_tokenizer = "qwen2";
  // Pairs seen fewer times than this are never merged (1 would memorise single words).
  uint64_t min_pair_count = 2;
};

struct BpeTrainingReport {
  uint64_t bytes = 0;              // text bytes counted (special-token text excluded)
  uint64_t distinct_pieces = 0;    // distinct pre-tokenizer pieces ("words")
  int32_t merges = 0;              // merges learned (a merge that re-spells an existing token adds no token)
  int32_t new_tokens = 0;          // tokens added by merges
  uint64_t tokens_after = 0;       // tokens the counted text encodes to with the trained vocabulary
  uint64_t last_merge_count = 0;   // occurrences of the last pair merged (0 if none)
};

// Accumulates piece counts from text, then trains. Text may be added in any number of chunks; a chunk
// boundary acts as a piece boundary, so add whole documents or lines.
class BpeTrainer {
 public:
  // Throws engine::Error for an unknown pre-tokenizer name, a vocabulary smaller than specials + 256,
  // an empty or duplicated special token.
  explicit BpeTrainer(BpeTrainingOptions options);
  ~BpeTrainer();
  BpeTrainer(const BpeTrainer&) = delete;
  BpeTrainer& operator=(const BpeTrainer&) = delete;

  // Counts the pieces of `text`; occurrences of the special tokens are cut out first and not counted.
  void add_text(std::string_view text);

  // progress(merges_done, merges_wanted) is called now and then. Throws engine::Error when no text
  // was added.
  using Progress = std::function<void(int32_t, int32_t)>;
  std::unique_ptr<Tokenizer> train(BpeTrainingReport* report = nullptr, const Progress& progress = {}) const;

 private:
  BpeTrainingOptions m_options;
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace engine
