// Guarded JSON parse: depth limit and duplicate-key detection via nlohmann's parser callback.
//
// The callback sees every key before it is inserted, so a stack of "keys seen so far" per open
// object finds duplicates exactly. Throwing from the callback aborts the parse at once, so a
// 100k-deep document never builds more than k_max_json_depth levels.
#include "tokenizer/guarded_json.h"

#include <cstdio>
#include <unordered_set>
#include <vector>

#include "engine/error.h"
#include "tokenizer/utf8.h"

namespace engine::tokenizer {
namespace {

using json = nlohmann::json;

// Thrown from inside the callback; carries a message that is rethrown as engine::Error.
struct GuardViolation {
  std::string message;
};

}  // namespace

std::string quote_for_message(std::string_view s) {
  constexpr std::size_t k_max_shown = 60;
  std::string out = "\"";
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t i = 0;
  while (i < s.size() && i < k_max_shown) {
    const Utf8Char c = decode_utf8(p + i, s.size() - i);
    if (c.code_point == k_invalid_code_point || c.code_point < 0x20 || c.code_point == 0x7F ||
        c.code_point == '"' || c.code_point == '\\') {
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
  // Empty (or BOM / whitespace only) input gets a plainer message than nlohmann's "unexpected end".
  std::string_view body = text;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw Error(source + ": file is empty");

  std::vector<std::unordered_set<std::string>> keys_per_object;
  const json::parser_callback_t guard = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= k_max_json_depth)
          throw GuardViolation{"JSON nesting deeper than " + std::to_string(k_max_json_depth) + " levels"};
        if (event == json::parse_event_t::object_start) keys_per_object.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!keys_per_object.empty()) keys_per_object.pop_back();
        break;
      case json::parse_event_t::key:
        // Keys only occur inside an open object, so the stack is non-empty here.
        if (!keys_per_object.empty() && !keys_per_object.back().insert(parsed.get<std::string>()).second)
          throw GuardViolation{"duplicate key " + quote_for_message(parsed.get<std::string>()) + " in a JSON object"};
        break;
      default:
        break;
    }
    return true;
  };

  try {
    return json::parse(text.begin(), text.end(), guard, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const GuardViolation& v) {
    throw Error(source + ": " + v.message);
  } catch (const json::exception& e) {
    throw Error(source + ": invalid JSON: " + e.what());
  }
}

}  // namespace engine::tokenizer
