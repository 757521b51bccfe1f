// The Llama-3 and Qwen2 split patterns as one hand-written scanner.
//
//   Llama-3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ Qwen2:   the same with \p{N} instead of \p{N}{1,3}
//
// Why a scanner and not a regex engine: see gpt2_pre_tokenizer.cpp (linear time, no dependency).
// At each position the alternatives are tried in order and the first that matches wins (leftmost,
// first-alternative semantics of the reference's Oniguruma regex):
//   1. an ASCII apostrophe + s t m d / re ve ll in any case; under (?i) U+017F LONG S folds to 's'
//      as well (checked against HF tokenizers);
//   2. one optional character that is not CR, LF, a letter or a number, then a maximal letter run;
//   3. up to `max_digits` numbers (3 for Llama-3, 1 for Qwen2);
//   4. an optional U+0020, a maximal run of "other" characters, then a maximal run of CR / LF;
//   5. within the whitespace run starting here: everything up to and including its last CR / LF;
//   6./7. a whitespace run without CR / LF: as in GPT-2, one not reaching the end of the text gives
//      back its last character (\s+(?!\S)), a single one before a non-space is a piece (\s+).
// Invalid UTF-8 bytes are single "other" characters (utf8.h), so they behave like punctuation.
#include <string_view>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode_tables.h"
#include "tokenizer/utf8.h"

namespace engine::tokenizer {
namespace {

constexpr uint32_t k_long_s = 0x017F;

struct Scanned {
  uint32_t cp;
  CharClass cls;
  std::size_t length;
};

class Llama3PreTokenizer final : public PreTokenizer {
 public:
  explicit Llama3PreTokenizer(int max_digits) : m_max_digits(max_digits) {}
  std::string_view gguf_name() const override { return m_max_digits == 3 ? "llama-bpe" : "qwen2"; }

  void split(std::string_view text, std::vector<std::string_view>& out) const override {
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    auto scan = [&](std::size_t i) -> Scanned {
      const Utf8Char c = decode_utf8(bytes + i, n - i);
      return {c.code_point, char_class(c.code_point), c.length};
    };
    auto is_crlf = [](uint32_t cp) { return cp == '\r' || cp == '\n'; };
    auto run_end = [&](std::size_t i, CharClass cls) {
      while (i < n) {
        const Scanned c = scan(i);
        if (c.cls != cls) break;
        i += c.length;
      }
      return i;
    };
    auto crlf_run_end = [&](std::size_t i) {
      while (i < n && (bytes[i] == '\r' || bytes[i] == '\n')) ++i;
      return i;
    };
    auto emit = [&](std::size_t start, std::size_t end) { out.push_back(text.substr(start, end - start)); };

    std::size_t i = 0;
    while (i < n) {
      const std::size_t start = i;
      // 1. contractions
      if (bytes[i] == '\'') {
        if (const std::size_t len = contraction_length(text, i, scan)) {
          emit(start, start + len);
          i += len;
          continue;
        }
      }
      const Scanned first = scan(i);
      // 2. [^\r\n\p{L}\p{N}]?\p{L}+
      if (first.cls == CharClass::letter) {
        i = run_end(i, CharClass::letter);
        emit(start, i);
        continue;
      }
      if (first.cls != CharClass::number && !is_crlf(first.cp) && i + first.length < n) {
        const Scanned next = scan(i + first.length);
        if (next.cls == CharClass::letter) {
          i = run_end(i + first.length, CharClass::letter);
          emit(start, i);
          continue;
        }
      }
      // 3. \p{N}{1,max}
      if (first.cls == CharClass::number) {
        int count = 0;
        while (i < n && count < m_max_digits) {
          const Scanned c = scan(i);
          if (c.cls != CharClass::number) break;
          i += c.length;
          ++count;
        }
        emit(start, i);
        continue;
      }
      // 4. " ?[^\s\p{L}\p{N}]+[\r\n]*"
      {
        std::size_t j = i;
        if (bytes[j] == ' ' && j + 1 < n) ++j;
        if (scan(j).cls == CharClass::other) {
          i = crlf_run_end(run_end(j, CharClass::other));
          emit(start, i);
          continue;
        }
      }
      // Here `first` is whitespace (letters, numbers and "other" were all taken above).
      // Whitespace run [start, end); remember where its last character and its last CR / LF end.
      std::size_t last_start = i;
      std::size_t end = i;
      std::size_t after_last_crlf = 0;
      while (end < n) {
        const Scanned c = scan(end);
        if (c.cls != CharClass::space) break;
        last_start = end;
        end += c.length;
        if (is_crlf(c.cp)) after_last_crlf = end;
      }
      if (after_last_crlf != 0) {
        end = after_last_crlf;  // 5. \s*[\r\n]+
      } else if (end < n && last_start > start) {
        end = last_start;  // 6. \s+(?!\S): leave the last one
      }
      // else: reaches the end (6 takes all), or a single character before a non-space (7)
      emit(start, end);
      i = end;
    }
  }

 private:
  // Length of the contraction at text[i] == '\'', or 0. Letters compare case-insensitively.
  template <typename Scan>
  static std::size_t contraction_length(std::string_view text, std::size_t i, const Scan& scan) {
    if (i + 1 >= text.size()) return 0;
    const Scanned a = scan(i + 1);
    const uint32_t la = a.cp == k_long_s ? 's' : lower(a.cp);
    if (la == 's' || la == 't' || la == 'm' || la == 'd') return 1 + a.length;
    if (a.length != 1 || i + 2 >= text.size()) return 0;  // the two-letter ones are ASCII only
    const uint32_t lb = lower(static_cast<unsigned char>(text[i + 2]));
    if ((la == 'r' && lb == 'e') || (la == 'v' && lb == 'e') || (la == 'l' && lb == 'l')) return 3;
    return 0;
  }
  static uint32_t lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; }

  int m_max_digits;
};

}  // namespace

std::unique_ptr<PreTokenizer> make_llama3_pre_tokenizer() { return std::make_unique<Llama3PreTokenizer>(3); }
std::unique_ptr<PreTokenizer> make_qwen2_pre_tokenizer() { return std::make_unique<Llama3PreTokenizer>(1); }

}  // namespace engine::tokenizer
