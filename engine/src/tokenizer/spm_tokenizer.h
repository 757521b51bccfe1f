// engine::Tokenizer for SentencePiece-style BPE vocabularies (GGUF tokenizer.ggml.model = "llama").
//
// Encoding a text (the algorithm of llama.cpp's SPM tokenizer, itself a port of sentencepiece's
// bpe_model.cc): control and unknown tokens are cut out first (only with allow_special; user-defined
// tokens always, leftmost-longest), each segment between them has every ' ' replaced by U+2581 "▁" and, with
// add_space_prefix, one "▁" prepended when it starts the text or follows a cut-out token; the segment
// is split into UTF-8 characters, and then the adjacent pair whose concatenation is a vocabulary
// token with the highest score (leftmost on ties) is merged, repeatedly, through a max-heap of
// candidate pairs with lazy invalidation (O(n log n), so a 1 MB input is fine). A remaining symbol
// that is not a token is spelled as byte tokens "<0xXX>" (token type BYTE), or the unknown token when
// some of its bytes have no byte token, or dropped when there is no unknown token either.
// Only NORMAL, USER_DEFINED and UNDEFINED tokens take part in merging: CONTROL, UNKNOWN, UNUSED and
// BYTE pieces can never be spelled by text (sentencepiece keeps them out of its piece table too).
// Invalid UTF-8 never throws: each invalid byte is its own symbol and falls back to its byte token.
// Decoding concatenates each id's bytes: BYTE tokens give their byte, every other token its piece
// with "▁" turned back into ' ' (so decode(encode(x)) == " " + x with add_space_prefix; stripping
// that space is left to the caller, who knows whether the ids start a text).
// All members are immutable after construction, so concurrent const calls are safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/vocabulary.h"

namespace engine::tokenizer {

// GGUF tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class SpmTokenType : int32_t {
  undefined = 0,
  normal = 1,
  unknown = 2,
  control = 3,
  user_defined = 4,
  unused = 5,
  byte = 6,
};

struct SpmVocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<SpmTokenType> types;
  std::optional<int32_t> bos, eos, unk;
  bool add_space_prefix = true;
};

class SpmTokenizer final : public Tokenizer {
 public:
  // `vocab` must already be validated (see Tokenizer::from_spm_vocab in spm_vocab_loading.cpp):
  // equal lengths, known types, byte tokens spelled "<0xHH>" with distinct bytes, ids in range.
  explicit SpmTokenizer(SpmVocab vocab);

  std::vector<int32_t> encode(std::string_view text, bool allow_special = false) const override;
  std::vector<int32_t> encode_with_markup(std::string_view text, std::span<const TextRange> special_ranges,
                                          std::vector<std::size_t>* offsets = nullptr) const override;
  std::string decode(std::span<const int32_t> ids) const override;
  std::string token_bytes(int32_t id) const override;
  std::string token_piece(int32_t id) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(m_vocab.tokens.size()); }
  std::optional<int32_t> token_id(std::string_view piece) const override;
  std::optional<int32_t> bos_id() const override { return m_vocab.bos; }
  std::optional<int32_t> eos_id() const override { return m_vocab.eos; }
  TokenizerVocabExport export_vocab() const override;

 private:
  using IdMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;
  // Cuts out the added tokens find(text, pos) reports and encodes the segments between them.
  template <typename Find>
  std::vector<int32_t> encode_split(std::string_view text, Find find, std::vector<std::size_t>* offsets) const;
  // `at`: the segment's byte offset in the whole text (for offsets, when given).
  void encode_segment(std::string_view segment, bool prefix_space, std::size_t at, std::vector<int32_t>& out,
                      std::vector<std::size_t>* offsets) const;
  void emit_symbol(std::string_view piece, std::vector<int32_t>& out) const;

  SpmVocab m_vocab;
  std::vector<std::string> m_bytes;       // id -> decoded bytes
  IdMap m_mergeable;                      // piece -> id, for tokens text can be merged into
  IdMap m_all;                            // piece -> first id with that piece
  std::array<int32_t, 256> m_byte_ids{};  // byte -> id of "<0xXX>", or -1
  AddedTokenMatcher m_added_tokens;
};

// The byte of a BYTE token piece "<0xHH>" (two hex digits, either case), or nullopt if malformed.
std::optional<uint8_t> parse_byte_piece(std::string_view piece);

}  // namespace engine::tokenizer
