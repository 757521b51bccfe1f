// The Python / Jinja text semantics the reference chat templates rely on: str.strip() (Jinja's |trim,
// Llama-2's content.strip()) and string-literal escapes (to read default system prompts out of a
// template source). See chat_internal.h.
//
// Invariants: nothing here throws or reads past its input; malformed escapes and unterminated
// literals are taken as literally as Python would print them, never as errors (detect() only reads
// hints from the source, it does not validate it).
#include <cstdio>
#include <ctime>

#include "chat/chat_internal.h"
#include "tokenizer/utf8.h"

namespace engine::chat {

bool is_python_space(uint32_t cp) {
  // str.isspace(): bidirectional class WS, B or S, or general category Zs.
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

std::string_view lstrip(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t i = 0;
  while (i < s.size()) {
    const tokenizer::Utf8Char c = tokenizer::decode_utf8(p + i, s.size() - i);
    if (!is_python_space(c.code_point)) break;
    i += c.length;
  }
  return s.substr(i);
}

std::string_view rstrip(std::string_view s) {
  // Walk forward (UTF-8 cannot be decoded backwards safely when invalid), remembering where the
  // trailing run of spaces began.
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t end = 0;
  for (std::size_t i = 0; i < s.size();) {
    const tokenizer::Utf8Char c = tokenizer::decode_utf8(p + i, s.size() - i);
    i += c.length;
    if (!is_python_space(c.code_point)) end = i;
  }
  return s.substr(0, end);
}

std::string_view strip(std::string_view s) { return rstrip(lstrip(s)); }

void strip_pieces(std::vector<ChatPiece>& pieces) {
  for (ChatPiece& p : pieces) {
    const std::string_view rest = lstrip(p.text);
    const bool all_space = rest.empty();
    p.text.erase(0, p.text.size() - rest.size());
    if (!all_space) break;
  }
  for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
    const std::size_t keep = rstrip(it->text).size();
    const bool all_space = keep == 0;
    it->text.resize(keep);
    if (!all_space) break;
  }
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads `digits` hex digits at s[i..]; nullopt-like -1 when they are not all there.
long hex_run(std::string_view s, std::size_t i, int digits) {
  if (i + static_cast<std::size_t>(digits) > s.size()) return -1;
  long v = 0;
  for (int k = 0; k < digits; ++k) {
    const int d = hex_digit(s[i + static_cast<std::size_t>(k)]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// Parses the literal whose opening quote is at s[start]; returns the index after its closing quote
// (or s.size() when unterminated).
std::size_t parse_literal(std::string_view s, std::size_t start, std::string& value) {
  const char quote = s[start];
  std::size_t i = start + 1;
  while (i < s.size() && s[i] != quote) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      value += s[i++];
      continue;
    }
    const char e = s[i + 1];
    i += 2;
    switch (e) {
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case 'r': value += '\r'; break;
      case '\\': value += '\\'; break;
      case '\'': value += '\''; break;
      case '"': value += '"'; break;
      case '\n': break;  // a backslash-newline continues the literal
      case 'x':
      case 'u':
      case 'U': {
        const int digits = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
        const long cp = hex_run(s, i, digits);
        if (cp < 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
          value += '\\';
          value += e;
        } else {
          tokenizer::append_utf8(value, static_cast<uint32_t>(cp));
          i += static_cast<std::size_t>(digits);
        }
        break;
      }
      default:  // Python keeps an unknown escape as written
        value += '\\';
        value += e;
    }
  }
  return i < s.size() ? i + 1 : s.size();
}

}  // namespace

std::vector<JinjaLiteral> jinja_literals(std::string_view s) {
  std::vector<JinjaLiteral> out;
  std::size_t i = 0;
  while (i + 1 < s.size()) {
    const bool expr = s[i] == '{' && s[i + 1] == '{';
    const bool stmt = s[i] == '{' && s[i + 1] == '%';
    if (!expr && !stmt) {
      ++i;
      continue;
    }
    const char close = expr ? '}' : '%';
    i += 2;
    while (i < s.size()) {
      if (s[i] == '\'' || s[i] == '"') {
        JinjaLiteral lit{std::string(), i};
        i = parse_literal(s, i, lit.value);
        out.push_back(std::move(lit));
      } else if (s[i] == close && i + 1 < s.size() && s[i + 1] == '}') {
        i += 2;
        break;
      } else {
        ++i;
      }
    }
  }
  return out;
}

std::string today_date_string() {
  static const char* const k_months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d %s %04d", tm.tm_mday, k_months[tm.tm_mon % 12], tm.tm_year + 1900);
  return buf;
}

}  // namespace engine::chat
