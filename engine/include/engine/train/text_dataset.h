// Plain-text data for pretraining: a file tokenized into one token stream, split into train and
// validation parts, and a loader that cuts the stream into batches.
//
// In order (shuffle off), batch k reads tokens [k*B*T, k*B*T + B*T] of the stream -- B*T + 1 tokens --
// as B rows of T inputs, each row's targets being its inputs shifted by one; when the next batch would
// pass the end of the stream the loader wraps to the start (as llm.c's DataLoader does). Shuffled, the
// stream is cut into windows of T+1 tokens starting at multiples of T, and each epoch visits them in a
// fresh permutation drawn from (seed, epoch), B windows per batch (a remainder smaller than B is skipped).
//
// The text must be UTF-8 (a UTF-16 file or stray Latin-1 bytes are refused with the line and byte);
// the validation part is the stream's tail, so no window straddles the two parts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/train/data_loader.h"

namespace engine {

class Tokenizer;

struct TextDataset {
  std::vector<int32_t> train;
  std::vector<int32_t> val;  // empty when val_fraction is 0
};

// Reads and tokenizes `path` (no special tokens are recognised in it), keeping the last
// `val_fraction` of the tokens for validation. Throws engine::Error naming the file for a missing,
// empty or non-UTF-8 file.
TextDataset load_text_dataset(const std::string& path, const Tokenizer& tokenizer, double val_fraction);

class TokenStreamLoader : public BatchLoader {
 public:
  // Throws engine::Error when the stream cannot fill one batch (needs B*T + 1 tokens in order,
  // B windows of T + 1 shuffled).
  TokenStreamLoader(std::vector<int32_t> tokens, int B, int T, bool shuffle, uint64_t seed, const std::string& label);

  void next(Batch& batch) override;
  DataPosition position() const override { return m_shuffle ? m_windows->position() : m_pos; }
  void seek(const DataPosition& position) override;
  int batch_size() const override { return m_B; }
  int seq_len() const override { return m_T; }
  uint64_t token_count() const { return m_tokens.size(); }

 private:
  std::vector<int32_t> m_tokens;
  int m_B, m_T;
  bool m_shuffle;
  std::optional<EpochOrder> m_windows;  // shuffled: the order of the windows of T+1 tokens
  std::vector<uint32_t> m_items;
  DataPosition m_pos;  // in order: cursor = token offset
};

}  // namespace engine
