// Checked JSON parsing (duplicate keys, depth, UTF-8) and typed field getters; see json_util.h.
//
// Parsing runs in three linear passes, cheapest first, so hostile input is refused before any
// allocation proportional to its nesting:
//   1. our own UTF-8 validator (exact byte offset of the first bad byte);
//   2. a bracket-depth scan that skips string contents (exact byte offset of the first bracket
//      beyond max_depth; nothing recursive runs on a 100k-deep input) and refuses raw NUL bytes,
//      which nlohmann would otherwise take for the end of the input;
//   3. nlohmann's SAX parser (iterative) driving our DOM builder, which rejects duplicate keys and
//      re-checks depth. SAX events carry no byte offset, so duplicate keys are reported by their
//      JSON path instead, which tells a user more than an offset would.
#include "io/json_util.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/error.h"
#include "engine/io/mapped_file.h"

namespace engine::io {

namespace {

// Line and column (both 1-based) of byte `offset` in `text`, for editors.
std::pair<size_t, size_t> line_column(std::string_view text, size_t offset) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

std::string where_in_text(std::string_view text, size_t offset, uint64_t base_offset) {
  const auto [line, col] = line_column(text, offset);
  return "at byte " + std::to_string(base_offset + offset) + " (line " + std::to_string(line) + ", column " +
         std::to_string(col) + ")";
}

// nlohmann messages look like "[json.exception.parse_error.101] parse error at line 1, column 2:
// syntax error ..."; we print our own position, so keep only the part after the location.
std::string strip_nlohmann_prefix(const std::string& what) {
  std::string s = what;
  if (!s.empty() && s[0] == '[') {
    const size_t close = s.find("] ");
    if (close != std::string::npos) s = s.substr(close + 2);
  }
  if (s.rfind("parse error", 0) == 0) {
    const size_t colon = s.find(": ");
    if (colon != std::string::npos) s = s.substr(colon + 2);
  }
  return s;
}

std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Builds the DOM from SAX events. Pointers in `m_stack` stay valid: a container's parent receives
// no new element while the container is open, and objects are node-based maps.
class CheckedDomBuilder {
 public:
  using string_t = json::string_t;
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using binary_t = json::binary_t;

  explicit CheckedDomBuilder(size_t max_depth) : m_max_depth(max_depth) {}

  bool null() { return add(json(nullptr)) != nullptr; }
  bool boolean(bool v) { return add(json(v)) != nullptr; }
  bool number_integer(number_integer_t v) { return add(json(v)) != nullptr; }
  bool number_unsigned(number_unsigned_t v) { return add(json(v)) != nullptr; }
  bool number_float(number_float_t v, const string_t& text) {
    if (!std::isfinite(v)) return fail("number " + text + " is not finite");
    return add(json(v)) != nullptr;
  }
  bool string(string_t& v) { return add(json(std::move(v))) != nullptr; }
  bool binary(binary_t& v) { return add(json::binary(std::move(v))) != nullptr; }

  bool start_object(size_t) { return open(json::object()); }
  bool start_array(size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& k) {
    json* obj = m_stack.back();
    if (obj->contains(k)) return fail("duplicate key '" + k + "' " + path_description());
    m_keys.back() = k;
    m_slot = &(*obj)[k];
    return true;
  }

  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    m_parse_error = true;
    m_error_position = position;
    m_error = strip_nlohmann_prefix(ex.what());
    return false;
  }

  json take_root() { return std::move(m_root); }
  const std::string& error() const { return m_error; }
  bool is_parse_error() const { return m_parse_error; }
  size_t error_position() const { return m_error_position; }

 private:
  json* add(json&& v) {
    if (m_stack.empty()) {
      m_root = std::move(v);
      return &m_root;
    }
    json* top = m_stack.back();
    if (top->is_array()) {
      top->push_back(std::move(v));
      return &top->back();
    }
    *m_slot = std::move(v);
    return m_slot;
  }

  bool open(json&& container) {
    if (m_stack.size() >= m_max_depth)
      return fail("nesting deeper than " + std::to_string(m_max_depth) + " levels " + path_description());
    json* p = add(std::move(container));
    m_stack.push_back(p);
    m_keys.emplace_back();
    return true;
  }

  bool close() {
    m_stack.pop_back();
    m_keys.pop_back();
    return true;
  }

  // "at the top level" or "in object at /tensors/3/name" (the container being filled now).
  std::string path_description() const {
    if (m_stack.size() <= 1) return "at the top level";
    std::string path;
    for (size_t i = 0; i + 1 < m_stack.size(); ++i) {
      path += '/';
      if (m_stack[i]->is_array()) path += std::to_string(m_stack[i]->size() - 1);
      else path += m_keys[i];
    }
    return "in object at " + path;
  }

  bool fail(std::string message) {
    m_error = std::move(message);
    return false;
  }

  size_t m_max_depth;
  json m_root;
  std::vector<json*> m_stack;
  std::vector<std::string> m_keys;  // per open container: the object's current key
  json* m_slot = nullptr;           // where the next value of the innermost object goes
  std::string m_error;
  bool m_parse_error = false;
  size_t m_error_position = 0;
};

[[noreturn]] void fail_value(const std::string& label, std::string_view what, const std::string& expected,
                             const json& got) {
  throw Error(label + ": " + std::string(what) + " must be " + expected + ", got " + json_describe(got));
}

std::string field_name(std::string_view key) { return "field '" + std::string(key) + "'"; }

// The value of an optional field, or nullptr when it is absent or null.
const json* find_present(const json& obj, std::string_view key, const std::string& label) {
  const json* v = json_find(obj, key, label);
  return (v == nullptr || v->is_null()) ? nullptr : v;
}

}  // namespace

std::optional<size_t> find_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlongs
      if (c == 0xED) hi = 0x9F;  // no UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // no overlongs
      if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;  // continuation byte, C0/C1 overlong lead, or F5..FF
    }
    if (i + len > n) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    i += len;
  }
  return std::nullopt;
}

json parse_json_checked(std::string_view text, const std::string& label, int max_depth, uint64_t base_offset) {
  if (max_depth < 1) throw Error(label + ": parse_json_checked: max_depth must be at least 1");

  if (auto bad = find_invalid_utf8(text))
    throw Error(label + ": invalid UTF-8 " + where_in_text(text, *bad, base_offset));

  // Depth scan. Inside strings only '\\' and '"' matter; a malformed string is left for the parser.
  {
    size_t depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      // nlohmann's lexer takes a NUL byte for end of input (for C strings), so "{}\0garbage" would
      // parse as "{}": a parser differential. JSON never allows a raw NUL, in strings or out.
      if (c == '\0')
        throw Error(label + ": invalid JSON " + where_in_text(text, i, base_offset) +
                    ": raw NUL byte (JSON text may not contain one)");
      if (in_string) {
        if (c == '\\') ++i;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        if (++depth > static_cast<size_t>(max_depth))
          throw Error(label + ": JSON nesting deeper than " + std::to_string(max_depth) + " levels " +
                      where_in_text(text, i, base_offset));
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
      }
    }
  }

  CheckedDomBuilder builder(static_cast<size_t>(max_depth));
  const bool ok =
      json::sax_parse(text.data(), text.data() + text.size(), &builder, nlohmann::detail::input_format_t::json,
                      /*strict=*/true, /*ignore_comments=*/false);
  if (!ok) {
    if (builder.is_parse_error()) {
      // nlohmann reports the count of bytes read; the offending byte is the last one read.
      const size_t pos = builder.error_position() > 0 ? builder.error_position() - 1 : 0;
      throw Error(label + ": invalid JSON " + where_in_text(text, pos, base_offset) + ": " + builder.error());
    }
    throw Error(label + ": invalid JSON: " + builder.error());
  }
  return builder.take_root();
}

json parse_json_file(const std::string& path, uint64_t max_bytes, int max_depth) {
  auto file = MappedFile::open(path);
  if (file->size() > max_bytes)
    throw Error(path + ": file is " + std::to_string(file->size()) + " bytes, more than the " +
                std::to_string(max_bytes) + "-byte limit for a JSON file");
  return parse_json_checked(std::string_view(reinterpret_cast<const char*>(file->data()), file->size()), path,
                            max_depth);
}

std::string json_describe(const json& value) {
  constexpr size_t max_chars = 60;
  switch (value.type()) {
    case json::value_t::object:
      return "an object with " + std::to_string(value.size()) + (value.size() == 1 ? " key" : " keys");
    case json::value_t::array:
      return "an array of " + std::to_string(value.size()) + (value.size() == 1 ? " element" : " elements");
    case json::value_t::string: {
      const std::string& s = value.get_ref<const std::string&>();
      if (s.size() <= max_chars) return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
      size_t cut = max_chars;
      while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // whole characters
      return json(s.substr(0, cut)).dump(-1, ' ', false, json::error_handler_t::replace) + "... (" +
             std::to_string(s.size()) + " bytes)";
    }
    case json::value_t::discarded: return "nothing";
    default: return value.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

int64_t json_as_int(const json& value, const std::string& label, std::string_view what, int64_t min, int64_t max) {
  const std::string expected = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!value.is_number_integer()) fail_value(label, what, expected, value);
  int64_t v;
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) fail_value(label, what, expected, value);
    v = static_cast<int64_t>(u);
  } else {
    v = value.get<int64_t>();
  }
  if (v < min || v > max) fail_value(label, what, expected, value);
  return v;
}

uint64_t json_as_uint(const json& value, const std::string& label, std::string_view what, uint64_t min, uint64_t max) {
  const std::string expected = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!value.is_number_integer()) fail_value(label, what, expected, value);
  if (!value.is_number_unsigned() && value.get<int64_t>() < 0) fail_value(label, what, expected, value);
  const uint64_t v = value.get<uint64_t>();
  if (v < min || v > max) fail_value(label, what, expected, value);
  return v;
}

double json_as_number(const json& value, const std::string& label, std::string_view what, double min, double max) {
  const std::string expected = "a number in [" + format_double(min) + ", " + format_double(max) + "]";
  if (!value.is_number()) fail_value(label, what, expected, value);
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < min || v > max) fail_value(label, what, expected, value);
  return v;
}

std::string json_as_string(const json& value, const std::string& label, std::string_view what, size_t max_bytes) {
  if (!value.is_string()) fail_value(label, what, "a string", value);
  const std::string& s = value.get_ref<const std::string&>();
  if (s.size() > max_bytes)
    throw Error(label + ": " + std::string(what) + " must be a string of at most " + std::to_string(max_bytes) +
                " bytes, got " + std::to_string(s.size()) + " bytes");
  return s;
}

bool json_as_bool(const json& value, const std::string& label, std::string_view what) {
  if (!value.is_boolean()) fail_value(label, what, "true or false", value);
  return value.get<bool>();
}

const json* json_find(const json& obj, std::string_view key, const std::string& label) {
  if (!obj.is_object())
    throw Error(label + ": expected an object holding field '" + std::string(key) + "', got " + json_describe(obj));
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json& json_require(const json& obj, std::string_view key, const std::string& label) {
  const json* v = json_find(obj, key, label);
  if (v == nullptr) throw Error(label + ": missing required field '" + std::string(key) + "'");
  return *v;
}

int64_t json_get_int(const json& obj, std::string_view key, const std::string& label, int64_t min, int64_t max) {
  return json_as_int(json_require(obj, key, label), label, field_name(key), min, max);
}

std::optional<int64_t> json_get_int_opt(const json& obj, std::string_view key, const std::string& label, int64_t min,
                                        int64_t max) {
  const json* v = find_present(obj, key, label);
  if (v == nullptr) return std::nullopt;
  return json_as_int(*v, label, field_name(key), min, max);
}

uint64_t json_get_uint(const json& obj, std::string_view key, const std::string& label, uint64_t min, uint64_t max) {
  return json_as_uint(json_require(obj, key, label), label, field_name(key), min, max);
}

std::optional<uint64_t> json_get_uint_opt(const json& obj, std::string_view key, const std::string& label, uint64_t min,
                                          uint64_t max) {
  const json* v = find_present(obj, key, label);
  if (v == nullptr) return std::nullopt;
  return json_as_uint(*v, label, field_name(key), min, max);
}

double json_get_number(const json& obj, std::string_view key, const std::string& label, double min, double max) {
  return json_as_number(json_require(obj, key, label), label, field_name(key), min, max);
}

std::optional<double> json_get_number_opt(const json& obj, std::string_view key, const std::string& label, double min,
                                          double max) {
  const json* v = find_present(obj, key, label);
  if (v == nullptr) return std::nullopt;
  return json_as_number(*v, label, field_name(key), min, max);
}

std::string json_get_string(const json& obj, std::string_view key, const std::string& label, size_t max_bytes) {
  return json_as_string(json_require(obj, key, label), label, field_name(key), max_bytes);
}

std::optional<std::string> json_get_string_opt(const json& obj, std::string_view key, const std::string& label,
                                               size_t max_bytes) {
  const json* v = find_present(obj, key, label);
  if (v == nullptr) return std::nullopt;
  return json_as_string(*v, label, field_name(key), max_bytes);
}

bool json_get_bool(const json& obj, std::string_view key, const std::string& label) {
  return json_as_bool(json_require(obj, key, label), label, field_name(key));
}

std::optional<bool> json_get_bool_opt(const json& obj, std::string_view key, const std::string& label) {
  const json* v = find_present(obj, key, label);
  if (v == nullptr) return std::nullopt;
  return json_as_bool(*v, label, field_name(key));
}

const json& json_get_object(const json& obj, std::string_view key, const std::string& label) {
  const json& v = json_require(obj, key, label);
  if (!v.is_object()) fail_value(label, field_name(key), "an object", v);
  return v;
}

const json* json_get_object_opt(const json& obj, std::string_view key, const std::string& label) {
  const json* v = find_present(obj, key, label);
  if (v != nullptr && !v->is_object()) fail_value(label, field_name(key), "an object", *v);
  return v;
}

const json& json_get_array(const json& obj, std::string_view key, const std::string& label) {
  const json& v = json_require(obj, key, label);
  if (!v.is_array()) fail_value(label, field_name(key), "an array", v);
  return v;
}

const json* json_get_array_opt(const json& obj, std::string_view key, const std::string& label) {
  const json* v = find_present(obj, key, label);
  if (v != nullptr && !v->is_array()) fail_value(label, field_name(key), "an array", *v);
  return v;
}

}  // namespace engine::io
