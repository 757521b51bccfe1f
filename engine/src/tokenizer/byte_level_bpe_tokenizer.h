// engine::Tokenizer for byte-level BPE: added-token split -> pre-tokenizer -> byte-level BPE.
//
// Encoding a text: added tokens are cut out first (special ones only with allow_special); each
// segment between them is (optionally) given a leading space, split by the family's pre-tokenizer,
// and every piece is encoded by the BPE model. Decoding concatenates each id's raw bytes.
// Invariants: encode never throws on any byte content (only on the size cap), and for a vocabulary
// holding all 256 byte tokens without add_prefix_space, decode(encode(x)) == x for every byte
// string x. All members are immutable after construction except the BPE word cache, which is
// internally synchronised, so concurrent const calls are safe.
#pragma once

#include <memory>
#include <optional>

#include "engine/tokenizer.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/pre_tokenizer.h"

namespace engine::tokenizer {

// Inputs above this are refused with engine::Error before any allocation: it keeps every count and
// position well inside int32 (token ids are int32 and a text never yields more tokens than bytes).
inline constexpr std::size_t k_max_encode_bytes = std::size_t{1} << 30;

struct ByteLevelOptions {
  bool add_prefix_space = false;  // HF ByteLevel: prepend ' ' to a segment not starting with one
  bool nfc = false;               // tokenizer.json normalizer NFC: each segment is NFC-normalized first
};

class ByteLevelBpeTokenizer final : public Tokenizer {
 public:
  ByteLevelBpeTokenizer(BpeModel model, AddedTokenMatcher added_tokens, std::unique_ptr<PreTokenizer> pre_tokenizer,
                        ByteLevelOptions options);

  std::vector<int32_t> encode(std::string_view text, bool allow_special = false) const override;
  std::vector<int32_t> encode_with_markup(std::string_view text, std::span<const TextRange> special_ranges,
                                          std::vector<std::size_t>* offsets = nullptr) const override;
  std::string decode(std::span<const int32_t> ids) const override;
  std::string token_bytes(int32_t id) const override;
  std::string token_piece(int32_t id) const override;
  int32_t vocab_size() const override;
  std::optional<int32_t> token_id(std::string_view piece) const override;
  std::optional<int32_t> bos_id() const override { return m_bos_id; }
  std::optional<int32_t> eos_id() const override { return m_eos_id; }
  TokenizerVocabExport export_vocab() const override;
  // Replaces the family defaults (GGUF files name their BOS / EOS ids). Ids must be in the vocabulary.
  void set_bos_eos(std::optional<int32_t> bos, std::optional<int32_t> eos) {
    m_bos_id = bos;
    m_eos_id = eos;
  }

 private:
  // Cuts out the added tokens find(text, pos) reports and encodes the segments between them.
  template <typename Find>
  std::vector<int32_t> encode_split(std::string_view text, Find find, std::vector<std::size_t>* offsets) const;
  // `at`: the segment's byte offset in the whole text (for offsets, when given).
  void encode_segment(std::string_view segment, std::size_t at, std::vector<int32_t>& out,
                      std::vector<std::size_t>* offsets) const;

  BpeModel m_model;
  AddedTokenMatcher m_added_tokens;
  std::unique_ptr<PreTokenizer> m_pre_tokenizer;
  ByteLevelOptions m_options;
  std::optional<int32_t> m_bos_id;
  std::optional<int32_t> m_eos_id;
};

}  // namespace engine::tokenizer
