// StarCoder's pre-tokenizer (GGUF tokenizer.ggml.pre = "starcoder"): its tokenizer.json is
// Sequence[Digits(individual_digits = true), ByteLevel(use_regex = true)], so every number character
// (\p{N}, Rust's char::is_numeric: Unicode Nd, Nl and No) is a piece of its own, and each stretch between
// them is split by the GPT-2 pattern on its own. Done here as exactly that: the GPT-2 scanner over each
// stretch. Two consequences the composition has and a single regex over the text would not: a space
// before a digit stays a separate piece (" ?\p{N}+" never sees the digit), and whitespace at the end of
// a stretch is one piece (the stretch ends there, so "\s+(?!\S)" takes it all).
#include <string_view>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode_tables.h"
#include "tokenizer/utf8.h"

namespace engine::tokenizer {
namespace {

class StarcoderPreTokenizer final : public PreTokenizer {
 public:
  StarcoderPreTokenizer() : m_gpt2(make_gpt2_pre_tokenizer()) {}
  std::string_view gguf_name() const override { return "starcoder"; }
  void split(std::string_view text, std::vector<std::string_view>& out) const override {
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t stretch = 0;  // start of the text since the last number character
    for (std::size_t i = 0; i < n;) {
      const Utf8Char c = decode_utf8(bytes + i, n - i);
      if (char_class(c.code_point) == CharClass::number) {
        if (i > stretch) m_gpt2->split(text.substr(stretch, i - stretch), out);
        out.push_back(text.substr(i, c.length));
        stretch = i + c.length;
      }
      i += c.length;
    }
    if (n > stretch) m_gpt2->split(text.substr(stretch), out);
  }

 private:
  std::unique_ptr<PreTokenizer> m_gpt2;
};

}  // namespace

std::unique_ptr<PreTokenizer> make_starcoder_pre_tokenizer() { return std::make_unique<StarcoderPreTokenizer>(); }

}  // namespace engine::tokenizer
