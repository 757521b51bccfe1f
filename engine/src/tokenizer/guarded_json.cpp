// Guarded JSON parse for tokenizer files: the engine's checked parser (io/json_util.h: depth limit,
// duplicate keys, UTF-8) plus tokenizer-specific leniency (a leading BOM) and message helpers.
#include "tokenizer/guarded_json.h"

#include "io/json_util.h"

#include <cstdio>

#include "engine/error.h"
#include "tokenizer/utf8.h"

namespace engine::tokenizer {
using json = nlohmann::json;

std::string quote_for_message(std::string_view s) {
  constexpr std::size_t k_max_shown = 60;
  std::string out = "\"";
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t i = 0;
  while (i < s.size() && i < k_max_shown) {
    const Utf8Char c = decode_utf8(p + i, s.size() - i);
    if (c.code_point == k_invalid_code_point || c.code_point < 0x20 || c.code_point == 0x7F || c.code_point == '"' ||
        c.code_point == '\\') {
      if (c.code_point == '"' || c.code_point == '\\') {
        out.push_back('\\');
        out.push_back(static_cast<char>(c.code_point));
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02X", p[i]);
        out += buf;
      }
    } else {
      out.append(s.substr(i, c.length));
    }
    i += c.length;
  }
  out += '"';
  if (i < s.size()) out += "...";
  return out;
}

std::string json_type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a non-integer number";
    case json::value_t::binary: return "binary data";
    case json::value_t::discarded: return "a discarded value";
  }
  return "an unknown value";
}

json parse_guarded_json(std::string_view text, const std::string& source) {
  // Empty (or BOM / whitespace only) input gets a plainer message than "unexpected end".
  std::string_view body = text;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) throw Error(source + ": file is empty");
  // The engine-wide checked parser enforces depth, duplicate keys, UTF-8 and NUL rules.
  return io::parse_json_checked(body, source, k_max_json_depth, static_cast<uint64_t>(text.size() - body.size()));
}

}  // namespace engine::tokenizer
