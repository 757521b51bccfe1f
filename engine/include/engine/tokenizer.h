// Tokenizers: byte-level BPE (GPT-2 family; Llama-3 and Qwen2 through tokenizer.json) and
// SentencePiece-style BPE (GGUF "llama" vocabularies, see from_spm_vocab).
//
// Byte-level BPE:
// Encoding = [NFC-normalize, when tokenizer.json asks for it (Qwen2)], pre-tokenize with the GPT-2 split pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// or, for a tokenizer.json with a Split pre-tokenizer, the Llama-3 or Qwen2 pattern (recognised by
// its exact text; any other pattern is refused) -- each a hand-written scanner over Unicode
// categories, no regex engine: linear time on any input -- or, for StarCoder's [Digits, ByteLevel]
// (GGUF "starcoder"), every number character alone and the GPT-2 pattern between them --
// map each byte through GPT-2's byte->unicode table, then apply merges by rank.
// Special tokens (e.g. <|endoftext|>) are recognised in the text ONLY when the caller passes
// allow_special = true (chat-template markup); user text containing "<|endoftext|>" is otherwise
// encoded as ordinary characters. Invalid UTF-8 never throws: each invalid byte is its own
// "character" for the splitter and is still encoded losslessly through the byte table.
// encode() throws engine::Error only for inputs over 1 GiB (a size cap, so no count can overflow).
// Loaders throw engine::Error naming the file (and line / entry) for any malformed or unsupported file.
// All const member functions may be called concurrently from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace engine {

// Everything a model writer needs to re-create a tokenizer in another format (GGUF tokenizer.ggml.*,
// vocab.json + merges.txt). Filled by Tokenizer::export_vocab().
struct TokenizerVocabExport {
  enum class Kind { ByteLevelBpe, SentencePiece };
  Kind kind = Kind::ByteLevelBpe;
  std::vector<std::string> pieces;  // id -> the vocabulary's spelling ("" for an id with no token)
  std::vector<int32_t>
      token_types;                  // id -> GGUF type: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
  std::vector<std::string> merges;  // byte-level BPE: "left right" in rank order
  std::vector<float> scores;        // SentencePiece: id -> merge score
  // Byte-level BPE: the split pattern as GGUF's tokenizer.ggml.pre names it ("gpt-2", "llama-bpe",
  // "qwen2"), or "" when it has no GGUF name (ByteLevel without a regex).
  std::string pre_tokenizer;
  bool add_space_prefix = false;  // SentencePiece: one U+2581 is prepended to the text
  bool add_prefix_space = false;  // byte-level BPE: HF's ByteLevel add_prefix_space (GGUF cannot say it)
  bool nfc = false;               // byte-level BPE: tokenizer.json's NFC normalizer (GGUF cannot say it)
  std::optional<int32_t> bos, eos, unk;
};

// Bytes [begin, end) of a text.
struct TextRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // GPT-2 files: vocab.json (token -> id) and merges.txt ("#version" line optional, "a b" per line).
  static std::unique_ptr<Tokenizer> from_gpt2_files(const std::string& vocab_json_path,
                                                    const std::string& merges_txt_path);
  // Hugging Face tokenizer.json whose model is BPE with a ByteLevel pre-tokenizer.
  static std::unique_ptr<Tokenizer> from_tokenizer_json(const std::string& path);
  // Same as the two above but from in-memory contents (used by tests and by loaders of embedded data).
  static std::unique_ptr<Tokenizer> from_gpt2_strings(std::string_view vocab_json, std::string_view merges_txt);
  static std::unique_ptr<Tokenizer> from_tokenizer_json_string(std::string_view json);
  // SentencePiece-style BPE from a GGUF "llama" vocabulary (tokenizer.ggml.tokens / scores /
  // token_type, token types as in GGUF: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused,
  // 6 byte "<0xHH>"). Encoding follows llama.cpp's SPM tokenizer: ' ' -> U+2581, one U+2581 prepended
  // when add_space_prefix, highest-score merges, byte tokens (else unk) for unknown characters. No BOS
  // is added (prompt assembly does that with bos_id()). Throws engine::Error for inconsistent input
  // (array lengths, unknown types, malformed byte tokens, bos / eos / unk out of range).
  static std::unique_ptr<Tokenizer> from_spm_vocab(std::vector<std::string> tokens, std::vector<float> scores,
                                                   std::vector<int32_t> token_types, std::optional<int32_t> bos,
                                                   std::optional<int32_t> eos, std::optional<int32_t> unk,
                                                   bool add_space_prefix);

  // Byte-level BPE from a GGUF "gpt2" vocabulary: tokens in byte-level spelling (id = index),
  // merges "a b" in rank order, token types as in GGUF (empty = all normal; 3 control tokens are
  // special added tokens, matched only with allow_special; 4 user-defined ones always matched).
  // pre_tokenizer: tokenizer.ggml.pre -- "gpt-2" / "default" (GPT-2 pattern), "llama-bpe" / "llama3"
  // (Llama-3), "qwen2" (Qwen2), "starcoder" (digits alone, then the GPT-2 pattern); anything else is
  // refused. bos / eos override the family defaults.
  // Throws engine::Error for inconsistent input (lengths, duplicate tokens, merges not in the vocabulary).
  static std::unique_ptr<Tokenizer> from_bpe_vocab(std::vector<std::string> tokens,
                                                   const std::vector<std::string>& merges,
                                                   const std::string& pre_tokenizer,
                                                   const std::vector<int32_t>& token_types, std::optional<int32_t> bos,
                                                   std::optional<int32_t> eos);

  virtual std::vector<int32_t> encode(std::string_view text, bool allow_special = false) const = 0;
  // Encodes `text` as encode(text, true) would, except that a special token is recognised only where
  // it lies wholly inside one of `special_ranges` (sorted, non-overlapping: chat-template markup);
  // elsewhere (message content) its characters are ordinary text. The text is split only at the
  // special tokens found, so markup and content between two of them are tokenized together, as
  // Hugging Face tokenizes a rendered chat. When `offsets` is given it receives, per id, the byte
  // offset in `text` where the token's text begins (non-decreasing). The base implementation encodes
  // each range and each gap on its own; the tokenizers here override it.
  virtual std::vector<int32_t> encode_with_markup(std::string_view text, std::span<const TextRange> special_ranges,
                                                  std::vector<std::size_t>* offsets = nullptr) const;
  // Concatenated raw bytes of the tokens (may be invalid UTF-8 if cut mid-character).
  virtual std::string decode(std::span<const int32_t> ids) const = 0;
  // Raw bytes of one token; empty for an out-of-range id.
  virtual std::string token_bytes(int32_t id) const = 0;
  // The vocabulary's own spelling of the token (GPT-2's byte->unicode form, e.g. "Ġthe").
  virtual std::string token_piece(int32_t id) const = 0;
  virtual int32_t vocab_size() const = 0;
  virtual std::optional<int32_t> token_id(std::string_view piece) const = 0;

  virtual std::optional<int32_t> bos_id() const = 0;
  virtual std::optional<int32_t> eos_id() const = 0;

  // The whole vocabulary, merges / scores and special-token ids (for writing other formats).
  virtual TokenizerVocabExport export_vocab() const = 0;
};

}  // namespace engine
