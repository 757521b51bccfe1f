// The GPT-2 split pattern as a hand-written scanner.
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// Why not a regex engine: std::regex has no \p{..} classes and backtracks exponentially on some
// inputs; a scanner is linear and needs no dependency. The scanner reproduces the regex's leftmost,
// first-alternative-wins semantics exactly:
//   * a contraction wins only at an ASCII apostrophe followed by s t m d / re ve ll (case-sensitive);
//   * otherwise one optional U+0020 followed by a maximal run of one class (letters, numbers, or
//     "other" = neither letter, number nor space) is a piece;
//   * a whitespace run reaching the end of the text is one piece; one not reaching it gives back its
//     last character (the (?!\S) backtrack), so that character can prefix the following word; a
//     single whitespace character before a non-space is a piece of its own (the final \s+).
// Invalid UTF-8 bytes are single "other" characters (see utf8.h), so they group with punctuation.
#include <string_view>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode_tables.h"
#include "tokenizer/utf8.h"

namespace engine::tokenizer {
namespace {

struct ScannedChar {
  CharClass cls;
  std::size_t length;
};

class Gpt2PreTokenizer final : public PreTokenizer {
 public:
  std::string_view gguf_name() const override { return "gpt-2"; }
  void split(std::string_view text, std::vector<std::string_view>& out) const override {
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    auto scan = [&](std::size_t i) -> ScannedChar {
      const Utf8Char c = decode_utf8(bytes + i, n - i);
      return {char_class(c.code_point), c.length};
    };
    // End of the maximal run of characters of class `cls` that starts at `i`.
    auto run_end = [&](std::size_t i, CharClass cls) {
      while (i < n) {
        const ScannedChar c = scan(i);
        if (c.cls != cls) break;
        i += c.length;
      }
      return i;
    };

    std::size_t i = 0;
    while (i < n) {
      const std::size_t start = i;
      if (bytes[i] == '\'') {
        const std::size_t len = contraction_length(text, i);
        if (len != 0) {
          out.push_back(text.substr(start, len));
          i += len;
          continue;
        }
      }
      const ScannedChar first = scan(i);
      if (bytes[i] == ' ' && i + 1 < n) {
        // " ?X+" where X is the class of the character after the space (unless that is a space).
        const ScannedChar next = scan(i + 1);
        if (next.cls != CharClass::space) {
          const std::size_t end = run_end(i + 1, next.cls);
          out.push_back(text.substr(start, end - start));
          i = end;
          continue;
        }
      }
      if (first.cls != CharClass::space) {
        const std::size_t end = run_end(i, first.cls);
        out.push_back(text.substr(start, end - start));
        i = end;
        continue;
      }
      // Whitespace run [start, end); remember where its last character begins.
      std::size_t last_start = i;
      std::size_t end = i;
      while (end < n) {
        const ScannedChar c = scan(end);
        if (c.cls != CharClass::space) break;
        last_start = end;
        end += c.length;
      }
      if (end < n && last_start > start) end = last_start;  // \s+(?!\S): leave the last one
      // else: reaches the end (\s+(?!\S) takes all), or is a single character before a non-space (\s+)
      out.push_back(text.substr(start, end - start));
      i = end;
    }
  }

 private:
  // Length of the contraction at text[i] == '\'', or 0.
  static std::size_t contraction_length(std::string_view text, std::size_t i) {
    if (i + 1 >= text.size()) return 0;
    const char a = text[i + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (i + 2 >= text.size()) return 0;
    const char b = text[i + 2];
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
  }
};

class WholeTextPreTokenizer final : public PreTokenizer {
 public:
  void split(std::string_view text, std::vector<std::string_view>& out) const override {
    if (!text.empty()) out.push_back(text);
  }
};

}  // namespace

std::unique_ptr<PreTokenizer> make_gpt2_pre_tokenizer() { return std::make_unique<Gpt2PreTokenizer>(); }
std::unique_ptr<PreTokenizer> make_whole_text_pre_tokenizer() { return std::make_unique<WholeTextPreTokenizer>(); }

std::unique_ptr<PreTokenizer> make_pre_tokenizer_by_gguf_name(std::string_view name) {
  if (name == "gpt-2" || name == "gpt2" || name == "default") return make_gpt2_pre_tokenizer();
  if (name == "llama-bpe" || name == "llama3") return make_llama3_pre_tokenizer();
  if (name == "qwen2") return make_qwen2_pre_tokenizer();
  if (name == "starcoder") return make_starcoder_pre_tokenizer();
  return nullptr;
}

}  // namespace engine::tokenizer
