// Pre-tokenizers: split a text segment into the pieces ("words") that BPE then encodes one by one.
//
// The split function is the part that differs between byte-level BPE families (GPT-2, Llama-3,
// Qwen2 each have their own regex), so it is an interface the tokenizer holds by pointer; adding a
// family means adding one implementation and choosing it in the loader. Invariants every
// implementation keeps: the pieces are non-empty, in order, and concatenate to exactly the input
// (nothing dropped, nothing added), and splitting runs in time linear in the input, for any bytes,
// including invalid UTF-8, without throwing.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

namespace engine::tokenizer {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Appends the pieces of `text` to `out` (views into `text`).
  virtual void split(std::string_view text, std::vector<std::string_view>& out) const = 0;
  // The pattern's name in GGUF (tokenizer.ggml.pre), "" when GGUF has none for it.
  virtual std::string_view gguf_name() const { return {}; }
};

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
std::unique_ptr<PreTokenizer> make_gpt2_pre_tokenizer();
// Llama-3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
std::unique_ptr<PreTokenizer> make_llama3_pre_tokenizer();
// Qwen2: the Llama-3 pattern with \p{N} (single numbers) instead of \p{N}{1,3}.
std::unique_ptr<PreTokenizer> make_qwen2_pre_tokenizer();
// StarCoder: every \p{N} character alone (HF Digits, individual_digits), the GPT-2 pattern between them.
std::unique_ptr<PreTokenizer> make_starcoder_pre_tokenizer();
// ByteLevel with use_regex = false: the whole segment is one piece.
std::unique_ptr<PreTokenizer> make_whole_text_pre_tokenizer();

// The pre-tokenizer GGUF's tokenizer.ggml.pre names: "gpt-2" / "gpt2" / "default", "llama-bpe" /
// "llama3", "qwen2", "starcoder"; nullptr for any other name.
std::unique_ptr<PreTokenizer> make_pre_tokenizer_by_gguf_name(std::string_view name);

}  // namespace engine::tokenizer
