// Shared pieces of the chat-template implementation (engine/src/chat/): access to ChatTemplate's
// private fields for detect(), the per-family renderers, and the two bits of Jinja/Python semantics
// the reference templates depend on (str.strip() and string-literal escapes).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/chat_template.h"

namespace engine {

// The one door into ChatTemplate's private fields (declared a friend there).
struct ChatTemplateAccess {
  static std::string& source(ChatTemplate& t) { return t.m_source; }
  static std::string& default_system(ChatTemplate& t) { return t.m_default_system; }
  static std::string& knowledge_line(ChatTemplate& t) { return t.m_knowledge_line; }
  static std::string& date(ChatTemplate& t) { return t.m_date; }
  static bool& today_date(ChatTemplate& t) { return t.m_today_date; }
  static bool& alpaca_bos(ChatTemplate& t) { return t.m_alpaca_bos; }
  static const std::string& knowledge_line(const ChatTemplate& t) { return t.m_knowledge_line; }
  static const std::string& date(const ChatTemplate& t) { return t.m_date; }
  static bool today_date(const ChatTemplate& t) { return t.m_today_date; }
  static bool alpaca_bos(const ChatTemplate& t) { return t.m_alpaca_bos; }
};

namespace chat {

// Python's str.isspace() for one code point (what Jinja's |trim and str.strip() remove).
bool is_python_space(uint32_t cp);
// Python's str.strip() / lstrip() / rstrip() on UTF-8 text; invalid bytes count as non-space.
std::string_view strip(std::string_view s);
std::string_view lstrip(std::string_view s);
std::string_view rstrip(std::string_view s);

// Python's s.strip() applied to the concatenation of `pieces` (Llama-2 strips the system block and the
// first user message together): whitespace is removed from the front of the first pieces and the back
// of the last ones, whichever kind they are. Pieces left empty are kept (render() drops them later).
void strip_pieces(std::vector<ChatPiece>& pieces);

// The string literals inside the {{ }} / {% %} tags of a Jinja source, in order, with their escapes
// (\n, \t, \r, \\, \', \", \xHH, \uXXXX, \UXXXXXXXX) resolved as Jinja (Python) resolves them.
struct JinjaLiteral {
  std::string value;
  std::size_t position;  // byte offset of the opening quote in the source
};
std::vector<JinjaLiteral> jinja_literals(std::string_view source);

// Today's date as strftime("%d %b %Y") gives it in the C locale, in UTC (Llama-3.2's date_string).
std::string today_date_string();

// The per-family renderers behind ChatTemplate::render (chat_render.cpp).
void render_chatml(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool gen, std::vector<ChatPiece>& out);
void render_llama3(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool gen, std::vector<ChatPiece>& out);
void render_llama2(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool gen, std::vector<ChatPiece>& out);
void render_zephyr(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool gen, std::vector<ChatPiece>& out);
void render_alpaca(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool gen, std::vector<ChatPiece>& out);
void render_plain(const ChatTemplate& t, const std::vector<ChatMessage>& m, bool gen, std::vector<ChatPiece>& out);

}  // namespace chat
}  // namespace engine
